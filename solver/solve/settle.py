"""Settling: a pair that can rank neither first nor second is searched only to within `SETTLE_GAP` of its optimum.

The model charges a plan that uses several quotes the largest of their lateness alone, never more than their joint
figure (`model/lateness.py`); a plan it undercharges is cut and the pair solved again (`pipeline.solve_pair`).
Each model's optimum is a lower bound on the pair's optimum (a cut only removes plans or charges them more), and
every plan found, charged its joint lateness in full, is a real plan of the pair. So the search may stop once the
best such plan is within the gap of the latest bound: the answer shows that plan, marked, with how much less the
pair's best may cost (`Alternative.settled_usd`). The pairs that could rank first or second are searched to their
proven optimum afterwards (`pipeline._unsettle`), so the decision is that of an exact search
(tests/test_settle.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from ..estimate.outlook import LateCut
from ..estimate.universe import Universe
from ..inputs.problem import Problem
from ..model.objective import objective
from .engine import OPTIMAL
from .plan import Plan

SETTLED = "settled"
"""A pair's search stopped short of its optimum because the plan found is within the settle tolerance of the
model's bound (`solve_pair`'s `settle`): its objective is the plan's exact one, its bound the model's optimum."""
SETTLE_GAP = 0.05
"""How close to its own optimum a pair that can rank neither first nor second is searched (`solve_problem`): the
plan shown for it costs at most 5% more than the pair's best, and the answer says by how much at most
(`Alternative.settled_usd`). A marketplace of near copies offers the search sets of 2–7 bought quotes whose joint
lateness the model undercharges by 2–7% of the plan's cost and which differ from each other by a few thousand
dollars: each needs a cut and a re-solve (measured: bench/README.md, "Timings that used to live in docstrings
(moved 2026-12-07)"), though none of them changes the decision. Every pair that could rank first or second is
searched to its proven optimum (`_unsettle`)."""


class SettleContext(Protocol):
    """What settling reads of a solve's context (`pipeline.Context`)."""

    problem: Problem
    universe: Universe
    unit: int

    def cost_hi(self) -> int | None: ...


@dataclass(frozen=True)
class PairOutcome:
    status: str
    plan: Plan | None
    objective: int | None
    bound: int | None
    tie_broken: "PairOutcome | None" = None
    """The same search with the tie-break (`solve_pair`'s `tie_break=True`), where it was asked for by `speculate`
    and came out the same way; None otherwise."""
    settled_with: "PairOutcome | None" = None
    """A settled outcome (`settle.Incumbent`): the best plan this search found, within `settle` of this outcome's
    objective, the model's optimum — which `solve_pair` answers with, and the late cuts found so far kept."""

    @property
    def settled(self) -> bool:
        """The plan is within `SolveSettings.settle` of the pair's optimum, not proven to be it (`settle.py`)."""
        return self.status == SETTLED


def shortfall(out: PairOutcome, late: list[LateCut]) -> int:
    """Money units the model charged the plan found less than its joint lateness (the first cut is on its quotes)."""
    assert out.plan is not None and out.plan.late_units is not None
    return late[0].units - out.plan.late_units


def within(out: PairOutcome, late: list[LateCut], settle: float) -> bool:
    """Whether a model optimum charged `late` too little may end its pair's search: the shortfall is at most
    `settle` of the plan's cost (as the model counts it, in money units)."""
    if settle <= 0 or not late or out.status != OPTIMAL or out.plan is None or out.plan.late_units is None:
        return False
    return shortfall(out, late) <= settle * out.plan.model_cost_units


def settled(ctx: SettleContext, out: PairOutcome, late: list[LateCut], settle: float) -> PairOutcome | None:
    """The settled outcome of a model optimum within `settle` (`within`), else None: the plan with its lateness
    charged in full (`charged`), and the model's optimum as the pair's bound."""
    if not within(out, late, settle):
        return None
    return charged(ctx, out, late)


def charged(ctx: SettleContext, out: PairOutcome, late: list[LateCut]) -> PairOutcome:
    """A model optimum charged `late` too little, as a settled outcome: the plan with its lateness charged in full
    (its model cost raised by the shortfall, as the cut on its quotes would charge it), its exact objective, and
    the model's optimum as the pair's bound (the model never charges a plan more than it costs)."""
    assert out.plan is not None and out.objective is not None
    short = shortfall(out, late)
    plan = replace(out.plan, model_cost_units=out.plan.model_cost_units + short, late_units=late[0].units)
    extra = short * per_cost_unit(ctx)
    return replace(out, status=SETTLED, plan=plan, objective=out.objective + int(extra), bound=out.objective,
                   tie_broken=None, settled_with=None)


@dataclass
class Incumbent:
    """The best plan one pair's search has found that the model charged less than its joint lateness, charged in
    full; kept across the cuts of that search."""

    best: PairOutcome | None = None

    def offer(self, ctx: SettleContext, out: PairOutcome, late: list[LateCut], settle: float) -> PairOutcome | None:
        """Keep `out` (a model optimum undercharged by `late`) if it is the best plan so far; then the best plan,
        settled, once it is within `settle` of `out`'s objective — the latest lower bound: a plan found two cuts
        ago can be within the gap of the bound that the later models raised, where the latest plan alone is not
        (a bought pair of a marketplace catalog whose plans combine quotes that are late together: each cut finds
        another combination, a little dearer). None while the gap is wider, or without a proven optimum."""
        if settle <= 0 or not within(out, late, float("inf")):
            return None
        assert out.plan is not None and out.objective is not None
        mine = charged(ctx, out, late)
        assert mine.objective is not None
        if self.best is None or self.best.objective is None or mine.objective < self.best.objective:
            self.best = mine
        assert self.best.objective is not None
        if (self.best.objective - out.objective) / per_cost_unit(ctx) > settle * out.plan.model_cost_units:
            return None
        return replace(self.best, bound=min(out.objective, self.best.objective))


def settled_gap(ctx: SettleContext, out: PairOutcome | None) -> float:
    """At most how many dollars less the best plan of a settled pair costs than the plan shown (0: it is the best)."""
    if out is None or out.plan is None or out.plan.late_units is None or out.objective is None or out.bound is None:
        return 0.0
    return (out.objective - out.bound) / per_cost_unit(ctx) * ctx.unit


def per_cost_unit(ctx: SettleContext) -> int:
    """What one money unit of cost adds to the objective (the objective is linear in the cost)."""
    return int(objective(1, 0, ctx.problem, ctx.universe.horizon, ctx.cost_hi(), ctx.unit)
               - objective(0, 0, ctx.problem, ctx.universe.horizon, ctx.cost_hi(), ctx.unit))


__all__ = ["SETTLED", "SETTLE_GAP", "Incumbent", "PairOutcome", "charged", "per_cost_unit", "settled", "settled_gap", "shortfall",
           "within"]
