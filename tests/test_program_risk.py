"""`plan risk PROGRAM`: the chosen program by scenarios.

Checked against what the scenario model must do, worked out here by hand: with every uncertainty at its median the
program runs exactly as planned; with a vendor late by a known lead time (computed here from the quote's p50/p90
lognormal), an owned run waits for it and its successor for it; probabilities are consistent with each other; the
command is deterministic and its bad options are one-line errors.
"""

from __future__ import annotations

import json
import math
from datetime import date
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cli import main
from solver.answers.program import solve_program
from solver.answers.program_risk import prepare_plan, simulate
from solver.answers.risk import draws_for
from solver.estimate.uncertainty import GROUPS
from solver.inputs.catalog import load_catalog
from solver.inputs.program import load_program
from solver.solve.engine import Limits

ROOT = Path(__file__).resolve().parent.parent
SMALL = str(ROOT / "tests" / "programs" / "small.yaml")
TODAY = date(2026, 12, 1)
LIMITS = Limits(time_limit=20)
BOUGHT = ["policy.modes=[buy]", "workloads.pre.schedule.deadline=2027-12-31", "schedule.deadline=2028-01-31",
          "budget.max_usd=100M"]
"""The small program made to buy its nodes (only `buy` allowed, time and money to do it)."""


def _held(pp, **z: float):
    draws = draws_for(pp.first, 40)
    for group in GROUPS:
        draws = draws.holding(group, z.get(group, 0.0))
    return draws


@pytest.fixture(scope="module")
def bought():
    pp = load_program(SMALL, BOUGHT, today=TODAY)
    rep = solve_program(pp, LIMITS)
    assert rep.outcome.plan is not None and rep.outcome.plan.purchases
    return pp, rep


def test_at_the_medians_the_program_runs_as_planned(bought) -> None:
    """Median MFU, median interruptions, median lead times (earlier than the planned p90: the order names the
    planned delivery day) and median porting: every workload finishes on its planned day. The cost of a plan on a
    list-price cloud quote is its planned cost (the plan's cost less the runs' expected extra hours); a bought estimate quote costs less than planned (the planner adds
    the estimated-price premium, the median price factor is below its mean)."""
    pp = load_program(SMALL, today=TODAY)
    rep = solve_program(pp, LIMITS)
    for program, report in ((pp, rep), bought):
        sim = simulate(program, report, _held(program))
        for r in report.outcome.plan.runs:
            assert set(sim.finish[r.workload].tolist()) == {r.end_day}, r.workload
    # The plan prices each rented run at its mean over the run scenarios: its planned lines plus `throughput`.
    extra = sum(r.point.fixed.cost.get("throughput", 0.0) +
                r.run.candidate.nodes * r.point.per_node[r.run.candidate.quote].cost.get("throughput", 0.0)
                for r in prepare_plan(pp, rep).runs)
    assert extra > 0
    cloud = simulate(pp, rep, _held(pp)).cost
    assert np.allclose(cloud, rep.outcome.plan.cost_usd - extra, rtol=1e-3)
    bp, brep = bought
    assert any(load_catalog([]).quotes[p.quote.quote].kind == "estimate" for p in brep.outcome.plan.purchases)
    assert (simulate(bp, brep, _held(bp)).cost < brep.outcome.plan.cost_usd).all()


def test_a_late_vendor_delays_the_owned_run_and_its_successor(bought) -> None:
    """Every lead time at z = 1.5 of its quote's lognormal (fitted here from p50 and p90): the owned pretraining
    starts when the last lot it needs is installed, or as planned if that is earlier; the fine-tune follows it."""
    pp, rep = bought
    plan = rep.outcome.plan
    z = 1.5
    cat = load_catalog([])
    pre, sft = plan.run("pre"), plan.run("sft")
    ready = pre.start_day
    for p in plan.purchases:
        if p.usable_day <= pre.start_day:
            q = cat.quotes[p.quote.quote]
            sigma = (math.log(q.lead_time_p90_days) - math.log(q.lead_time_days)) / 1.2815515655446004
            late = math.ceil(math.exp(math.log(q.lead_time_days) + z * sigma) - 1e-9)
            ready = max(ready, max(p.delivered_day, p.order_day + late) + p.quote.install_days)
    sim = simulate(pp, rep, _held(pp, lead=z))
    pre_days = pre.end_day - pre.start_day
    assert ready > pre.start_day, "z = 1.5 must be later than the plan's own lead time for this check to bite"
    assert set(sim.finish["pre"].tolist()) == {ready + pre_days}
    assert set(sim.finish["sft"].tolist()) == {ready + pre_days + (sft.end_day - sft.start_day)}


def test_program_risk_cli_is_deterministic_and_consistent(runner: CliRunner) -> None:
    args = ["risk", SMALL, "--format", "json"]
    first, second = runner.invoke(main, args), runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    assert first.output == second.output
    d = json.loads(first.output)
    per = [w["p_deadline"] for w in d["workloads"] if w["p_deadline"] is not None]
    assert d["p_all_deadlines"] <= min(per) + 1e-9, "all deadlines met is never likelier than one of them"
    for w in d["workloads"]:
        assert w["finish_p50"] <= w["finish_p90"] and w["planned_finish"] <= w["finish_p90"]
    mfu = next(t for t in d["tornado"] if t["uncertainty"] == "mfu")
    assert mfu["p_all_deadlines"][0] >= mfu["p_all_deadlines"][1], "a low MFU never helps the deadlines"
    assert d["cost_usd"]["expected"] <= d["cost_usd"]["cvar95"]
    assert abs(sum(h["share"] for h in d["histogram"]["end"]) - 1) < 1e-3
    text = runner.invoke(main, ["risk", SMALL])
    assert text.exit_code == 0 and "P(by deadline)" in text.output and "every deadline met" in text.output


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


def test_program_risk_bad_options(runner: CliRunner) -> None:
    r = runner.invoke(main, ["risk", SMALL, "--allow-expired"])
    assert r.exit_code == 2 and "--allow-expired" in r.output and len(r.output.strip().splitlines()) == 1


def test_program_charts(runner: CliRunner, tmp_path: Path) -> None:
    """With the chart extra, `plan risk` and `plan frontier` of a program draw their pictures."""
    pytest.importorskip("matplotlib")
    for command in ("risk", "frontier"):
        out = tmp_path / f"{command}.svg"
        r = runner.invoke(main, [command, SMALL, "--chart", str(out)] + (["--points", "3"] if command == "frontier"
                                                                           else []))
        assert r.exit_code == 0, r.output
        assert out.read_text().lstrip().startswith("<?xml")
