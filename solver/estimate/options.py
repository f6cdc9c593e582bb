"""Estimates per option: every (system, mode) the catalog offers, at every candidate node count.

An *option* is a system bought, rented or contracted (e.g. `dgx-b200/buy`), with the quotes that offer it.
A *point* is an option at n nodes: memory per GPU, wall time, power, racks and cost lines, all computed here
by the pure estimators so that the CP-SAT model only selects among constants (a one-hot over points with
linear side constraints). Options that cannot be modelled at all (no quote, every quote expired, buying without
a site) are returned as static exclusions with their reason.

Everything here is a pure function of a `Problem`: the universe and its points are never changed after they are
built, and later stages keep what they derive from them in their own structures.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Generic, TypeVar

import numpy as np

from .. import collect
from ..inputs.assumptions import Assumptions, Porting
from ..inputs.catalog import Accelerator, Quote, System
from ..inputs.problem import Problem
from ..inputs.rules import adjustments, option_attrs
from ..inputs.spec import ProblemSpec
from .compute import TimeEstimate, TimeEstimator, accel_calibration, training_flops, utilisation
from .cost import RISK_LINES, Lines, Owning, Term, Totals, buy_node_terms, cloud_node_lines, fixed_lines, lines_at, \
    managed_node_lines, rented_per_dollar
from .delivery import ready_offset
from .memory import MemoryEstimate, MemoryFitter, Shape, adapter_params, model_shape
from .memo import recent, workload_key
from .scenarios import RunSampler, Runs, cvar_weight, price_tail_factor, wall_kinks

T = TypeVar("T")


PriceKey = tuple[float, bool, float, float]
"""What a quote's per-node lines depend on besides its price: (commit_months, is an estimate, hours of its term,
rate past the term) — `price_key`."""


def price_key(q: Quote, estimate: bool | None = None) -> PriceKey:
    """The quote's price key (`estimate`: whether to count it as an estimate, default its kind)."""
    est = q.kind == "estimate" if estimate is None else estimate
    return (q.commit_months, est, q.term_hours, q.after_term_rate)


Sums = tuple[float, float, float, float]
"""A price key's per-node totals: cost at price 0, cost per unit of price, cash at price 0, cash per unit."""


class PerNode(Mapping[str, Lines]):
    """Per-node cost lines of every quote of an option at one point, made on demand.

    Every per-node line is affine in the quote's price (cost.py: a bought node's lines are `buy_node_terms`, each a
    coefficient of the price plus a constant — hall and energy do not depend on it; cloud = rate × billed hours,
    managed = price × months), so they are computed once per price key, L(price) = L0 + price × slope, instead of
    once per quote. With thousands of quotes this is what keeps building the universe linear in options × node
    counts. The totals (`cost`, `cash`), which the model, the bounds and the enumeration all use, are sums of those
    terms (`cost.Totals` for rented capacity); the named lines are made only for the plans that are shown. A wait
    of bought hardware for the start (`waited`) is another template, made for the waits a model needs.
    """

    __slots__ = ("_quotes", "_make", "_sums", "_lines", "_ranges", "_cache", "_waits")

    def __init__(self, quotes: dict[str, tuple[float, PriceKey]], make: Callable[[bool, int], dict[PriceKey, Any]],
                 ranges: dict[PriceKey, tuple[float, float]]):
        self._quotes = quotes
        self._make = make
        self._sums: dict[PriceKey, Sums] | None = None
        self._lines: dict[PriceKey, tuple[Lines, Lines]] | None = None
        self._ranges = ranges
        self._cache: dict[str, Lines] = {}
        self._waits: dict[int, dict[PriceKey, Sums]] = {}

    @property
    def _templates(self) -> dict[PriceKey, Sums]:
        """Computed on first use: many points (too little memory, too slow for the deadline) are never priced."""
        if self._sums is None:
            self._sums = self._make(True, 0)
        return self._sums

    def waited(self, qid: str, wait_days: int) -> tuple[float, float]:
        """(cost, cash) per node of quote `qid` when bought hardware waits `wait_days` between readiness and the
        start: holding it longer costs capital, support, hall and value (delivery.py); 0 for rented capacity and
        for no wait. Affine in the price like every per-node line."""
        if wait_days <= 0:
            return 0.0, 0.0
        sums = self._waits.get(wait_days)
        if sums is None:
            sums = self._make(True, wait_days)
            self._waits[wait_days] = sums
        if not sums:
            return 0.0, 0.0
        price, key = self._quotes[qid]
        c0, c1, k0, k1 = sums[key]
        return c0 + price * c1 - self.cost(qid), k0 + price * k1 - self.cash(qid)

    def waited_lines(self, qid: str, wait_days: int) -> Lines:
        """The named per-node lines of quote `qid` at a wait (for the plans that are shown)."""
        if wait_days <= 0:
            return self[qid]
        price, key = self._quotes[qid]
        l0, l1 = self._make(False, wait_days)[key]
        return Lines({k: l0.cost.get(k, 0.0) + price * v for k, v in l1.cost.items()},
                     {k: l0.cash.get(k, 0.0) + price * v for k, v in l1.cash.items()})

    def __getitem__(self, qid: str) -> Lines:
        got = self._cache.get(qid)
        if got is None:
            if self._lines is None:
                self._lines = self._make(False, 0)
            price, key = self._quotes[qid]
            l0, l1 = self._lines[key]
            got = Lines({k: l0.cost.get(k, 0.0) + price * v for k, v in l1.cost.items()},
                        {k: l0.cash.get(k, 0.0) + price * v for k, v in l1.cash.items()})
            self._cache[qid] = got
        return got

    def __iter__(self) -> Iterator[str]:
        return iter(self._quotes)

    def __len__(self) -> int:
        return len(self._quotes)

    def cost(self, qid: str) -> float:
        price, key = self._quotes[qid]
        c0, c1, _k0, _k1 = self._templates[key]
        return c0 + price * c1

    def cash(self, qid: str) -> float:
        price, key = self._quotes[qid]
        _c0, _c1, k0, k1 = self._templates[key]
        return k0 + price * k1

    def total(self, qid: str, cash: bool) -> float:
        return self.cash(qid) if cash else self.cost(qid)

    def price_key(self, qid: str) -> tuple[float, PriceKey]:
        """(price, price key) of quote `qid`: its totals are `key_totals(key)` evaluated at that price."""
        return self._quotes[qid]

    def key_totals(self, key: PriceKey, cash: bool) -> tuple[float, float]:
        """(total at price 0, total per unit of price) of one price key: total(q) = t0 + q.price × t1, evaluated
        in that order so that it is the same float as `cost`/`cash`."""
        c0, c1, k0, k1 = self._templates[key]
        return (k0, k1) if cash else (c0, c1)

    def extreme(self, cash: bool, pick: Callable[..., float]) -> float:
        """min or max over the quotes of the per-node total (the ends of each price key's price range)."""
        vals = []
        for key, (c0, c1, k0, k1) in self._templates.items():
            t0, t1 = (k0, k1) if cash else (c0, c1)
            lo, hi = self._ranges[key]
            vals += [t0 + lo * t1, t0 + hi * t1]
        return pick(vals)


