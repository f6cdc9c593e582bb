"""`plan solve`'s default view fits a terminal (issue 42): at most 40 lines for the 200B example at 120 columns, no
line wider than the terminal, nothing cut (ids and file:line whole), offers named as a buyer names them, a price
with its unit per row. Its figures are the JSON answer's, read from `--format json` of the same solve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli import main

ROOT = Path(__file__).resolve().parent.parent
DATACENTER = str(ROOT / "constraints" / "datacenter.yaml")
OFFER = {"buy": "buy", "cloud": "on demand", "cloud-reserved": "reserved", "cloud-spot": "spot",
         "managed": "managed"}


def _run(*args: str, columns: int = 120) -> str:
    r = CliRunner().invoke(main, [*args], env={"COLUMNS": str(columns)})
    assert r.exit_code in (0, 1), r.output
    return r.stdout


@pytest.fixture(scope="module")
def answer() -> dict:
    return json.loads(_run("solve", DATACENTER, "--format", "json"))


@pytest.mark.parametrize("columns", [120, 100, 80])
def test_the_default_view_fits(columns: int) -> None:
    lines = _run("solve", DATACENTER, columns=columns).splitlines()
    assert max(len(x) for x in lines) <= columns, [x for x in lines if len(x) > columns]
    if columns == 120:
        assert len(lines) <= 40, len(lines)


def test_its_figures_are_the_answers(answer: dict) -> None:
    text = _run("solve", DATACENTER)
    plan = answer["plan"]
    assert f"CHOSEN  {plan['accelerator']} · {plan['system']} · {OFFER[plan['offer']]} — {plan['nodes']} nodes" in text
    for q in plan["quotes"]:
        assert f"{q['id']} ×{q['nodes']}:" in text and f"${q['price']:,.2f}/GPU-h" in text
    rows = [ln for ln in text.splitlines() if ln.startswith(("CHOSEN  ", "        ")) and "/" in ln and "$" in ln]
    table = [ln.split() for ln in rows if ln.split()[0] != "CHOSEN" or "·" not in ln]
    shown = table[1:]  # runners-up in order, after the chosen row
    for row, alt in zip(shown, answer["alternatives"], strict=False):
        assert row[0] == alt["accelerator"]
        main_q = max(alt["quotes"], key=lambda q: (q["nodes"], q["id"]))
        unit = {"cloud": "/GPU-h", "buy": "/node", "managed": "/node-mo"}[main_q["mode"] if "mode" in main_q
                                                                           else alt["mode"]]
        assert any(cell.rstrip("*").endswith(unit) for cell in row), (row, unit)
        assert str(alt["nodes"]) in row
    assert len(shown) >= 3


def test_nothing_that_matters_is_cut(answer: dict) -> None:
    text = _run("solve", DATACENTER, columns=80)
    flat = " ".join(text.split())
    for q in answer["plan"]["quotes"]:
        assert q["id"] in flat, "a quote id is never broken over lines"
    options = {(e["accelerator"], e["mode"] or "-") for e in answer["excluded"]}
    assert f"Cannot work: {len(options)} options" in flat
    verbose = _run("solve", DATACENTER, "--verbose")
    assert "Options that cannot work:" in verbose and "constraints/datacenter.yaml:14" in verbose
    assert "..." not in verbose.split("Options that cannot work:")[1], "the full table wraps, never cuts"


def test_stderr_says_how_long_the_command_took() -> None:
    """The note on stderr is the command's own time (it once gave the search's alone: 0.44 s for a 3.4 s command)."""
    import re
    import time
    t0 = time.perf_counter()
    r = CliRunner().invoke(main, ["solve", DATACENTER])
    took = time.perf_counter() - t0
    m = re.search(r"answered in ([\d.]+) s, the search for the plan ([\d.]+) s of it", r.stderr)
    assert m, r.stderr
    total, search = float(m.group(1)), float(m.group(2))
    assert search <= total <= took
