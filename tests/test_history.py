"""Saved plans and diffs: unchanged inputs say "no change"; a quote edit is named as the cause."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from cli import main
from solver.catalog import load_catalog

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = str(ROOT / "constraints" / "finetune-70b.yaml")


def test_save_then_compare_unchanged_reports_no_change(tmp_path: Path) -> None:
    saved = tmp_path / "plan.json"
    r = CliRunner().invoke(main, ["solve", PROBLEM, "--save", str(saved)])
    assert r.exit_code == 0
    data = json.loads(saved.read_text())
    assert data["schema_version"] == 1 and data["inputs"]["digest"] and data["result"]["plan"]
    assert [p.name for p in tmp_path.iterdir()] == ["plan.json"], "no temporary file may be left behind"
    r = CliRunner().invoke(main, ["solve", PROBLEM, "--compare-to", str(saved)])
    assert r.exit_code == 0 and "no change" in r.stdout


def test_quote_price_change_is_named_as_the_cause(tmp_path: Path) -> None:
    saved = tmp_path / "plan.json"
    CliRunner().invoke(main, ["solve", PROBLEM, "--save", str(saved)])
    chosen = json.loads(saved.read_text())["result"]["plan"]["quotes"][0]["id"]
    q = load_catalog([]).quotes[chosen].model_dump(mode="json", exclude_none=True)
    q["usd_per_gpu_hour"] = round(q["usd_per_gpu_hour"] * 3, 2)
    qf = tmp_path / "q.yaml"
    qf.write_text(yaml.safe_dump({"quotes": [q]}))
    r = CliRunner().invoke(main, ["solve", PROBLEM, "--quotes", str(qf), "--compare-to", str(saved), "--save",
                                  str(tmp_path / "new.json")])
    assert r.exit_code == 0
    assert f"quote {chosen} (used): price" in r.stdout
    assert "option" in r.stdout or "accelerator" in r.stdout or "compute" in r.stdout
    d = CliRunner().invoke(main, ["diff", str(saved), str(tmp_path / "new.json"), "--format", "json"])
    diff = json.loads(d.stdout)
    assert diff["same_inputs"] is False and any(chosen in c for c in diff["causes"])


def test_compare_to_a_file_that_is_not_a_saved_plan(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text("{}")
    r = CliRunner().invoke(main, ["solve", PROBLEM, "--compare-to", str(bad)])
    assert r.exit_code == 2 and "not a saved plan" in r.stderr


def test_warm_start_hint_never_changes_the_answer() -> None:
    """A hint (right, or infeasible) only warms the search: the proven optimum is the same."""
    from solver.problem import load_problem
    from solver.render import result_dict, to_json
    from solver.solve import SolveSettings, solve_problem
    lp = load_problem(PROBLEM)
    base = solve_problem(lp, SolveSettings(alternatives=False))
    p = base.plan
    good = {"option": p.option, "nodes": p.nodes, "quotes": {q.id: q.nodes for q in p.quotes}}
    bad = {"option": p.option, "nodes": p.nodes, "quotes": {"no-such-quote": 999}}
    wrong = {"option": "dgx-h100/cloud", "nodes": 1, "quotes": {}}
    for hint in (good, bad, wrong):
        r = solve_problem(lp, SolveSettings(alternatives=False, hint=hint))
        assert to_json(result_dict(r)) == to_json(result_dict(base))


def test_expired_quote_is_not_used_unless_allowed(tmp_path: Path) -> None:
    q = load_catalog([]).quotes["lambda-b200-8x-ondemand"].model_dump(mode="json", exclude_none=True)
    q.update(id="old-bargain", usd_per_gpu_hour=0.5, quoted_on="2026-01-01", valid_until="2026-06-30")
    qf = tmp_path / "q.yaml"
    qf.write_text(yaml.safe_dump({"quotes": [q]}))
    r = CliRunner().invoke(main, ["solve", PROBLEM, "--quotes", str(qf), "--format", "json"])
    out = json.loads(r.stdout)
    assert all(x["id"] != "old-bargain" for x in out["plan"]["quotes"])
    assert any("old-bargain (valid until 2026-06-30)" in w for w in out["warnings"])
    r = CliRunner().invoke(main, ["solve", PROBLEM, "--quotes", str(qf), "--allow-expired", "--format", "json"])
    out = json.loads(r.stdout)
    assert any(x["id"] == "old-bargain" for x in out["plan"]["quotes"])
    assert any("EXPIRED QUOTE: old-bargain" in w for w in out["warnings"])