class _ComputedOnce(Generic[T]):
    """`functools.cached_property` without its lock: on Python 3.11 that lock is taken on every first access, a
    measurable cost over hundreds of thousands of points; computing a value twice in a race gives the same value."""

    def __init__(self, make: Callable[[Any], T]) -> None:
        self.make = make
        self.name = make.__name__
        self.__doc__ = make.__doc__

    def __get__(self, obj: Any, owner: type | None = None) -> T:
        if obj is None:
            return self  # type: ignore[return-value]  # the descriptor itself, for introspection of the class
        value = self.make(obj)
        obj.__dict__[self.name] = value  # later reads find the instance attribute and skip this descriptor
        return value


@dataclass(eq=False)
class Point:
    """An option at `n` nodes: what it needs and what it costs (per node of each quote, and per plan).

    Not changed after `build_universe` makes it: later stages keep what they learn about a point in their own
    structures, indexed by `key` (test_architecture checks that no stage writes onto a point). It is not a frozen
    dataclass only because a frozen `__init__` costs six times as much, and a large catalog makes ~10^5 points.
    """

    _option: "weakref.ReferenceType[Option]"
    n: int
    key: tuple[str, int]
    """(option id, node count): unique within a universe, the key later stages index their own data by."""
    gpus: int
    memory: MemoryEstimate
    time: TimeEstimate | None
    days: int
    power_kw: float
    racks_physical: int
    racks_with_power: int | None
    per_node: PerNode
    _fixed_make: Callable[[], Lines] = field(repr=False)

    @property
    def option(self) -> "Option":
        """The point's option. Held weakly: the option holds its points, and a strong reference both ways would make
        every universe a reference cycle, freed only by the cyclic collector (~400,000 objects per what-if of the
        200B example, which a sweep of hundreds of what-ifs in one process would otherwise pay to scan)."""
        got = self._option()
        if got is None:
            raise ReferenceError("a point outlived its universe")
        return got

    @_ComputedOnce
    def fixed(self) -> Lines:
        """Per-plan lines (porting, operations), computed on first use like the per-node lines."""
        return self._fixed_make()

    @property
    def fits(self) -> bool:
        return self.memory.fits

    @property
    def workable(self) -> bool:
        return self.time is not None


