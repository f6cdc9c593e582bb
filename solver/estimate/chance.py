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
        got = self._lead.get(q.id)
        if got is None:
            a = self.problem.assumptions.values
            got = lead_days(self.draws, q.id, q.lead_time_days, q.lead_time_p90_days, a.lead_time_cap_quantile)
            self._lead[q.id] = got
        return got

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
        a = self.problem.assumptions.values
        slack = self.deadline_day - self.days(o, pt)          # D − d_s: the latest start of scenario s
        fixed = np.ceil(self.port(o) - 1e-9)
        bought: list[tuple[np.ndarray, int, int | None, float]] = []
        for q in quotes:
            if q.mode != "buy":
                fixed = np.maximum(fixed, np.ceil(self.lead(q) - 1e-9))
                continue
            ob = order_by_day(q, self.problem.as_of)
            bought.append((self.lead(q), ready_offset(q, o.accel.cls, a), ob, install_days(q.mode, o.accel.cls, a)))
        switches = sorted({ob + offset for _l, offset, ob, _i in bought if ob is not None})
        best: int | None = None
        lo = 0
        for hi in [*switches, None]:
            ahead = np.zeros_like(slack)
            piece_fixed = fixed
            for lead, offset, ob, inst in bought:
                if ob is not None and ob + offset < lo:   # ordered on its last valid day in this piece
                    piece_fixed = np.maximum(piece_fixed, np.ceil(ob + inst + lead - 1e-9))
                else:
                    ahead = np.maximum(ahead, np.ceil(inst + lead - 1e-9) - offset)
            top = self._kth(slack - ahead, piece_fixed, slack)
            if top is None or top < lo:
                break
            best = top if hi is None else min(top, hi)
            if hi is None or top < hi:
                break
            lo = hi + 1
        return best

    def _kth(self, h: np.ndarray, fixed: np.ndarray, slack: np.ndarray) -> int | None:
        """The k-th largest h_s over the scenarios whose fixed readiness leaves room (fixed_s ≤ slack_s)."""
        ok = h[fixed <= slack]
        k = self.needed
        if len(ok) < k:
            return None
        return int(np.partition(ok, len(ok) - k)[len(ok) - k])

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
