"""`plan frontier PROGRAM`: what finishing the whole program earlier costs — for each end date, the cheapest program
that ends by it, each proven optimal over the candidates (the ε-constraint method, as `frontier.py` for one run).

The program's end is the axis: every workload must finish by the date (its own deadline still holds when it is
earlier); under `policy.deadline_confidence`, at the confidence (`_confident_range`). The candidates, lots and
limits are the program's as solved (`program_data`); a date only tightens the workloads' deadlines, so no estimate
is made again. The fastest end is one solve that minimises the program's end;
the dates are spread evenly from it to the end of the cheapest program (`plan solve`'s), which is the last point.
Every plan is re-checked by `solve/program_check.py`, and its end is checked against its date.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

import numpy as np

from ..errors import InternalError
from ..estimate.program import ProgramData, program_data
from ..inputs.program import ProgramProblem
from ..estimate.program_chance import finishes
from ..solve.engine import OPTIMAL, UNKNOWN, Engine, Limits
from ..solve.program import ProgramOutcome, ProgramPlan, decode, lazily, optimise, plan_waits
from ..solve.program_check import check_program
from .program import ProgramReport, chances

log = logging.getLogger(__name__)

MAX_POINTS = 60


@dataclass(frozen=True)
class ProgramFrontierPoint:
    end_by: int
    """The date asked about (days from as_of): every workload finishes by it."""
    report: ProgramReport
    chosen: bool
    """The program `plan solve` chooses (the cheapest; the frontier's last point)."""
    fastest_proven: bool = True
    """False on the first point when the search for the fastest end stopped at its time limit (an earlier end may
    exist)."""


def by_date(data: ProgramData, day: int) -> ProgramData:
    """The program with every workload due by `day` (an earlier deadline of its own stays)."""
    return replace(data, workloads=tuple(
        replace(w, deadline_day=min(day, w.deadline_day) if w.deadline_day is not None else day,
                deadline_group=w.deadline_group or "schedule.deadline") for w in data.workloads))


def fastest_end(data: ProgramData, limits: Limits) -> tuple[int | None, bool]:
    """(the earliest day the program can end, proven), over the same candidates and limits."""
    engine = Engine(limits)
    out, model = lazily(data, engine, None, lambda pm, trial: trial.minimize(pm.program_end), "fastest end",
                        thorough=True)
    if not out.has_solution:
        return None, False
    return decode(model, out).end_day, out.status == OPTIMAL


def _confident_range(data: ProgramData, cheapest: ProgramPlan, fastest: int, limits: Limits
                     ) -> tuple[int, int, bool]:
    """Under `policy.deadline_confidence` a date on the axis is one every workload meets at the confidence. The
    cheapest program meets its own deadlines so; it ends by D at the confidence from D = the latest of its
    workloads' ⌈c·N⌉-th earliest finish (the last date, where it is the frontier's point). The earliest date is the
    least D whose program exists, found by bisection between the fastest planned end (no plan ends earlier at all)
    and that day: (first, last, first proven)."""
    chance = data.chance
    assert chance is not None
    done = finishes(chance.scenarios, plan_waits(data, cheapest))
    k = chance.needed
    last = max(int(np.partition(f, k - 1)[k - 1]) for f in done.values())
    lo, hi, proven = fastest - 1, last, True
    while hi - lo > 1:
        mid = (lo + hi) // 2
        out, _model = lazily(by_date(data, mid), Engine(limits), None, None, "confident end")
        proven = proven and out.status != UNKNOWN
        lo, hi = (mid, hi) if not out.has_solution else (lo, mid)
    return hi, last, proven


def _report(pp: ProgramProblem, data: ProgramData, outcome: ProgramOutcome, seconds: float,
            out_of_time: bool) -> ProgramReport:
    return ProgramReport(pp, data, outcome, None, (), seconds, out_of_time, chances(data, outcome.plan))


def program_frontier(pp: ProgramProblem, limits: Limits, points: int = 8) -> list[ProgramFrontierPoint]:
    """The cheapest program ending by each of `points` dates from the fastest end to the cheapest program's end
    (see module docstring); empty when the program has no plan."""
    data = program_data(pp)
    cheapest, _ = optimise(data, limits)
    if cheapest.plan is None:
        return []
    last = cheapest.plan.end_day
    first, proven = fastest_end(data, limits)
    first = last if first is None else min(first, last)
    if data.chance is not None:
        first, last, proven = _confident_range(data, cheapest.plan, first, limits)
    days = sorted({first + round((last - first) * i / max(1, points - 1)) for i in range(points)})
    out: list[ProgramFrontierPoint] = []
    for day in days:
        if day == last:
            outcome = cheapest
            dated = data
        else:
            dated = by_date(data, day)
            outcome, _engine = optimise(dated, limits)
        if outcome.plan is None:
            log.info("program frontier: nothing ends by day %d (%s)", day, outcome.status)
            continue
        check_program(pp, outcome.plan)
        if outcome.plan.end_day > day:
            raise InternalError(f"a frontier plan ends on day {outcome.plan.end_day}, after its date {day}")
        out.append(ProgramFrontierPoint(day, _report(pp, dated, outcome, 0.0, False), day == last,
                                        proven or bool(out)))
    return out


__all__ = ["ProgramFrontierPoint", "program_frontier", "fastest_end", "by_date", "MAX_POINTS"]