@dataclass(eq=False)
class Option:
    """A system bought, rented or contracted, with the quotes that offer it and its points (ascending n).

    Built once by `build_universe` and not changed afterwards (points refer back to their option, so the list is
    filled during construction)."""

    id: str
    system: System
    accel: Accelerator
    mode: str
    quotes: tuple[Quote, ...]
    attrs: Mapping[str, Any]
    porting: Porting
    ready_day: int
    ready_reason: str
    offer: str = ""
    """How the capacity is had: `buy`, `managed`, or for the cloud `cloud` (on demand), `cloud-reserved` (a
    committed term) or `cloud-spot` (preemptible). Each offer is its own option, so the candidate table compares
    buying, reserving and renting on demand; spot runs are longer (reclaimed nodes, compute.estimate_time)."""
    points: list[Point] = field(default_factory=list)

    @property
    def pair(self) -> str:
        return f"{self.accel.id}/{self.offer or self.mode}"

    @property
    def preemptible(self) -> bool:
        return self.offer == "cloud-spot"

    @property
    def fabrics(self) -> list[str]:
        """The fabrics its quotes are on, sorted: one job's nodes may come from at most `policy.max_fabrics`."""
        return sorted({q.fabric_id for q in self.quotes})


@dataclass(frozen=True)
class Excluded:
    """What cannot be modelled at all, before any solve: an accelerator without a usable quote, or a system and mode
    (`option`) that cannot be bought or run at any size."""

    accelerator: str
    mode: str | None
    system: str | None
    reason: str

    @property
    def option(self) -> str:
        return f"{self.system}/{self.mode}" if self.system else self.accelerator


@dataclass(frozen=True)
class Universe:
    """Everything the model chooses from, plus what was excluded before modelling and why.

    `horizon` bounds every start and finish day of any plan (see `calendar_horizon`); it depends on the catalog's
    lead times and the rules, not on prices or on which pairs were built, so re-priced and partial universes of a
    problem share it."""

    options: tuple[Option, ...]
    static_excluded: tuple[Excluded, ...]
    expired: tuple[Quote, ...]
    not_yet_quoted: tuple[Quote, ...]
    shape: Shape
    as_of: date
    earliest_day: int
    deadline_day: int | None
    horizon: int
    unpriced: tuple[Quote, ...] = ()
    """Valid quotes without a price (`kind: unpriced`): never chosen; their break-even price is reported."""

    def subset(self, pair: str) -> "Universe":
        """The same problem restricted to one accelerator/mode pair (for runners-up and exclusions)."""
        return Universe(tuple(o for o in self.options if o.pair == pair), (), self.expired, self.not_yet_quoted,
                        self.shape, self.as_of, self.earliest_day, self.deadline_day, self.horizon, self.unpriced)

    def pairs(self) -> list[str]:
        return sorted({o.pair for o in self.options if any(pt.workable for pt in o.points)})

    def quote(self, qid: str) -> Quote:
        return self._quotes_by_id[qid]

    @_ComputedOnce
    def _quotes_by_id(self) -> dict[str, Quote]:
        """Each quote of the options by id, the first option's where several share it: an explanation looks up the
        quote of each capacity in its conflict, and a scan per look-up over 100,000 quotes took three minutes for
        a conflict of 7,876."""
        index: dict[str, Quote] = {}
        for o in self.options:
            for q in o.quotes:
                index.setdefault(q.id, q)
        return index

    def points(self) -> Iterator[Point]:
        for o in self.options:
            yield from o.points


OFFERS = ("buy", "cloud", "cloud-reserved", "cloud-spot", "managed")


def offer_of(q: Quote) -> str:
    """The offer a quote belongs to (see `Option.offer`)."""
    if q.mode == "cloud" and q.term in ("reserved", "spot"):
        return f"cloud-{q.term}"
    return q.mode


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


Estimates = dict[tuple[int, float], tuple[MemoryEstimate, "TimeEstimate | None"]]
EstimateCache = dict[tuple[System, Accelerator, bool], Estimates]
"""Memory and time of a system at (node count, rule MFU factor), for one workload and one set of assumptions.
They depend on the system and its accelerator (compared by value), not on the mode, prices, site or limits, so
the options of a system, and every what-if of a problem that keeps its workload and assumptions, share them."""

SHARED_ESTIMATES = 8
"""Workload-and-assumption combinations whose estimates a process keeps (`shared_estimates`): a command's
what-ifs reuse one or two; a test run visits a few dozen problems in turn."""
_SHARED: dict[tuple[str, str], EstimateCache] = {}


