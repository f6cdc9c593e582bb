"""What the user's own policy rules out is said once, not as noise (issue 42): unpriced hardware of a mode or an
accelerator the policy excludes gets no break-even line; everything the accelerator list leaves out is one row."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from cli import main
from solver.inputs.catalog import load_catalog

ROOT = Path(__file__).resolve().parent.parent
DATACENTER = str(ROOT / "constraints" / "datacenter.yaml")


def test_unpriced_hardware_the_policy_rules_out_is_not_listed() -> None:
    cat = load_catalog()
    unpriced = {q.id: q.mode for q in cat.quotes.values() if not q.priced}
    assert "buy" in unpriced.values() and "cloud" in unpriced.values()
    r = CliRunner().invoke(main, ["solve", DATACENTER, "--set", "policy.modes=[cloud]", "--format", "json"])
    listed = {u["quote"] for u in json.loads(r.stdout).get("unpriced", [])}
    assert listed and all(unpriced[q] == "cloud" for q in listed), listed
    everything = json.loads(CliRunner().invoke(main, ["solve", DATACENTER, "--format", "json"]).stdout)["unpriced"]
    assert any(unpriced[u["quote"]] == "buy" for u in everything), "without the policy they are listed"


def test_the_accelerator_list_is_one_row() -> None:
    r = CliRunner().invoke(main, ["solve", DATACENTER, "--set", "policy.accelerators.include=[b200]", "--verbose"])
    table = r.stdout.split("Options that cannot work:")[1]
    rows = [ln for ln in table.splitlines() if "excluded by the accelerator list" in ln]
    assert len(rows) == 1, rows
    d = json.loads(CliRunner().invoke(main, ["solve", DATACENTER, "--set", "policy.accelerators.include=[b200]",
                                             "--format", "json"]).stdout)
    ruled = {e["accelerator"] for e in d["excluded"]
             if [x["group"] for x in e["reasons"]] == ["policy.accelerators"]}
    assert len(ruled) > 5 and all(a in rows[0] for a in ruled)
