"""The deadline as a chance constraint (`policy.deadline_confidence` c): a plan must finish by the deadline with
probability at least c over the risk scenarios (`outlook.py`: P(S + d ≤ D), the start S exact, the run's days d over
the run scenarios).

The model holds the planned start F of the chosen point to F ≤ F*(point, quotes) for each set of quotes it may use:
the latest planned start from which a plan of that point with those quotes meets the confidence. The share met
depends on F only through bought hardware ordered just in time (F − its ready offset: a later start orders it later,
so it arrives later); rented capacity is requested once the rules' delays are over, whatever the plan's start, and
is used as soon as it arrives. So the share never rises with F, and F* is found by bisection — or is unbounded (no
bought quote, or every one ordered on its last valid day) when the plan meets the confidence at all, and None when
it does not at any start.

Several quotes only make the start later (the latest of their arrivals), so the single-quote F* of each used quote is
a necessary condition: the model enforces it for every set of at most `EXACT_QUOTE_SETS` quotes of an option and
per quote beyond, and a plan is then checked on its own quotes together (`joint_share`); a plan that fails adds a
cut on its point and quotes (`solve/cuts.py`). The rule delays of a plan are taken as none here (they only delay
the start, so the condition stays necessary) and counted in the joint check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from ..inputs.catalog import Quote
from ..inputs.problem import Problem
from .delivery import order_by_day, ready_offset
from .options import Option, Point
from .outlook import Outlook
from .starts import start_laws

UNBOUNDED = 10 ** 9
"""The latest start of a plan whose chance does not depend on its start (no quote ordered just in time)."""


@dataclass(frozen=True)
class ChanceCut:
    """A plan's point and quotes, taken jointly, cannot start later than `latest_start` (None: not at all) and
    still meet the deadline's confidence."""

    option: str
    nodes: int
    quotes: tuple[str, ...]
    latest_start: int | None


ALONE_LAWS_KEPT = 32
"""Start-law tables kept by `ChanceModel._laws_alone` (each quotes × days floats: a few MB at a marketplace option)."""


