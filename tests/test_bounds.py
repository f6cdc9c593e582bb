"""Bound-pruned solving (solve/grow.py, used by solve_pair and PairOracle.minimize) against exhaustive enumeration.

The pruned solve models only the points whose lower bound could still win. These tests make the first batch
tiny (2 points) so that the grow-and-resolve loop runs on every problem, and compare with `brute.py`, which
enumerates every point and every split of its nodes without any bound:
- the optimum, and every runner-up pair's optimum, equals the enumeration's;
- a point's bound never exceeds the best plan the enumeration finds at that point, and a point the bounds
  call impossible has no plan;
- the explanation's bounded minimum of cash/cost equals the unbounded model's.
"""

from __future__ import annotations

import itertools
import math
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import solver.model.bounds as bounds_mod
import solver.model.builder as builder_mod
import solver.solve.grow as grow_mod
from solver.answers.conflicts import PairOracle
from solver.estimate.checkpoints import data_cost, provider_class
from solver.estimate.cost import buy_node_lines, cloud_node_lines, spare_fraction
from solver.estimate.payments import deposit_share_days
from solver.estimate.options import owning, problem_run_data, spare_nodes_pct
from solver.estimate.outlook import Outlook
from solver.inputs.problem import load_problem
from solver.model.objective import universe_ceiling
from solver.solve.brute import best_at, brute_force
from solver.solve.pipeline import SolveSettings, prepare, solve_problem

from test_optimality import EXAMPLES, _load, extra_quotes, problems

ROOT = Path(__file__).resolve().parent.parent


def _full_status(oracle: PairOracle, pair: str, active: list[str]) -> str:
    """The pair's status on its full model (with the oracle's forcing) under `active`: the reference."""
    from solver.solve.engine import FEASIBLE, OPTIMAL
    b = oracle.model(pair)
    b.model.clear_assumptions()
    b.model.add_assumptions([b.lits[g] for g in active if g in b.lits] + oracle.forced[pair])
    status = oracle.ctx.engine.solve(b.model, label="full").status
    b.model.clear_assumptions()
    return FEASIBLE if status in (OPTIMAL, FEASIBLE) else status


def _workable_options(problem: dict[str, Any], quotes: list[dict[str, Any]], d: str) -> tuple[Any, list[Any]]:
    """The prepared random problem and its options with a workable point."""
    ctx = prepare(_load(problem, quotes, Path(d)), SolveSettings())
    return ctx, [o for o in ctx.universe.options if any(pt.workable for pt in o.points)]


@contextmanager
def _refined_workable(problem: dict[str, Any], quotes: list[dict[str, Any]]) -> Iterator[tuple[Any, list[Any]]]:
    """`_workable_options` of the random problem with every option of two quotes or more counted as big, so that the
    refined bounds and the usable-quote models run on a few random quotes (restored after)."""
    old = bounds_mod.REFINE_FROM
    bounds_mod.REFINE_FROM = builder_mod.REFINE_FROM = 2
    try:
        with tempfile.TemporaryDirectory() as d:
            yield _workable_options(problem, quotes, d)
    finally:
        bounds_mod.REFINE_FROM = builder_mod.REFINE_FROM = old


def _tweak(problem: dict[str, Any], draw_estimates: bool, discount: bool) -> dict[str, Any]:
    p = {**problem, "policy": {**problem["policy"], "allow_estimates": draw_estimates}}
    return _with_discount(p) if discount else p


def _with_discount(problem: dict[str, Any]) -> dict[str, Any]:
    """A negative surcharge: the cost bounds take 20 % off (`Bounds.kept`), the presolve is off."""
    return {**problem, "rules": list(problem["rules"]) + [{"name": "discount", "when": {"mode": "cloud"},
                                                           "then": {"add_pct": -20}}]}


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), extra_quotes(), st.booleans(), st.booleans())
def test_pruned_solve_equals_brute_force_for_every_pair(problem: dict[str, Any], quotes: list[dict[str, Any]],
                                                        estimates: bool, discount: bool) -> None:
    problem = _tweak(problem, estimates, discount)
    old, old_weight, old_refine = grow_mod.INITIAL_POINTS, grow_mod.INITIAL_WEIGHT, bounds_mod.REFINE_FROM
    grow_mod.INITIAL_POINTS, grow_mod.INITIAL_WEIGHT, bounds_mod.REFINE_FROM = 2, 1, 2
    try:
        with tempfile.TemporaryDirectory() as d:
            p = _load(problem, quotes, Path(d))
            result = solve_problem(p, SolveSettings(alternatives=False))
            ctx = prepare(p, SolveSettings())
            u, unit = ctx.universe, ctx.unit
            hi = universe_ceiling(p, u, unit, Outlook.of(p))
            best = brute_force(p, u, unit, cost_hi=hi)
            if best is None:
                assert result.status == "infeasible"
                return
            assert result.status == "optimal"
            assert result.objective == best.objective
            assert result.plan is not None and result.plan.total_cost >= 0
            # Every runner-up is its pair's own optimum; one searched only to within `settle` (it cannot rank
            # first or second) is no better than the optimum and no more than its stated gap above it.
            for k, alt in enumerate(result.alternatives):
                sub = brute_force(p, u.subset(alt.plan.pair), unit, cost_hi=hi)
                assert sub is not None
                if alt.settled_usd:
                    assert k >= 1, "the runner-up is always proven"
                    assert sub.cost_units <= alt.plan.model_cost_units, (alt.plan.pair, sub)
                    assert alt.plan.model_cost_units - sub.cost_units <= alt.settled_usd / unit + 1e-9
                    continue
                assert alt.plan.model_cost_units == sub.cost_units, (alt.plan.pair, alt.plan.option, sub)
                assert (alt.plan.finish - p.as_of).days == sub.finish
    finally:
        grow_mod.INITIAL_POINTS, grow_mod.INITIAL_WEIGHT, bounds_mod.REFINE_FROM = old, old_weight, old_refine


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), extra_quotes(), st.booleans(), st.booleans(), st.booleans())
def test_point_bound_is_below_every_plan_at_the_point(problem: dict[str, Any], quotes: list[dict[str, Any]],
                                                      estimates: bool, refined: bool, discount: bool) -> None:
    """Both bounds — the plain one of options with few quotes and the refined one (premium levels, earliest
    start) of big options — are checked against the enumeration: `refined` applies the latter to every option;
    `discount` adds a rule taking 20 % off every cloud plan's cost lines (the bounds take it off their result)."""
    problem = _tweak(problem, estimates, discount)
    old = bounds_mod.REFINE_FROM
    bounds_mod.REFINE_FROM = 2 if refined else old
    try:
        _check_point_bounds(problem, quotes)
    finally:
        bounds_mod.REFINE_FROM = old


