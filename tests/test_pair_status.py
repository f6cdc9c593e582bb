"""A pair's status under some groups (`PairOracle.pair_status`) when no closed form decides it.

With the bounds off (here: discounts of 100 % in all), neither the point bounds nor the least budgeted quantity
can show a budget out of reach; CP-SAT must. Under assumptions its LP leaves the budget out (a half-reified limit),
and the search ran into its time limit: with a single −5 % rule, which switched the bounds off until Stop 33,
finetune-70b at $500 checked a 1,186-variable model three times for 37 s each, and its minimal conflict took 140 s
and came out unproven and not minimal. Decided on a copy with the literals fixed, each check takes milliseconds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from solver.answers.conflicts import PairOracle
from solver.inputs.problem import load_problem
from solver.model import screening
from solver.solve.engine import INFEASIBLE, OPTIMAL
from solver.solve.pipeline import SolveSettings, prepare

FINETUNE = Path(__file__).resolve().parent.parent / "constraints" / "finetune-70b.yaml"
SETS = ["budget.max_usd=500", "rules=[{name: discount, when: {mode: cloud}, then: {add_pct: -60}},"
        " {name: rebate, when: {mode: cloud}, then: {add_pct: -40}}]"]
"""Discounts of 100 % in all: nothing is left for the cost bounds to bound by, so they are off (`Bounds.kept`)."""
SETTINGS = SolveSettings(processes=1, time_limit=2.0)
"""A short limit: a check the search cannot decide comes back `unknown` (counted in `undecided`), which the test
refuses, in seconds rather than minutes."""


def test_a_budget_out_of_reach_is_decided_without_the_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    # The budget is on cash, which no discount changes, so the screen's budget reasons would settle this pair by a
    # cover without a solve (`screening.budget_line`). What is tested is what decides when no closed form does:
    # those reasons are switched off here, and the cover must then not decide.
    monkeypatch.setattr(screening, "budget_line", lambda _problem: None)
    ctx = prepare(load_problem(FINETUNE, SETS), SETTINGS)
    assert not ctx.bounds.sound
    oracle = PairOracle(ctx)
    pair = "mi300x/cloud-reserved"
    assert not oracle.covered(pair, {"budget.max_usd"})
    assert oracle.pair_status(pair, ["budget.max_usd"]) == INFEASIBLE
    assert oracle.undecided == 0
    # The reference: the least of what the budget limits (cash, which no discount touches) with no group enforced,
    # proven, and far above $500.
    assert ctx.problem.spec.budget.applies_to == "cash"
    b = oracle.model(pair)
    m = b.model
    m.clear_assumptions()
    m.add_assumptions(oracle.forced[pair])
    m.minimize(b.cash)
    out = ctx.engine.solve(m, label="least-cash")
    m.clear_assumptions()
    m.clear_objective()
    assert out.status == OPTIMAL and out.bound() * ctx.unit > 500


def test_a_plan_the_time_limit_leaves_is_kept_and_called_unproven(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bounded minimisation the time limit stops with a plan (simulated: every solve's optimum reported as
    merely feasible) keeps that plan: `minimize` returns it as not proven, counts the pairs undecided, and does
    not build any pair's full model, which has the same plans and more to search (at 100,000 quotes one took
    minutes and 4 GB). The budget status calls a pair with such a plan within the budget feasible, and one whose
    plan is over it undecided, not infeasible: an unproven plan is not the least."""
    import dataclasses

    from solver.answers import conflicts
    from solver.solve.engine import FEASIBLE, UNKNOWN

    real = conflicts._minimize_in

    def stopped(*args, **kwargs):  # type: ignore[no-untyped-def]
        got = real(*args, **kwargs)
        if got.outcome.status != OPTIMAL:
            return got
        return dataclasses.replace(got, outcome=dataclasses.replace(got.outcome, status=FEASIBLE))

    monkeypatch.setattr(conflicts, "_minimize_in", stopped)
    datacenter = FINETUNE.parent / "datacenter.yaml"
    ctx = prepare(load_problem(datacenter), SETTINGS)
    assert ctx.bounds.sound
    oracle = PairOracle(ctx)
    monkeypatch.setattr(oracle, "model", lambda pair: pytest.fail(f"built the full model of {pair}"))
    groups = oracle.all_groups()
    applies_to = ctx.problem.spec.budget.applies_to
    least = oracle.minimize(groups, conflicts.budgeted(ctx.problem), lower=applies_to)
    assert least is not None and least.outcome.status == FEASIBLE and not least.proven
    assert oracle.undecided > 0

    pair = least.pair
    budget = ctx.problem.spec.budget.max_usd
    assert budget is not None and least.value * ctx.unit <= budget
    assert oracle._status_by_budget(pair, set(groups)) == "feasible"
    # One unit under that plan's cash (or cost): the point bounds leave candidates (they are below the least), so
    # the minimisation decides, and its plan is over the budget but not proven the least.
    tight = prepare(load_problem(datacenter, [f"budget.max_usd={(least.value - 1) * ctx.unit}"]), SETTINGS)
    tight_oracle = PairOracle(tight)
    monkeypatch.setattr(tight_oracle, "model", lambda pair: pytest.fail(f"built the full model of {pair}"))
    act = set(tight_oracle.all_groups())
    kind = conflicts.BOUND_KIND[applies_to]
    assert tight_oracle._candidates(pair, act - {"budget.max_usd"}, kind)
    assert tight_oracle._status_by_budget(pair, act) == UNKNOWN


