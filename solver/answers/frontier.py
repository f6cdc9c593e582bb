"""The time–cost frontier: what finishing earlier costs, each point proven optimal for its finish date.

A plan is on the frontier when no other plan finishes no later for no more. The frontier is found by the
ε-constraint method (Haimes et al., 1971; the usual exact method for a bi-objective integer program): with the
finish bounded by a date d, minimise the risk-adjusted completion cost; the optimum is the frontier point at d.
Every other limit of the problem stays (the budget, the site, the policy); the deadline is the axis, so it is
replaced by the date being asked about, and points after the user's own deadline are marked.

`plan frontier` samples dates between the fastest possible finish and the cheapest plan's finish. `plan solve`
shows the chosen plan's two neighbours:
- faster: the cheapest plan that finishes at least one day earlier (the problem with its deadline moved to the
  day before the chosen finish);
- cheaper: the fastest plan that costs less than the chosen one, whatever the deadline (finish first, then cost,
  under a cost cap one money unit below the chosen plan's): what the deadline, or the chosen finish, costs.
Pairs whose best plan already answers a question are not solved again.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from ..estimate.options import Point
from ..inputs.overrides import Change
from ..inputs.problem import Problem
from ..model.money import units
from ..model.screening import Screen
from ..solve.engine import OPTIMAL
from ..solve.forked import fork_map
from ..solve.pipeline import (Best, Context, SolveSettings, best_only, prepare, processes_for_problem, solve_pair,
                              solve_problem)
from ..solve.plan import Plan, Result

log = logging.getLogger(__name__)

DEADLINE = "schedule.deadline"

MAX_POINTS = 60
"""Most dates `plan frontier` solves for: each is a complete proven solve."""


@dataclass(frozen=True)
class FrontierPoint:
    """One proven point: the cheapest plan that finishes by `finish` (its own finish date)."""

    plan: Plan
    within_deadline: bool
    proven: bool = True

    @property
    def finish(self) -> date:
        return self.plan.finish

    @property
    def cost(self) -> float:
        return self.plan.total_cost


def _origin(what: str) -> str:
    return f"frontier: {what}"


def without_deadline(problem: Problem, objective: str = "cost") -> Problem:
    """The problem with the finish date free (and the cost objective unless asked otherwise)."""
    changes = [Change(("objective",), objective, _origin(f"objective {objective}"))]
    if problem.spec.schedule.deadline is not None:
        changes.append(Change(("schedule", "deadline"), None, _origin("deadline free")))
    return problem.with_changes(changes)


def with_deadline(problem: Problem, day: date) -> Problem:
    return problem.with_changes([Change(("objective",), "cost", _origin("objective cost")),
                                 Change(("schedule", "deadline"), day.isoformat(), _origin(f"deadline {day}"))])


def _point(problem: Problem, plan: Plan, proven: bool) -> FrontierPoint:
    deadline = problem.spec.schedule.deadline
    return FrontierPoint(plan, deadline is None or plan.finish <= deadline, proven)


PRUNED_FROM_QUOTES = 5_000
"""Quotes from which each date's winner is found by `best_only` (pairs searched one after another, by bound,
most never): with 10,000 quotes the frontier takes 24 s instead of 55 s. Below, the full solve's pairs side by side
on every CPU are as fast or faster (1,000 quotes: 11.9 s against 12.8 s; the bundled example 4.0 against 4.3 s)."""


def _winner(problem: Problem, settings: SolveSettings) -> Best:
    if len(problem.catalog.quotes) >= PRUNED_FROM_QUOTES:
        return best_only(problem, settings)
    r = solve_problem(problem, settings)
    return Best(r.plan, r.status)


def frontier(problem: Problem, settings: SolveSettings, points: int = 12) -> list[FrontierPoint]:
    """Up to `points` frontier points from the fastest plan to the cheapest, in order of finish (see module
    docstring); empty when the problem has no plan whatever the deadline.

    The two ends, then the dates between them, are independent solves: each set runs side by side on forked
    copies of this process (`forked.py`; a solve inside runs its pairs serially), each answer the same as alone."""
    points = max(2, min(points, MAX_POINTS))

    def winner(p: Problem) -> Best:
        return _winner(p, settings)

    ends = [without_deadline(problem), without_deadline(problem, "time")]
    cheapest, fastest = fork_map(winner, ends, processes_for_problem(problem, settings, len(ends)))
    if cheapest.plan is None:
        return []
    assert fastest.plan is not None
    first, last = fastest.plan.finish, cheapest.plan.finish
    span = (last - first).days
    days = sorted({first + timedelta(days=round(span * k / (points - 1))) for k in range(points)})
    inner = [day for day in days if day < last]
    dated = [with_deadline(problem, day) for day in inner]
    solved = dict(zip(inner, fork_map(winner, dated, processes_for_problem(problem, settings, len(dated))),
                      strict=True))
    found: dict[tuple[date, str], FrontierPoint] = {}
    for day in days:
        r = solved.get(day, cheapest)
        if r.plan is not None:
            found[(r.plan.finish, r.plan.option)] = _point(problem, r.plan, r.status == OPTIMAL)
    return pareto(list(found.values()))


def pareto(candidates: list[FrontierPoint]) -> list[FrontierPoint]:
    """The points no other point beats on both finish and cost, by finish (ties: the cheaper)."""
    out: list[FrontierPoint] = []
    for p in sorted(candidates, key=lambda p: (p.finish, p.cost, p.plan.option)):
        if not out or p.cost < out[-1].cost:
            out.append(p)
    return out


def _pairs_to_solve(result: Result, keep: Any) -> tuple[list[Plan], list[Plan]]:
    """(the best plans of pairs that must be solved again, plans that already answer the question as they are)."""
    plans = ([result.plan] if result.plan else []) + [a.plan for a in result.alternatives]
    return [p for p in plans if not keep(p)], [p for p in plans if keep(p)]


def _best(ctx: Context, pairs: list[str], forced: Any = None, cost_hi: int | None = None) -> tuple[Plan | None, bool]:
    """The best plan over some pairs of a context (by the context's objective; `cost_hi` overrides the cost ceiling
    when a forced cap bounds the cost), and whether all were proven. No tie-break phase: a neighbour is shown by
    its date and cost, which every optimum shares, and one worker with a fixed seed finds the same plan every time."""
    best: tuple[int, str, Plan] | None = None
    proven = True
    cost_hi = ctx.cost_hi() if cost_hi is None else cost_hi
    known = set(ctx.universe.pairs())
    for pair in pairs:
        if pair not in known:
            continue
        out = solve_pair(ctx, ctx.universe.subset(pair), cost_hi, tie_break=False, forced=forced)
        proven = proven and out.status in (OPTIMAL, "infeasible")
        if out.plan is not None and out.objective is not None and (best is None or (out.objective, pair) <
                                                                   (best[0], best[1])):
            best = (out.objective, pair, out.plan)
    return (best[2] if best else None), proven


def faster_neighbour(ctx: Context, result: Result) -> FrontierPoint | None:
    """The cheapest plan finishing at least a day before the chosen one (see module docstring)."""
    chosen = result.plan
    problem = ctx.problem
    if chosen is None or chosen.finish - timedelta(days=1) <= problem.earliest_start:
        return None
    day = chosen.finish - timedelta(days=1)
    redo, settled = _pairs_to_solve(result, lambda p: p.finish <= day)
    tight = with_deadline(problem, day)
    universe = dataclasses.replace(ctx.universe, deadline_day=(day - problem.as_of).days)
    sub = prepare(tight, ctx.settings, estimates=ctx.estimates, unit=ctx.unit, engine=ctx.engine, universe=universe)
    candidates = list(settled)
    proven = True
    # A tighter deadline never makes a pair cheaper: a pair whose best plan today costs no less than the best
    # candidate so far cannot beat it, so pairs are solved cheapest first and the rest skipped.
    for old in sorted(redo, key=lambda p: (p.total_cost, p.pair)):
        if candidates and old.total_cost >= min(c.total_cost for c in candidates):
            break
        plan, ok = _best(sub, [old.pair])
        proven = proven and ok
        if plan is not None:
            candidates.append(plan)
    if not candidates:
        return None
    best = min(candidates, key=lambda p: (p.total_cost, p.finish, p.option))
    return _point(problem, best, proven)


def cheaper_neighbour(ctx: Context, result: Result) -> FrontierPoint | None:
    """The fastest plan costing less than the chosen one, whatever the deadline (see module docstring).

    A pair that has no plan for a proven reason that does not involve the deadline has none without it either
    (the conflict still holds), so only the other pairs are searched."""
    chosen = result.plan
    if chosen is None:
        return None
    blocked = {f"{e.accelerator}/{e.mode}" for e in result.excluded if e.mode and e.system is None and e.proven
               and e.reasons and all(r.group is not None and r.group != DEADLINE for r in e.reasons)}
    problem = ctx.problem
    free = without_deadline(problem, "time")
    contexts: dict[int | None, Context] = {}

    def context(window: int | None) -> Context:
        """The problem without its deadline, or with the finish held to `window` (a day)."""
        if window not in contexts:
            p = free if window is None else free.with_changes(
                [Change(("schedule", "deadline"), (problem.as_of + timedelta(days=window)).isoformat(),
                        _origin(f"finish window {window} days"))])
            universe = dataclasses.replace(ctx.universe, deadline_day=window)   # the same points
            contexts[window] = prepare(p, ctx.settings, estimates=ctx.estimates, unit=ctx.unit, engine=ctx.engine,
                                       universe=universe)
        return contexts[window]

    sub = context(None)
    cap = units(chosen.total_cost, ctx.unit) - 1
    chosen_day = (chosen.finish - problem.as_of).days

    # Branch and bound over pairs: each pair's earliest possible finish among its points that could cost less; pairs
    # in that order, and none whose earliest finish is after the best plan found. The cap bounds every plan's cost,
    # so it is the ceiling the time objective needs (finish first, then cost).
    firsts = sorted((f, p) for p in sub.universe.pairs()
                    if p not in blocked and (f := _first_finish(sub, ctx.screen, p, cap)) is not None)
    best: tuple[int, str, Plan] | None = None
    proven = True
    for first, pair in firsts:
        if best is not None and first > best[0]:
            break
        for window in _windows(first, chosen_day, best[0] if best else None, sub.universe.horizon,
                               problem.spec.policy.deadline_confidence is None):
            c = context(window)
            out = solve_pair(c, c.universe.subset(pair), cap, tie_break=False, cost_cap=cap)
            if out.status != "infeasible" or window is None or best is not None:
                break
        proven = proven and out.status in (OPTIMAL, "infeasible")
        if out.plan is not None and out.objective is not None and (
                best is None or ((out.plan.finish - problem.as_of).days, out.plan.total_cost, pair) <
                (best[0], best[2].total_cost, best[1])):
            best = ((out.plan.finish - problem.as_of).days, pair, out.plan)
    if best is None or best[2].total_cost >= chosen.total_cost:
        return None
    return _point(problem, best[2], proven)


WINDOWS = (30, 120, 365)
"""Days after the chosen plan's finish (or a pair's earliest finish, if later) to which the cheaper neighbour's search
first holds the finish, widening in turn, then unheld."""


def _windows(first: int, chosen: int, best: int | None, horizon: int, allowed: bool) -> list[int | None]:
    """The finish limits under which a pair is searched for the cheaper neighbour, in order.

    Minimising the finish, a plan found with finish ≤ w is optimal without the limit as well: every plan the limit
    leaves out finishes later. A limited model is much smaller with a marketplace catalog — no planned start, wait or
    slip step past w, no quote too late for w — so the search first holds the finish near the chosen plan's and
    widens only when the pair has no plan within it. Once a plan is known, a pair is searched only up to its finish
    (a pair that has nothing by then cannot beat it), which is also a proof. Without the limits when the problem has
    a deadline confidence (a deadline would bring its chance constraint back)."""
    if not allowed:
        return [None]
    if best is not None:
        return [best] if best < horizon else [None]
    base = max(first, chosen)
    return [w for w in (base + d for d in WINDOWS) if w < horizon] + [None]


def _first_finish(ctx: Context, screen: Screen, pair: str, cap: int) -> int | None:
    """A lower bound on the finish day of the pair's plans that cost at most `cap` units (every group but the
    deadline enforced); None when none can (by the point bounds; everything is a candidate when they are off).

    Points are ruled out by `screen`, the screen of the problem with its deadline, through the reasons that do not
    involve the deadline: they hold without it, and the solve has computed them already (a screen of the problem
    without a deadline would compute them all again). Reasons it does not list only leave a point in, which can
    only lower the bound."""
    if not ctx.bounds.sound:
        return 0
    # No plan at a point starts before its option is ready (rule delays only add days): points are visited by that
    # earliest finish, and the search stops at the first whose earliest finish is no better than the best bound.
    order = sorted(((o.ready_day + pt.days, k, pt) for o in ctx.universe.subset(pair).options
                    for k, pt in enumerate(o.points) if pt.workable and pt.fits), key=lambda e: (e[0], e[1]))
    first: int | None = None
    for earliest, _k, pt in order:
        if first is not None and earliest >= first:
            break
        if not _out_without_deadline(screen, pt):
            low = ctx.bounds.point_lower(pt, cost_cap=cap)
            if low is not None:
                first = low[2] if first is None else min(first, low[2])
    return first


def _out_without_deadline(screen: Screen, pt: Point) -> bool:
    return pt.n < screen.facts(pt.option).min_nodes or any(
        DEADLINE not in item for item in screen.violations(pt, budget=False))


__all__ = ["FrontierPoint", "frontier", "pareto", "faster_neighbour", "cheaper_neighbour",
           "without_deadline", "with_deadline"]
