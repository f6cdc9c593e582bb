"""The planned start and what depends on it, in integer money: waiting bought hardware.

A plan's *planned start* F is the latest of its floors — the earliest start, the option's porting/availability day
plus the rules' delays, and every used quote's ready offset plus those delays (`estimate/delivery.py`). The holding
cost of bought hardware that must wait because its quote expires before the just-in-time order day depends on F
(non-decreasing). F is a maximum of a few constants, so it takes one of few values: the builder encodes the cost as
a step function over those candidate values with one threshold literal per value, which is exact at every value F
can take (`candidates`). This module holds the arithmetic shared by the model, the bounds and the enumeration, so
that all three charge the same integers. (Late delivery is priced by the lateness it causes: `estimate/outlook.py`.)
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import InputError
from ..estimate.delivery import install_days, order_by_day, ready_offset, wait_days
from ..estimate.options import Option, Point, spare_nodes_pct
from ..inputs.catalog import Quote
from ..inputs.problem import Problem
from .money import units

MAX_DELAY_SUMS = 256
"""Most distinct totals of rule delays one model may face: every total multiplies the candidate start days (the
bundled example has one delay rule, so two totals). More would only come from dozens of delay rules."""


@dataclass(frozen=True)
class Timing:
    """One quote's delivery facts within a model: ready offset from its order, last order day, installation."""

    quote: Quote
    accel_class: str
    offset: int
    order_by: int | None
    install: float

    @property
    def buy(self) -> bool:
        return self.quote.mode == "buy"


MAX_CACHED_PROBLEMS = 4
"""Problems whose quotes' timings are kept (least recently used out): the solve, its explanations and the
frontier's what-ifs of one command."""
_CACHES: "OrderedDict[int, tuple[Problem, dict[tuple[str, str], Timing]]]" = OrderedDict()


def timing(problem: Problem, o: Option, q: Quote) -> Timing:
    """The quote's timing within option `o` of `problem`, made once: the presolve, the bounds, the model and its
    cost ceiling all ask for the same quotes. A timing depends only on the quote, the option's accelerator class,
    the assumptions and `as_of`, so problems that differ in nothing else — a command's what-ifs of the deadline or
    the budget: the frontier's neighbours, its dates, the sensitivity's sweeps — share one set instead of timing
    every quote again for each (measured: bench/README.md, "Timings that used to live in docstrings (moved
    2026-12-07)"). A problem is immutable, so an option and a quote id name one timing; the entry also holds the
    quote itself and its class, and one made for another object of the same id is made again."""
    entry = _CACHES.get(id(problem))
    if entry is None or entry[0] is not problem:
        entry = (problem, _shared_timings(problem))
        _CACHES[id(problem)] = entry
        while len(_CACHES) > MAX_CACHED_PROBLEMS:
            _CACHES.popitem(last=False)
    elif next(reversed(_CACHES)) != id(problem):
        _CACHES.move_to_end(id(problem))
    cache = entry[1]
    key = (o.id, q.id)
    got = cache.get(key)
    if got is None or got.quote is not q or got.accel_class != o.accel.cls:
        got = cache[key] = _timing(problem, o, q)
    return got


def _shared_timings(problem: Problem) -> dict[tuple[str, str], Timing]:
    """The timings of a cached problem with the same assumptions and `as_of` (see `timing`), else a new set."""
    for other, timings in _CACHES.values():
        if other.as_of == problem.as_of and other.assumptions.values == problem.assumptions.values:
            return timings
    return {}


def _timing(problem: Problem, o: Option, q: Quote) -> Timing:
    a = problem.assumptions.values
    return Timing(q, o.accel.cls, ready_offset(q, o.accel.cls, a), order_by_day(q, problem.as_of),
                  install_days(q.mode, o.accel.cls, a))


def wait_of(t: Timing, start: int) -> int:
    return wait_days(t.quote, start, t.offset, t.order_by)