def shared_estimates(problem: Problem) -> EstimateCache:
    """The estimate cache for this problem's workload and assumptions, kept per process (least recently used out).

    Estimates are pure functions of the workload, the assumptions, the system, the accelerator and the node
    count; the key holds the first two (as JSON) and the cache's inner key the next two, so a what-if that changes
    prices, quotes, the site, the schedule or the policy reuses every estimate, and one that changes the workload
    or an assumption gets its own."""
    return recent(_SHARED, workload_key(problem), SHARED_ESTIMATES)


def build_universe(problem: Problem, *, allow_expired: bool = False, only_pairs: set[str] | None = None,
                   estimates: EstimateCache | None = None, horizon_floor: int | None = None) -> Universe:
    """All options and their points (see module docstring), sorted by id.

    `only_pairs` limits the work to some accelerator/mode pairs (what-if re-solves of one option); `estimates`
    carries memory and time estimates between builds of problems that differ only in quotes (see `EstimateCache`).
    `horizon_floor`, with `only_pairs`: the horizon of a problem that differs from this one only in quotes of those
    pairs' accelerators (re-priced, or an unpriced one priced). The calendar horizon is a maximum over the usable
    quotes (`calendar_horizon`), so this problem's is the larger of that one and its pairs' own: only the quotes of
    the pairs' accelerators are read — a what-if of one option over a marketplace catalog reads a few thousand
    quotes, not all of them. Such a universe lists expired, early and unpriced quotes, and accelerators without a
    quote, for those accelerators only.
    """
    with collect.paused():
        return _build_universe(problem, allow_expired, only_pairs, estimates, horizon_floor)


def _build_universe(problem: Problem, allow_expired: bool, only_pairs: set[str] | None,
                    estimates: EstimateCache | None, horizon_floor: int | None = None) -> Universe:
    spec, cat, a = problem.spec, problem.catalog, problem.assumptions.values
    w = spec.workload
    as_of = problem.as_of
    shape = model_shape(w.params, a.memory, w.layers, w.hidden, w.heads, w.vocab)
    ckpt_params = adapter_params(shape, w.lora_rank or a.memory.lora_rank) if w.method in ("lora", "qlora") \
        else w.params
    ckpt_bytes = a.reliability.checkpoint_bytes_per_param * ckpt_params
    grid = a.node_grid.counts()
    earliest_day = (problem.earliest_start - as_of).days
    deadline_day = (spec.schedule.deadline - as_of).days if spec.schedule.deadline else None

    by_option: dict[tuple[str, str, str], list[Quote]] = {}
    expired: list[Quote] = []
    early: list[Quote] = []
    unpriced: list[Quote] = []
    accels: set[str] | None = None
    ids: Iterable[str] = cat.quotes
    if only_pairs is not None and horizon_floor is not None:
        accels = {p.partition("/")[0] for p in only_pairs}
        systems = {sid for sid, s in cat.systems.items() if s.accelerator in accels}
        ids = [qid for qid, q in cat.quotes.items() if q.system in systems]
    for qid in sorted(ids):
        q = cat.quotes[qid]
        if q.not_yet_quoted(as_of):
            early.append(q)
        elif q.expired(as_of) and not allow_expired:
            expired.append(q)
        elif not q.priced:
            unpriced.append(q)
        else:
            by_option.setdefault((q.system, q.mode, offer_of(q)), []).append(q)
    usable = [q for qs in by_option.values() for q in qs]
    ready_days = [quote_ready_day(q, cat.accelerators[cat.systems[q.system].accelerator].cls, q.mode, a)
                  for q in usable]
    horizon = calendar_horizon(problem, usable, ready_days)
    if accels is not None and horizon_floor is not None:
        horizon = max(horizon, horizon_floor)

    static: list[Excluded] = []
    quoted_accels = {cat.systems[s].accelerator for (s, _m, _o) in by_option}
    for acc_id in sorted(cat.accelerators if accels is None else accels & set(cat.accelerators)):
        if acc_id not in quoted_accels:
            static.append(Excluded(acc_id, None, None, _unquoted_reason(acc_id, problem, expired, early, unpriced)))

    options: list[Option] = []
    cache: EstimateCache = estimates if estimates is not None else shared_estimates(problem)
    sampler = RunSampler(problem)
    weight = cvar_weight(problem)
    for (sys_id, mode, offer), quotes in sorted(by_option.items()):
        system = cat.systems[sys_id]
        accel = cat.accelerators[system.accelerator]
        if only_pairs is not None and f"{accel.id}/{offer}" not in only_pairs:
            continue
        if mode == "buy" and spec.site is None:
            static.append(Excluded(accel.id, mode, sys_id, "no site: buying hardware needs a `site:` section"))
            continue
        ready_day, ready_reason = _option_ready(accel, problem, a)
        attrs = option_attrs(accelerator=accel.id, system=system.id, vendor=accel.vendor, cls=accel.cls, mode=mode,
                             ecc=bool(accel.ecc.value), cooling=system.cooling, software=accel.software,
                             network=system.network)
        porting = a.porting[accel.software][w.framework]  # type: ignore[index]
        opt = Option(f"{sys_id}/{offer}", system, accel, mode, tuple(quotes), attrs, porting, ready_day,
                     ready_reason, offer)
        opt.points.extend(_points(opt, problem, a, shape, grid, ckpt_bytes, cache, sampler, weight))
        options.append(opt)
    return Universe(tuple(options), tuple(static), tuple(expired), tuple(early), shape, as_of, earliest_day,
                    deadline_day, horizon, tuple(unpriced))


