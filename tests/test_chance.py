"""The deadline as a chance constraint (`policy.deadline_confidence`): the latest start of each point and quote set
is exact, the optimum equals exhaustive enumeration, and the answer moves the way a user expects.

Independent checks: `latest_start` (a bisection over planned starts) against the share met at the days around it
(`joint_share`, the plan as the model orders it); the decomposed solve with its joint-check cuts against the
enumeration of every plan (`solve/brute.py`, which checks each candidate's quotes together); the chosen plan's own
figures (`plan.risk`); and the checker's own start distribution (every plan the solve returns).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.estimate.chance import UNBOUNDED, quote_sets
from solver.estimate.delivery import order_by_day, ready_offset
from solver.inputs.problem import load_problem
from solver.solve.brute import brute_force
from solver.solve.pipeline import prepare, solve_problem
from test_optimality import assert_optimum_equals_enumeration, cost_objective, extra_quotes, problems

ROOT = Path(__file__).resolve().parent.parent
DATACENTER = ROOT / "constraints" / "datacenter.yaml"


def _meets(chance: Any, o: Any, pt: Any, quotes: tuple[Any, ...], start: int) -> bool:
    a = chance.problem.assumptions.values
    orders = []
    for q in quotes:
        if q.mode != "buy":
            orders.append((q, 0))
            continue
        ob = order_by_day(q, chance.problem.as_of)
        jit = start - ready_offset(q, o.accel.cls, a)
        orders.append((q, jit if ob is None else min(ob, jit)))
    return chance.meets(chance.joint_share(o, pt, start, orders))


@pytest.mark.parametrize("sets", [["policy.deadline_confidence=0.9"],
                                  ["policy.deadline_confidence=0.6", "schedule.deadline=2027-06-01",
                                   "risk.uncertainty.scenarios=2000"]])
def test_latest_start_is_the_last_day_that_meets_the_confidence(sets: list[str]) -> None:
    """For bought and rented options of the datacenter problem, every quote set of a few points: the share met at F*
    reaches the confidence and at F* + 1 it does not (no start does when F* is None; every start does when it is
    unbounded: nothing the plan orders moves with its start)."""
    problem = load_problem(DATACENTER, sets)
    ctx = prepare(problem)
    chance = ctx.screen.chance
    assert chance is not None
    checked = 0
    for o in ctx.universe.options:
        if o.offer not in ("buy", "cloud", "cloud-reserved"):
            continue
        pts = [p for p in o.points if p.time is not None and p.fits][::40][:3]
        for pt in pts:
            for qs in quote_sets(list(o.quotes))[:6]:
                f = chance.latest_start(o, pt, qs)
                if f is None:
                    assert not _meets(chance, o, pt, qs, 0), (o.id, pt.n, [q.id for q in qs])
                    continue
                if f == UNBOUNDED:
                    assert all(q.mode != "buy" for q in qs) or all(
                        order_by_day(q, problem.as_of) is not None for q in qs if q.mode == "buy")
                    assert _meets(chance, o, pt, qs, 0) and _meets(chance, o, pt, qs, ctx.universe.horizon)
                    checked += 1
                    continue
                assert _meets(chance, o, pt, qs, f), (o.id, pt.n, [q.id for q in qs], f)
                assert not _meets(chance, o, pt, qs, f + 1), (o.id, pt.n, [q.id for q in qs], f)
                checked += 1
    assert checked >= 20


@pytest.mark.parametrize("sets", [["policy.deadline_confidence=0.9"],
                                  ["policy.deadline_confidence=0.6", "schedule.deadline=2027-06-01",
                                   "risk.uncertainty.scenarios=2000"]])
def test_meets_alone_is_a_start_no_later_than_the_latest_start(sets: list[str]) -> None:
    """`meets_alone` (every quote's start law on one grid, what the bounds and the presolve use to leave a quote out
    at a point) against `latest_start` of each quote alone, at start days around F* and around each bought
    quote's switch to its last valid day (where the ordering regime changes)."""
    problem = load_problem(DATACENTER, sets)
    ctx = prepare(problem)
    chance = ctx.screen.chance
    assert chance is not None
    a = problem.assumptions.values
    checked = met = 0
    for o in ctx.universe.options:
        pts = [p for p in o.points if p.time is not None and p.fits][::25][:4]
        rows = np.arange(len(o.quotes))
        for pt in pts:
            latest = [chance.latest_start(o, pt, (q,)) for q in o.quotes]
            tries = {0, 1, 30, 200}
            for f in latest:
                if f is not None:
                    tries |= {f - 1, f, f + 1}
            for q in o.quotes:
                ob = order_by_day(q, problem.as_of)
                if q.mode == "buy" and ob is not None:
                    switch = ob + ready_offset(q, o.accel.cls, a)
                    tries |= {switch, switch + 1}
            for day in sorted(d for d in tries if d >= 0):
                starts = np.full(len(o.quotes), day, dtype=np.int64)
                got = chance.meets_alone(o, pt, starts, rows)
                want = [f is not None and (f == UNBOUNDED or day <= f) for f in latest]
                assert got.tolist() == want, (o.id, pt.n, day)
                checked += len(want)
                met += sum(want)
    assert checked >= 500 and 0 < met < checked


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(problems(), extra_quotes(), st.sampled_from([0.5, 0.8, 0.95]))
def test_chance_constrained_optimum_equals_enumeration(problem: dict[str, Any], quotes: list[dict[str, Any]],
                                                      confidence: float) -> None:
    problem = {**cost_objective(problem), "policy": {**problem["policy"], "deadline_confidence": confidence},
               "risk": {**problem.get("risk", {}), "uncertainty": {"scenarios": 400}}}
    assert_optimum_equals_enumeration(problem, quotes)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(problems(), extra_quotes(), st.sampled_from([0.5, 0.8, 0.95]))
