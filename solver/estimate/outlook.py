"""What the risk scenarios say about the plans of one problem: their runs, their start, their lateness, their chance
of the deadline — the figures the objective is made of.

A plan's completion cost in run scenario s (README, "The objective"):

    f_s = cost(W_s) + price of a late day × E_S[max(0, S + d_s − D)]

- W_s, d_s: the point's wall hours and whole days in scenario s (`scenarios.Runs`: MFU and interruptions, N draws
  shared by every plan — common random numbers);
- S: the day the run really starts (`starts.py`), integrated exactly (conditional Monte Carlo);
- D: the deadline (`schedule.deadline`; without one nothing is late);
- the price of a late day: `objective.late_usd_per_day`, by default the problem's `risk.money.delay_cost_usd_per_day`
  — every day past the deadline, whatever made it late (slow throughput, interruptions, late delivery, porting).

The objective is (1 − λ)·mean_s f_s + λ·mean of f_s over the 5% longest runs (`objective.cvar_weight` λ, default
`risk.uncertainty.aversion`): every cost line and the lateness rise with the run's length, so the 5% longest runs
are the 5% dearest and that mean is CVaR95 of f over the run scenarios, the delivery integrated out (Rockafellar &
Uryasev 2000 [rockafellar-uryasev2000]; the sample-average approximation of Kleywegt, Shapiro & Homem-de-Mello
[kleywegt2002-saa]). The cost lines' part is linear in each quote's nodes (`options.py` prices every per-node line at
its mean over the runs); the lateness part depends on the point and on the quotes a plan uses together, and is
computed here: for one quote used alone exactly, for several jointly (the model charges the largest of their alone
figures, which never exceeds the joint one, and cuts plans whose joint figure is higher: `solve/cuts.py`).

P(deadline) = P(S + d ≤ D) = mean_s P_S(S ≤ D − d_s): the same integration. `policy.deadline_confidence` c requires it
to be at least c.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any
from statistics import NormalDist

import numpy as np

from ..inputs.catalog import Quote
from ..inputs.problem import Problem
from ..inputs.rules import adjustments, delay_days, names_quote
from .cost import lead_cap
from .delivery import install_days, order_by_day, order_day, ready_offset
from .memo import recent, workload_key
from .options import Option, Point
from .scenarios import LateCurve, RunSampler, Runs, cvar_weight, late_price
from .starts import Arrival, StartLaw, arrival_cdfs, lognormal_arrival, port_arrival, start_law, start_laws
from .uncertainty import GROUPS, Draws

CONFIDENCE_TOLERANCE = 1e-9
"""A share compared with `policy.deadline_confidence` may fall short of it by this much (float sums in another order
must not flip a plan that meets it exactly)."""


SHARED_OUTLOOKS = 8
"""Outlooks a process keeps (`Outlook.of`)."""
_SHARED: dict[Any, dict[str, "Outlook"]] = {}


@dataclass(frozen=True)
class LateCut:
    """At a point of an option, a plan that uses every quote of `quotes` (and maybe more) is charged at least `units`
    money units of lateness: the figure of those quotes together (`solve/pipeline.py` adds it when a plan was
    charged less). With `at_least` k (a pool cut), a plan that uses any k of `quotes` is charged at least `units`:
    the figure of k quotes whose ready day is, on every day, as likely as the k likeliest of the pool's
    (`Outlook.pool_law`)."""

    option: str
    nodes: int
    quotes: tuple[str, ...]
    units: int
    at_least: int = 0

    @property
    def needed(self) -> int:
        """How many of `quotes` a plan must use for the cut to apply."""
        return self.at_least or len(self.quotes)


@dataclass(frozen=True)
class Lateness:
    """A plan's expected days past the deadline, and what the objective charges for them in dollars: price ×
    (1 − λ)·E[late] (`expected_usd`) + price × λ·(mean over the longest runs − E) (`tail_usd`)."""

    days: float
    expected_usd: float
    tail_usd: float

    @property
    def charge_usd(self) -> float:
        return self.expected_usd + self.tail_usd


NO_LATENESS = Lateness(0.0, 0.0, 0.0)


@dataclass
class Outlook:
    """The scenarios of one problem (module docstring): runs per point, start laws per plan, and what they give."""

    problem: Problem
    deadline_day: int | None
    sampler: RunSampler
    price: float
    weight: float
    cap_z: float
    _alone: dict[tuple[Option, int, int], tuple[int, np.ndarray]] = field(default_factory=dict)
    _latest: dict[tuple[Option, int, int], int] = field(default_factory=dict)

    @classmethod
    def of(cls, problem: Problem, draws: Draws | None = None) -> "Outlook":
        """`draws`: other draws than the problem's own (more scenarios, another seed, a source held: a tornado).

        Problems that differ in nothing an outlook reads — the what-ifs of one command that move a limit, the
        frontier's dates (which keep the lateness of the user's deadline) — share one, and with it the start laws of
        every option's quotes it has worked out (kept per option object: a re-priced catalog has other options)."""
        a = problem.assumptions.values
        key = (workload_key(problem), problem.as_of, reference_day(problem), late_price(problem),
               cvar_weight(problem), problem.spec.schedule.earliest_start)
        if draws is None:
            got = recent(_SHARED, key, SHARED_OUTLOOKS).get("outlook")
            if got is not None:
                return got
        out = cls(problem, reference_day(problem), RunSampler(problem, draws), late_price(problem),
                  cvar_weight(problem), NormalDist().inv_cdf(min(a.lead_time_cap_quantile, 1.0 - 1e-12)))
        if draws is None:
            _SHARED[key]["outlook"] = out
        return out

    @property
    def scenarios(self) -> int:
        return self.sampler.draws.n

    # --- runs ------------------------------------------------------------------------------------------------
    def runs(self, o: Option, pt: Point) -> Runs:
        """The point's run scenarios (`scenarios.RunSampler`)."""
        assert pt.time is not None
        measured = self.problem.spec.workload.measured_mfu
        return self.sampler.runs(pt.time, o.accel.software, o.accel.cls,
                                 measured is not None and o.accel.id in measured)

    def curve(self, o: Option, pt: Point, weighted: bool = True) -> LateCurve | None:
        """The point's lateness curve against the deadline (None without one); `weighted`: the objective's weights."""
        if self.deadline_day is None:
            return None
        return self.runs(o, pt).curve(self.deadline_day, self.weight if weighted else 0.0)

    # --- the start -----------------------------------------------------------------------------------------
    @property
    def earliest(self) -> int:
        p = self.problem
        return (p.earliest_start - p.as_of).days if p.spec.schedule.earliest_start is not None else 0

    def floor(self, o: Option, delay: int, earliest: bool = True) -> int:
        """The fixed floor of a start: the accelerator's availability after the delays, and the earliest start
        (`earliest`: an explanation may switch it off)."""
        avail = max(0, (o.accel.available_from.value - self.problem.as_of).days) + delay
        return max(self.earliest, avail) if earliest else avail

    def port(self, o: Option, delay: int) -> Arrival | None:
        a = self.problem.assumptions.values
        return port_arrival(o.porting.delay_days, a.uncertainty.porting_delay_sigma, self.cap_z, delay)

    def arrival(self, o: Option, q: Quote, ordered: int) -> Arrival:
        """Quote q's capacity ordered on day `ordered`: usable `ordered` + installation + its lead time."""
        a = self.problem.assumptions.values
        return lognormal_arrival(ordered + install_days(q.mode, o.accel.cls, a), q.lead_time_days,
                                 q.lead_time_p90_days, lead_cap(q.lead_time_days, q.lead_time_p90_days,
                                                                a.lead_time_cap_quantile))

    def order(self, o: Option, q: Quote, start: int, delay: int) -> int:
        """The day the model orders quote q's capacity for a plan planned to start on `start` (`delivery.py`)."""
        a = self.problem.assumptions.values
        return order_day(q, start, delay, ready_offset(q, o.accel.cls, a), order_by_day(q, self.problem.as_of))

    def law(self, o: Option, orders: Sequence[tuple[Quote, int]], delay: int,
            held: dict[str, float] | None = None) -> StartLaw:
        """The start law of a plan of option `o` whose quotes are ordered on the given days, with rule delays
        `delay`; `held` holds groups of sources at a standard-normal value (`uncertainty.GROUPS`: a tornado)."""
        port, each = self._parts(o, orders, delay, held)
        return start_law(self.floor(o, delay), ([port] if port is not None else []) + each)

    def _parts(self, o: Option, orders: Sequence[tuple[Quote, int]], delay: int,
               held: dict[str, float] | None = None) -> tuple[Arrival | None, list[Arrival]]:
        """The porting's arrival (None without a port) and each ordered quote's, with the `held` groups held (the
        sampler's own by default)."""
        held = self.sampler.draws.held if held is None else held
        port = self.port(o, delay)
        port = self._held(port, "porting", held) if port is not None else None
        return port, [self._held(self.arrival(o, q, day), "lead", held) for q, day in orders]

    @staticmethod
    def _held(a: Arrival, kind: str, held: dict[str, float]) -> Arrival:
        return a.held(held[kind]) if kind in held else a

    def plan_law(self, o: Option, quotes: Sequence[Quote], start: int, delay: int) -> StartLaw:
        """The start law of a plan planned to start on `start`, its quotes ordered as the model orders them."""
        return self.law(o, [(q, self.order(o, q, start, delay)) for q in quotes], delay)

    def pool_laws(self, o: Option, quotes: Sequence[Quote], start: int, delay: int) -> list[StartLaw]:
        """For k = 1 … len(quotes), a start law no later than that of any plan planned to start on `start` or later
        that uses k (or more) of `quotes` (and maybe others): on each day the chance that every part is ready is at
        most the porting's times the product of the k largest of the quotes' own chances that day (a plan's parts
        are independent and each chance is at most 1; a later planned start orders bought hardware later). The k-th
        law is a true law: a product of the k largest of nondecreasing functions is nondecreasing."""
        port, each = self._parts(o, [(q, self.order(o, q, start, delay)) for q in quotes], delay)
        lo = max([self.floor(o, delay)] + ([port.first] if port is not None else []))
        hi = max([lo] + [a.last for a in each] + ([port.last] if port is not None else []))
        days = np.arange(lo, hi + 1, dtype=float)
        own = arrival_cdfs(each, days, lo)
        ranked = -np.sort(-own, axis=0)                       # each day's chances, largest first
        top = np.cumprod(ranked, axis=0)                      # the product of the k largest, k = 1 …
        if port is not None and port.last > lo:
            top = top * port.cdf(days)
        top[:, -1] = 1.0
        return [StartLaw(lo, np.maximum.accumulate(row)) for row in top]

    # --- what a plan gets ----------------------------------------------------------------------------------
    def lateness(self, o: Option, pt: Point, law: StartLaw) -> Lateness:
        """Expected days late and their charge (see `Lateness`)."""
        if self.deadline_day is None:
            return NO_LATENESS
        runs = self.runs(o, pt)
        plain = runs.curve(self.deadline_day, 0.0).expected_late(law)
        if self.weight <= 0 or self.price <= 0:
            return Lateness(plain, self.price * plain, 0.0)
        weighted = runs.curve(self.deadline_day, self.weight).expected_late(law)
        return Lateness(plain, self.price * plain, self.price * (weighted - plain))

    def p_deadline(self, o: Option, pt: Point, law: StartLaw) -> float | None:
        if self.deadline_day is None:
            return None
        return self.runs(o, pt).curve(self.deadline_day, 0.0).p_meet(law)

    def charge(self, o: Option, pt: Point, law: StartLaw) -> float:
        """What the objective charges for the plan's lateness, in dollars."""
        if self.deadline_day is None or self.price <= 0:
            return 0.0
        return self.price * self.runs(o, pt).curve(self.deadline_day, self.weight).expected_late(law)

    def alone(self, o: Option, pt: Point, delay: int, earliest: bool = True) -> np.ndarray:
        """The lateness charge (dollars) of a plan at `pt` using each quote of `o` alone, planned to start on its
        own floor (the earliest start when `earliest`, the option's ready day and the quote's readiness, each after
        `delay`): exact for such plans, and never above a plan that uses the quote with others (a later planned
        start orders bought hardware later; more quotes only make the start later)."""
        if self.deadline_day is None or self.price <= 0:
            return np.zeros(len(o.quotes))
        lo, pmf = self._alone_laws(o, delay, earliest)
        g = self.runs(o, pt).curve(self.deadline_day, self.weight).late(np.arange(lo, lo + pmf.shape[1]))
        return self.price * (pmf @ g)

    def alone_meets(self, o: Option, pt: Point, delay: int, earliest: bool = True) -> np.ndarray:
        """P(deadline) of a plan at `pt` using each quote of `o` alone, planned as `alone` plans it."""
        if self.deadline_day is None:
            return np.ones(len(o.quotes))
        lo, pmf = self._alone_laws(o, delay, earliest)
        return pmf @ self.runs(o, pt).curve(self.deadline_day, 0.0).meets(np.arange(lo, lo + pmf.shape[1]))

    def alone_start(self, o: Option, q: Quote, delay: int, earliest: bool = True) -> int:
        """The planned start of a plan using quote q alone: its own floor."""
        a = self.problem.assumptions.values
        floor = max(o.ready_day + delay, ready_offset(q, o.accel.cls, a) + delay)
        return max(floor, self.earliest) if earliest else floor

    def _alone_laws(self, o: Option, delay: int, earliest: bool) -> tuple[int, np.ndarray]:
        """(first day, pmf[quote, day]) of every quote of `o` used alone (kept per option, delay, earliest)."""
        key = (o, delay, int(earliest))
        got = self._alone.get(key)
        if got is None:
            port = self.port(o, delay)
            each = [self.arrival(o, q, self.order(o, q, self.alone_start(o, q, delay, earliest), delay))
                    for q in o.quotes]
            lo, cdf = start_laws(self.floor(o, delay, earliest), [port] if port is not None else [], each)
            got = self._alone[key] = (lo, np.diff(cdf, axis=1, prepend=0.0))
        return got

    def late_ceiling(self, o: Option, pt: Point, horizon: int, delays: int) -> float:
        """At most what any plan at `pt` can be charged for lateness (dollars): every day from the deadline to the
        latest start any plan of `o` can have (every rule delay `delays` applied, bought hardware ordered as late as
        the calendar `horizon`, every delivery at its cap) plus the point's longest run."""
        if self.deadline_day is None or self.price <= 0:
            return 0.0
        return self.price * max(0, self._latest_start(o, horizon, delays) + int(self.runs(o, pt).days.max())
                                - self.deadline_day)

    def _latest_start(self, o: Option, horizon: int, delays: int) -> int:
        """The latest start any plan of `o` can have (`late_ceiling`), once per option: it reads every quote."""
        key = (o, horizon, delays)
        got = self._latest.get(key)
        if got is None:
            port = self.port(o, delays)
            got = self._latest[key] = max(
                [self.floor(o, delays), port.last if port is not None else 0] +
                [self.arrival(o, q, horizon if q.mode == "buy" else delays).last for q in o.quotes])
        return got

    def meets(self, p: float | None, confidence: float) -> bool:
        return p is None or p >= confidence - CONFIDENCE_TOLERANCE


def rule_delay(problem: Problem, pt: Point, used: Collection[str]) -> int:
    """Days the rules that apply to a plan at `pt` using the quotes `used` delay its start (they add up; a rule that
    names quotes applies when one of them is used)."""
    o = pt.option
    return sum(delay_days(then) for rule, then in adjustments(problem.spec.rules, o.attrs, pt.gpus, pt.n, pt.days,
                                                               pt.power_kw) if names_quote(rule, used))


def reference_day(problem: Problem) -> int | None:
    """The day lateness and the chance of the deadline are measured against (days from as_of): the schedule's
    `late_after`, else its deadline; None without either."""
    s = problem.spec.schedule
    day = s.late_after or s.deadline
    return None if day is None else (day - problem.as_of).days


__all__ = ["Outlook", "reference_day", "LateCut", "Lateness", "NO_LATENESS", "late_price", "cvar_weight", "rule_delay", "GROUPS"]