def _unquoted_reason(acc_id: str, problem: Problem, expired: list[Quote], early: list[Quote],
                     unpriced: list[Quote]) -> str:
    cat = problem.catalog
    exp = [q for q in expired if cat.systems[q.system].accelerator == acc_id]
    pre = [q for q in early if cat.systems[q.system].accelerator == acc_id]
    nop = [q for q in unpriced if cat.systems[q.system].accelerator == acc_id]
    if nop:
        return f"no price yet ({', '.join(q.id for q in nop)}): see its break-even price"
    if exp:
        return (f"every quote expired ({', '.join(f'{q.id} on {q.valid_until}' for q in exp)}); "
                "use --allow-expired")
    if pre:
        return f"every quote is dated after as_of {problem.as_of} ({', '.join(q.id for q in pre)})"
    return "no quote: hardware without a price cannot be chosen"


def _rule_mfu_factor(spec: ProblemSpec, attrs: Mapping[str, Any], gpus: int, nodes: int, power_kw: float) -> float:
    factor = 1.0
    for rule, then in adjustments(spec.rules, attrs, gpus, nodes, None, power_kw):
        if then.mfu_factor is not None and rule.when.quote is None:
            factor *= then.mfu_factor
    return factor


def estimate_point(spec: ProblemSpec, a: Assumptions, shape: Shape, system: System, accel: Accelerator, n: int,
                   util: float, ckpt_bytes: float, preemptible: bool = False
                   ) -> tuple[MemoryEstimate, TimeEstimate | None]:
    """Memory (`auto`: the least recomputation that fits) and wall time of a system at n nodes; the time is None
    when the run is unworkable (failures eat more than `max_lost_fraction`, or it exceeds `max_training_days`)."""
    return PointEstimator(spec, a, shape, system, accel, util, ckpt_bytes, preemptible).at(n)


class PointEstimator:
    """`estimate_point` of one system at any node count: the memory fit, the executed FLOPs of each recomputation
    level and the time model are set up once per system (`MemoryFitter`, `TimeEstimator`), not per count — the
    universe estimates every count of the node grid (~230) on every system (~60), a fifth of the bundled
    example's solve when done count by count. The same numbers, operation for operation."""

    def __init__(self, spec: ProblemSpec, a: Assumptions, shape: Shape, system: System, accel: Accelerator,
                 util: float, ckpt_bytes: float, preemptible: bool = False) -> None:
        w = spec.workload
        self.w = w
        self.a = a
        self.shape = shape
        self.per_node = system.per_node
        self.memory = MemoryFitter(recompute=w.recompute, params=w.params, per_node=system.per_node,
                                   available_gb=float(accel.memory_gb.value), method=w.method, optimizer=w.optimizer,
                                   seq_len=w.seq_len, shape=shape, mem=a.memory, lora_rank=w.lora_rank,
                                   flash_attention=w.flash_attention)
        self.time = TimeEstimator(a=a, per_node=system.per_node, network=system.network,
                                  peak_tflops=accel.peak_tflops(w.precision), util=util, accel_class=accel.cls,
                                  checkpoint_bytes=ckpt_bytes, preemptible=preemptible)
        self._flops: dict[str, float] = {}

    def at(self, n: int) -> tuple[MemoryEstimate, TimeEstimate | None]:
        w, a = self.w, self.a
        gpus = n * self.per_node
        mem = self.memory.fit(gpus)
        flops = self._flops.get(mem.recompute)
        if flops is None:
            flops = self._flops[mem.recompute] = training_flops(w.params, w.tokens, w.method, mem.recompute,
                                                                self.shape.layers, self.shape.hidden, w.seq_len)
        t = self.time.at(flops, gpus, n)
        if t is not None and (t.lost_fraction > a.reliability.max_lost_fraction or t.days > a.max_training_days):
            t = None
        return mem, t


