"""`best_only`: the best plan without the runners-up, for answers that solve many variants (the frontier's dates).

Its pruning (pairs by closed-form bound, a cost cap from the best so far) must change nothing: the plan and status
are `solve_problem`'s, byte for byte, and the objective is the brute-force enumeration's (independent of CP-SAT).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.inputs.problem import load_problem
from solver.model.objective import objective
from solver.render.jsonout import plan_dict, to_json
from solver.solve.brute import brute_force
from solver.solve.best import best_only, may_win
from solver.solve.pipeline import NO_PLAN_BOUND, SolveSettings, prepare, solve_problem

from test_optimality import EXAMPLES, _load, extra_quotes, problems

ROOT = Path(__file__).resolve().parent.parent


def _same_as_solve(p: Any) -> None:
    full = solve_problem(p, SolveSettings())
    best = best_only(p, SolveSettings())
    assert best.status == full.status
    assert (best.plan is None) == (full.plan is None)
    if best.plan is not None:
        assert to_json(plan_dict(best.plan)) == to_json(plan_dict(full.plan))


@pytest.mark.parametrize("name", ["datacenter.yaml", "finetune-70b.yaml", "infeasible-budget.yaml",
                                  "start-2027.yaml"])
def test_best_only_is_the_solves_plan_on_the_examples(name: str) -> None:
    _same_as_solve(load_problem(ROOT / "constraints" / name))


@settings(max_examples=max(5, EXAMPLES // 2), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), extra_quotes(), st.sampled_from(["cost", "time"]))
def test_best_only_is_the_solves_plan_and_the_enumerations_optimum(problem: dict[str, Any],
                                                                   quotes: list[dict[str, Any]], goal: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = _load(problem, quotes, Path(d), [f"objective={goal}"])
        _same_as_solve(p)
        ctx = prepare(p, SolveSettings())
        hi = ctx.cost_hi()
        brute = brute_force(p, ctx.universe, ctx.unit, cost_hi=hi)
        best = best_only(p, SolveSettings(), ctx)
        if brute is None:
            assert best.status == "infeasible" and best.plan is None
            return
        assert best.status == "optimal" and best.plan is not None
        got = objective(best.plan.model_cost_units, (best.plan.finish - p.as_of).days, p, ctx.universe.horizon, hi,
                        ctx.unit)
        assert got == brute.objective, (best.plan.option, best.plan.nodes, brute)


def test_a_pair_is_skipped_only_when_its_bound_loses_by_the_solves_own_ranking() -> None:
    """Objective first, then the plan's exact cost (`rank`), then pair name: a bound equal to the best objective may
    still win (a plan one money unit apart ties in the model and is ranked by its dollars), a higher one cannot."""
    best = (100, "h100-sxm/buy")
    assert may_win(99, "z/cloud", best)
    assert may_win(100, "b200/buy", best), "an equal objective may win on dollars"
    assert may_win(100, "mi300x/buy", best), "an equal objective may win on dollars, whatever the name"
    assert not may_win(101, "a100-80gb/cloud", best)
    assert may_win(None, "z/cloud", best), "unknown bound (bounds off): searched"
    assert may_win(10**9, "z/cloud", None), "nothing found yet"
    assert not may_win(NO_PLAN_BOUND, "a/buy", None), "no point has a plan"


def test_the_frontier_with_pruned_winners_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """The frontier's dates solved by `best_only` (as from 5,000 quotes) one after the other, or by the full solve
    side by side on two processes: the same points."""
    from solver.answers import frontier as frontier_mod
    problem = load_problem(ROOT / "constraints" / "finetune-70b.yaml")
    full = frontier_mod.frontier(problem, SolveSettings(processes=2), points=6)
    monkeypatch.setattr(frontier_mod, "PRUNED_FROM_QUOTES", 0)
    pruned = frontier_mod.frontier(problem, SolveSettings(processes=1), points=6)
    assert len(full) >= 2
    assert [(to_json(plan_dict(a.plan)), a.proven) for a in pruned] == \
        [(to_json(plan_dict(a.plan)), a.proven) for a in full]