def wait_units(pt: Point, t: Timing, wait: int, unit: int, single: bool) -> tuple[int, int]:
    """(cost, cash) units the wait adds: for a one-quote option the whole point (n nodes, rounded once, as its
    cost term is); otherwise per node (the model multiplies by the quote's nodes)."""
    cost, cash = pt.per_node.waited(t.quote.id, wait)
    if single:
        return units(pt.n * cost, unit), units(pt.n * cash, unit)
    return units(cost, unit), units(cash, unit)


def delay_sums(delays: Iterable[int]) -> list[int]:
    """Every total the given rule delays can add up to (each rule applies or not), ascending."""
    sums = {0}
    for d in delays:
        if d > 0:
            sums |= {s + d for s in sums}
        if len(sums) > MAX_DELAY_SUMS:
            raise InputError(f"rules with delay_days add up in more than {MAX_DELAY_SUMS} ways; merge some of them",
                             path="rules")
    return sorted(sums)


def candidates(earliest: int | None, ready_days: Iterable[int], offsets: Iterable[int],
               sums: list[int]) -> tuple[list[int], list[int]]:
    """(values the planned start F can take, values F − delay can take) for a model whose floors are the earliest
    start (None when not enforced), options' ready days and quotes' ready offsets, with the rules' delays `sums`."""
    base = {0, *ready_days, *offsets}
    floors = {r + d for r in base for d in sums}
    lags = set(base)
    if earliest is not None:
        floors.add(earliest)
        lags |= {earliest - d for d in sums if earliest - d >= 0}
    return sorted(floors), sorted(lags)


def rule_delays(problem: Problem) -> list[int]:
    """The delay of every rule that has one (each may apply to a plan or not)."""
    return [math.ceil(r.then.delay_days) for r in problem.spec.rules
            if not isinstance(r.then, str) and r.then.delay_days]


def timing_ceiling(problem: Problem, options: Iterable[Option], unit: int) -> int:
    """An upper bound, in money units, on what waiting hardware can add to any plan over these options: per option
    the most its bought quotes can cost by waiting until the latest start candidate (the whole hardware value, and
    capital, support and hall for the days waited; +1 unit per node for rounding)."""
    opts = list(options)
    a = problem.assumptions.values
    m = a.money
    timings = [(o, timing(problem, o, q)) for o in opts for q in o.quotes]
    u_earliest = (problem.earliest_start - problem.as_of).days
    earliest = u_earliest if problem.spec.schedule.earliest_start is not None and u_earliest > 0 else None
    starts, _lags = candidates(earliest, [o.ready_day for o in opts], [t.offset for _o, t in timings],
                               delay_sums(rule_delays(problem)))
    top = max(starts, default=0)
    site = problem.spec.site
    colo = site.colocation_usd_per_kw_month if site is not None else None
    facility = colo if colo is not None else m.facility_usd_per_kw_month
    extra = 1.0 + m.network_capex_fraction
    spares = 1.0 + spare_nodes_pct(problem) / 100.0   # the hot spares wait with the nodes
    rate = (m.cost_of_capital_pct_per_year + m.support_pct_per_year) / 100.0 / 365.0
    wait = 0
    for o in opts:
        if o.mode != "buy":
            continue
        n = max((pt.n for pt in o.points), default=1)
        kw = float(o.system.node_kw.value)
        total = 0
        for q in o.quotes:
            w = wait_days(q, top, ready_offset(q, o.accel.cls, a), order_by_day(q, problem.as_of))
            if w > 0:
                per_node = (q.price * extra * (1.0 + rate * w) + kw * facility * w * 24.0 / 730.0) * spares
                total += units(n * per_node, unit) + n
        wait = max(wait, total)
    return wait


__all__ = ["Timing", "timing", "wait_of", "wait_units", "delay_sums", "candidates", "rule_delays",
           "timing_ceiling"]