def test_joint_cuts_alone_reach_the_same_optimum(problem: dict[str, Any], quotes: list[dict[str, Any]],
                                                 confidence: float) -> None:
    """With a constraint per single quote only (as options with many quotes get), plans whose quotes miss the
    confidence together are cut and re-solved: the optimum is still the enumeration's."""
    import solver.estimate.chance as chance
    saved = chance.EXACT_QUOTE_SETS
    chance.EXACT_QUOTE_SETS = 1
    try:
        test_chance_constrained_optimum_equals_enumeration.hypothesis.inner_test(problem, quotes, confidence)
    finally:
        chance.EXACT_QUOTE_SETS = saved


def test_a_higher_confidence_buys_more_certainty_and_never_costs_less() -> None:
    """The 200B example: as the required confidence rises, the plan's own scenarios meet it and its model cost
    never falls (each confidence's plans are a subset of the lower one's)."""
    last_cost = 0.0
    for c in (None, 0.6, 0.8, 0.9):
        problem = load_problem(DATACENTER, [f"policy.deadline_confidence={c}"] if c else [])
        ctx = prepare(problem)
        result = solve_problem(problem, ctx.settings, ctx)
        assert result.status == "optimal" and result.plan is not None
        from solver.answers.risk import draws_for, plan_risk
        p = plan_risk(ctx, result.plan, draws_for(problem)).p_deadline
        assert p is not None and (c is None or p >= c), (c, p)
        assert result.plan.total_cost >= last_cost - 1e-6, (c, result.plan.total_cost, last_cost)
        last_cost = result.plan.total_cost


TWO_QUOTES = [
    {"id": f"cut-{x}", "system": "dgx-h100", "mode": "cloud", "vendor": "test", "usd_per_gpu_hour": 2.0,
     "max_nodes": 4, "lead_time_days": 20, "lead_time_p90_days": 60, "fabric": "fab-x", "quoted_on": "2026-11-20",
     "valid_until": "2027-03-31", "kind": "list", "source": "test"} for x in "ab"]
"""Two rented quotes of one fabric, each alone too small for the fastest plan and each late (lognormal lead, p50 20
days, p90 60): a plan on both is ready when the later one is, so the pair misses a confidence that each meets alone."""


