"""What-ifs of programs: `ProgramProblem.with_changes`, the portable form every executor runs, the sensitivity
sweeps and the break-even price (checked by re-solving at the reported prices), `plan sweep` over a program (the
same JSON on every executor), the time-cost frontier (its fastest point checked by re-solving a day earlier), and
`plan diff` of two saved programs naming the input changes behind them.

The program is `tests/programs/small.yaml` (two workloads; a solve takes ~0.1 s), so the many re-solves stay cheap.
"""

from __future__ import annotations

import json
import pickle
from datetime import date, timedelta
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from cli import main
from solver.answers.program import headline, solve_program
from solver.answers.program_whatif import quote_use, sweep_changes
from solver.inputs.catalog import load_catalog
from solver.inputs.program import load_program, portable_program
from solver.render.program_whatif import moved
from solver.solve.engine import Limits

ROOT = Path(__file__).resolve().parent.parent
SMALL = str(ROOT / "tests" / "programs" / "small.yaml")
TODAY = date(2026, 12, 1)
LIMITS = Limits(time_limit=20)


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


def test_with_changes_is_the_file_with_the_set() -> None:
    pp = load_program(SMALL, today=TODAY)
    varied = pp.with_sets(["workloads.pre.workload.tokens=2T", "budget.max_usd=40M"])
    direct = load_program(SMALL, ["workloads.pre.workload.tokens=2T", "budget.max_usd=40M"], today=TODAY)
    assert varied.spec == direct.spec
    assert [p.spec for _, p in varied.workloads] == [p.spec for _, p in direct.workloads]
    assert varied.spec.workloads[0].workload.tokens == 2e12 and varied.spec.budget.max_usd == 40e6
    assert pp.spec.workloads[0].workload.tokens == 1.4e12 and pp.spec.budget.max_usd == 30e6, "the original stays"


def test_portable_program_rebuilds_the_same_program() -> None:
    pp = load_program(SMALL, ["quotes.lambda-b200-1x-ondemand.usd_per_gpu_hour=5.5"], today=TODAY)
    back = pickle.loads(pickle.dumps(portable_program(pp))).program()
    assert back.spec == pp.spec and back.as_of == pp.as_of
    assert [p.spec for _, p in back.workloads] == [p.spec for _, p in pp.workloads]
    assert dict(back.first.catalog.quotes) == dict(pp.first.catalog.quotes)
    assert back.first.catalog.quotes["lambda-b200-1x-ondemand"].usd_per_gpu_hour == 5.5


def test_sweep_values_by_hand() -> None:
    """Each swept input is the file's (or catalog's) number times the factor, or plus the days, read here from the
    YAML files themselves."""
    pp = load_program(SMALL, today=TODAY)
    raw = yaml.safe_load(Path(SMALL).read_text())
    _, tokens = sweep_changes(pp, "tokens", 0.5)
    assert {c.path: c.value for c in tokens} == {("workloads", 0, "workload", "tokens"): 0.7e12,
                                                 ("workloads", 1, "workload", "tokens"): 5e9}
    _, power = sweep_changes(pp, "electricity", 2.0)
    assert [c.value for c in power] == [2 * raw["site"]["electricity_usd_per_kwh"]]
    label, leads = sweep_changes(pp, "lead_time_days", 30)
    q = load_catalog([]).quotes["lambda-b200-1x-ondemand"]
    by_path = {c.path: c.value for c in leads}
    assert label == "+30 d"
    assert by_path[("quotes", q.id, "lead_time_days")] == q.lead_time_days + 30
    assert by_path[("quotes", q.id, "lead_time_p90_days")] == q.lead_time_p90_days + 30
    varied = pp.with_changes(leads)
    assert varied.first.catalog.quotes[q.id].lead_time_days == q.lead_time_days + 30
    assert sweep_changes(pp.with_sets(["site=null"]), "electricity", 2.0) is None