def _check_point_bounds(problem: dict[str, Any], quotes: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = _load(problem, quotes, Path(d))
        ctx = prepare(p, SolveSettings())
        if not ctx.bounds.sound:  # a negative add_pct: the bounds are off, and no search or explanation reads them
            return
        u, unit = ctx.universe, ctx.unit
        hi = universe_ceiling(p, u, unit, Outlook.of(p))
        for o in u.options:
            for pt in o.points:
                if not pt.workable or ctx.screen.excluded(pt):
                    continue
                exact = best_at(pt, p, u, unit, cost_hi=hi)
                bound = ctx.bounds.point_bound(pt, hi)
                if bound is None:
                    assert exact is None, f"{o.id}@{pt.n}: bound says impossible, enumeration found {exact}"
                elif exact is not None:
                    assert bound <= exact.objective, (o.id, pt.n, bound, exact)
                    low = ctx.bounds.point_lower(pt)
                    assert low is not None and low[0] <= exact.cost_units and low[2] <= exact.finish
                    floor = ctx.bounds.point_floor(pt)
                    assert floor[0] <= exact.cost_units and floor[2] <= exact.finish, (o.id, pt.n, floor, exact)
                    # Under a cap the exact plan meets, the bound still admits it (the earliest start a capped
                    # plan can have is found among the quotes ready by then).
                    capped = ctx.bounds.point_lower(pt, cost_cap=exact.cost_units)
                    assert capped is not None and capped[0] <= exact.cost_units and capped[2] <= exact.finish, \
                        (o.id, pt.n, capped, exact)


@settings(max_examples=max(5, EXAMPLES // 2), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), extra_quotes(), st.booleans())
def test_bounded_minimum_equals_full_model_minimum(problem: dict[str, Any], quotes: list[dict[str, Any]],
                                                   discount: bool) -> None:
    """PairOracle.minimize with and without bounds: the same minimum cash, cost and finish, under all groups but
    the budget, all but the deadline, and every group (with a 20 % cloud discount or not). Every option counts as
    big, so the bounded models also leave out the quotes no plan can use under the active groups
    (`Bounds.usable`)."""
    old = bounds_mod.REFINE_FROM
    bounds_mod.REFINE_FROM = builder_mod.REFINE_FROM = 2
    try:
        _check_bounded_minimum(_with_discount(problem) if discount else problem, quotes)
    finally:
        bounds_mod.REFINE_FROM = builder_mod.REFINE_FROM = old


@settings(max_examples=max(5, EXAMPLES // 2), deadline=None, suppress_health_check=[HealthCheck.too_slow],
          derandomize=True, database=None)  # the same examples every run: the vacuity check below counts them
@given(problems(), extra_quotes())
def test_bounded_minimum_by_parts_equals_full_model_minimum(problem: dict[str, Any],
                                                            quotes: list[dict[str, Any]]) -> None:
    """The same with every growth searched part by part (`grow._by_parts`: a first model of one point, parts of
    one point), also with one fabric per job dropped, as a way out drops it: the least of the parts' least plans
    is the full model's minimum, proven. Every point's bound is taken as 0 (a valid lower bound of a cost or a
    finish day) and the points come worst bound first, so the search solves them one by one and the first is
    seldom the least: in the real order it nearly always is on problems this small, and a search that stopped
    after it would pass."""
    old = (bounds_mod.REFINE_FROM, grow_mod.INITIAL_POINTS, grow_mod.INITIAL_WEIGHT, grow_mod.PART_WEIGHT)
    bounds_mod.REFINE_FROM = builder_mod.REFINE_FROM = 2
    grow_mod.INITIAL_POINTS, grow_mod.INITIAL_WEIGHT, grow_mod.PART_WEIGHT = 1, 1, 0
    parts = [0]
    by_parts = grow_mod._by_parts
    candidates = PairOracle._candidates

    def counted(*args: Any) -> Any:
        parts[0] += 1
        return by_parts(*args)

    def weakest(self: PairOracle, *args: Any) -> Any:
        return [(0, pt) for _lb, pt in reversed(candidates(self, *args))]
    grow_mod._by_parts = counted
    PairOracle._candidates = weakest  # type: ignore[method-assign]
    try:
        _check_bounded_minimum(problem, quotes, lambda groups: (
            [g for g in groups if g != "policy.max_fabrics"],
            [g for g in groups if g not in ("policy.max_fabrics", "schedule.deadline")],
            [g for g in groups if g != "budget.max_usd"]), kinds=("cost", "finish"))
    finally:
        bounds_mod.REFINE_FROM = builder_mod.REFINE_FROM = old[0]
        grow_mod.INITIAL_POINTS, grow_mod.INITIAL_WEIGHT, grow_mod.PART_WEIGHT = old[1:]
        grow_mod._by_parts = by_parts
        PairOracle._candidates = candidates  # type: ignore[method-assign]
    _PARTS_RUN.append(parts[0])


_PARTS_RUN: list[int] = []
"""How many searches by parts each example of the test above ran."""


def test_the_examples_above_search_by_parts() -> None:
    """The test above is not vacuous: its examples do search by parts (run here if it was not run before)."""
    if not _PARTS_RUN:
        test_bounded_minimum_by_parts_equals_full_model_minimum()
    assert sum(1 for k in _PARTS_RUN if k) >= len(_PARTS_RUN) // 3, _PARTS_RUN


def _check_bounded_minimum(problem: dict[str, Any], quotes: list[dict[str, Any]],
                           actives: Callable[[list[str]], Sequence[list[str]]] | None = None,
                           kinds: Sequence[str] = ("cash", "cost", "finish")) -> None:
    """PairOracle.minimize with and without bounds under each set of groups `actives` makes of all of them
    (default: all but the budget, all but the deadline, all): the same minimum, both proven."""
    with tempfile.TemporaryDirectory() as d:
        p = _load(problem, quotes, Path(d))
        oracle = PairOracle(prepare(p, SolveSettings()))
        groups = oracle.all_groups()
        sets = actives(groups) if actives is not None else (
            [g for g in groups if g != "budget.max_usd"], [g for g in groups if g != "schedule.deadline"], groups)
        for active in sets:
            for kind in kinds:
                q = {"cash": lambda b: b.cash, "cost": lambda b: b.cost, "finish": lambda b: b.finish}[kind]
                fast = oracle.minimize(active, q, lower=kind)
                slow = oracle.minimize(active, q)
                assert (fast is None) == (slow is None)
                if fast is not None and slow is not None:
                    assert fast.value == slow.value, (kind, fast.value, fast.pair, slow.value, slow.pair)
                    assert fast.proven and slow.proven


@settings(max_examples=max(5, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), extra_quotes(), st.integers(min_value=0, max_value=10_000))
def test_bounded_minimum_under_a_why_not_forcing_equals_the_full_models(problem: dict[str, Any],
                                                                         quotes: list[dict[str, Any]],
                                                                         pick: int) -> None:
    """As above, with the plans forced to use one option or one quote (a why-not's target): forcing only removes
    plans, so the bounded search over growing point sets finds the full model's minimum."""
    from solver.answers.whynot import forcing
    old = bounds_mod.REFINE_FROM
    bounds_mod.REFINE_FROM = builder_mod.REFINE_FROM = 2
    try:
        with tempfile.TemporaryDirectory() as d:
            p = _load(problem, quotes, Path(d))
            ctx = prepare(p, SolveSettings())
            options = [o for o in ctx.universe.options if any(pt.workable for pt in o.points)]
            if not options:
                return
            # Forced onto its dearest quote when it has several (the forcing then binds), else onto the option.
            target = max(options, key=lambda o: (len(o.quotes), o.id)) if pick % 2 else options[pick % len(options)]
            dearest = max(target.quotes, key=lambda q: (q.price or 0.0, q.id)) if len(target.quotes) > 1 else None
            qid = dearest.id if dearest is not None else None
            oracle = PairOracle(ctx, pairs=[target.pair], forced=forcing([target], qid),
                                protect=frozenset({qid}) if qid else frozenset())
            groups = oracle.all_groups()
            for active in ([g for g in groups if g != "budget.max_usd"], groups):
                for kind in ("cash", "cost", "finish"):
                    q = {"cash": lambda b: b.cash, "cost": lambda b: b.cost, "finish": lambda b: b.finish}[kind]
                    fast = oracle.minimize(active, q, lower=kind)
                    slow = oracle.minimize(active, q)
                    assert (fast is None) == (slow is None), (target.id, qid, kind)
                    if fast is not None and slow is not None:
                        assert fast.value == slow.value, (target.id, qid, kind, fast.value, slow.value)
    finally:
        bounds_mod.REFINE_FROM = builder_mod.REFINE_FROM = old


@settings(max_examples=max(5, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), extra_quotes(), st.integers(min_value=0, max_value=10_000))
def test_bounded_feasibility_under_a_forcing_is_the_full_models(problem: dict[str, Any],
                                                                quotes: list[dict[str, Any]], pick: int) -> None:
    """A why-not's conflict search decides each pair under a forcing on a model of only the points and quotes the
    bounds leave (`PairOracle._bounded_status`): the same status as the pair's full model, under every group, all
    but the budget, all but the deadline, and none."""
    from solver.answers.whynot import forcing
    with _refined_workable(problem, quotes) as (ctx, options):
        if not options:
            return
        target = options[pick % len(options)]
        dearest = max(target.quotes, key=lambda q: (q.price or 0.0, q.id)) if pick % 2 and target.quotes else None
        qid = dearest.id if dearest is not None else None
        oracle = PairOracle(ctx, pairs=[target.pair], forced=forcing([target], qid),
                            protect=frozenset({qid}) if qid else frozenset())
        groups = oracle.all_groups()
        for active in (groups, [g for g in groups if g != "budget.max_usd"],
                       [g for g in groups if g != "schedule.deadline"], []):
            bounded = oracle._bounded_status(target.pair, set(active))
            full = _full_status(oracle, target.pair, active)
            assert bounded == full, (target.id, qid, active, bounded, full)


@settings(max_examples=max(5, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), extra_quotes(), st.integers(min_value=0, max_value=10_000))
def test_pair_status_without_forcing_is_the_full_models(problem: dict[str, Any],
                                                         quotes: list[dict[str, Any]], pick: int) -> None:
    """The conflict search's oracle (no forcing) decides a pair by its cover, a plan written down or a model of
    only the points and quotes its bounds leave (`PairOracle._bounded_status`): on random problems, its answer,
    and the bounded model's alone, equal the pair's full model's under the groups asked (all, all but the pair's
    own capacities, all but other pairs', all but the budget, all but the deadline, none). The memo's key is
    tested where its staleness would show (`test_pair_status_follows_its_own_capacities_and_not_others`)."""
    from solver.model.groups import capacity_quote
    with _refined_workable(problem, quotes) as (ctx, options):
        if not options:
            return
        oracle = PairOracle(ctx)
        groups = oracle.all_groups()
        pairs = sorted({o.pair for o in options})
        for pair in [pairs[(pick + k) % len(pairs)] for k in range(min(2, len(pairs)))]:
            mine = {q.id for o in ctx.universe.subset(pair).options for q in o.quotes}
            own = [g for g in groups if capacity_quote(g) in mine]
            other = [g for g in groups if capacity_quote(g) not in (None, *mine)]
            for active in (groups, [g for g in groups if g not in own], [g for g in groups if g not in other],
                           [g for g in groups if g != "budget.max_usd"],
                           [g for g in groups if g != "schedule.deadline"], []):
                full = _full_status(oracle, pair, active)
                assert oracle.pair_status(pair, active) == full, (pair, active, full)
                assert oracle._bounded_status(pair, set(active)) == full, (pair, active, full)


def test_pair_status_follows_its_own_capacities_and_not_others() -> None:
    """The oracle keeps each pair's answers under the groups that touch it (`PairOracle._key`). On the bundled
    problem with a 0.99 deadline confidence only some capacity can meet (rules off), h200/cloud is asked under
    every subset of its own quotes' capacities, the deadline and its confidence, by one oracle (of it and
    b200/cloud), so that later questions meet the answers of earlier ones. Every answer, and that of the model of
    the points its bounds leave alone (`PairOracle._bounded_status`), equals the pair's full model's; the same
    questions with b200/cloud's capacities dropped get the same answers; and the questions the cover does not
    settle get both answers, or a key that left out the pair's own capacities could not be caught (it is)."""
    from solver.model.groups import capacity_quote
    problem = load_problem(ROOT / "constraints" / "datacenter.yaml",
                           ["rules=[]", "policy.deadline_confidence=0.99", "schedule.deadline=2027-04-01"])
    ctx = prepare(problem, SolveSettings(processes=1))
    oracle = PairOracle(ctx, pairs=["h200/cloud", "b200/cloud"])
    groups = oracle.all_groups()
    pair = "h200/cloud"
    mine = {q.id for o in ctx.universe.subset(pair).options for q in o.quotes}
    own = [g for g in groups if capacity_quote(g) in mine]
    other = {g for g in groups if capacity_quote(g) not in (None, *mine)}
    assert own and other
    varied = own + ["schedule.deadline", "policy.deadline_confidence"]
    uncovered = set()
    for r in range(len(varied) + 1):
        for dropped in itertools.combinations(varied, r):
            active = [g for g in groups if g not in dropped]
            got = oracle.pair_status(pair, active)
            assert got == _full_status(oracle, pair, active), (dropped, got)
            assert oracle._bounded_status(pair, set(active)) == got, (dropped, got)
            assert oracle.pair_status(pair, [g for g in active if g not in other]) == got, dropped
            if not oracle.covered(pair, set(active)):
                uncovered.add(got)
    assert uncovered == {"feasible", "infeasible"}, uncovered


def _node_lines(o: Any, q: Any, lp: Any, n: int, ideal: float, wall: float, wait: int = 0) -> Any:
    """One node's lines straight from the cost functions (the reference the templates are checked against)."""
    a = lp.assumptions.values
    spares = spare_fraction(n, spare_nodes_pct(lp))
    if o.mode == "buy":
        site = lp.spec.site
        return buy_node_lines(price=q.price, nodes=n, ideal_hours=ideal, wall_hours=wall,
                              install_days=a.install_days[o.accel.cls], wait_days=wait,
                              node_kw=float(o.system.node_kw.value), pue=site.pue,
                              usd_per_kwh=site.electricity_usd_per_kwh, money=a.money, owning=owning(lp),
                              consumer=o.accel.cls == "consumer", estimate=q.kind == "estimate", spares=spares,
                              deposit_share_days=deposit_share_days(q, a.money, a.confidence))
    data = data_cost(problem_run_data(lp), provider_class(q.mode, q.vendor, a.data), a.data).per_node(n)
    return cloud_node_lines(usd_per_gpu_hour=q.price, per_node=o.system.per_node, ideal_hours=ideal,
                            wall_hours=wall, commit_months=q.commit_months, money=a.money,
                            estimate=q.kind == "estimate", term_hours=q.term_hours,
                            after_usd_per_gpu_hour=q.after_term_rate, spares=spares, data=data)


def test_price_templates_match_the_cost_functions() -> None:
    """Per-node lines and totals scaled from the per-price-key templates equal a direct call of the cost model
    (to 1e-9: the totals are affine fits, L0 + price × (L1 − L0), which round differently in the last digits);
    the `throughput` line (the lines' mean over the run scenarios less their planned figure, computed by the
    templates from interpolation masses) equals the mean of a direct call at every scenario's wall hours."""
    from solver.estimate.scenarios import RunSampler
    lp = load_problem(Path(__file__).resolve().parent.parent / "constraints" / "datacenter.yaml")
    u = prepare(lp, SolveSettings()).universe
    sampler = RunSampler(lp)
    checked, by_scenario = 0, []
    for o in u.options:
        if o.mode not in ("buy", "cloud"):
            continue
        for pt in o.points[::37]:
            if pt.time is None:
                continue
            t = pt.time
            for q in o.quotes:
                direct = _node_lines(o, q, lp, pt.n, t.ideal_hours, t.wall_hours)
                got = pt.per_node[q.id]
                assert set(got.cost) == set(direct.cost) | {"throughput"}
                for name, v in direct.cost.items():
                    assert got.cost[name] == pytest.approx(v, rel=1e-9, abs=1e-6)
                for name, v in direct.cash.items():
                    assert got.cash[name] == pytest.approx(v, rel=1e-9, abs=1e-6)
                assert pt.per_node.cost(q.id) == pytest.approx(direct.total_cost + got.cost["throughput"],
                                                               rel=1e-9, abs=1e-6)
                checked += 1
                if checked % 61 == 0:
                    # In scenario s every hour of the run counts (ideal = wall = W_s): the mean of the direct lines
                    # over the scenarios less the planned lines.
                    walls = sampler.runs(t, o.accel.software, o.accel.cls).walls
                    lines = [_node_lines(o, q, lp, pt.n, w, w) for w in walls]
                    mean_cost = sum(x.total_cost for x in lines) / len(lines)
                    mean_cash = sum(x.total_cash for x in lines) / len(lines)
                    assert got.cost["throughput"] == pytest.approx(mean_cost - direct.total_cost, rel=1e-6, abs=1e-3)
                    assert got.cash["throughput"] == pytest.approx(mean_cash - direct.total_cash, rel=1e-6, abs=1e-3)
                    if o.mode == "buy":   # waiting 40 days for the start: the expected difference it makes
                        waited = [_node_lines(o, q, lp, pt.n, w, w, wait=40) for w in walls]
                        extra = pt.per_node.waited(q.id, 40)
                        assert extra[0] == pytest.approx(sum(x.total_cost for x in waited) / len(walls) - mean_cost,
                                                         rel=1e-6, abs=1e-3)
                        assert extra[1] == pytest.approx(sum(x.total_cash for x in waited) / len(walls) - mean_cash,
                                                         rel=1e-6, abs=1e-3)
                    by_scenario.append(o.mode)
    assert checked > 50 and len(by_scenario) >= 5 and {"buy", "cloud"} <= set(by_scenario)


def test_plans_from_models_with_different_cost_ceilings_compare_lexicographically() -> None:
    """why-not compares plans solved in different models (a re-priced quote changes the cost ceiling): the time
    objective must rank by finish, then cost, whatever ceilings the models had."""
    from datetime import timedelta
    from types import SimpleNamespace

    from solver.answers.whynot import scores_no_worse

    file = Path(__file__).resolve().parent.parent / "constraints" / "finetune-70b.yaml"
    lp_time = load_problem(file, ["objective=time"])
    lp_cost = load_problem(file, ["objective=cost"])
    early_dear = SimpleNamespace(model_cost_units=900, finish=lp_time.as_of + timedelta(days=10))
    late_cheap = SimpleNamespace(model_cost_units=100, finish=lp_time.as_of + timedelta(days=11))
    assert scores_no_worse(early_dear, late_cheap, lp_time, 400, 1)
    assert not scores_no_worse(late_cheap, early_dear, lp_time, 400, 1)
    assert scores_no_worse(late_cheap, early_dear, lp_cost, 400, 1)
    assert not scores_no_worse(early_dear, late_cheap, lp_cost, 400, 1)


def _three_quotes() -> tuple[bounds_mod._Split, np.ndarray, np.ndarray]:
    """Three quotes for 3 nodes: A 10/node ×2 (premium 5, ready day 10), B 12/node ×2 and C 20/node ×4 (no premium,
    ready day 0); cash per node equal to cost."""
    per = np.array([10, 12, 20])
    return bounds_mod._Split(np.array([2, 2, 4]), per, per, 3), np.array([5, 0, 0]), np.array([10, 0, 0])


def test_cost_bound_counts_each_premium_with_the_quotes_it_allows() -> None:
    """By hand: a premium below 5 allows B and C only (2×12 + 1×20 = 44); a premium of 5 allows A too
    (2×10 + 1×12 = 32, + 5 = 37). The least is 37 — above the plain cheapest fill plus the least premium (32)."""
    split, slips, _ready = _three_quotes()
    no = bounds_mod._NO_LIMIT
    assert bounds_mod._cost_by_premium(split, slips, 0, 0, no, no) == 37
    assert bounds_mod._cost_by_premium(split, slips, 100, 0, no, no) == 137
    assert bounds_mod._cost_by_premium(split, slips, 0, 0, 40, no) == 37
    assert bounds_mod._cost_by_premium(split, slips, 0, 0, 36, no) is None
    assert bounds_mod._cost_by_premium(split, slips, 0, 0, no, 31) is None  # the cheapest cash fill is 32


@pytest.mark.parametrize("cells", [0, bounds_mod.VECTOR_CELLS])
def test_earliest_start_is_the_first_day_the_ready_quotes_fit_the_limits(cells: int,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """By hand: on day 0, B and C hold 3 nodes for 44; from day 10, A joins and the fill costs 32 (+ the least
    premium among them, 0). Both ways of finding it: bisection over the days (cells=0) and every day at once."""
    monkeypatch.setattr(bounds_mod, "VECTOR_CELLS", cells)
    split, slips, ready = _three_quotes()
    no = bounds_mod._NO_LIMIT
    assert bounds_mod._earliest_start(split, ready, slips, 0, 0, no, no) == 0
    assert bounds_mod._earliest_start(split, ready, slips, 0, 0, 44, no) == 0
    assert bounds_mod._earliest_start(split, ready, slips, 0, 0, 43, no) == 10
    assert bounds_mod._earliest_start(split, ready, slips, 0, 0, no, 40) == 10
    assert bounds_mod._earliest_start(split, ready, slips, 0, 0, 31, no) is None
    short = bounds_mod._Split(np.array([1, 1, 0]), np.array([10, 12, 20]), np.array([10, 12, 20]), 3)
    assert bounds_mod._earliest_start(short, ready, slips, 0, 0, no, no) is None


def test_a_cap_below_every_bound_decides_a_pair_without_a_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """Capped at the pair's own optimum, the search finds that optimum; a unit below, no plan, and when every
    point's bound says so (sound bounds: checked against the enumeration above), no CP-SAT call is made — a
    break-even step or a cheaper-neighbour search then costs only the bounds."""
    from solver.solve.pipeline import solve_pair
    problem = load_problem(Path(__file__).resolve().parent.parent / "constraints" / "finetune-70b.yaml")
    ctx = prepare(problem, SolveSettings())
    result = solve_problem(problem, ctx.settings, ctx)
    assert result.plan is not None
    pair, cap = result.plan.pair, result.plan.model_cost_units
    sub, hi = ctx.universe.subset(pair), ctx.cost_hi()
    at_cap = solve_pair(ctx, sub, hi, tie_break=False, cost_cap=cap)
    assert at_cap.status == "optimal" and at_cap.objective == result.objective
    floors = [b for o in sub.options for pt in o.points if pt.workable
              and (b := ctx.bounds.point_lower(pt, cost_cap=cap - 1)) is not None]
    assert not floors, "the example's bounds should leave no point under the cap"

    def no_search(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("CP-SAT was called")

    monkeypatch.setattr(ctx.engine, "solve", no_search)
    below = solve_pair(ctx, sub, hi, tie_break=False, cost_cap=cap - 1)
    assert below.status == "infeasible" and below.plan is None


@settings(max_examples=max(5, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), extra_quotes(), st.integers(min_value=0, max_value=10_000))
def test_a_plan_written_down_under_an_option_forcing_satisfies_it(problem: dict[str, Any],
                                                                  quotes: list[dict[str, Any]], pick: int) -> None:
    """A why-not of an accelerator or an option settles a pair's feasible checks by a plan written down over the
    forced options only (`PairOracle._quick` with `forced_options`): whenever that says feasible, the pair's full
    model with the forcing has a plan; and the oracle answers as without the shortcut, under every group, all but
    the budget, all but the deadline, all but the capacities, and none."""
    from solver.answers.whynot import forcing
    from solver.solve.engine import FEASIBLE
    with tempfile.TemporaryDirectory() as d:
        ctx, options = _workable_options(problem, quotes, d)
        if not options:
            return
        target = options[pick % len(options)]
        chosen = [target] if pick % 2 else [o for o in ctx.universe.options if o.accel.id == target.accel.id]
        pairs = sorted({o.pair for o in chosen})
        fast = PairOracle(ctx, pairs=pairs, forced=forcing(chosen, None),
                          forced_options=frozenset(o.id for o in chosen))
        slow = PairOracle(ctx, pairs=pairs, forced=forcing(chosen, None))
        groups = fast.all_groups()
        for active in (groups, [g for g in groups if g != "budget.max_usd"],
                       [g for g in groups if g != "schedule.deadline"],
                       [g for g in groups if not g.startswith("quotes.")], []):
            act = set(active)
            for pair in pairs:
                if fast._quick(pair, act) == FEASIBLE:
                    assert _full_status(slow, pair, active) == FEASIBLE, (target.id, len(chosen), pair, active)
            assert fast.status(active) == slow.status(active), (target.id, len(chosen), active)


def test_an_accelerator_why_not_decides_its_feasible_checks_without_a_model() -> None:
    """Under a $5M budget (and no rules, which a plan written down does not count) the H100 why-not is infeasible;
    its conflict search asks whether the H100 pairs have a plan without the budget, which a plan written down
    answers (at 10,000 quotes those checks built models of every point the bounds leave without the budget: 26 s of
    a 26 s why-not)."""
    from solver.answers.whynot import forcing
    from solver.solve.engine import FEASIBLE
    p = load_problem(ROOT / "constraints" / "datacenter.yaml", ["budget.max_usd=5M", "rules=[]"])
    ctx = prepare(p, SolveSettings())
    chosen = [o for o in ctx.universe.options if o.accel.id == "h100-sxm"]
    pairs = sorted({o.pair for o in chosen})
    oracle = PairOracle(ctx, pairs=pairs, forced=forcing(chosen, None), forced_options=frozenset(o.id for o in chosen))
    groups = oracle.all_groups()
    assert oracle.status(groups) != FEASIBLE
    free = {g for g in groups if g != "budget.max_usd"}
    assert any(oracle._quick(pair, free) == FEASIBLE for pair in pairs)


def test_a_plan_written_down_for_an_option_forcing_uses_that_option() -> None:
    """B200 in the cloud has a plan on 8-GPU nodes but none on single-GPU ones: forced onto `b200-1x/cloud`, the pair
    has no plan, though a plan written down over the whole pair exists."""
    from solver.answers.whynot import forcing
    from solver.answers.witness import witness
    from solver.solve.engine import INFEASIBLE
    p = load_problem(ROOT / "constraints" / "datacenter.yaml", ["rules=[]"])
    ctx = prepare(p, SolveSettings())
    one = next(o for o in ctx.universe.options if o.id == "b200-1x/cloud")
    oracle = PairOracle(ctx, pairs=[one.pair], forced=forcing([one], None), forced_options=frozenset({one.id}))
    groups = oracle.all_groups()
    assert witness(ctx, ctx.universe.subset(one.pair), set(groups))
    assert oracle.status(groups) == INFEASIBLE


@settings(max_examples=max(5, EXAMPLES // 3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), extra_quotes(), st.booleans(), st.floats(min_value=0.5, max_value=1.5))
def test_a_pair_s_status_by_its_least_budgeted_quantity_is_the_full_models(
        problem: dict[str, Any], quotes: list[dict[str, Any]], force: bool, scale: float) -> None:
    """With the budget active, a pair's status follows from its least cash (or cost) without the budget
    (`PairOracle._status_by_budget`): the same as the full model's, with and without a why-not's forcing, under every
    group and all but the deadline, the capacities or the fabric limit. The budget is `scale` × the solved plan's
    cash (or cost) and the pair is the plan's, so the question is near its edge; from `scale` 1 the plan itself
    shows the pair has one."""
    from solver.answers.whynot import forcing
    from solver.solve.engine import FEASIBLE, UNKNOWN
    problem = {**problem, "rules": [r for r in problem["rules"] if r["name"] != "prefer-buy"]}  # bounds on
    with tempfile.TemporaryDirectory() as d:
        p = _load(problem, quotes, Path(d))
        base = solve_problem(p, SolveSettings(alternatives=False))
        if base.plan is None:
            return
        plan = base.plan
        amount = plan.total_cash if p.spec.budget.applies_to == "cash" else plan.total_cost
        p = p.with_sets([f"budget.max_usd={max(1.0, amount * scale):.0f}"])
        ctx = prepare(p, SolveSettings())
        target = next(o for o in ctx.universe.options if o.id == plan.option)
        forced = forcing([target], None) if force else None
        oracle = PairOracle(ctx, pairs=[target.pair], forced=forced,
                            forced_options=frozenset({target.id}) if forced else None)
        full = PairOracle(ctx, pairs=[target.pair], forced=forced)
        groups = oracle.all_groups()
        for active in (groups, [g for g in groups if g != "schedule.deadline"],
                       [g for g in groups if not g.startswith("quotes.")],
                       [g for g in groups if g != "policy.max_fabrics"]):
            got = oracle._status_by_budget(target.pair, set(active))
            if scale >= 1.0 + 1e-3:
                assert got in (FEASIBLE, UNKNOWN), (target.id, scale, active)
            if got != UNKNOWN:
                assert got == _full_status(full, target.pair, active), (target.id, forced is not None, scale, active)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=-2 ** 62, max_value=2 ** 62), max_size=40), st.integers(0, 3))
def test_distinct_is_numpys_unique(values: list[int], repeats: int) -> None:
    """`arrays.distinct`, which the bounds and the screen use instead of `np.unique`: the same sorted values and
    dtype, repeats and the empty and one-element arrays included."""
    from solver.model.arrays import distinct
    a = np.array(values * (repeats + 1), dtype=np.int64)
    got, want = distinct(a), np.unique(a)
    assert got.dtype == want.dtype and got.tolist() == want.tolist()


def test_what_ifs_share_quote_timings_only_under_the_same_assumptions() -> None:
    """`timing.timing` shares a quote's timing between problems that differ in nothing it depends on: the same quote
    object, accelerator class, assumptions and as_of. A problem without its deadline gets the very same object; one
    with another installation time gets its own, with the ready offset a process that never saw the first problem
    computes (lead time at the confidence + installation)."""
    from solver.model import timing as timing_mod
    from solver.answers.frontier import without_deadline
    p = load_problem(Path(__file__).resolve().parent.parent / "constraints" / "datacenter.yaml", [])
    o = next(o for o in prepare(p, SolveSettings()).universe.options if o.mode == "buy"
             and o.accel.cls == "datacenter")
    q = next(q for q in o.quotes if q.lead_time_p90_days and q.lead_time_p90_days > q.lead_time_days)
    base = timing_mod.timing(p, o, q)
    assert timing_mod.timing(without_deadline(p, "time"), o, q) is base
    assert o.accel.cls == "datacenter"
    slower = p.with_sets(["risk.install_days.datacenter=51"])
    other = timing_mod.timing(slower, o, q)
    assert other is not base and other.offset == base.offset + 30
    timing_mod._CACHES.clear()  # the same question of a problem the cache has never seen
    fresh = p.with_sets(["risk.install_days.datacenter=51"])
    assert timing_mod.timing(fresh, o, q).offset == math.ceil(q.lead_time_p90_days + 51)


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 10 ** 6), st.booleans()), min_size=1, max_size=30),
       st.integers(1, 400))
def test_one_fill_is_the_greedy_fill_and_the_row_of_many(quotes: list[tuple[int, int, bool]], n: int) -> None:
    """`_Split.fill` (one row, by bisection) against a greedy fill written out here — the allowed quotes cheapest per
    node first, ties by position, each taken up to its capacity until n nodes are held — and against `fills`."""
    cap = np.array([c for c, _p, _a in quotes], dtype=np.int64)
    per = np.array([p for _c, p, _a in quotes], dtype=np.int64)
    allowed = np.array([a for _c, _p, a in quotes], dtype=bool)
    split = bounds_mod._Split(cap, per, per * 3, n)
    for mask, cash in ((allowed, False), (None, False), (allowed, True)):
        prices = per * 3 if cash else per
        rest, total = n, 0
        for k in sorted(range(len(quotes)), key=lambda k: (int(prices[k]), k)):
            if mask is not None and not mask[k]:
                continue
            take = min(rest, int(cap[k]))
            total, rest = total + take * int(prices[k]), rest - take
        expected = None if rest > 0 else total
        assert split.fill(mask, cash) == expected
        row = np.ones((1, len(quotes)), dtype=bool) if mask is None else mask[None, :]
        many = int(split.fills(row, cash)[0])
        assert (None if many >= bounds_mod._NO_LIMIT else many) == expected


def test_discounts_scale_the_cost_bounds_and_switch_them_off_at_100_percent() -> None:
    """`kept` = 1 + every negative add_pct / 100, whatever the rules' conditions (a quote named, the cost tested);
    a point's cost bound under the discounts is kept × its bound without them, rounded down, less one unit. At 100 %
    of discounts in all, the bounds are off."""
    base = ["rules=[{name: amd, when: {vendor: amd}, then: {delay_days: 45, add_usd: 400k}},"
            " {name: dear, when: {mode: cloud}, then: {add_pct: 20}}]"]
    discounts = ["rules=[{name: amd, when: {vendor: amd}, then: {delay_days: 45, add_usd: 400k}},"
                 " {name: dear, when: {mode: cloud}, then: {add_pct: 20}},"
                 " {name: discount, when: {mode: cloud}, then: {add_pct: -10}},"
                 " {name: named, when: {quote: lambda-b200-8x-ondemand}, then: {add_pct: -15}}]"]
    datacenter = ROOT / "constraints" / "datacenter.yaml"
    plain = prepare(load_problem(datacenter, base + ["budget.max_usd=null"]), SolveSettings(processes=1))
    off = prepare(load_problem(datacenter, discounts + ["budget.max_usd=null"]), SolveSettings(processes=1))
    assert plain.bounds.kept == 1.0
    assert off.bounds.kept == pytest.approx(0.75) and off.bounds.sound
    compared = 0
    for o in plain.universe.options:
        for pt, dpt in zip(o.points, next(d for d in off.universe.options if d.id == o.id).points, strict=True):
            if not pt.workable:
                continue
            low, dlow = plain.bounds.point_lower(pt), off.bounds.point_lower(dpt)
            assert (low is None) == (dlow is None), o.id
            if low is not None and dlow is not None:
                assert dlow == (math.floor(low[0] * 0.75) - 1, low[1], low[2]), (o.id, pt.n, low, dlow)
                compared += 1
    assert compared > 200
    halves = ["rules=[{name: a, when: {mode: cloud}, then: {add_pct: -50}},"
              " {name: b, when: {mode: buy}, then: {add_pct: -50}}]"]
    assert not prepare(load_problem(datacenter, halves), SolveSettings(processes=1)).bounds.sound


def test_a_cost_budget_at_the_discounted_optimum_still_admits_it() -> None:
    """With a 10 % cloud discount, a cost budget at the optimum's cost (0.2 % over it: the model rounds each cost
    term up to its $1k unit): the undiscounted bounds of the optimum's point are over the budget, and only a limit
    raised to budget / kept keeps the point in the search."""
    datacenter = ROOT / "constraints" / "datacenter.yaml"
    sets = ["rules=[{name: discount, when: {mode: cloud}, then: {add_pct: -10}}]", "budget.applies_to=cost"]
    free = solve_problem(load_problem(datacenter, sets + ["budget.max_usd=null"]), SolveSettings(alternatives=False))
    assert free.status == "optimal" and free.plan is not None and free.plan.mode != "buy"
    tight = load_problem(datacenter, sets + [f"budget.max_usd={math.ceil(free.plan.total_cost * 1.002)}"])
    ctx = prepare(tight, SolveSettings(processes=1))
    assert ctx.bounds.sound and ctx.bounds.kept == pytest.approx(0.9)
    again = solve_problem(tight, SolveSettings(alternatives=False))
    assert again.status == "optimal" and again.plan is not None
    assert again.plan.total_cost == pytest.approx(free.plan.total_cost)


def test_a_pairs_cover_shrinks_the_same_on_its_bounded_model() -> None:
    """The reason a pair cannot work is its point-local cover less each group a check finds unneeded; the checks
    the cover and the witness leave go to the model of the points the bounds leave (`_pair_status_of`) instead of
    the pair's full model with "one of its options is used" forced (at 100,000 quotes three pairs' did, and each
    full model took minutes to build). For every third pair the bundled problem with a 300 kW site and a $20M
    budget excludes, the bounded status equals the forced full model's under the cover and under the cover less
    each of its units (the checks `_shrunk` makes), with both answers among them. (Every pair, and also under a
    deadline only capacity could meet or a 0.99 deadline confidence, passes too: 10, 17 and 24 s.)"""
    from solver.answers.conflicts import _decide, _pair_status_of, _units, covering_reason
    from solver.model.builder import build
    from solver.model.groups import rank
    problem = load_problem(ROOT / "constraints" / "datacenter.yaml", ["site.it_power_kw=300", "budget.max_usd=20M"])
    ctx = prepare(problem, SolveSettings(processes=1))
    result = solve_problem(problem, ctx.settings, ctx)
    answers = set()
    for pair in result.infeasible_pairs[::3]:
        sub = ctx.universe.subset(pair)
        cover = covering_reason(ctx, sub)
        status = _pair_status_of(ctx, sub)
        if cover is None or status is None:
            continue
        b = build(ctx.problem, sub, ctx.screen, ctx.unit, guard="assume", cuts=ctx.cuts.get(pair, ()))
        lit = b.model.new_bool_var("force")
        b.model.add(sum(b.sel[o.id] for o in sub.options if o.id in b.sel) == 1).only_enforce_if(lit)
        for unit in [(), *_units(sorted(cover, key=rank))]:
            trial = [g for g in cover if g not in unit]
            full = _decide(ctx, b, [b.lits[g] for g in trial if g in b.lits] + [lit], "full")
            full = "feasible" if full == "optimal" else full
            assert status(set(trial)) == full, (pair, unit)
            answers.add(full)
    assert answers == {"feasible", "infeasible"}, answers