@pytest.mark.parametrize("exact_sets", [4, 1])
def test_a_plan_whose_quotes_miss_the_confidence_together_is_cut(exact_sets: int) -> None:
    """By hand (σ = ln 3 / 1.2816 = 0.857): one quote's lead at 95% is 20·e^(1.645σ) ≈ 82 days; two independent
    quotes are both ready in 95% of scenarios only at each one's 97.5% point, 20·e^(1.960σ) ≈ 107 days. A deadline
    95 days out lets one quote (4 nodes, ~9 days of training) meet 95% but not both (≥ 5 nodes, ≥ 107 + 5 days).
    With one constraint per quote the first plans found use both, fail the joint check and are cut; either way
    the answer is 4 nodes on one quote, the enumeration's optimum; at 50% the split plan stands."""
    import solver.estimate.chance as chance
    problem = {"name": "cut", "as_of": "2026-12-01",
               "workload": {"method": "pretrain", "params": "7B", "tokens": "200B", "seq_len": 2048, "layers": 32,
                            "hidden": 4096},
               "schedule": {"deadline": "2027-03-06"},
               "policy": {"modes": ["cloud"], "accelerators": {"include": ["h100-sxm"]}},
               "objective": {"cost": 1, "delay_cost_usd_per_day": 10000}}
    saved = chance.EXACT_QUOTE_SETS
    chance.EXACT_QUOTE_SETS = exact_sets
    try:
        with tempfile.TemporaryDirectory() as d:
            for c, want_nodes in ((0.5, None), (0.95, 4)):
                p = _only_test_quotes(problem, Path(d), [f"policy.deadline_confidence={c}",
                                                         "risk.uncertainty.scenarios=4000"])
                ctx = prepare(p)
                result = solve_problem(p, ctx.settings, ctx)
                brute = brute_force(p, ctx.universe, ctx.unit)
                assert brute is not None and result.plan is not None
                assert result.status == "optimal" and result.objective == brute.objective
                assert result.plan.nodes == brute.n, (c, result.plan.nodes, brute)
                if want_nodes is None:   # at 50 % the split plan stands: both quotes, more than one alone holds
                    assert result.plan.nodes > 4 and len(result.plan.quotes) == 2, result.plan
                else:
                    assert result.plan.nodes == want_nodes, (c, result.plan)
                cuts = [cut for cuts in ctx.cuts.values() for cut in cuts]
                if c == 0.95 and exact_sets == 1:
                    assert cuts and all(cut.quotes == ("cut-a", "cut-b") and cut.nodes > 4 for cut in cuts)
                else:
                    assert not cuts
    finally:
        chance.EXACT_QUOTE_SETS = saved


def _only_test_quotes(problem: dict[str, Any], tmp: Path, sets: list[str]) -> Any:
    import dataclasses
    from types import MappingProxyType

    import yaml
    (tmp / "q.yaml").write_text(yaml.safe_dump({"quotes": TWO_QUOTES}))
    (tmp / "p.yaml").write_text(yaml.safe_dump({**problem, "catalogs": ["q.yaml"]}, sort_keys=False))
    loaded = load_problem(tmp / "p.yaml", sets)
    cat = loaded.files_catalog
    assert cat is not None
    keep = {k: v for k, v in cat.quotes.items() if k.startswith("cut-")}
    return loaded.with_catalog(dataclasses.replace(cat, quotes=MappingProxyType(keep)))


def test_a_pair_out_only_because_its_quotes_are_late_together_gets_a_reason() -> None:
    """The two quotes above with plans of fewer than 5 nodes forbidden: every plan needs both, and both are ready
    in 95% of scenarios only ~107 days out, after the deadline. With one constraint per quote the model alone has
    plans; only the solve's joint-check cuts rule them out. The reason for the pair must carry those cuts: it names
    the confidence (without it the split plan stands, as at 50% above), and says its minimality is not proven."""
    import solver.estimate.chance as chance
    from solver.answers.conflicts import why_excluded
    problem = {"name": "cut", "as_of": "2026-12-01",
               "workload": {"method": "pretrain", "params": "7B", "tokens": "200B", "seq_len": 2048, "layers": 32,
                            "hidden": 4096},
               "schedule": {"deadline": "2027-03-06"},
               "policy": {"modes": ["cloud"], "accelerators": {"include": ["h100-sxm"]}},
               "rules": [{"name": "at-least-5", "when": {"nodes": {"lt": 5}}, "then": "forbid"}],
               "objective": {"cost": 1, "delay_cost_usd_per_day": 10000}}
    saved = chance.EXACT_QUOTE_SETS
    chance.EXACT_QUOTE_SETS = 1
    try:
        with tempfile.TemporaryDirectory() as d:
            p = _only_test_quotes(problem, Path(d), ["policy.deadline_confidence=0.95",
                                                     "risk.uncertainty.scenarios=4000"])
            ctx = prepare(p)
            result = solve_problem(p, ctx.settings, ctx)
            assert result.status == "infeasible" and ctx.cuts.get("h100-sxm/cloud")
            conflict = why_excluded(ctx, ctx.universe.subset("h100-sxm/cloud"), "h100-sxm/cloud")
            assert "policy.deadline_confidence" in conflict.groups and not conflict.proven
            relaxed = _only_test_quotes(problem, Path(d), ["policy.deadline_confidence=0.5",
                                                           "risk.uncertainty.scenarios=4000"])
            rctx = prepare(relaxed)
            plan = solve_problem(relaxed, rctx.settings, rctx).plan
            assert plan is not None and plan.nodes >= 5 and len(plan.quotes) == 2
    finally:
        chance.EXACT_QUOTE_SETS = saved
