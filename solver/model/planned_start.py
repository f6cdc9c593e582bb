"""The calendar in the CP-SAT model: start, finish and the planned start F, and the costs that step with F.

The run starts at S ≥ F, F the latest of the floors (earliest start, option ready and every used quote's ready
offset, each plus the rules' delays). Bought hardware that must wait for the start costs a step function of F over
the few values F can take (`timing.py` holds the arithmetic, shared with the bounds and the enumeration); F is
pinned to the maximum of its floors only when such a cost depends on it. Two families of `build`, the calendar and
the delivery timing, kept together because the timing reads the floors the calendar sets and adds the threshold
literals on F the calendar's start leaves free.
"""

from __future__ import annotations

from typing import Any

from ..estimate.options import Option, option_quote_ready
from .builder_state import BuilderState
from .timing import Timing, candidates, delay_sums, timing, wait_of, wait_units


def add_calendar(bld: BuilderState) -> None:
    """finish = start + days of the chosen point; start ≥ the planned start F, the latest of the floors: the
    earliest start, the option's readiness and every used quote's readiness, each plus the delays of the rules
    that apply (added by `add_adjustments`). F is pinned to that maximum: the timing costs depend on it."""
    m, z, pts = bld.m, bld.z, bld.points
    m.add(bld.finish == bld.start + sum(pts[i].days * z[i] for i in range(len(pts))))
    delay = sum(bld.delays) if bld.delays else 0
    floors: list[Any] = [bld.earliest_term, sum(o.ready_day * bld.sel[o.id] for o in bld.options) + delay]
    for o in bld.options:
        for q in o.quotes:
            if isinstance(bld.u[q.id], int) or bld.u[q.id] is bld.zero:
                continue
            rd = option_quote_ready(q, o, bld.a)
            if rd > 0:
                floors.append(rd * bld.u[q.id] + delay)
    for f in floors:
        m.add(bld.planned >= f)
    m.add(bld.start >= bld.planned)
    bld.floors = floors


def pin_planned_start(bld: BuilderState, priced: bool) -> None:
    """F is the maximum of the floors when a cost depends on it (`add_timing`); otherwise nothing pushes it up
    and the run starts at it (the objective minimises the finish), so F = start is enough."""
    if priced:
        bld.m.add_max_equality(bld.planned, bld.floors)
    else:
        bld.m.add(bld.planned == bld.start)


def _threshold(bld: BuilderState, var: Any, name: str, op: str, v: int) -> Any:
    """A literal equal to `var <= v` (op "le") or `var >= v` (op "ge"), made once per value."""
    key = (name, op, v)
    lit = bld.thresholds.get(key)
    if lit is None:
        lit = bld.m.new_bool_var(f"{name}_{op}_{v}")
        if op == "le":
            bld.m.add(var <= v).only_enforce_if(lit)
            bld.m.add(var >= v + 1).only_enforce_if(~lit)
        else:
            bld.m.add(var >= v).only_enforce_if(lit)
            bld.m.add(var <= v - 1).only_enforce_if(~lit)
        bld.thresholds[key] = lit
    return lit


def add_timing(bld: BuilderState) -> None:
    """Waiting bought hardware as a step function of the planned start F (`timing.py`): wait_q,v = Σ_p
    (waitcost_q,p(v) − waitcost_q,p(v⁻)) · nodes_q,p if F ≥ v, else 0, v⁻ the step before v (`_wait_steps`: the
    steps at or before F add up to the wait at F). Equalities, not bounds the objective pushes down, for the
    reason `_add_pct` gives. With the deadline fixed, a point p can only have F ≤ deadline − days_p: later steps
    are left out. (Lateness does not depend on F in the model: rented capacity is used when it arrives, and
    bought hardware's is charged at the quote's own floor, a lower bound the cuts make exact: `add_lateness`.)"""
    sums = delay_sums(bld.delay_rules)
    spec, u = bld.spec, bld.universe
    earliest = u.earliest_day if spec.schedule.earliest_start is not None and u.earliest_day > 0 else None
    timings = {q.id: timing(bld.problem, o, q) for o in bld.options for q in o.quotes
               if o.mode == "buy" and not (isinstance(bld.u[q.id], int) or bld.u[q.id] is bld.zero)}
    starts, _lags = candidates(earliest, [o.ready_day for o in bld.options],
                               [t.offset for t in timings.values()], sums)
    waits = 0
    for o in bld.options:
        for q in o.quotes:
            t = timings.get(q.id)
            if t is not None and t.order_by is not None:
                waits += _wait_steps(bld, o, t, starts)
    pin_planned_start(bld, waits > 0)


def _wait_steps(bld: BuilderState, o: Option, t: Timing, starts: list[int]) -> int:
    """The wait costs of one bought quote (see `add_timing`); returns how many steps were added.

    The planned start F is at or past every step v ≤ F, so each step carries what the wait at v adds to the
    wait at the step before (in the model's units, each rounded as a single step's would be): the active steps
    add up to the wait at F exactly. Each step once carried the whole wait at v, and a quote whose order-by date
    passed before several candidate starts was charged its wait at each of them (a $300k node bought 64 days
    early, a second quote ready in between: $342k counted against $334k)."""
    idx = bld.by_option[o.id]
    single = len(o.quotes) == 1
    qid = t.quote.id
    added = 0
    dl = bld.universe.deadline_day if bld.guard == "fixed" else None
    counted: dict[tuple[int, int], int] = {}
    """(point, view) → the units of the wait counted by the steps so far."""
    for v in starts:
        w = wait_of(t, v)
        if w <= 0:
            continue
        live = [i for i in idx if dl is None or v + bld.points[i].days <= dl]
        if not live:
            continue
        terms: tuple[list[Any], list[Any]] = ([], [])
        span = [[0, 0], [0, 0]]
        for i in live:
            nodes = bld.z[i] if single else bld.y.get((qid, i))
            if nodes is None:  # the quote is not modelled at this point (`reduce.py`)
                continue
            pt = bld.points[i]
            for view, k in enumerate(wait_units(pt, t, w, bld.unit, single)):
                step = k - counted.get((i, view), 0)
                counted[(i, view)] = k
                if step != 0:
                    terms[view].append(step * nodes)
                    most = step if single else step * pt.n
                    span[view] = [min(span[view][0], most), max(span[view][1], most)]
        if not terms[0] and not terms[1]:
            continue
        ge = _threshold(bld, bld.planned, "F", "ge", v)
        for view in (0, 1):
            if not terms[view]:
                continue
            lo, hi = span[view]
            extra = bld.m.new_int_var(lo, hi, f"wait_{'cash' if view else 'cost'}[{qid}>={v}]")
            bld.m.add(extra == sum(terms[view])).only_enforce_if(ge)
            bld.m.add(extra == 0).only_enforce_if(~ge)
            (bld.cash_adds if view else bld.cost_adds).append(extra)
            added += 1
    return added
