"""When a plan really starts: the law of its start day, exact over porting and delivery.

A plan's run starts on the first day everything it needs is there — not on the day it was planned for (README,
"Risk by scenarios"):

    S = max(E0, A + δ, ⌈P⌉ + δ, ⌈R_q⌉ for every quote q the plan uses)

- E0, the earliest start (`schedule.earliest_start`; 0 without one), and A, the day the accelerator is available,
  are fixed; δ is the delay of the rules that apply to the plan (validation runs, approvals).
- P, the time to port the software stack, is lognormal around `porting.delay_days` with σ `porting_delay_sigma`.
- R_q, the day quote q's capacity can be used: rented capacity is requested once the rules' delays are over and
  arrives L_q days later (δ + L_q); bought hardware ordered on day o_q is delivered L_q days later and installed
  (o_q + install + L_q). L_q is lognormal through the quote's p50 and p90 lead times.

Rented capacity that arrives before the planned start is used at once, and owned hardware starts when it is
delivered and installed, so S falls before the planned start in the scenarios where delivery is quick. Every random
time is capped at its `lead_time_cap_quantile` quantile (a delivery or a port later than that is cancelled and
re-planned: the lognormal's far tail is a fitting artefact, not evidence), so S has a last possible day.

The parts are independent, so P(S ≤ x) is the product of their distribution functions, and since every day is
whole, P(⌈T⌉ + k ≤ x) = P(T ≤ x − k) for whole x and k: the law is exact on whole days, with no sampling. The
run-length scenarios (`scenarios.py`) are sampled; the start is integrated exactly against them — conditional Monte
Carlo: the estimate has the sampling error of the run lengths alone, and two quotes with the same lead times have
the same figures, so no sampling noise decides between them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .cost import lognormal
from .uncertainty import phi


@dataclass(frozen=True)
class Arrival:
    """A day something is ready: `shift` + T, where T is lognormal (median e^μ, log-spread σ) capped at `cap`, or
    certain (σ = 0: T = `cap`)."""

    shift: float
    mu: float
    sigma: float
    cap: float

    @property
    def certain(self) -> bool:
        return self.sigma <= 0.0

    @property
    def last(self) -> int:
        """The last day it can be ready on: P(ready ≤ last) = 1."""
        return math.ceil(self.shift + self.cap - 1e-9)

    @property
    def first(self) -> int:
        """A day before which it is never ready (T > 0)."""
        return math.floor(self.shift) if not self.certain else math.ceil(self.shift + self.cap - 1e-9)

    def cdf(self, days: np.ndarray) -> np.ndarray:
        """P(⌈shift + T⌉ ≤ x) = P(T ≤ x − shift) at whole days x."""
        y = days - self.shift
        if self.certain:
            return (y >= self.cap - 1e-9).astype(float)
        out = np.zeros(len(days))
        live = y > 0
        if live.any():
            out[live] = phi((np.log(y[live]) - self.mu) / self.sigma)
        out[y >= self.cap - 1e-9] = 1.0
        return out

    def held(self, z: float) -> "Arrival":
        """The same part held at the standard-normal value z (a tornado's decile): certain."""
        if self.certain:
            return self
        return Arrival(self.shift, self.mu, 0.0, min(self.cap, math.exp(self.mu + self.sigma * z)))


def lognormal_arrival(shift: float, p50: float, p90: float | None, cap: float) -> Arrival:
    """`shift` + a time lognormal through its median p50 and 90th percentile p90, capped at `cap` (certain without
    a spread: p90 missing or not above p50)."""
    fit = lognormal(p50, p90)
    if fit is None:
        return Arrival(shift, 0.0, 0.0, float(p50))
    mu, sigma = fit
    return Arrival(shift, mu, sigma, cap)


def port_arrival(median_days: float, sigma: float, cap_quantile_z: float, delay: float) -> Arrival | None:
    """The software is ported `delay` + P days after as_of, P lognormal with median `median_days` and σ `sigma`,
    capped at its quantile of standard-normal value `cap_quantile_z`; None when nothing is ported."""
    if median_days <= 0:
        return None
    if sigma <= 0:
        return Arrival(delay, 0.0, 0.0, median_days)
    mu = math.log(median_days)
    return Arrival(delay, mu, sigma, math.exp(mu + sigma * cap_quantile_z))


@dataclass(frozen=True)
class StartLaw:
    """The law of a start day S on whole days: P(S ≤ lo + k) = cdf[k]; P(S < lo) = 0 and the last entry is 1."""

    lo: int
    cdf: np.ndarray

    @property
    def hi(self) -> int:
        return self.lo + len(self.cdf) - 1

    def pmf(self) -> np.ndarray:
        """P(S = lo + k)."""
        return np.diff(self.cdf, prepend=0.0)

    def days(self) -> np.ndarray:
        return np.arange(self.lo, self.hi + 1)

    def quantile(self, q: float) -> int:
        """The first day with P(S ≤ day) ≥ q."""
        return self.lo + int(np.searchsorted(self.cdf, q - 1e-12))

    def mean(self) -> float:
        return float(self.pmf() @ self.days())


def _joint_cdf(days: np.ndarray, lo: int, arrivals: Sequence[Arrival]) -> np.ndarray:
    """P(every part ready by each day) on `days` (from `lo`): the product of the parts' cdfs, independent parts; a
    part sure to be ready by `lo` leaves it alone."""
    cdf = np.ones(len(days))
    for a in arrivals:
        if a.last > lo:
            cdf = cdf * a.cdf(days)
    return cdf


def start_law(floor: int, arrivals: Sequence[Arrival]) -> StartLaw:
    """The law of max(floor, the parts' ready days), the parts independent (module docstring)."""
    lo = max([floor] + [a.first for a in arrivals])
    hi = max([lo] + [a.last for a in arrivals])
    cdf = _joint_cdf(np.arange(lo, hi + 1, dtype=float), lo, arrivals)
    cdf[-1] = 1.0
    return StartLaw(lo, cdf)


def start_laws(floor: int, base: Sequence[Arrival], each: Sequence[Arrival]) -> tuple[int, np.ndarray]:
    """The laws of max(floor, `base`, one part of `each`) for every part of `each`, on one grid of days: (first day,
    cdf[part, day]) — what a point asks of every quote of a big option at once."""
    arrivals = list(base) + list(each)
    lo = max([floor] + [a.first for a in base])
    hi = max([lo] + [a.last for a in arrivals])
    days = np.arange(lo, hi + 1, dtype=float)
    out = arrival_cdfs(each, days, lo) * _joint_cdf(days, lo, base)
    out[:, -1] = 1.0
    return lo, out


CDF_ROWS = 1024
"""`arrival_cdfs` works on this many parts at a time (its temporaries: a few such blocks of the day grid)."""


def arrival_cdfs(parts: Sequence[Arrival], days: np.ndarray, lo: int) -> np.ndarray:
    """cdf[part, day]: `Arrival.cdf` of every part on `days` (from `lo`), all at once — the same arithmetic element by
    element, so the same numbers — and 1 for a part sure to be ready by `lo`. Φ is evaluated only on the days a
    part may or may not be ready by (after its shift, before its cap): a quote's window is a few hundred days of a
    grid of a thousand, so most of the matrix is 0 or 1 without arithmetic. A marketplace option asks this of its
    thousands of quotes on a grid of a thousand days, and one call per part would be a Python call per quote
    (measured: bench/README.md, "Timings that used to live in docstrings (moved 2026-12-07)")."""
    out = np.ones((len(parts), len(days)))
    for at in range(0, len(parts), CDF_ROWS):
        block = parts[at:at + CDF_ROWS]
        shift = np.array([a.shift for a in block])[:, None]
        mu = np.array([a.mu for a in block])[:, None]
        sigma = np.array([a.sigma for a in block])[:, None]
        cap = np.array([a.cap for a in block])[:, None]
        open_ = np.array([a.last > lo for a in block])[:, None]
        y = days[None, :] - shift
        done = y >= cap - 1e-9
        live = (y > 0) & ~done & (sigma > 0.0) & open_     # only here is Φ needed: elsewhere it is 0 or 1
        got = done.astype(float)
        got[live] = phi((np.log(y[live]) - np.broadcast_to(mu, y.shape)[live]) / np.broadcast_to(sigma, y.shape)[live])
        out[at:at + len(block)] = np.where(open_, got, 1.0)
    return out


__all__ = ["Arrival", "StartLaw", "arrival_cdfs", "start_law", "start_laws", "lognormal_arrival", "port_arrival"]
