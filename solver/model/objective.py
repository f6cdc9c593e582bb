"""The objective as one integer, and the ceiling on model cost that makes it lexicographic.

`objective: cost` minimises cost, then finish; `time` minimises finish, then cost; `{delay_cost_usd_per_day}`
minimises cost + delay × finish, then finish. Cost is the risk-adjusted completion cost in every case: the expected
cost over the risk scenarios with the price of lateness (`estimate/outlook.py`). Each is one integer combination of the model's integer cost and
finish day, which needs an upper bound on each: finish < k = 2·horizon + 1 always (the calendar), and cost ≤ the
cost ceiling (only the time objective multiplies by it). All three are monotone in cost and in finish, which the
bounds in `bounds.py` rely on.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import InputError
from ..estimate.options import Option, Point, Universe
from ..estimate.outlook import Outlook
from ..inputs.problem import Problem
from ..inputs.spec import CostObjective
from .money import units
from .timing import rule_delays, timing_ceiling

OVERFLOW_LIMIT = 2 ** 61
"""Largest objective value allowed: CP-SAT's int64 with headroom for its own sums of terms."""


def finish_weight(horizon: int) -> int:
    """More than any finish day (start and finish stay below 2·horizon): the multiplier that makes cost primary."""
    return 2 * horizon + 1


def point_ceiling(pt: Point, unit: int, outlook: Outlook | None = None, horizon: int = 0, delays: int = 0) -> int:
    """Most the model can charge for a point's lines (each term rounded up, the dearest quote on every node), and
    for its lateness (`Outlook.late_ceiling`, with the calendar `horizon` and every rule delay `delays`)."""
    late = 0 if outlook is None or not pt.workable else \
        units(outlook.late_ceiling(pt.option, pt, horizon, delays), unit)
    return units(pt.fixed.total_cost, unit) + pt.n * units(pt.per_node.extreme(False, max), unit) + 1 + late


def _ceiling(problem: Problem, point_hi: int, max_nodes: int, options: Iterable[Option], unit: int) -> int:
    """The dearest point plus everything rules and waiting hardware can add to it.

    A `add_pct` surcharge is rounded up term by term in the model: on a split over quotes that is at most one unit
    per node and one for the plan's fixed lines on top of the percentage itself."""
    hi = point_hi
    for r in problem.spec.rules:
        if isinstance(r.then, str):
            continue
        hi += units(r.then.add_usd or 0, unit)
        if (r.then.add_pct or 0) > 0:
            hi += units(point_hi * r.then.add_pct / 100.0, unit) + max_nodes + 1  # type: ignore[operator]
    return hi + timing_ceiling(problem, options, unit)


def universe_ceiling(problem: Problem, universe: Universe, unit: int, outlook: Outlook,
                     memo: dict[str, int] | None = None) -> int:
    """An upper bound (in money units) on the model's cost of any plan over `universe`.

    It is the multiplier of the time objective, so it must not depend on which points a particular model keeps:
    models of different pairs, or of a pruned subset, must score a plan identically. `memo` keeps each option's
    dearest point between calls (per money unit: the caller's own dictionary)."""
    memo = {} if memo is None else memo
    point_hi = 0
    delays = sum(rule_delays(problem))
    for o in universe.options:
        if o.id not in memo:
            memo[o.id] = max((point_ceiling(pt, unit, outlook, universe.horizon, delays) for pt in o.points
                              if pt.workable), default=0)
        point_hi = max(point_hi, memo[o.id])
    max_nodes = max((pt.n for o in universe.options for pt in o.points), default=1)
    if "<timing>" not in memo:
        memo["<timing>"] = timing_ceiling(problem, universe.options, unit)
    return _ceiling(problem, point_hi, max_nodes, (), unit) + memo["<timing>"]


def model_ceiling(problem: Problem, points: list[Point], unit: int, outlook: Outlook, horizon: int) -> int:
    """`universe_ceiling` over one model's points: enough where the ceiling only sizes slacks and checks overflow."""
    delays = sum(rule_delays(problem))
    point_hi = max((point_ceiling(pt, unit, outlook, horizon, delays) for pt in points), default=0)
    max_nodes = max((pt.n for pt in points), default=1)
    options: dict[str, Option] = {pt.option.id: pt.option for pt in points}
    return _ceiling(problem, point_hi, max_nodes, options.values(), unit)


def needs_ceiling(problem: Problem) -> bool:
    """Only the time objective multiplies by the cost ceiling; the others use it for the overflow check only,
    where each model's own points suffice (and pricing every point of the universe would be wasted work)."""
    return problem.spec.objective == "time"


def objective(cost: Any, finish: Any, problem: Problem, horizon: int, cost_hi: int | None, unit: int) -> Any:
    """The lexicographic objective as one integer, or a linear expression over model variables (see module
    docstring). `cost_hi` None: only for plain numbers under the cost objectives, which cannot overflow."""
    obj = problem.spec.objective
    k_finish = finish_weight(horizon)
    if cost_hi is None:
        if obj == "time":
            raise ValueError("the time objective needs the cost ceiling")
    elif (cost_hi + 1) * (k_finish + 1) > OVERFLOW_LIMIT:
        raise InputError(f"costs up to ${cost_hi * unit:.3g} over a {horizon}-day calendar are beyond "
                         "what plan can optimise exactly; check prices and assumptions for absurd values")
    if obj == "time":
        assert cost_hi is not None
        return finish * (cost_hi + 1) + cost
    if isinstance(obj, CostObjective):
        per_day = units(obj.delay_cost_usd_per_day, unit)
        return (cost + per_day * finish) * k_finish + finish
    return cost * k_finish + finish
