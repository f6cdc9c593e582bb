"""The floors that bound a relaxation's quantity per point where the point bounds do not (`PairOracle.quote_floor`
for a quote's capacity, the deadline for the earliest start: `relax._lower`) are lower bounds, checked against
CP-SAT on random many-quote problems: at a point forced into the pair's full model the least quantity is at least
the point's floor, and the minimisation over the points the floors leave finds the minimum over every point."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.answers.conflicts import PairOracle, _minimize_in
from solver.answers.relax import _lower, _quantity
from solver.model.builder import Built
from solver.model.groups import capacity_quote
from solver.solve.pipeline import SolveSettings, prepare

from test_reduce import _load, cases

EXAMPLES = int(os.environ.get("PLAN_PROPERTY_EXAMPLES", "20"))


def _least_at_points(oracle: PairOracle, active: list[str], quantity: Callable[[Built], Any],
                     floor: Callable[[Any], int], rnd: Any) -> int:
    """Assert floor(pt) <= the least quantity of any plan at pt (the pair's full model, the point forced, `active`
    assumed) at points whose floor says something (not 0) and a few others; the number of points with a plan checked."""
    ctx = oracle.ctx
    checked = 0
    for pair in oracle.items:
        b = oracle.model(pair)
        pts = [(i, pt) for i, pt in enumerate(b.points) if pt.workable]
        raised = [(i, pt) for i, pt in pts if floor(pt) != 0]
        for i, pt in raised[:6] + rnd.sample(pts, min(3, len(pts))):
            got = _minimize_in(ctx, b, [b.lits[g] for g in active if g in b.lits] + [b.z[i]], quantity, None,
                               f"{pair}-at-{pt.n}", shared=True)
            if got.outcome.has_solution:
                assert got.outcome.status == "optimal"
                assert floor(pt) <= got.value, (pair, pt.n, floor(pt), got.value)
                checked += 1
    return checked


def _same_minimum(oracle: PairOracle, active: list[str], quantity: Callable[[Built], Any],
                  floor: Callable[[Any], int]) -> None:
    bounded = oracle.minimize(active, quantity, lower=floor)
    full = oracle.minimize(active, quantity)
    assert (bounded is None) == (full is None)
    if bounded is not None and full is not None:
        assert (bounded.value, bounded.pair, bounded.proven) == (full.value, full.pair, full.proven)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                       HealthCheck.function_scoped_fixture])
@given(cases(), st.randoms(use_true_random=False))
def test_a_quotes_floor_bounds_its_nodes_at_every_point(tmp_path: Path, case: tuple[dict[str, Any], list[Any]],
                                                        rnd: Any) -> None:
    """With a quote's capacity dropped and every other group in force (its relaxation), no plan at a point takes
    fewer nodes from the quote than the point's floor, and the least over the points by their floors is the least
    over all of them."""
    problem, quotes = case
    p = _load(problem, quotes, tmp_path)
    ctx = prepare(p, SolveSettings(alternatives=False))
    oracle = PairOracle(ctx)
    groups = oracle.all_groups()
    for g in rnd.sample([g for g in groups if capacity_quote(g)], 2):
        active = [h for h in groups if h != g]
        floor = _lower(ctx, oracle, g, set(active))
        assert callable(floor)
        _least_at_points(oracle, active, _quantity(ctx, g), floor, rnd)
        _same_minimum(oracle, active, _quantity(ctx, g), floor)


@settings(max_examples=max(5, EXAMPLES // 2), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(cases(), st.randoms(use_true_random=False))
def test_the_deadline_bounds_the_start_at_every_point(tmp_path: Path, case: tuple[dict[str, Any], list[Any]],
                                                     rnd: Any) -> None:
    """With the earliest start dropped, a plan at a point starts by the deadline less the point's days: the floor of
    −start there (what the relaxation minimises) holds, and the bounded minimum is the full one."""
    problem, quotes = case
    problem = {**problem, "schedule": {**problem["schedule"], "earliest_start": "2027-02-15"}}
    p = _load(problem, quotes, tmp_path)
    ctx = prepare(p, SolveSettings(alternatives=False))
    oracle = PairOracle(ctx)
    g = "schedule.earliest_start"
    groups = oracle.all_groups()
    active = [h for h in groups if h != g]
    floor = _lower(ctx, oracle, g, set(active))
    if ctx.screen.chance is not None:
        assert floor is None  # the deadline is then a confidence, not a date every plan meets
        return
    assert callable(floor)
    checked = _least_at_points(oracle, active, _quantity(ctx, g), floor, rnd)
    full = oracle.minimize(active, _quantity(ctx, g))
    if checked == 0 and full is not None:
        # the points sampled had no plan: the floor must still hold where the full minimum's plan is
        b, out = full.model, full.outcome
        i = next(i for i, z in enumerate(b.z) if out.value(z))
        assert floor(b.points[i]) <= full.value, (b.points[i].n, floor(b.points[i]), full.value)
    _same_minimum(oracle, active, _quantity(ctx, g), floor)


@settings(max_examples=max(5, EXAMPLES // 2), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(cases(), st.sampled_from(["2027-01-25", "2027-02-10", "2027-03-01"]), st.randoms(use_true_random=False))
def test_a_quotes_relaxation_on_its_fabric_alone_has_the_full_minimum(
        tmp_path: Path, case: tuple[dict[str, Any], list[Any]], deadline: str, rnd: Any) -> None:
    """An infeasible problem under one fabric per job: relaxing a quote's capacity, every plan uses the quote and
    so only its fabric (`relax._sole_fabric`). The minimisation given that fabric (other pairs not asked, other
    fabrics' quotes not modelled) finds the least nodes from the quote that the full models of every pair find,
    and then the same least cost with the capacity raised to it."""
    from solver.answers.relax import _sole_fabric
    problem, quotes = case
    problem = {**problem, "schedule": {"deadline": deadline}, "policy": {**problem["policy"], "max_fabrics": 1}}
    problem["policy"].pop("deadline_confidence", None)
    p = _load(problem, quotes, tmp_path)
    ctx = prepare(p, SolveSettings(alternatives=False))
    oracle = PairOracle(ctx)
    groups = oracle.all_groups()
    if oracle.status(groups) != "infeasible" or "policy.max_fabrics" not in groups:
        return   # feasible, or no option spans fabrics (then no group says one job runs on one)
    for g in rnd.sample([g for g in groups if capacity_quote(g)], 2):
        active = [h for h in groups if h != g]
        fabric = _sole_fabric(ctx, g, active)
        assert fabric is not None
        quantity = _quantity(ctx, g)
        on_fabric = oracle.minimize(active, quantity, lower=_lower(ctx, oracle, g, set(active)), fabric=fabric)
        full = PairOracle(ctx).minimize(active, quantity)
        assert (on_fabric is None) == (full is None), g
        if full is None or on_fabric is None:
            continue
        assert on_fabric.proven and full.proven
        assert on_fabric.value == full.value, g
        cap = (quantity, full.value)
        cheap = oracle.minimize(active, lambda b: b.cost, cap=cap, lower="cost", fabric=fabric)
        cheap_full = PairOracle(ctx).minimize(active, lambda b: b.cost, cap=cap)
        assert cheap is not None and cheap_full is not None and cheap.value == cheap_full.value, g


def test_a_quote_short_of_a_deadline_is_raised_to_the_cluster_on_its_own_fabric(tmp_path: Path) -> None:
    """Two rented quotes of 3 nodes, each on its own fabric, and a deadline only 8 nodes or more meet: each quote's
    relaxation, on its fabric alone, is 8 nodes — the full models of every pair say the same — and the cheapest
    plan with it raised to 8 uses that quote alone."""
    from datetime import timedelta

    from solver.answers.relax import _numeric_relaxation, _sole_fabric
    from test_reduce import BASE, _rented

    quotes = [_rented(0, 3.0, 3), _rented(1, 3.5, 3, fabric="b")]
    free = prepare(_load(BASE, quotes, tmp_path), SolveSettings(alternatives=False))
    (o,) = free.universe.options
    days = {pt.n: pt.days for pt in o.points if pt.workable}
    assert 8 in days and max(days[n] for n in days if n <= 6) > days[8]
    deadline = free.universe.as_of + timedelta(days=max(o.ready_day, free.universe.earliest_day) + days[8])
    p = _load({**BASE, "schedule": {"deadline": deadline.isoformat()}}, quotes, tmp_path)
    ctx = prepare(p, SolveSettings(alternatives=False))
    oracle = PairOracle(ctx)
    groups = oracle.all_groups()
    assert oracle.status(groups) == "infeasible" and "policy.max_fabrics" in groups
    for qid in ("rq-00", "rq-01"):
        g = f"quotes.{qid}.max_nodes"
        active = [h for h in groups if h != g]
        assert _sole_fabric(ctx, g, active) == ctx.universe.quote(qid).fabric_id
        full = PairOracle(ctx).minimize(active, _quantity(ctx, g))
        assert full is not None and full.proven and full.value == 8
        way = _numeric_relaxation(ctx, oracle, g, groups)
        assert way is not None and (way["from"], way["to"], way["proven"]) == (3, 8, True)
        assert way["plan"]["quotes"] == {qid: 8} and way["plan"]["nodes"] == 8
