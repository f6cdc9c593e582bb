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
