"""Every amount a program prints carries a unit a reader can use (issue 42): a bake-off of a few thousand dollars
is shown in thousands, never rounded away to "$0.00M"; big amounts keep millions."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_program_run_costs_and_quarters_keep_their_unit() -> None:
    r = CliRunner().invoke(main, ["solve", str(ROOT / "constraints" / "program-200b.yaml")], env={"COLUMNS": "160"})
    assert r.exit_code == 0, r.output
    assert "$0.00M" not in r.stdout and "$0.01M" not in r.stdout
    rows = {line.split()[0]: line.split()[-1] for line in r.stdout.splitlines()
            if line.startswith(("bakeoff-", "main ", "sft ")) and "|" not in line}   # the table, not the Gantt
    assert rows, r.stdout
    for name, shown in rows.items():
        assert re.fullmatch(r"\$\d[\d.,]*[kMB]?", shown), (name, shown)
    # a bake-off of one node for a week costs thousands, shown as such
    assert any(re.fullmatch(r"\$\d+(\.\d)?k", v) for k, v in rows.items() if k.startswith("bakeoff-")), rows


def test_expected_interruptions_are_never_rounded_to_nothing() -> None:
    """A one-GPU run of a few hours has a small chance of an interruption: shown as such, not "~0"."""
    from solver.render.text import expected_count
    assert [expected_count(x) for x in (0.0, 0.0017, 0.35, 3.26, 12.3)] == ["0", "0.0017", "0.35", "~3.3", "~12"]
    r = CliRunner().invoke(main, ["solve", str(ROOT / "constraints" / "lora-small.yaml"), "--verbose"],
                           env={"COLUMNS": "160"})
    assert r.exit_code == 0, r.output
    line = next(x for x in r.stdout.splitlines() if "expected interruptions" in x)
    assert "~0 " not in line and re.search(r"incl\. 0\.\d+ expected interruptions", line), line


def test_a_short_run_is_not_zero_days_long() -> None:
    """The alternatives table gives a 0.4-day run as 0.4, not 0; long runs in whole days."""
    from solver.render.text import day_count
    assert [day_count(x) for x in (0.4, 2.26, 9.9, 10.0, 193.4)] == ["0.4", "2.3", "9.9", "10", "193"]
    r = CliRunner().invoke(main, ["solve", str(ROOT / "constraints" / "lora-small.yaml"), "--verbose"],
                           env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    chosen = next(x for x in r.stdout.splitlines() if x.startswith("CHOSEN") and "2026-12-31" in x)
    assert " 0.4 " in chosen, chosen


def test_a_line_the_plan_does_not_have_is_absent_from_the_json() -> None:
    """README: "a line a plan does not have is absent" — a mature CUDA stack needs no porting, so no `porting: 0`."""
    import json
    r = CliRunner().invoke(main, ["solve", str(ROOT / "constraints" / "datacenter.yaml"), "--format", "json"])
    assert r.exit_code == 0, r.output
    plan = json.loads(r.stdout)["plan"]
    for key in ("cost_usd", "cash_usd"):
        assert all(v != 0 for k, v in plan[key].items() if k != "total"), plan[key]
    assert "porting" not in plan["cost_usd"] and plan["accelerator"] == "b200"
