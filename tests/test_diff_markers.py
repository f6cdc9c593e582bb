"""`plan diff` as `terraform plan` shows changes: `+` added, `-` removed, `~` changed, aligned labels, a summary
line that counts them, and diff(1)'s exit status (0 same, 1 changed, 2 bad input). Every expectation here is
computed from the two saved files themselves, not from the diff code."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli import main

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = str(ROOT / "constraints" / "datacenter.yaml")


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Today's plan (72 reserved B200 nodes, sold: resell) and the plan when the cluster is reused (bought)."""
    d = tmp_path_factory.mktemp("diff")
    a, b = d / "a.json", d / "b.json"
    assert CliRunner().invoke(main, ["solve", PROBLEM, "--save", str(a)]).exit_code == 0
    assert CliRunner().invoke(main, ["solve", PROBLEM, "--set", "policy.after_run=reuse", "--save",
                                     str(b)]).exit_code == 0
    return a, b


def test_markers_and_summary_follow_the_saved_plans(saved: tuple[Path, Path]) -> None:
    a, b = saved
    pa, pb = (json.loads(p.read_text())["result"]["plan"] for p in (a, b))
    qa = {q["id"]: q["nodes"] for q in pa["quotes"]}
    qb = {q["id"]: q["nodes"] for q in pb["quotes"]}
    assert set(qa) != set(qb), "the case must change the quotes"
    r = CliRunner().invoke(main, ["diff", str(a), str(b)])
    assert r.exit_code == 1, "a change exits 1, as diff(1)"
    text = r.stdout
    for qid in set(qb) - set(qa):
        assert re.search(rf"^  \+ quote {re.escape(qid)}\s+{qb[qid]} nodes$", text, re.M), qid
    for qid in set(qa) - set(qb):
        assert re.search(rf"^  - quote {re.escape(qid)}\s+{qa[qid]} nodes$", text, re.M), qid
    added_lines = set(pb["cost_usd"]) - set(pa["cost_usd"])
    assert added_lines, "reusing bought hardware adds owner's lines"
    assert "~ nodes" in text and f"{pa['nodes']} -> {pb['nodes']:,}" in text
    # JSON: one action per row, and the summary counts them
    d = json.loads(CliRunner().invoke(main, ["diff", str(a), str(b), "--format", "json"]).stdout)
    rows = d["changes"] + d["cost_lines"]
    want_add = len(set(qb) - set(qa)) + sum(1 for n in added_lines if abs(pb["cost_usd"][n]) >= 1)
    want_remove = len(set(qa) - set(qb)) + sum(1 for n in set(pa["cost_usd"]) - set(pb["cost_usd"])
                                               if abs(pa["cost_usd"][n]) >= 1)
    assert d["summary"]["add"] == want_add == sum(r["action"] == "add" for r in rows)
    assert d["summary"]["remove"] == want_remove == sum(r["action"] == "remove" for r in rows)
    assert d["summary"]["changed"] is True and d["decision_changed"] is True
    assert d["summary"]["cash_delta_usd"] == pb["cash_usd"]["total"] - pa["cash_usd"]["total"]
    assert d["summary"]["cost_delta_usd"] == pb["cost_usd"]["total"] - pa["cost_usd"]["total"]
    cash = next(c for c in d["changes"] if c["field"] == "cash")
    assert (cash["from"], cash["to"]) == (pa["cash_usd"]["total"], pb["cash_usd"]["total"])
    offer = next(c for c in d["changes"] if c["field"] == "offer")
    assert (offer["from"], offer["to"]) == (pa["offer"], pb["offer"])
    p = next(c for c in d["changes"] if c["field"] == "p_deadline")
    assert (p["from"], p["to"]) == (pa["risk"]["p_deadline"], pb["risk"]["p_deadline"])
    summary = text.strip().splitlines()[-1]
    assert summary.startswith("Summary: the decision changed:") and f"{want_add} to add" in summary \
        and f"{want_remove} to remove" in summary


def test_labels_are_aligned_in_each_block(saved: tuple[Path, Path]) -> None:
    a, b = saved
    text = CliRunner().invoke(main, ["diff", str(a), str(b)]).stdout
    blocks = re.split(r"^(?:plan|cost lines):$", text.split("why (input changes):")[0], flags=re.M)[1:]
    assert len(blocks) == 2
    for block in blocks:
        rows = [ln for ln in block.splitlines() if re.match(r"^  [+~-] ", ln)]
        assert len(rows) >= 3
        # the value column starts at the same place on every row: two spaces after the longest label
        starts = {re.match(r"^  [+~-] (.*?\S)  +\S", ln).end() - 1 for ln in rows}  # type: ignore[union-attr]
        assert len(starts) == 1, rows


def test_the_same_plan_exits_0(saved: tuple[Path, Path]) -> None:
    a, _ = saved
    r = CliRunner().invoke(main, ["diff", str(a), str(a)])
    assert r.exit_code == 0 and "no change" in r.stdout
    d = json.loads(CliRunner().invoke(main, ["diff", str(a), str(a), "--format", "json"]).stdout)
    assert d["summary"] == {"changed": False, "add": 0, "remove": 0, "change": 0, "cost_delta_usd": 0.0,
                            "cash_delta_usd": 0.0}
