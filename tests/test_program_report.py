"""`plan report` of a program (issue 42): one self-contained page with the workloads, a Gantt of runs and
purchases, cash by quarter against the caps, the value of the bake-offs and the warnings — from the same answer as
the program's JSON, byte-identical on reruns."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from cli import main

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = str(ROOT / "constraints" / "program-200b.yaml")
UNGATED = ["--set", "workloads.main.decide_after=[]"]   # the main run's hardware bought: purchases on the Gantt


def test_a_program_page_shows_its_runs_purchases_and_quarters(tmp_path: Path) -> None:
    runner = CliRunner()
    pages = []
    for name in ("a.html", "b.html"):
        r = runner.invoke(main, ["report", PROGRAM, *UNGATED, "-o", str(tmp_path / name)])
        assert r.exit_code == 0, r.output
        assert "wrote" in r.stdout
        pages.append((tmp_path / name).read_text())
    assert pages[0] == pages[1], "the same inputs give the same page"
    page = pages[0]
    answer = json.loads(runner.invoke(main, ["solve", PROGRAM, *UNGATED, "--format", "json"]).stdout)
    prog = answer["program"]
    assert "<svg" in page and "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    # one Gantt row per workload and per bought quote; each run's bar named with its dates
    for w in prog["workloads"]:
        assert f"{w['id']}: run {w['start']} → {w['finish']}" in page
    assert prog["purchases"], "the ungated example buys hardware"
    for p in prog["purchases"]:
        assert f"buy {p['quote']}: order {p['order']} → {p['delivered']}" in page
    # every quarter of the answer, with its cap or a dash
    rows = re.findall(r"<tr><td>(\d{4}-Q\d)</td>", page)
    assert rows == [q["quarter"] for q in prog["quarters"]]


def test_the_gated_example_says_what_the_bakeoffs_are_worth(tmp_path: Path) -> None:
    out = tmp_path / "p.html"
    r = CliRunner().invoke(main, ["report", PROGRAM, "-o", str(out)])
    assert r.exit_code == 0, r.output
    page = out.read_text()
    answer = json.loads(CliRunner().invoke(main, ["solve", PROGRAM, "--format", "json"]).stdout)
    value = answer["program"]["decision"]["value_of_bakeoffs_usd"]
    assert "What the bake-offs are worth" in page
    assert ("more than deciding now" in page) == (value < 0)
    assert "UNCAPPED QUARTER" in page and len(answer["warnings"]) == page.count("UNCAPPED QUARTER")