def test_sensitivity_of_a_program_json(runner: CliRunner) -> None:
    r = runner.invoke(main, ["sensitivity", SMALL, "--sweep", "tokens", "--sweep", "electricity", "--executor",
                             "local", "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    solved = json.loads(runner.invoke(main, ["solve", SMALL, "--format", "json"]).output)["program"]
    assert d["today"]["cost_usd"] == solved["cost_usd"] and d["today"]["cash_usd"] == solved["cash_usd"]
    assert [row["value"] for row in d["sweeps"]["tokens"]] == [0.5, 0.75, 1.0, 1.25, 1.5]
    assert {row["unit"] for row in d["sweeps"]["tokens"]} == {"factor"}
    same = next(row for row in d["sweeps"]["tokens"] if row["value"] == 1.0)
    assert (same["cost_usd"], same["workloads"]) == (d["today"]["cost_usd"], d["today"]["workloads"]), \
        "the unchanged value, solved from the portable form, is today's plan"
    costs = [row["cost_usd"] for row in d["sweeps"]["electricity"]]
    assert costs == sorted(costs), "dearer power never makes the optimal program cheaper"
    be = d["break_even"]
    assert be["quote"] in {q for w in solved["workloads"] for q in w["quotes"]} | \
        {p["quote"] for p in solved["purchases"]}
    # Re-solved at the reported break-even the program still uses the quote as today; at the next price it does not;
    # the two are one resolution step apart and above today's price.
    pp = load_program(SMALL, today=TODAY)
    today_use = quote_use(d["today"], be["quote"])

    def use_at(price: float) -> tuple:
        varied = pp.with_sets([f"quotes.{be['quote']}.{be['field']}={price}"])
        return quote_use(headline(solve_program(varied, LIMITS)), be["quote"])

    assert today_use != (0, ()) and be["break_even"] > be["current"]
    assert use_at(be["break_even"]) == today_use and use_at(be["next_price"]) != today_use
    assert be["next_price"] - be["break_even"] <= be["resolution"] + 0.01


def test_sweep_of_a_program_is_the_same_on_every_executor(runner: CliRunner) -> None:
    args = ["sweep", SMALL, "--set-grid", "workloads.pre.schedule.deadline=2027-01-08,2027-08-31", "--format",
            "json"]
    local = runner.invoke(main, args + ["--executor", "local"])
    pool = runner.invoke(main, args + ["--executor", "process", "--workers", "2"])
    assert local.exit_code == 0, local.output
    assert local.output == pool.output, "byte-identical on every executor"
    points = json.loads(local.output)["points"]
    assert points[0]["status"] == "infeasible" and "workloads.pre.schedule.deadline" in points[0]["conflict"]
    solved = json.loads(runner.invoke(main, ["solve", SMALL, "--format", "json"]).output)["program"]
    assert points[1]["status"] == "optimal" and points[1]["cost_usd"] == solved["cost_usd"]
    text = runner.invoke(main, ["sweep", SMALL, "--set-grid", "budget.max_usd=30M", "--executor", "local"])
    assert text.exit_code == 0 and "bought (nodes)" in text.output


def test_diff_of_two_saved_programs_names_the_inputs(runner: CliRunner, tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert runner.invoke(main, ["solve", SMALL, "--save", str(a)]).exit_code == 0
    assert runner.invoke(main, ["solve", SMALL, "--save", str(b), "--set", "workloads.pre.workload.tokens=1.6T",
                                "--set", "quotes.lambda-b200-1x-ondemand.usd_per_gpu_hour=9"]).exit_code == 0
    r = runner.invoke(main, ["diff", str(a), str(b), "--format", "json"])
    assert r.exit_code == 1, r.output  # a change: diff(1)'s status
    causes = json.loads(r.output)["causes"]
    assert {"kind": "problem", "path": "workloads.pre.workload.tokens", "from": 1.4e12, "to": 1.6e12,
            "used": True} in causes
    assert any(c["kind"] == "quote" and c["id"] == "lambda-b200-1x-ondemand" and c["to"] == 9 for c in causes)
    same = runner.invoke(main, ["diff", str(a), str(a)])
    assert same.exit_code == 0 and "nothing changed" in same.output
    single = tmp_path / "single.json"
    assert runner.invoke(main, ["solve", "constraints/datacenter.yaml", "--save", str(single)]).exit_code == 0
    mixed = runner.invoke(main, ["diff", str(a), str(single)])
    assert mixed.exit_code == 2 and "compare a saved plan with a saved plan" in mixed.output + mixed.stderr


def test_frontier_of_a_program(runner: CliRunner) -> None:
    """Later dates never cost more; every program ends by its date; the last point is `plan solve`'s program; the
    first is the fastest: the program with its deadline a day earlier has no plan at all (re-solved here)."""
    r = runner.invoke(main, ["frontier", SMALL, "--points", "4", "--format", "json"])
    assert r.exit_code == 0, r.output
    points = json.loads(r.output)["frontier"]
    costs = [p["cost_usd"] for p in points]
    assert costs == sorted(costs, reverse=True) and len(points) >= 2
    assert all(p["finish"] <= p["end_by"] and p["status"] == "optimal" for p in points)
    solved = json.loads(runner.invoke(main, ["solve", SMALL, "--format", "json"]).output)["program"]
    assert points[-1]["chosen"] and points[-1]["cost_usd"] == solved["cost_usd"]
    day_before = (date.fromisoformat(points[0]["finish"]) - timedelta(days=1)).isoformat()
    faster = runner.invoke(main, ["solve", SMALL, "--set", f"schedule.deadline={day_before}"])
    assert faster.exit_code == 1 and "INFEASIBLE" in faster.output


def test_sensitivity_chart_of_a_program(runner: CliRunner, tmp_path: Path) -> None:
    """Without matplotlib `--chart` is refused before any work (exit 2); with it each swept input is a panel."""
    import importlib.util
    out = tmp_path / "s.svg"
    r = runner.invoke(main, ["sensitivity", SMALL, "--sweep", "electricity", "--executor", "local", "--chart",
                             str(out)])
    if importlib.util.find_spec("matplotlib") is None:
        assert r.exit_code == 2 and "matplotlib" in r.output + r.stderr
        return
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert text.lstrip().startswith("<?xml") and "electricity" in text and "today" in text


def test_moved_names_the_workloads_that_changed_and_the_purchases() -> None:
    today = {"workloads": [{"id": "a", "option": "x/buy"}, {"id": "b", "option": "y/cloud"}],
             "bought": [{"quote": "q", "nodes": 8}]}
    same = {"workloads": [{"id": "b", "option": "y/cloud"}, {"id": "a", "option": "x/buy"}],
            "bought": [{"quote": "q", "nodes": 8}]}
    other = {"workloads": [{"id": "a", "option": "z/cloud"}, {"id": "b", "option": "y/cloud"}], "bought": []}
    assert moved(today, same) == ""
    assert moved(today, other) == "a: z/cloud; purchases"


@pytest.mark.parametrize("args, origin", [
    (["sensitivity", SMALL, "--top", "2"], "--top"),
    (["frontier", SMALL, "--allow-expired"], "--allow-expired"),
    (["sweep", SMALL, "--set-grid", "workloads.pre.workload.tokens=1T,x"], "--set-grid"),
    (["sweep", SMALL, "--set-grid", "workloads.pr.workload.tokens=1T"], "did you mean 'pre'"),
])
def test_what_if_errors_are_one_line(runner: CliRunner, args: list[str], origin: str) -> None:
    r = runner.invoke(main, args)
    text = r.output
    assert r.exit_code == 2 and origin in text and "Traceback" not in text and len(text.strip().splitlines()) == 1
