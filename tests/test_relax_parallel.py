"""The ways out of an infeasible problem found side by side (`relax._ways_out`), and the pair order that spares the
explanation's minimisations most point bounds (`PairOracle._by_bound`, `Bounds.point_floor`).

- Side by side is the serial answer: the conflict's relaxations and drops on two processes give the explanation one
  process gives, with the bounds sound and with them off (a discount rule), where a capped minimisation runs on the
  oracle's shared models.
- A capped minimisation on a shared model caps a copy: the model is as it was, and the capped minimum is right.
- A floor is never above a point's bound, whatever groups are enforced (with the example's rules).
- Best first over floors bounds only pairs whose floor the minimum does not beat, and finds the minimum that
  minimising every pair on its own finds.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from solver.answers import relax
from solver.answers.conflicts import PairOracle, _minimize_in
from solver.inputs.problem import Problem, load_problem
from solver.solve import forked
from solver.solve.engine import OPTIMAL
from solver.solve.pipeline import Context, SolveSettings, prepare

DATACENTER = Path(__file__).resolve().parent.parent / "constraints" / "datacenter.yaml"
TIGHT = ["budget.max_usd=5M"]
"""The example with a $5M budget: no plan; its conflict is the deadline and the budget, so the ways out are two: the
budget's exact relaxation and the deadline's (no later date restores a plan: it is reported as dropped)."""
DISCOUNT = ["policy.accelerators.include=[gaudi3]", "policy.modes=[buy]", "budget.max_usd=6M",
            "rules=[{name: discount, when: {mode: buy}, then: {add_pct: -60}},"
            " {name: rebate, when: {mode: buy}, then: {add_pct: -40}}]"]
"""Bought Gaudi 3 with discounts of 100 % in all and a $6M budget (its cheapest plan's $5.0M cash, expected over the
run scenarios, fits): the bounds are off (`Bounds.kept`), so every minimisation searches
the oracle's shared models, the deadline's relaxation capping one for its cheapest plan. The conflict is the
accelerators, the deadline and a quote's capacity (a small problem: the full models of the whole example take half a
minute)."""


@pytest.fixture(scope="module")
def tight() -> Problem:
    return load_problem(DATACENTER, TIGHT)


def _explained(problem: Problem, processes: int) -> dict[str, Any]:
    return relax.explain(prepare(problem, SolveSettings(processes=processes)))


@pytest.mark.skipif(not forked.can_fork(), reason="fork is used on Linux only")
@pytest.mark.parametrize("sets, conflict", [
    ([], ["schedule.deadline", "budget.max_usd"]),
    (DISCOUNT, ["policy.accelerators", "schedule.deadline", "quotes.gaudi3-8x-kit-estimate.max_nodes"])],
    ids=["bounds", "no-bounds"])
def test_ways_out_side_by_side_are_the_serial_ones(tight: Problem, sets: list[str], conflict: list[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    problem = tight.with_sets(sets) if sets else tight
    assert problem.spec.rules and (not sets or prepare(problem, SolveSettings()).bounds.sound is False)
    serial = _explained(problem, 1)
    maps: list[tuple[int, int]] = []
    real = relax.fork_map

    def spy(fn: Any, items: Any, processes: int, order: Any = None) -> Any:
        maps.append((len(items), processes))
        return real(fn, items, processes, order=order)

    monkeypatch.setattr(relax, "fork_map", spy)
    parallel = _explained(problem, 2)
    assert maps == [(len(serial["conflict"]), 2)], "the ways out should have been shared by two processes"
    assert serial["conflict"] == conflict
    assert serial["relaxations"] and all(r.get("plan") for r in serial["relaxations"])
    assert parallel == serial


def test_a_capped_minimum_on_a_shared_model_leaves_the_model_as_it_was(tight: Problem) -> None:
    """The cheapest plan among the fastest (cost minimised, finish capped at its least): on a shared model, the same
    minimum as capping a model of its own, which keeps the cap; the shared model is unchanged and minimises as
    before."""
    ctx = prepare(tight.with_sets(DISCOUNT), SolveSettings(processes=1))
    oracle = PairOracle(ctx)
    active = [g for g in oracle.all_groups() if g != "schedule.deadline"]
    pair = "gaudi3/buy"
    b = oracle.model(pair)
    size = (len(b.model.proto.variables), len(b.model.proto.constraints))
    assumptions = [b.lits[g] for g in active if g in b.lits] + oracle.forced[pair]
    fastest = _minimize_in(ctx, b, assumptions, lambda m: m.finish, None, pair, shared=True)
    cheapest = _minimize_in(ctx, b, assumptions, lambda m: m.cost, None, pair, shared=True)
    assert fastest.outcome.status == cheapest.outcome.status == OPTIMAL
    cap = (lambda m: m.finish, fastest.value)
    capped = _minimize_in(ctx, b, assumptions, lambda m: m.cost, cap, pair, shared=True)
    assert (len(b.model.proto.variables), len(b.model.proto.constraints)) == size
    own = PairOracle(ctx)
    ob = own.model(pair)
    reference = _minimize_in(ctx, ob, [ob.lits[g] for g in active if g in ob.lits] + own.forced[pair],
                             lambda m: m.cost, cap, pair)
    assert len(ob.model.proto.constraints) > size[1], "capping a model of its own keeps the cap"
    assert capped.outcome.status == reference.outcome.status == OPTIMAL
    assert capped.value == reference.value >= cheapest.value
    assert capped.outcome.value(b.finish) <= fastest.value
    again = _minimize_in(ctx, b, assumptions, lambda m: m.cost, None, pair, shared=True)
    assert again.value == cheapest.value and again.outcome.value(b.finish) == cheapest.outcome.value(b.finish)


def test_a_floor_is_below_the_point_bound_under_any_groups() -> None:
    """The example keeps its rules (surcharges and delays)."""
    rnd = random.Random(7)
    checked = 0
    for sets in (TIGHT,):
        ctx = prepare(load_problem(DATACENTER, sets), SolveSettings(processes=1))
        assert ctx.problem.spec.rules and ctx.bounds.sound
        groups = PairOracle(ctx).all_groups()
        points = [pt for o in ctx.universe.options for pt in o.points if pt.workable]
        for pt in rnd.sample(points, 150):
            for active in (None, set(groups), {g for g in groups if rnd.random() < 0.5}, set()):
                low = ctx.bounds.point_lower(pt, active)
                if low is None:
                    continue
                floor = ctx.bounds.point_floor(pt)
                assert all(f <= x for f, x in zip(floor, low, strict=True)), (pt.key, active, floor, low)
                checked += 1
    assert checked > 100


def _floor_of(ctx: Context, pair: str, act: set[str], which: int) -> int | None:
    """The least floor over the pair's workable points that no point-local reason within `act` excludes, written
    out here (None: no such point)."""
    floors = [ctx.bounds.point_floor(pt)[which] for o in ctx.universe.subset(pair).options for pt in o.points
              if pt.workable and not any(it <= act for it in ctx.screen.violations(pt))]
    return min(floors, default=None)


def test_best_first_bounds_only_pairs_that_could_win_and_finds_the_minimum(tight: Problem,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The budget's relaxation: the least cash with every other group enforced. (Random problems hold the bounded
    minimum of cost, cash and finish to the full models' in tests/test_bounds.py.)"""
    dropped, kind = "budget.max_usd", "cash"
    ctx = prepare(tight, SolveSettings(processes=1))
    oracle = PairOracle(ctx)
    active = [g for g in oracle.all_groups() if g != dropped]
    quantity = {"cash": lambda b: b.cash, "cost": lambda b: b.cost, "finish": lambda b: b.finish}[kind]
    bounded: list[str] = []
    real = PairOracle._candidates

    def spy(self: PairOracle, pair: str, *args: Any, **kwargs: Any) -> Any:
        bounded.append(pair)
        return real(self, pair, *args, **kwargs)

    monkeypatch.setattr(PairOracle, "_candidates", spy)
    got = oracle.minimize(active, quantity, lower=kind)
    monkeypatch.undo()
    # The reference: every pair minimised on its own full model, no bound anywhere.
    reference = PairOracle(ctx)
    values = {}
    for pair in reference.items:
        b = reference.model(pair)
        m = _minimize_in(ctx, b, [b.lits[g] for g in active if g in b.lits], quantity, None, pair, shared=True)
        assert m.outcome.status in (OPTIMAL, "infeasible")
        if m.outcome.has_solution:
            values[pair] = m.value
    assert got is not None and values
    best = min((v, p) for p, v in values.items())
    assert (got.value, got.pair) == best
    act = set(active)
    which = {"cost": 0, "cash": 1, "finish": 2}[kind]
    for pair in oracle.items:
        floor = _floor_of(ctx, pair, act, which)
        if pair not in bounded and floor is not None and not oracle.covered(pair, act):
            assert floor > got.value, (pair, floor, got.value)
    assert len(set(bounded)) < len(oracle.items), "some pair should have been left unbounded by its floor"
