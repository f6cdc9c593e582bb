"""Steps up in confidence: what each further chance of meeting the deadline costs.

The chosen plan minimises the expected completion cost with lateness priced at the user's rate, so its chance of
meeting the deadline is whatever that price makes worth buying. A buyer who wants more certainty than the price
implies asks what the next rungs cost: for each rung c of `LADDER` above the chosen plan's chance (and above any
`policy.deadline_confidence` already asked), the plan with the lowest objective among those that meet the deadline
with probability at least c — the problem re-solved with `policy.deadline_confidence: c`, the chance constraint
of the model (`estimate/chance.py`), proven optimal like any solve.

Each step costs at least the chosen plan (a constraint never lowers an optimum; its `delta_usd` is ≥ 0 up to the
model's money unit), and its own chance, computed exactly like the risk table's, is at least its rung.

Pairs are re-solved cheapest first, by their best plan's objective without the rung: a pair whose best plan already
meets the rung needs no new solve (its optimum is the same with the constraint), and a pair whose best plan costs
no less than a step found cannot give a cheaper one (adding a constraint never lowers a pair's optimum).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..inputs.overrides import Change
from ..model.money import units
from ..solve.engine import OPTIMAL
from ..solve.pipeline import Context, prepare, solve_pair
from ..solve.plan import Plan, Result
from .risk import deadline_chance

LADDER = (0.8, 0.9, 0.95, 0.99)
"""The chances of meeting the deadline a step can be asked for: the levels a procurement committee quotes."""
MAX_STEPS = 2
"""Rungs solved above the chosen plan's chance: the next ones up (each is a complete solve)."""
CAP_ROOM, CAP_ROOM_UNITS = 0.001, 16
"""Room above a known plan's cost when it caps the search for a step (`_step`)."""
ABOVE = 0.005
"""A rung the chosen plan already meets to within half a point is not a step."""


@dataclass(frozen=True)
class ConfidenceStep:
    """The cheapest plan meeting the deadline with probability at least `target`."""

    target: float
    plan: Plan
    p_deadline: float
    delta_usd: float
    """Its objective less the chosen plan's (≥ 0)."""
    proven: bool


def rungs_above(p_now: float, asked: float | None) -> list[float]:
    """The rungs of the ladder a step is solved for: above the chosen plan's chance and the confidence asked."""
    floor = max(p_now + ABOVE, asked or 0.0)
    return [c for c in LADDER if c > floor][:MAX_STEPS]


def confidence_steps(ctx: Context, result: Result) -> tuple[ConfidenceStep, ...]:
    """The steps above the chosen plan (module docstring); none without a plan or a deadline."""
    chosen = result.plan
    if chosen is None:
        return ()
    p_now, _late = deadline_chance(ctx, chosen)
    if p_now is None:
        return ()
    known = ([chosen] if chosen else []) + [a.plan for a in result.alternatives]
    chances = {p.option: deadline_chance(ctx, p)[0] or 0.0 for p in known}
    steps: list[ConfidenceStep] = []
    for target in rungs_above(p_now, ctx.problem.spec.policy.deadline_confidence):
        if steps and steps[-1].p_deadline >= target:
            steps.append(ConfidenceStep(target, steps[-1].plan, steps[-1].p_deadline, steps[-1].delta_usd,
                                        steps[-1].proven))
            continue
        step = _step(ctx, known, chances, target, chosen)
        if step is None:
            break
        steps.append(step)
    return tuple(steps)


def _step(ctx: Context, known: list[Plan], chances: dict[str, float], target: float,
          chosen: Plan) -> ConfidenceStep | None:
    """The cheapest plan meeting `target`, or None when no plan can."""
    problem = ctx.problem.with_changes([Change(("policy", "deadline_confidence"), target,
                                               f"confidence step {target:.0%}")])
    sub = prepare(problem, ctx.settings, estimates=ctx.estimates, unit=ctx.unit, engine=ctx.engine,
                  universe=ctx.universe)
    best: Plan | None = None
    proven = True
    pairs = set(sub.universe.pairs())
    meeting = [p.total_cost for p in known if chances[p.option] >= target]
    # A known plan that meets the rung bounds the step: no pair is searched far above it (the model rounds each of
    # a plan's terms up to a money unit, so its units may exceed the dollars' by a few: CAP_ROOM of room).
    cap = units(min(meeting) * (1 + CAP_ROOM), ctx.unit) + CAP_ROOM_UNITS if meeting else None
    for old in sorted(known, key=lambda p: (p.total_cost, p.pair)):
        if best is not None and old.total_cost >= best.total_cost:
            break
        if chances[old.option] >= target:
            plan: Plan | None = old
        elif old.pair in pairs:
            out = solve_pair(sub, sub.universe.subset(old.pair), sub.cost_hi(), tie_break=False, cost_cap=cap)
            proven = proven and out.status in (OPTIMAL, "infeasible")
            plan = out.plan
        else:
            continue
        if plan is not None and (best is None or (plan.total_cost, plan.pair) < (best.total_cost, best.pair)):
            best = plan
    if best is None:
        return None
    p = deadline_chance(ctx, best)[0] or 0.0
    return ConfidenceStep(target, best, p, max(0.0, best.total_cost - chosen.total_cost), proven)


__all__ = ["ConfidenceStep", "LADDER", "confidence_steps", "rungs_above"]
