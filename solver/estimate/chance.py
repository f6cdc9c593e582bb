"""The deadline as a chance constraint (`policy.deadline_confidence`): the latest planned start from which a point,
with the capacity of a quote, still finishes by the deadline in a fraction c of the scenarios.

In scenario s a plan that plans to start on day F starts on max(F, ⌈R_s⌉), where R_s is the day its last capacity
(and its software port) is ready in that scenario, and finishes d_s = ⌈wall_s / 24⌉ days later (`risk.outcomes`
uses the same convention). With one quote:
- rented capacity is ordered on day `delay` (the rules' delays; 0 here), so R_s = delay + L_s does not move with F;
- bought hardware is ordered just in time, F − offset (offset = ⌈lead at the confidence + installation⌉), so
  ⌈R_s⌉ = F + a_s with a_s = ⌈install + L_s⌉ − offset; once that order day would fall after the quote's last valid
  day `ob`, it is ordered on `ob` and R_s = ob + install + L_s no longer moves;
- the port of the software is ready on p_s (its own lognormal).
The run meets the deadline D in scenario s iff F ≤ h_s = D − d_s − a⁺_s and B_s ≤ D − d_s (B_s the part of ⌈R_s⌉
that does not move with F). The fraction meeting it never rises with F, so the constraint is F ≤ F*, F* the k-th
largest h_s among the scenarios with B_s ≤ D − d_s, k = ⌈c·N⌉ — an order statistic, O(N) per point and quote.

Several quotes only make the start later (the maximum of their readiness), so the single-quote F* of each used
quote is a necessary condition: the model enforces it, and a plan is then checked on its joint scenarios
(`joint_meets`); a plan that fails adds a cut on its point and quotes (`solve/pipeline.py`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from ..inputs.catalog import Quote
from ..inputs.problem import Problem
from .delivery import install_days, order_by_day, ready_offset
from .compute import TimeEstimate
from .options import Option, Point, recent, workload_key
from .scenarios import wall_hours
from .uncertainty import Draws, lead_days, mfu_factor, porting_days


@dataclass(frozen=True)
class ChanceCut:
    """A plan's point and quotes, taken jointly, cannot start later than `latest_start` (None: not at all) and
    still meet the deadline's confidence."""

    option: str
    nodes: int
    quotes: tuple[str, ...]
    latest_start: int | None


@dataclass(frozen=True)
class _QuoteDays:
    """One quote's readiness per scenario in whole days (`ChanceModel._latest_start`): rented, ⌈lead⌉ (ordered on
    day 0); bought, ⌈install + lead⌉ after its order (`lead`), the days it runs past its ready offset when ordered
    just in time (`ahead`, ≥ 0), and the day it is ready when ordered on its last valid day `ob` (`at_order_by`)."""

    buy: bool
    lead: np.ndarray
    offset: int
    ob: int | None
    ahead: np.ndarray
    at_order_by: np.ndarray | None


