"""When capacity can start: each quote's readiness day, an option's readiness (accelerator availability and
software porting), and the calendar horizon that bounds every start and finish day of any plan.

Building the universe needs these, and so do the screen, the bounds, the presolve, the model and the explanations,
each for every quote of an option; the quote days are therefore kept per process (`quote_ready_day`), apart from the
pricing of points.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..inputs.assumptions import Assumptions
from ..inputs.catalog import Accelerator, Quote
from ..inputs.problem import Problem
from .delivery import ready_offset

if TYPE_CHECKING:
    from .universe import Option


_READY: dict[tuple[int, str, int], tuple[Quote, Assumptions, int]] = {}
MAX_READY_CACHED = 250_000
"""Most (quote, class, assumptions) readiness days kept (then all are dropped): the screen, the bounds, the presolve
and the model each ask for every quote of a marketplace option's. Each entry holds its quote and assumptions, so the
bound also bounds what it keeps alive (~50 MB at most) in a process that runs many what-ifs."""


def quote_ready_day(q: Quote, accel_class: str, mode: str, a: Assumptions) -> int:
    """Days after as_of when this quote's capacity is usable if ordered at once (`delivery.ready_offset`); kept per
    quote, class and assumptions object (each entry holds both objects, so an id is never another's)."""
    key = (id(q), accel_class, id(a))
    got = _READY.get(key)
    if got is not None and got[0] is q and got[1] is a:
        return got[2]
    day = ready_offset(q, accel_class, a)
    if len(_READY) >= MAX_READY_CACHED:
        _READY.clear()
    _READY[key] = (q, a, day)
    return day


def option_quote_ready(q: Quote, o: Option, a: Assumptions) -> int:
    return quote_ready_day(q, o.accel.cls, o.mode, a)


def calendar_horizon(problem: Problem, usable: list[Quote], ready_days: list[int]) -> int:
    """A day no plan's start or finish can reach: the latest readiness (earliest start, accelerator availability,
    porting, every usable quote's lead time and install), plus every delay rules can add, plus the longest run
    any point may have (`max_training_days`; longer points are unworkable), plus one. Independent of prices and of
    which options are built, so every model of a problem counts days on the same calendar."""
    spec, a = problem.spec, problem.assumptions.values
    earliest = (problem.earliest_start - problem.as_of).days
    cat = problem.catalog
    accels = {cat.systems[q.system].accelerator for q in usable}
    ready = [earliest, *ready_days, *(_option_ready(cat.accelerators[x], problem, a)[0] for x in accels)]
    delays = sum(math.ceil(r.then.delay_days) for r in spec.rules
                 if not isinstance(r.then, str) and r.then.delay_days)
    horizon = max(ready) + delays + math.ceil(a.max_training_days) + 1
    if spec.schedule.deadline is not None:
        horizon = max(horizon, (spec.schedule.deadline - problem.as_of).days + 1)
    return horizon


def _option_ready(accel: Accelerator, problem: Problem, a: Assumptions) -> tuple[int, str]:
    """(day, reason): the accelerator must be available and the software ported before training can start."""
    porting = a.porting[accel.software][problem.spec.workload.framework]  # type: ignore[index]
    avail_day = max(0, (accel.available_from.value - problem.as_of).days)
    ready_day = max(math.ceil(porting.delay_days), avail_day)
    reason = ("porting" if porting.delay_days >= avail_day and porting.delay_days > 0 else
              "available_from" if avail_day > 0 else "now")
    return ready_day, reason