def owning(problem: Problem) -> Owning:
    """How this problem charges bought hardware beyond its price: `policy.after_run`, and the hall — a colocation
    cage's rent (cash) when the site gives one, else the own-hall assumption (an allocated cost, not cash)."""
    site = problem.spec.site
    colo = site.colocation_usd_per_kw_month if site is not None else None
    rate = colo if colo is not None else problem.assumptions.values.money.facility_usd_per_kw_month
    return Owning(problem.spec.policy.after_run, float(rate), colo is not None)


def workload_utilisation(spec: ProblemSpec, a: Assumptions, accel: Accelerator, rule_factor: float) -> float:
    """The workload's MFU on the accelerator: modelled and calibrated, or the user's measurement there
    (`compute.utilisation`)."""
    w = spec.workload
    return utilisation(software=accel.software, accel_class=accel.cls, params=w.params, seq_len=w.seq_len,
                       precision=w.precision, has_fp8=accel.fp8_tflops.value is not None, method=w.method,
                       c=a.compute, rule_factor=rule_factor,
                       calibration=accel_calibration(a.uncertainty.mfu_centre, accel, w.params),
                       measured=measured_mfu(spec, accel.id)).value


def measured_mfu(spec: ProblemSpec, accel_id: str) -> float | None:
    """The MFU the user measured on this accelerator (`workload.measured_mfu`), if any."""
    m = spec.workload.measured_mfu
    return None if m is None else m.get(accel_id)