def test_a_search_by_parts_the_time_limit_stops_is_kept_unproven(monkeypatch: pytest.MonkeyPatch) -> None:
    """Searched part by part (`grow._by_parts`, forced here: parts of one point, and every point's bound taken as
    0, a valid lower bound, so that every point is a part), the first part proven and every later one stopped by
    the time limit with its plan: the least plan found is kept, its own solve proven but the pair's minimum not
    (a stopped part may hold a cheaper one), and a budget status whose plan is over the budget is undecided, not
    infeasible. No full model is built."""
    import dataclasses

    import solver.solve.grow as grow_mod
    from solver.answers import conflicts
    from solver.solve.engine import FEASIBLE, UNKNOWN
    from solver.solve.pipeline import solve_problem

    monkeypatch.setattr(grow_mod, "INITIAL_POINTS", 1)
    monkeypatch.setattr(grow_mod, "INITIAL_WEIGHT", 1)
    monkeypatch.setattr(grow_mod, "PART_WEIGHT", 0)
    candidates = PairOracle._candidates
    monkeypatch.setattr(PairOracle, "_candidates", lambda self, *a: [(0, pt) for _lb, pt in candidates(self, *a)])
    real = conflicts._minimize_in
    solves = [0]

    def first_proven(*args, **kwargs):  # type: ignore[no-untyped-def]
        got = real(*args, **kwargs)
        solves[0] += 1
        if solves[0] == 1 or got.outcome.status != OPTIMAL:
            return got
        return dataclasses.replace(got, outcome=dataclasses.replace(got.outcome, status=FEASIBLE))

    monkeypatch.setattr(conflicts, "_minimize_in", first_proven)
    datacenter = FINETUNE.parent / "datacenter.yaml"
    ctx = prepare(load_problem(datacenter), SETTINGS)
    pair = solve_problem(ctx.problem, SETTINGS, ctx).plan.pair  # type: ignore[union-attr]
    oracle = PairOracle(ctx, pairs=[pair])
    monkeypatch.setattr(oracle, "model", lambda p: pytest.fail(f"built the full model of {p}"))
    groups = oracle.all_groups()
    applies_to = ctx.problem.spec.budget.applies_to
    least = oracle.minimize(groups, conflicts.budgeted(ctx.problem), lower=applies_to)
    assert solves[0] > 1  # the search went on by parts
    assert least is not None and least.outcome.status == OPTIMAL and not least.proven
    assert oracle.undecided > 0

    solves[0] = 0
    tight = prepare(load_problem(datacenter, [f"budget.max_usd={(least.value - 1) * ctx.unit}"]), SETTINGS)
    tight_oracle = PairOracle(tight, pairs=[pair])
    monkeypatch.setattr(tight_oracle, "model", lambda p: pytest.fail(f"built the full model of {p}"))
    assert tight_oracle._status_by_budget(pair, set(tight_oracle.all_groups())) == UNKNOWN
    assert solves[0] > 1
