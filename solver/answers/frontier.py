"""The time–cost frontier: what finishing earlier costs, each point proven optimal for its finish date.

A plan is on the frontier when no other plan finishes no later for no more. The frontier is found by the
ε-constraint method (Haimes et al., 1971; the usual exact method for a bi-objective integer program): with the
finish bounded by a date d, minimise the risk-adjusted completion cost; the optimum is the frontier point at d.
Every other limit of the problem stays (the budget, the site, the policy); the deadline is the axis, so it is
replaced by the date being asked about, and points after the user's own deadline are marked.

`plan frontier` samples dates between the fastest possible finish and the cheapest plan's finish. Days late are
still counted from the user's own deadline (`schedule.late_after`), so every point's cost is the same risk-adjusted
completion cost as the chosen plan's, and each point carries its chance of meeting that deadline.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from ..inputs.overrides import Change
from ..inputs.problem import Problem
from ..solve.engine import OPTIMAL
from ..solve.forked import fork_map
from ..solve.best import Best, best_only
from ..solve.pipeline import SolveSettings, prepare, processes_for_problem, solve_problem
from ..solve.plan import Plan
from .risk import deadline_chance

log = logging.getLogger(__name__)


MAX_POINTS = 60
"""Most dates `plan frontier` solves for: each is a complete proven solve."""


@dataclass(frozen=True)
class FrontierPoint:
    """One proven point: the cheapest plan that finishes by `finish` (its own finish date)."""

    plan: Plan
    within_deadline: bool
    proven: bool = True
    p_deadline: float | None = None
    """Its chance of meeting your deadline over the scenarios (None without a deadline)."""
    chosen: bool = False
    """Whether it is the plan `plan solve` chooses: the frontier's point at your deadline (the ε-constraint at the
    deadline is the problem itself), or the cheapest point when that finishes by it."""

    @property
    def finish(self) -> date:
        return self.plan.finish

    @property
    def cost(self) -> float:
        return self.plan.total_cost


def _origin(what: str) -> str:
    return f"frontier: {what}"


def _objective(problem: Problem, objective: str) -> Any:
    """The problem's objective for a frontier what-if: `time`, or its own cost objective (the price of lateness and
    the CVaR weight kept; no value of time, which the frontier's axis is)."""
    obj = problem.spec.objective
    if objective == "time" or isinstance(obj, str):
        return objective
    return {k: v for k, v in obj.model_dump().items() if k in ("late_usd_per_day", "cvar_weight") and v is not None} \
        or "cost"


def _keep_lateness(problem: Problem) -> list[Change]:
    """Lateness stays counted from your own deadline when the frontier moves it (`schedule.late_after`)."""
    s = problem.spec.schedule
    if s.deadline is None or s.late_after is not None:
        return []
    return [Change(("schedule", "late_after"), s.deadline.isoformat(), _origin("lateness from your deadline"))]


def without_deadline(problem: Problem, objective: str = "cost") -> Problem:
    """The problem with the finish date free (and the cost objective unless asked otherwise); days late still
    counted from your deadline."""
    changes = [Change(("objective",), _objective(problem, objective), _origin(f"objective {objective}"))]
    if problem.spec.schedule.deadline is not None:
        changes += _keep_lateness(problem)
        changes.append(Change(("schedule", "deadline"), None, _origin("deadline free")))
    return problem.with_changes(changes)


def with_deadline(problem: Problem, day: date) -> Problem:
    return problem.with_changes([Change(("objective",), _objective(problem, "cost"), _origin("objective cost")),
                                 *_keep_lateness(problem),
                                 Change(("schedule", "deadline"), day.isoformat(), _origin(f"deadline {day}"))])


def _point(problem: Problem, plan: Plan, proven: bool) -> FrontierPoint:
    deadline = problem.spec.schedule.deadline
    return FrontierPoint(plan, deadline is None or plan.finish <= deadline, proven)


PRUNED_FROM_QUOTES = 5_000
"""Quotes from which each date's winner is found by `best_only` (pairs searched one after another, by bound,
most never): with many quotes each pair's search is long, and a pair whose bound cannot beat the best plan found
is never searched. Below, every pair's search is short, and the full solve's pairs side by side on every CPU are
as fast or faster (measured: bench/README.md, "Timings that used to live in docstrings (moved 2026-12-07)")."""


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
    days = {first + timedelta(days=round(span * k / (points - 1))) for k in range(points)}
    deadline = problem.spec.schedule.deadline
    if deadline is not None and first <= deadline < last:
        days.add(deadline)          # the chosen plan's own point
    inner = sorted(day for day in days if day < last)
    dated = [with_deadline(problem, day) for day in inner]
    solved = dict(zip(inner, fork_map(winner, dated, processes_for_problem(problem, settings, len(dated))),
                      strict=True))
    found: dict[tuple[date, str], FrontierPoint] = {}
    for day in sorted(days):
        r = solved.get(day, cheapest)
        if r.plan is not None:
            found[(r.plan.finish, r.plan.option)] = _point(problem, r.plan, r.status == OPTIMAL)
    chosen = _chosen(deadline, solved, cheapest)
    return _with_chances(problem, settings, pareto(list(found.values())), chosen)


def _chosen(deadline: date | None, solved: dict[date, Best], cheapest: Best) -> Plan | None:
    """The plan the problem itself chooses: the winner at the deadline, or the cheapest when it finishes by it."""
    if deadline is None or (cheapest.plan is not None and cheapest.plan.finish <= deadline):
        return cheapest.plan
    at = solved.get(deadline)
    return at.plan if at is not None else None


def _with_chances(problem: Problem, settings: SolveSettings, points: list[FrontierPoint],
                  chosen: Plan | None) -> list[FrontierPoint]:
    """The points with their chance of meeting your deadline (`risk.deadline_chance`, on the problem's own
    points) and the chosen one marked."""
    ctx = prepare(problem, settings) if problem.spec.schedule.deadline is not None else None
    out = []
    for pt in points:
        p = deadline_chance(ctx, pt.plan)[0] if ctx is not None else None
        mark = chosen is not None and (pt.plan.option, pt.plan.nodes, pt.plan.finish) == \
            (chosen.option, chosen.nodes, chosen.finish)
        out.append(dataclasses.replace(pt, p_deadline=p, chosen=mark))
    return out


def pareto(candidates: list[FrontierPoint]) -> list[FrontierPoint]:
    """The points no other point beats on both finish and cost, by finish (ties: the cheaper)."""
    out: list[FrontierPoint] = []
    for p in sorted(candidates, key=lambda p: (p.finish, p.cost, p.plan.option)):
        if not out or p.cost < out[-1].cost:
            out.append(p)
    return out


__all__ = ["FrontierPoint", "frontier", "pareto", "without_deadline", "with_deadline"]