def _points(opt: Option, problem: Problem, a: Assumptions, shape: Shape, grid: list[int], ckpt_bytes: float,
            estimates: EstimateCache, sampler: RunSampler, weight: float) -> list[Point]:
    """The points of one option, in grid order."""
    spec = problem.spec
    system, accel = opt.system, opt.accel
    own = owning(problem)
    site = spec.site
    node_kw = float(system.node_kw.value)
    npr = max(1, int(system.nodes_per_rack.value))
    fit = int(site.rack_power_kw // node_kw) if site is not None else 0
    quote_keys: dict[str, tuple[float, PriceKey]] = {
        q.id: (q.price, price_key(q)) for q in opt.quotes}
    keys = sorted({k for _, k in quote_keys.values()})
    ranges = {k: (min(pr for pr, kk in quote_keys.values() if kk == k),
                  max(pr for pr, kk in quote_keys.values() if kk == k)) for k in keys}
    estimators: dict[float, PointEstimator] = {}
    cache = estimates.setdefault((system, accel, opt.preemptible), {})
    mfu_rules = any(not isinstance(r.then, str) and r.then.mfu_factor is not None for r in spec.rules)
    kind = Kind(opt.mode, system, accel, opt.porting)
    ref = weakref.ref(opt)
    out: list[Point] = []
    for n in grid:
        gpus = n * system.per_node
        power_kw = n * node_kw
        rule_f = _rule_mfu_factor(spec, opt.attrs, gpus, n, power_kw) if mfu_rules else 1.0
        key = (n, rule_f)
        if key not in cache:
            if rule_f not in estimators:  # MFU does not depend on the node count
                estimators[rule_f] = PointEstimator(spec, a, shape, system, accel,
                                                    workload_utilisation(spec, a, accel, rule_f), ckpt_bytes,
                                                    opt.preemptible)
            cache[key] = estimators[rule_f].at(n)
        mem, t = cache[key]
        days = max(1, math.ceil(t.days - 1e-9)) if t is not None else 0
        racks_phys = math.ceil(n / npr)
        racks_pow = math.ceil(n / min(npr, fit)) if site is not None and fit >= 1 else None
        runs = _runs_of(sampler, t, accel, measured_mfu(spec, accel.id) is not None)
        per_node = PerNode(quote_keys, _templates_of(kind, keys, spec, a, n, t, node_kw, own, runs, weight), ranges)
        out.append(Point(ref, n, (opt.id, n), gpus, mem, t, days, power_kw, racks_phys, racks_pow, per_node,
                         _fixed_of(kind, a, gpus, n, t, runs, weight)))
    return out


@dataclass(frozen=True)
class Kind:
    """What a point's cost formulas read of its option (mode, system, accelerator, porting), apart from the option:
    the closures that price a point on first use keep this, not the option, so a universe holds no cycle through
    them (see `Point.option`)."""

    mode: str
    system: System
    accel: Accelerator
    porting: Porting


def _runs_of(sampler: RunSampler, t: TimeEstimate | None, accel: Accelerator,
             measured: bool) -> Callable[[], Runs | None]:
    """The point's run scenarios, made on first use (most points are never priced); None when unworkable."""
    def get() -> Runs | None:
        return None if t is None else sampler.runs(t, accel.software, accel.cls, measured)
    return get


def _fixed_of(opt: Kind, a: Assumptions, gpus: int, n: int, t: TimeEstimate | None,
              runs: Callable[[], Runs | None], weight: float) -> Callable[[], Lines]:
    """Per-plan lines (porting, operations) as planned, plus `throughput` (their mean over the run scenarios less
    the planned figure) and, with a CVaR weight λ, `tail` (λ × their mean over the longest runs less the mean)."""
    def make() -> Lines:
        r = runs()
        if t is None or r is None:
            return Lines()
        lines = fixed_lines(mode=opt.mode, gpus=gpus, nodes=n, wall_hours=t.wall_hours,
                            porting_weeks=opt.porting.weeks, money=a.money)
        grid = r.span(wall_kinks(a.money, 0.0, 0.0))
        at = [fixed_lines(mode=opt.mode, gpus=gpus, nodes=n, wall_hours=h, porting_weeks=opt.porting.weeks,
                          money=a.money) for h in grid]
        mean = r.masses(grid)
        cost = np.array([x.total_cost for x in at])
        cash = np.array([x.total_cash for x in at])
        lines.add("throughput", float(mean @ cost) - lines.total_cost, cash=float(mean @ cash) - lines.total_cash)
        if weight > 0:
            lines.add("tail", weight * float((r.tail_masses(grid) - mean) @ cost))
        return lines
    return make


def _templates_of(opt: Kind, keys: list[PriceKey], spec: ProblemSpec, a: Assumptions, n: int,
                  t: TimeEstimate | None, node_kw: float, own: Owning, runs: Callable[[], Runs | None],
                  weight: float) -> Callable[[bool, int], dict[PriceKey, Any]]:
    def make(sums: bool, wait: int) -> dict[PriceKey, Any]:
        r = runs()
        if t is None or r is None or (wait > 0 and opt.mode != "buy"):
            return {}
        out = {}
        for key in keys:
            planned = _template(opt, key, spec, a, n, t, node_kw, own, wait, True)
            mean, tail = _expected(opt, key, spec, a, n, node_kw, own, wait, r, weight)
            if sums:
                out[key] = (mean[0] + tail[0], mean[1] + tail[1], mean[2], mean[3])
                continue
            l0, l1 = _template(opt, key, spec, a, n, t, node_kw, own, wait, False)
            for lines, c, k in ((l0, 0, 2), (l1, 1, 3)):
                lines.add("throughput", mean[c] - planned[c], cash=mean[k] - planned[k])
                if weight > 0:
                    lines.add("tail", tail[c])
            out[key] = (l0, l1)
        return out
    return make


def _expected(opt: Kind, key: PriceKey, spec: ProblemSpec, a: Assumptions, n: int, node_kw: float, own: Owning,
              wait: int, r: Runs, weight: float) -> tuple[tuple[float, float, float, float], tuple[float, float]]:
    """((cost at price 0, cost per dollar, cash at price 0, cash per dollar) of one node of a price key, each its
    mean over the run scenarios; (the mean–CVaR premium at price 0 and per dollar)).

    Each is a piecewise-linear function of the run's hours (every hour billed, held or powered), exact at its
    kinks (`scenarios.wall_kinks`) and between them, so its mean is the interpolation masses of the runs
    (`Runs.masses`) times its values at the kinks. The premium is λ × (mean over the longest runs − mean); an
    estimated price adds the premium of its own spread on the price-driven cost (`price_tail_factor`)."""
    commit_months, est, term_hours, after = key
    held = (a.install_days[opt.accel.cls] + wait) * 24.0 if opt.mode == "buy" else 0.0  # type: ignore[index]
    grid = r.span(wall_kinks(a.money, commit_months, held, term_hours))
    if opt.mode == "buy":
        values = np.array([_template(opt, key, spec, a, n, _run_of(h), node_kw, own, wait, True) for h in grid])
    else:   # rented: the hours past a tier's term at price 0, the per-dollar lines, at every grid hour at once
        values = np.column_stack(rented_per_dollar(mode=opt.mode, hours=np.array(grid), per_node=opt.system.per_node,
                                                   commit_months=commit_months, money=a.money, estimate=est,
                                                   term_hours=term_hours, after_usd_per_gpu_hour=after))
    m = r.masses(grid)
    mean = m @ values
    if weight <= 0:
        return (float(mean[0]), float(mean[1]), float(mean[2]), float(mean[3])), (0.0, 0.0)
    tail = weight * ((r.tail_masses(grid) - m) @ values[:, :2])
    p1 = float(tail[1])
    if est:  # an estimated price: its own tail on the price-driven cost without the estimate premium
        plain = np.array([_template(opt, (commit_months, False, term_hours, after), spec, a, n, _run_of(h), node_kw,
                                    own, wait, True)[1] for h in grid]) if opt.mode == "buy" else values[:, 3]
        p1 += weight * price_tail_factor(a) * float(m @ plain)
    return (float(mean[0]), float(mean[1]), float(mean[2]), float(mean[3])), (float(tail[0]), p1)


def _run_of(hours: float) -> TimeEstimate:
    """A run of `hours` in which every hour counts (billed, held, powered): ideal = wall, no failure rework apart."""
    return TimeEstimate(0.0, 0.0, 0.0, hours, hours, 0.0, math.inf, 0.0)


def _template(opt: Option | Kind, key: PriceKey, spec: ProblemSpec, a: Assumptions, n: int, t: TimeEstimate,
              node_kw: float, own: Owning, wait: int, sums: bool) -> Any:
    """Per-node lines at price 0 and their change per dollar of price (see `PerNode`), for bought hardware that
    waits `wait` days before the start; with `sums`, only the totals of both (`Sums`)."""
    commit_months, est, term_hours, after = key
    if opt.mode == "buy":
        site = spec.site
        assert site is not None
        terms = buy_node_terms(nodes=n, ideal_hours=t.ideal_hours, wall_hours=t.wall_hours,
                               install_days=a.install_days[opt.accel.cls], wait_days=wait,  # type: ignore[index]
                               node_kw=node_kw, pue=site.pue, usd_per_kwh=site.electricity_usd_per_kwh,
                               money=a.money, owning=own, consumer=opt.accel.cls == "consumer", estimate=est)
        if sums:
            return _affine_sums(terms)
        return lines_at(terms, 0.0), Lines({name: k for name, k, _c0, _kk, _k0 in terms},
                                           {name: kk for name, _k, _c0, kk, _k0 in terms if name not in RISK_LINES})

    def at(price: float) -> Lines:
        into = Totals() if sums else None
        if opt.mode == "cloud":
            return cloud_node_lines(usd_per_gpu_hour=price, per_node=opt.system.per_node, ideal_hours=t.ideal_hours,
                                    wall_hours=t.wall_hours, commit_months=commit_months, money=a.money, estimate=est,
                                    into=into, term_hours=term_hours, after_usd_per_gpu_hour=after)
        return managed_node_lines(usd_per_month=price, ideal_hours=t.ideal_hours, wall_hours=t.wall_hours,
                                  commit_months=commit_months, money=a.money, estimate=est, into=into)

    if after <= 0 or t.wall_hours <= term_hours:   # proportional to the price: nothing at price 0
        l1 = at(1.0)
        if sums:
            return (0.0, l1.total_cost, 0.0, l1.total_cash)
        return Lines(), l1
    l0, one = at(0.0), at(1.0)   # past a tier's term: the hours after it at their own rate, whatever the price
    if sums:
        return (l0.total_cost, one.total_cost - l0.total_cost, l0.total_cash, one.total_cash - l0.total_cash)
    return l0, one.merged(l0.scaled(-1.0))


def _affine_sums(terms: list[Term]) -> Sums:
    """(cost at price 0, cost per dollar, cash at price 0, cash per dollar) of a bought node's terms."""
    c0 = c1 = k0 = k1 = 0.0
    for name, cost_k, cost_0, cash_k, cash_0 in terms:
        c0 += cost_0
        c1 += cost_k
        if name not in RISK_LINES:
            k0 += cash_0
            k1 += cash_k
    return (c0, c1, k0, k1)


__all__ = ["Option", "Point", "Universe", "Excluded", "build_universe", "quote_ready_day", "option_quote_ready", "price_key",
           "EstimateCache", "estimate_point", "PointEstimator", "workload_utilisation", "owning", "offer_of", "OFFERS"]


def node_cost_at(opt: Option, q: Quote, problem: Problem, n: int, wall_hours: float, wait_days: int
                 ) -> tuple[float, float]:
    """(cost at price 0, cost per dollar of price) of one node of quote `q` at n nodes for a run of `wall_hours`
    (every hour of it billed or held, failures included), without the estimated-price premium: the same formulas
    as the model's templates, at a wall time the scenarios choose (`scenarios.py`)."""
    t = TimeEstimate(0.0, 0.0, 0.0, wall_hours, wall_hours, 0.0, math.inf, 0.0)
    a = problem.assumptions.values
    c0, c1, _k0, _k1 = _template(opt, price_key(q, estimate=False), problem.spec, a, n, t,
                                 float(opt.system.node_kw.value), owning(problem), wait_days, True)
    return c0, c1


def plan_fixed_cost_at(opt: Option, problem: Problem, n: int, wall_hours: float) -> float:
    """The per-plan lines (porting, operations) of a run of `wall_hours` at n nodes."""
    return fixed_lines(mode=opt.mode, gpus=n * opt.system.per_node, nodes=n, wall_hours=wall_hours,
                       porting_weeks=opt.porting.weeks, money=problem.assumptions.values.money).total_cost