@dataclass
class ChanceModel:
    """The confidence of one problem with a deadline, over its outlook (module docstring)."""

    outlook: Outlook
    confidence: float
    _latest: dict[tuple[str, int, tuple[str, ...]], int | None] = field(default_factory=dict)
    _alone_laws: dict[tuple[str, bool, bytes, bytes], tuple[int, np.ndarray]] = field(default_factory=dict)

    @property
    def problem(self) -> Problem:
        return self.outlook.problem

    @property
    def deadline_day(self) -> int:
        assert self.outlook.deadline_day is not None
        return self.outlook.deadline_day

    def meets(self, p: float | None) -> bool:
        return self.outlook.meets(p, self.confidence)

    def share_at(self, o: Option, pt: Point, quotes: tuple[Quote, ...], start: int,
                 rented_orders: dict[str, int] | None = None, delay: int = 0) -> float:
        """P(deadline) of a plan at `pt` with these quotes planned to start on `start`: rented capacity ordered on
        its day in `rented_orders` (default: `delay`), bought hardware as the model orders it."""
        out = self.outlook
        orders = [(q, (rented_orders or {}).get(q.id, delay) if q.mode != "buy" else out.order(o, q, start, delay))
                  for q in quotes]
        p = out.p_deadline(o, pt, out.law(o, orders, delay))
        assert p is not None
        return p

    def latest_start(self, o: Option, pt: Point, quotes: tuple[Quote, ...]) -> int | None:
        """F* for the point with these quotes taken together (module docstring): `UNBOUNDED` when the share does
        not depend on the start and meets the confidence; None when no start meets it."""
        key = (o.id, pt.n, tuple(q.id for q in quotes))
        if key not in self._latest:
            self._latest[key] = self._bisect(o, pt, quotes, None, UNBOUNDED)
        return self._latest[key]

    def _bisect(self, o: Option, pt: Point, quotes: tuple[Quote, ...], rented_orders: dict[str, int] | None,
                below: int, delay: int = 0) -> int | None:
        """The latest start before `below` from which the plan meets the confidence (None: none; `UNBOUNDED` when
        `below` is and nothing moves with the start from some day on)."""
        a = self.problem.assumptions.values
        every = below - 1 if below < UNBOUNDED else UNBOUNDED
        moving = [q for q in quotes if q.mode == "buy"]
        if not moving:
            return every if self.meets(self.share_at(o, pt, quotes, 0, rented_orders, delay)) else None
        # From the last day a bought quote can still be ordered just in time on, nothing moves with the start.
        last = 0
        for q in moving:
            ob = order_by_day(q, self.problem.as_of)
            last = max(last, self.deadline_day if ob is None else ob + ready_offset(q, o.accel.cls, a))
        top = min(below - 1, last)
        if top < 0 or not self.meets(self.share_at(o, pt, quotes, 0, rented_orders, delay)):
            return None
        if self.meets(self.share_at(o, pt, quotes, top, rented_orders, delay)):
            return every if top >= last else top
        lo, hi = 0, top - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.meets(self.share_at(o, pt, quotes, mid, rented_orders, delay)):
                lo = mid
            else:
                hi = mid - 1
        return lo

    def meets_alone(self, o: Option, pt: Point, starts: np.ndarray, rows: np.ndarray,
                    earliest: bool = True) -> np.ndarray:
        """For the option's quotes `rows`: whether a plan at the point using that quote alone, planned to start on
        its day in `starts` (one per quote of the option), meets the confidence — rented capacity ordered at once,
        bought just in time for that start (the earliest start counted when `earliest`). One start law per quote, all
        on one grid (`starts.start_laws`)."""
        out = self.outlook
        if len(rows) == 0:
            return np.zeros(0, dtype=bool)
        lo, pmf = self._laws_alone(o, starts, rows, earliest)
        meets = out.runs(o, pt).curve(self.deadline_day, 0.0).meets(np.arange(lo, lo + pmf.shape[1]))
        return pmf @ meets >= self.confidence - 1e-9

    def _laws_alone(self, o: Option, starts: np.ndarray, rows: np.ndarray, earliest: bool) -> tuple[int, np.ndarray]:
        """(first day, pmf[row, day]) of the start laws `meets_alone` reads: they depend on the quotes and their
        planned starts, not on the point, so the points of an option (which share them unless a rule's delay
        differs) compute them once: each is a quotes × days table (measured: bench/README.md, "Timings that used
        to live in docstrings (moved 2026-12-07)"). The most recent `ALONE_LAWS_KEPT` are kept."""
        key = (o.id, earliest, rows.tobytes(), np.asarray(starts)[rows].astype(np.int64).tobytes())
        got = self._alone_laws.get(key)
        if got is None:
            out = self.outlook
            port = out.port(o, 0)
            each = [out.arrival(o, o.quotes[j], 0 if o.quotes[j].mode != "buy" else
                                out.order(o, o.quotes[j], int(starts[j]), 0)) for j in rows.tolist()]
            lo, cdf = start_laws(out.floor(o, 0, earliest), [port] if port is not None else [], each)
            got = (lo, np.diff(cdf, axis=1, prepend=0.0))
            while len(self._alone_laws) >= ALONE_LAWS_KEPT:
                self._alone_laws.pop(next(iter(self._alone_laws)))
            self._alone_laws[key] = got
        return got

    def joint_share(self, o: Option, pt: Point, start_day: int, orders: list[tuple[Quote, int]],
                    delay: int = 0) -> float:
        """P(deadline) of a plan at this point whose quotes' capacity is ordered on the given days, its rules
        delaying it `delay` days (its quotes' arrivals taken jointly)."""
        out = self.outlook
        p = out.p_deadline(o, pt, out.law(o, orders, delay))
        assert p is not None
        return p

    def joint_latest(self, o: Option, pt: Point, quotes: list[Quote], rented_orders: dict[str, int],
                     below: int, delay: int = 0) -> int | None:
        """The latest start before `below` from which the plan, its capacity ordered as the model orders it (rented
        on its fixed day, bought just in time or on its last valid day), meets the confidence; None when no start
        does."""
        if below <= 0:
            return None
        return self._bisect(o, pt, tuple(quotes), rented_orders, below, delay)


EXACT_QUOTE_SETS = 4
"""An option with at most this many quotes gets a constraint for every set of them (exact: a plan's own set is
among them); beyond, one per quote (necessary) and cuts for the plans that fail jointly."""


def quote_sets(quotes: list[Quote]) -> list[tuple[Quote, ...]]:
    """The quote sets whose joint readiness the model constrains (see `EXACT_QUOTE_SETS`)."""
    if len(quotes) > EXACT_QUOTE_SETS:
        return [(q,) for q in quotes]
    return [tuple(c) for k in range(1, len(quotes) + 1) for c in combinations(quotes, k)]


def chance_model(problem: Problem, outlook: Outlook | None = None) -> ChanceModel | None:
    """The problem's chance model, or None when it has no deadline (or `late_after`) or no
    `policy.deadline_confidence`."""
    c = problem.spec.policy.deadline_confidence
    out = outlook or Outlook.of(problem)
    if c is None or out.deadline_day is None:
        return None
    return ChanceModel(out, c)


__all__ = ["ChanceCut", "ChanceModel", "chance_model", "quote_sets", "EXACT_QUOTE_SETS", "UNBOUNDED"]
