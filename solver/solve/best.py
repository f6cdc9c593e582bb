"""The best plan of a problem without its runners-up (`best_only`): for answers that solve many variants and keep
only each one's winner (the frontier's dates, steps up in certainty, break-even searches). Pairs are searched least
bound first and a pair that cannot win is never searched (`may_win`), so the winner comes at a fraction of a full
solve's work, and it is the plan `pipeline.solve_problem` chooses, byte for byte (the same tie-break)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from .. import collect
from ..inputs.problem import Problem
from .checker import check_plan
from .engine import INFEASIBLE, OPTIMAL
from .pipeline import NO_PLAN_BOUND, Context, PairOutcome, SolveSettings, _closed_form_bound, prepare, rank, solve_pair
from .plan import Plan


@dataclass(frozen=True)
class Best:
    """The best plan of a problem without its runners-up (`best_only`), and the status `solve_problem` would give."""

    plan: Plan | None
    status: str


def may_win(floor: int | None, pair: str, best: tuple[int, str] | None) -> bool:
    """Whether a pair whose plans' objective is at least `floor` (None: unknown) could be chosen over the best
    (objective, pair) so far: the solve ranks plans by objective, then by their exact cost (`rank`), so a pair whose
    bound equals the best objective may still win."""
    if floor == NO_PLAN_BOUND:
        return False
    return best is None or floor is None or floor <= best[0]


@collect.paused()
def best_only(problem: Problem, settings: SolveSettings | None = None, ctx: Context | None = None) -> Best:
    """`solve_problem`'s plan and status, without the best plan of every other pair: for answers that solve many
    variants and keep only each one's winner (the frontier's dates).

    Pairs are searched by their closed-form bound, least first (`model/bounds.py`), and a pair whose bound already
    exceeds the best plan found is not searched: its optimum cannot win (`may_win`). Under `objective: cost` the others are searched for plans that cost no
    more than the best so far (a cap the bounds apply per point before any model). The winner gets the same
    tie-break solve as in `solve_problem`, so the plan is the same, byte for byte."""
    ctx = ctx or prepare(problem, settings)
    settings = ctx.settings
    universe = ctx.universe
    cost_hi = ctx.cost_hi()
    pairs = universe.pairs()
    floors = {pair: _closed_form_bound(ctx, pair, cost_hi) for pair in pairs}
    order = sorted(range(len(pairs)), key=lambda k: (floors[pairs[k]] if floors[pairs[k]] is not None else 0, k))
    best: tuple[int, str, Plan] | None = None
    tied: PairOutcome | None = None
    unproven = False
    for k in order:
        pair = pairs[k]
        if not may_win(floors[pair], pair, None if best is None else best[:2]):
            continue
        cap = best[2].model_cost_units if best is not None and problem.spec.objective == "cost" else None
        # A capped model has other points and quotes than the uncapped one the tie-break is defined on: only an
        # uncapped search may tie-break during its search (the first, or all under the time objective).
        out = solve_pair(ctx, universe.subset(pair), cost_hi, tie_break=False, hint=settings.hint, cost_cap=cap,
                         speculate=None if cap is not None else
                         partial(may_win, pair=pair, best=None if best is None else best[:2]))
        if out.plan is None:
            unproven = unproven or out.status != INFEASIBLE
            continue
        unproven = unproven or out.status != OPTIMAL
        assert out.objective is not None
        if best is None or rank(out.objective, out.plan, pair) < rank(best[0], best[2], best[1]):
            best = (out.objective, pair, out.plan)
            tied = out.tie_broken
    if best is None:
        return Best(None, "unknown" if unproven else INFEASIBLE)
    plan = best[2]
    if not unproven:
        out = tied if tied is not None else \
            solve_pair(ctx, universe.subset(best[1]), cost_hi, tie_break=True, hint=settings.hint)
        if out.plan is not None and out.objective == best[0]:
            plan = out.plan
    check_plan(problem, universe, plan)
    return Best(plan, "feasible" if unproven else OPTIMAL)




__all__ = ["Best", "best_only", "may_win"]