@dataclass
class ChanceModel:
    """The scenarios of one problem with a deadline and a confidence, and the arrays its constraints read (kept
    per point, quote and option: the same point is asked about by many models)."""

    problem: Problem
    deadline_day: int
    confidence: float
    draws: Draws
    _days: dict[tuple[TimeEstimate, str, str], np.ndarray] = field(default_factory=dict)
    """Finish days per scenario by time estimate and platform: shared by every chance model of one workload and
    one set of assumptions (`shared_days`), as the estimates themselves are."""
    _lead: dict[str, np.ndarray] = field(default_factory=dict)
    _port: dict[str, np.ndarray] = field(default_factory=dict)
    _latest: dict[tuple[str, int, tuple[str, ...]], int | None] = field(default_factory=dict)
    _ready: dict[tuple[str, bytes], dict[str, np.ndarray]] = field(default_factory=dict)
    _slack: dict[tuple[TimeEstimate, str, str], np.ndarray] = field(default_factory=dict)
    _port_days_by: dict[str, np.ndarray] = field(default_factory=dict)
    _quote_days_by: dict[tuple[str, str], "_QuoteDays"] = field(default_factory=dict)

    @property
    def needed(self) -> int:
        """Scenarios that must meet the deadline: ⌈c·N⌉."""
        return math.ceil(round(self.confidence * self.draws.n, 9))

    def days(self, o: Option, pt: Point) -> np.ndarray:
        assert pt.time is not None
        key = (pt.time, o.accel.software, o.accel.cls)
        got = self._days.get(key)
        if got is None:
            a = self.problem.assumptions.values
            wall = wall_hours(pt.time, a.reliability.restart_hours, mfu_factor(self.draws, a, o.accel.software,
                                                                                 o.accel.cls),
                              self.draws.normal("interruptions"), self.draws.uniform("interruptions"))
            got = np.maximum(1.0, np.ceil(wall / 24.0 - 1e-9))
            got.flags.writeable = False
            self._days[key] = got
        return got

    def lead(self, q: Quote) -> np.ndarray:
        """The quote's lead time per scenario (days), kept: the joint checks ask for the same quotes again."""
        got = self._lead.get(q.id)
        if got is None:
            got = self._lead[q.id] = self._draw_lead(q)
        return got

    def _draw_lead(self, q: Quote) -> np.ndarray:
        a = self.problem.assumptions.values
        return lead_days(self.draws, q.id, q.lead_time_days, q.lead_time_p90_days, a.lead_time_cap_quantile)

    def port(self, o: Option) -> np.ndarray:
        key = f"{o.accel.software}/{self.problem.spec.workload.framework}"
        got = self._port.get(key)
        if got is None:
            got = porting_days(self.draws, self.problem.assumptions.values, key, o.porting.delay_days)
            self._port[key] = got
        return got

    def latest_start(self, o: Option, pt: Point, quotes: tuple[Quote, ...]) -> int | None:
        """F* for the point with these quotes' capacity taken together (module docstring); None when no start
        meets the confidence."""
        key = (o.id, pt.n, tuple(q.id for q in quotes))
        if key not in self._latest:
            self._latest[key] = self._latest_start(o, pt, quotes)
        return self._latest[key]

    def _latest_start(self, o: Option, pt: Point, quotes: tuple[Quote, ...]) -> int | None:
        """Bought quotes switch from just-in-time ordering to their last valid day at ob + offset; between those
        switches every quote's regime is fixed and F* is one order statistic. Pieces are visited in time order and
        the search stops at the first piece where the confidence fails (the share met never rises with F)."""
        slack = self.slack(o, pt)
        fixed = self._port_days(o)
        bought: list[_QuoteDays] = []
        for q in quotes:
            got = self._quote_days(o, q)
            if got.buy:
                bought.append(got)
            else:
                fixed = np.maximum(fixed, got.lead)
        switches = sorted({b.ob + b.offset for b in bought if b.ob is not None})
        best: int | None = None
        lo = 0
        for hi in [*switches, None]:
            ahead: np.ndarray | None = None
            piece_fixed = fixed
            for b in bought:
                if b.ob is not None and b.ob + b.offset < lo:   # ordered on its last valid day in this piece
                    assert b.at_order_by is not None
                    piece_fixed = np.maximum(piece_fixed, b.at_order_by)
                else:
                    ahead = b.ahead if ahead is None else np.maximum(ahead, b.ahead)
            top = self._kth(slack if ahead is None else slack - ahead, piece_fixed, slack)
            if top is None or top < lo:
                break
            best = top if hi is None else min(top, hi)
            if hi is None or top < hi:
                break
            lo = hi + 1
        return best

    def slack(self, o: Option, pt: Point) -> np.ndarray:
        """D − d_s, the latest start of each scenario, in whole days (the point's `days` are whole)."""
        assert pt.time is not None
        key = (pt.time, o.accel.software, o.accel.cls)
        got = self._slack.get(key)
        if got is None:
            got = self._slack[key] = (self.deadline_day - self.days(o, pt)).astype(np.int32)
            got.flags.writeable = False
        return got

    def _port_days(self, o: Option) -> np.ndarray:
        """⌈port_s⌉: the day the option's software is ported in each scenario."""
        key = f"{o.accel.software}/{self.problem.spec.workload.framework}"
        got = self._port_days_by.get(key)
        if got is None:
            got = self._port_days_by[key] = np.ceil(self.port(o) - 1e-9).astype(np.int32)
        return got

    def _quote_days(self, o: Option, q: Quote) -> "_QuoteDays":
        """A quote's scenario readiness in whole days, once per quote (and accelerator class, for installation)."""
        key = (q.id, o.accel.cls)
        got = self._quote_days_by.get(key)
        if got is not None:
            return got
        lead = self._lead.get(q.id)
        if lead is None:  # not kept: the whole days below are all most quotes ever need
            lead = self._draw_lead(q)
        if q.mode != "buy":
            got = _QuoteDays(False, np.ceil(lead - 1e-9).astype(np.int32), 0, None, np.zeros(0, np.int32), None)
        else:
            a = self.problem.assumptions.values
            inst = install_days(q.mode, o.accel.cls, a)
            offset = ready_offset(q, o.accel.cls, a)
            ob = order_by_day(q, self.problem.as_of)
            jit = np.ceil(inst + lead - 1e-9).astype(np.int32)
            got = _QuoteDays(True, jit, offset, ob, np.maximum(jit - offset, 0),
                             None if ob is None else np.ceil(ob + inst + lead - 1e-9).astype(np.int32))
        self._quote_days_by[key] = got
        return got

    def _kth(self, h: np.ndarray, fixed: np.ndarray, slack: np.ndarray) -> int | None:
        """The k-th largest h_s over the scenarios whose fixed readiness leaves room (fixed_s ≤ slack_s). The h_s
        are whole days within a few hundred of each other, so counting them (a histogram, then its running total
        from the top) finds the order statistic about four times faster than a partition of the floats."""
        ok = h[fixed <= slack]
        k = self.needed
        if len(ok) < k:
            return None
        days = ok.astype(np.int64)
        lo = int(days.min())
        if int(days.max()) - lo > 8 * len(days):
            return int(np.partition(days, len(days) - k)[len(days) - k])
        counts = np.bincount(days - lo)
        at_least = np.cumsum(counts[::-1])
        return lo + len(counts) - 1 - int(np.argmax(at_least >= k))

    def meets_alone(self, o: Option, pt: Point, starts: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """For the option's quotes `rows`: whether a plan at the point using that quote alone, planned to start on
        its day in `starts` (one per quote of the option), meets the confidence — exactly `latest_start(o, pt, (q,))`
        is not None and at least that day, as the share met never rises with the start; one comparison of a
        quotes × scenarios array instead of an order statistic per quote.

        A quote alone is ready in scenario s on E_s (`_readiness`), so the run meets the deadline iff E_s ≤ D − d_s;
        E does not depend on the point, so it is kept per option and start days."""
        slack = self.slack(o, pt)
        ready = self._readiness(o, starts)
        return np.count_nonzero(ready[rows] <= slack[None, :], axis=1) >= self.needed

    def _readiness(self, o: Option, starts: np.ndarray) -> np.ndarray:
        """E[q, s] for each quote q of the option planned to start on starts[q], the day the run can start in
        scenario s (module docstring): rented, max(F, ⌈port⌉, ⌈lead⌉); bought just in time (F ≤ ob + offset),
        max(⌈port⌉, F + max(0, ⌈install + lead⌉ − offset)); bought on its last valid day, max(F, ⌈port⌉,
        ⌈ob + install + lead⌉) — the conditions of `_latest_start`'s pieces, at one start."""
        key = (o.id, starts.tobytes())
        got = recent(self._ready, key, READY_OPTIONS)
        if "E" in got:
            return got["E"]
        port = self._port_days(o)
        out = np.empty((len(o.quotes), len(port)), dtype=np.int32)
        for j, q in enumerate(o.quotes):
            f = int(starts[j])
            d = self._quote_days(o, q)
            if not d.buy:
                out[j] = np.maximum(np.maximum(port, d.lead), f)
            elif d.ob is None or f <= d.ob + d.offset:
                out[j] = np.maximum(port, d.ahead + f)
            else:
                assert d.at_order_by is not None
                out[j] = np.maximum(np.maximum(port, d.at_order_by), f)
        got["E"] = out
        return out

    def joint_meets(self, o: Option, pt: Point, start_day: int, orders: list[tuple[Quote, int]]) -> int:
        """How many scenarios a plan at this point, planned to start on `start_day`, with the quotes' capacity
        ordered on the given days, finishes by the deadline in (its quotes' lateness taken jointly)."""
        a = self.problem.assumptions.values
        ready = np.ceil(self.port(o) - 1e-9)
        for q, ordered in orders:
            ready = np.maximum(ready, np.ceil(ordered + install_days(q.mode, o.accel.cls, a) + self.lead(q) - 1e-9))
        finish = np.maximum(float(start_day), ready) + self.days(o, pt)
        return int(np.count_nonzero(finish <= self.deadline_day))

    def joint_latest(self, o: Option, pt: Point, quotes: list[Quote], rented_orders: dict[str, int],
                     below: int) -> int | None:
        """The latest start before `below` from which the plan, its capacity ordered as the model orders it
        (rented on its fixed day, bought just in time or on its last valid day), meets the confidence; None when no
        start does. The share met never rises with the start, so a bisection finds it."""
        a = self.problem.assumptions.values

        def meets(start: int) -> bool:
            orders = []
            for q in quotes:
                if q.mode != "buy":
                    orders.append((q, rented_orders.get(q.id, 0)))
                    continue
                ob = order_by_day(q, self.problem.as_of)
                jit = start - ready_offset(q, o.accel.cls, a)
                orders.append((q, jit if ob is None else min(ob, jit)))
            return self.joint_meets(o, pt, start, orders) >= self.needed

        if below <= 0 or not meets(0):
            return None
        lo, hi = 0, below - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if meets(mid):
                lo = mid
            else:
                hi = mid - 1
        return lo


READY_OPTIONS = 8
"""Options whose quotes' scenario readiness (`ChanceModel._readiness`, quotes × scenarios) a chance model keeps:
the points of one option are bounded one after another."""

EXACT_QUOTE_SETS = 4
"""An option with at most this many quotes gets a constraint for every set of them (exact: a plan's own set is
among them); beyond, one per quote (necessary) and cuts for the plans that fail jointly."""


def quote_sets(quotes: list[Quote]) -> list[tuple[Quote, ...]]:
    """The quote sets whose joint readiness the model constrains (see `EXACT_QUOTE_SETS`)."""
    if len(quotes) > EXACT_QUOTE_SETS:
        return [(q,) for q in quotes]
    return [tuple(c) for k in range(1, len(quotes) + 1) for c in combinations(quotes, k)]


SHARED_DAYS = 4
"""Workload-and-assumption combinations whose scenario days a process keeps (`shared_days`)."""
_SHARED_DAYS: dict[tuple[str, str], dict[tuple[TimeEstimate, str, str], np.ndarray]] = {}


def shared_days(problem: Problem) -> dict[tuple[TimeEstimate, str, str], np.ndarray]:
    """The scenario days of this problem's workload and assumptions, kept per process (least recently used out):
    the what-ifs of an explanation change limits, not the workload, and each would otherwise redraw thousands of
    interruption counts per point."""
    return recent(_SHARED_DAYS, workload_key(problem), SHARED_DAYS)


def chance_model(problem: Problem, deadline_day: int | None) -> ChanceModel | None:
    """The problem's chance model, or None when it has no deadline or no `policy.deadline_confidence`."""
    c = problem.spec.policy.deadline_confidence
    if c is None or deadline_day is None:
        return None
    u = problem.assumptions.values.uncertainty
    return ChanceModel(problem, deadline_day, c, Draws(u.seed, u.scenarios), _days=shared_days(problem))


__all__ = ["ChanceCut", "ChanceModel", "chance_model", "quote_sets", "EXACT_QUOTE_SETS"]
