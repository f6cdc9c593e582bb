"""The universe the model chooses from: options, their points at each node count, what was excluded before
modelling, and the per-node cost lines of a point.

These are the data, not the way they are computed: `build_universe` (options.py) makes them, and the model, solve,
answers and render stages read them, so the types live apart from the builder and its pricing formulas. A point's
per-node lines are held as templates affine in each quote's price (`PerNode`, one per `PriceKey`); the templates are
made by options.py. Nothing here is changed after it is built: later stages keep what they derive in their own
structures.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Generic, TypeVar

from ..inputs.assumptions import Porting, ProviderClass
from ..inputs.catalog import Accelerator, Quote, System
from .compute import TimeEstimate
from .cost import Lines
from .memory import MemoryEstimate, Shape

T = TypeVar("T")


PriceKey = tuple[float, bool, float, float, ProviderClass, float]
"""What a quote's per-node lines depend on besides its price: (commit_months, is an estimate, hours of its term,
rate past the term, provider class: whose storage and transfer rates it pays, the deposit share × the days from
order to delivery of bought hardware: what its deposit's cost of capital is in proportion to) — `price_key`."""


def price_key(q: Quote, provider: ProviderClass, estimate: bool | None = None,
              deposit_share_days: float = 0.0) -> PriceKey:
    """The quote's price key (`provider`: its class, `checkpoints.provider_class`; `estimate`: whether to count it
    as an estimate, default its kind; `deposit_share_days`: `payments.deposit_share_days`, 0 for rented capacity)."""
    est = q.kind == "estimate" if estimate is None else estimate
    return (q.commit_months, est, q.term_hours, q.after_term_rate, provider, deposit_share_days)


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
    dataclass only because a frozen `__init__` must set each field with `object.__setattr__` instead of plain
    assignment (the "tiny performance penalty" of the `dataclasses` documentation, "Frozen instances"), and a large
    catalog makes ~10^5 points (measured: bench/README.md, "Timings that used to live in docstrings (moved
    2026-12-07)").
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
        quote of each capacity in its conflict, and a scan per look-up costs quotes × capacities comparisons
        (100,000 × 7,876 in one explanation) where the index costs one pass (measured: bench/README.md, "Timings
        that used to live in docstrings (moved 2026-12-07)")."""
        index: dict[str, Quote] = {}
        for o in self.options:
            for q in o.quotes:
                index.setdefault(q.id, q)
        return index

    def points(self) -> Iterator[Point]:
        for o in self.options:
            yield from o.points
