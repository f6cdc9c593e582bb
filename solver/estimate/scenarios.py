"""Run scenarios: how long a point's run takes in each of N scenarios, and the statistics the risk answers show.

Scenario s draws the sources of run-length uncertainty once for every plan (common random numbers: a difference
between two plans is a difference of the plans, not of their draws; `uncertainty.Draws`):
- achieved MFU: the scenario's factor m_s (median 1) on the planned MFU, per platform (software and accelerator
  class), so the run takes W_s = planned wall / m_s hours — checkpoints, failures and restarts are a share of the
  run, so its expected interruptions scale with its length;
- the interruption count's own Poisson spread, drawn where it matters (`count_spread_matters`): W_s = c·ideal/m_s
  + K_s·r, K_s the Poisson quantile of the scenario's uniform for its expected count.
A point's whole days are d_s = max(1, ⌈W_s / 24⌉), the deterministic convention.

Every point of a platform is its planned wall times one sorted array of multipliers (`Platform`, `Runs`), so the
questions the objective asks of a point's runs are binary searches and running sums, whatever N:
- the mean of a cost line over the runs (`Runs.masses`): each line is a piecewise-linear function of the run's hours
  with known kinks (`wall_kinks`: a commitment's floor, a tier's term, the minimum billed hours, the minimum
  operations time, the depreciation life, the resale curve's ages), so its mean is exact from its values at the
  kinks (`CostCurve` evaluates such a function);
- the 5% longest runs (the CVaR tail of the mean–CVaR objective, `tail_masses`);
- the runs' days against a deadline and any law of the start day (`LateCurve`, with `starts.py`): expected days
  late and the chance of meeting it, exact in the start.
The start (delivery, porting) is integrated exactly, not sampled (`starts.py`, `outlook.py`); the risk answers
draw it too where a spread needs every source at once (`answers/risk.py`).
"""

from __future__ import annotations

import functools
import math
from statistics import NormalDist
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..inputs.assumptions import Assumptions, MoneyA
from .compute import TimeEstimate
from .cost import HOURS_PER_MONTH, HOURS_PER_YEAR
from .memo import recent, workload_key
from .uncertainty import Draws, poisson_search, mfu_factor, poisson_inverse

if TYPE_CHECKING:
    from ..inputs.problem import Problem

CVAR_ALPHA = 0.95
"""CVaR level: the mean cost of the worst 5% of scenarios (the tail a risk-averse buyer pays to cut)."""


def run_parts(t: TimeEstimate, restart_hours: float) -> tuple[float, float, float]:
    """(c·ideal hours, μ: interruptions expected, r: hours lost to each) of a run at the median MFU: a run whose
    MFU is m times lower takes c·ideal·m hours between interruptions and expects μ·m of them.

    The estimate's parts are read from it: λ = interruptions / wall, τ and δ, c = 1 + δ/τ, r = τ/2 + δ + R
    (`compute.lost_per_interruption`), ℓ = λ·r, μ = λ·c·ideal / (1 − ℓ)."""
    lam = t.interruptions / t.wall_hours
    tau = t.checkpoint_interval_hours if math.isfinite(t.checkpoint_interval_hours) else 0.0
    checkpoint = 1.0 + (t.checkpoint_write_hours / tau if tau > 0 else 0.0)
    per_interruption = t.lost_per_interruption(restart_hours)
    lost = lam * per_interruption
    return t.ideal_hours * checkpoint, lam * t.ideal_hours * checkpoint / (1.0 - lost), per_interruption


def wall_hours(t: TimeEstimate, restart_hours: float, mfu: np.ndarray, interruption_z: np.ndarray,
               interruption_u: np.ndarray | None = None, shift: np.ndarray | None = None,
               exact: bool = False) -> np.ndarray:
    """Wall hours per scenario (see module docstring), from the deterministic estimate at the median MFU:
    c·ideal/m_s hours of work and K_s ~ Poisson(μ/m_s) interruptions of r hours (`run_parts`)."""
    if t.interruptions <= 0 or t.wall_hours <= 0:
        return t.ideal_hours / mfu * (t.wall_hours / t.ideal_hours if t.ideal_hours > 0 else 1.0)
    work, expected, per_interruption = run_parts(t, restart_hours)
    return work / mfu + poisson_inverse(interruption_z, expected / mfu, interruption_u, shift, exact) * \
        per_interruption


def wall_kinks(money: MoneyA, commit_months: float, held_before_hours: float,
               term_hours: float = math.inf) -> list[float]:
    """Wall hours at which some per-node or per-plan cost line changes slope: a commitment's floor, the end of a
    tier's term, the minimum billed hours, the minimum operations time, the depreciation life and the resale curve's
    ages (bought hardware is held `held_before_hours` before the run)."""
    kinks = [commit_months * HOURS_PER_MONTH, money.cloud_min_billed_hours, money.ops_min_days * 24.0,
             money.depreciation_years * 365.0 * 24.0 - held_before_hours]
    if math.isfinite(term_hours):
        kinks.append(term_hours)
    kinks += [age * HOURS_PER_YEAR - held_before_hours for age in money.resale_value_by_age_years]
    return kinks


@dataclass(frozen=True)
class CostCurve:
    """A piecewise-linear function of wall hours, known exactly at its kinks and the ends of a range."""

    hours: np.ndarray
    values: np.ndarray

    @classmethod
    def of(cls, fn: Callable[[float], float], lo: float, hi: float, kinks: Sequence[float]) -> "CostCurve":
        grid = sorted({lo, hi, *(k for k in kinks if lo < k < hi)})
        return cls(np.array(grid), np.array([fn(h) for h in grid]))

    def __call__(self, hours: np.ndarray) -> np.ndarray:
        if len(self.hours) == 1:
            return np.full(np.shape(hours), self.values[0])
        return np.interp(hours, self.hours, self.values)


def late_price(problem: "Problem") -> float:
    """Dollars per day past the deadline: `objective.late_usd_per_day`, else `risk.money.delay_cost_usd_per_day`."""
    obj = problem.spec.objective
    late = getattr(obj, "late_usd_per_day", None)
    if late is not None:
        return float(late)
    return float(problem.assumptions.values.money.delay_cost_usd_per_day)


def cvar_weight(problem: "Problem") -> float:
    """λ of the objective (1 − λ)·E + λ·CVaR95: `objective.cvar_weight`, else `risk.uncertainty.aversion`."""
    weight = getattr(problem.spec.objective, "cvar_weight", None)
    if weight is not None:
        return float(weight)
    return float(problem.assumptions.values.uncertainty.aversion)


SHARED_RUNS = 4
"""Workload-and-assumption combinations whose run scenarios a process keeps (`RunSampler`)."""
_SHARED_RUNS: dict[tuple[str, str], dict[Any, "Runs"]] = {}


def count_spread_matters(t: TimeEstimate, restart_hours: float, variance: float) -> bool:
    """Whether the interruption count's own (Poisson) spread must be drawn in a point's runs.

    A run of W hours at the platform's multipliers has the variance W²·Var(m) from its MFU; the count adds
    μ·r² (μ interruptions expected, r = τ/2 + δ + R hours lost each), widening the run's standard deviation by the
    factor √(1 + ρ) ≈ 1 + ρ/2, ρ = μr² / (W²·Var(m)). The count is drawn when ρ > `COUNT_SPREAD_SHARE` (the spread
    more than 5% wider): the MFU spread itself is fitted on a few dozen published runs, so its own width is known
    to no better than ±10–15% (the standard error of a standard deviation from n runs is 1/√(2(n − 1))), and a
    narrower change than that is below what the evidence can tell apart. Above it (frequent, day-long restarts on a
    run whose throughput is known; rare restarts as long as a run of hours) it is drawn for every scenario of the
    point. On the bundled examples every run of more than a few days stays below it."""
    if t.interruptions <= 0 or t.wall_hours <= 0:
        return False
    added = t.interruptions * t.lost_per_interruption(restart_hours) ** 2
    spread = t.wall_hours ** 2 * variance
    return added > COUNT_SPREAD_SHARE * spread


COUNT_SPREAD_SHARE = 0.1
"""ρ: the share of the MFU-driven variance of a run above which its interruption count is drawn
(`count_spread_matters`)."""


PlatformKey = tuple[str, str, bool]
"""(software stack, accelerator class, measured by the user): the runs of one platform share its MFU draws."""


class RunSampler:
    """The run scenarios of the points of one problem: N draws of the MFU factor per platform (`uncertainty.Draws`,
    seeded per source, shared by every plan), turned into each point's `Runs` on first use and kept per time
    estimate and platform for the workload and assumptions (every option of a system shares them, and so does every
    what-if that keeps the workload and the assumptions).

    In scenario s a point's run takes W_s = wall / m_s hours: its planned wall time (at the median MFU, interruptions
    at their expected count) over the scenario's MFU factor — the expected interruptions of a run scale with its
    length, so the scenario's are its expected count at that length, and every point of a platform is one sorted
    array scaled, which is what lets the universe price its points in microseconds. Where the count's own Poisson
    spread matters (`count_spread_matters`), and in a tornado that holds the count, it is drawn per scenario
    (inverse CDF of the scenario's expected count, `wall_hours`) and the point's runs are its own array."""

    def __init__(self, problem: "Problem", draws: Draws | None = None) -> None:
        a = problem.assumptions.values
        self.assumptions = a
        self.draws = draws or Draws(a.uncertainty.seed, a.uncertainty.scenarios)
        self._runs = recent(_SHARED_RUNS, workload_key(problem), SHARED_RUNS)
        self._platforms: dict[PlatformKey, Platform] = {}
        self._cuts: dict[PlatformKey, tuple[np.ndarray, np.ndarray]] = {}
        self._held = tuple(sorted(self.draws.held.items()))

    def runs(self, t: TimeEstimate, software: str, cls: str, measured: bool = False) -> "Runs":
        """The run scenarios of a point whose planned run is `t`, on a platform of this software stack and class
        (`measured`: the user measured its MFU, `uncertainty.mfu_factor`)."""
        key = (t, software, cls, measured, self.draws.n, self.draws.seed, self._held)
        got = self._runs.get(key)
        if got is None:
            platform = self._platform(software, cls, measured)
            restart = self.assumptions.reliability.restart_hours
            if t.interruptions > 0 and t.wall_hours > 0 and (
                    "interruptions" in self.draws.held or count_spread_matters(t, restart, platform.variance)):
                got = self._counted(t, (software, cls, measured), platform)
            else:
                got = Runs(t.wall_hours, platform)
            self._runs[key] = got
        return got

    def _counted(self, t: TimeEstimate, key: "PlatformKey", platform: "Platform") -> "Runs":
        """The point's runs with the count drawn: W_s = c·ideal·m_s + K_s·r, K_s the smallest k with
        P(Poisson(μ·m_s) ≤ k) ≥ u_s (`uncertainty.poisson_search`, exact).

        K_s ≥ 1 exactly when e^(−μ·m_s) < u_s, i.e. when μ exceeds T_s = −ln(u_s)/m_s: with the T_s of the platform
        sorted once, the scenarios that see an interruption are a prefix found by binary search, and only they are
        searched and moved — a point whose restarts are rare (a run of hours) costs a merge, not N searches and a
        sort."""
        work, mu, per = run_parts(t, self.assumptions.reliability.restart_hours)
        thresholds, by_threshold = self._thresholds(key, platform)
        hit = by_threshold[:int(np.searchsorted(thresholds, mu * (1.0 + 1e-9), side="right"))]
        m = platform.multiplier
        u = self.draws.uniform("interruptions")
        walls = work * m
        if not hit.size:
            return Runs(1.0, Platform(walls, work * platform.sorted))
        walls[hit] += poisson_search(mu * m[hit], u[hit]) * per
        rest = np.delete(work * platform.sorted, platform.rank[hit])
        raised = np.sort(walls[hit])
        return Runs(1.0, Platform(walls, np.insert(rest, np.searchsorted(rest, raised, side="right"), raised)))

    def _thresholds(self, key: "PlatformKey", platform: "Platform") -> tuple[np.ndarray, np.ndarray]:
        """(T_s sorted, the scenarios in that order): T_s = −ln(u_s)/m_s, the expected count at the median MFU
        above which scenario s sees an interruption (`_counted`)."""
        got = self._cuts.get(key)
        if got is None:
            with np.errstate(divide="ignore"):
                cut = -np.log(self.draws.uniform("interruptions")) / platform.multiplier
            order = np.argsort(cut, kind="stable")
            got = self._cuts[key] = (cut[order], order)
        return got

    def _platform(self, software: str, cls: str, measured: bool) -> "Platform":
        got = self._platforms.get((software, cls, measured))
        if got is None:
            factor = mfu_factor(self.draws, self.assumptions, software, cls, measured)
            got = self._platforms[(software, cls, measured)] = Platform(1.0 / factor)
        return got


class Platform:
    """The scenarios' run-length multipliers of one platform (1 / the MFU factor), sorted once, with their running
    sums: every question a point asks of its runs — a cost line's mean, the longest runs, how many runs take at most
    k days — is then a binary search and a difference, whatever N."""

    def __init__(self, multiplier: np.ndarray, sorted_values: np.ndarray | None = None) -> None:
        multiplier = np.asarray(multiplier, dtype=float)
        self.n = len(multiplier)
        self.multiplier = multiplier
        self.sorted = np.sort(multiplier) if sorted_values is None else sorted_values
        self.prefix = np.concatenate(([0.0], np.cumsum(self.sorted)))
        self.k = max(1, math.ceil(round((1.0 - CVAR_ALPHA) * self.n, 9)))
        """How many runs are the longest 5% (the CVaR tail)."""

    @functools.cached_property
    def variance(self) -> float:
        return float(np.var(self.multiplier))

    @functools.cached_property
    def rank(self) -> np.ndarray:
        """Each scenario's position in `sorted`."""
        rank = np.empty(self.n, dtype=np.int64)
        rank[self.order] = np.arange(self.n)
        return rank

    @functools.cached_property
    def order(self) -> np.ndarray:
        """The scenarios from the shortest run to the longest (ties in scenario order): only the risk answers' tail
        weights read it, so it is made on first use."""
        return np.argsort(self.multiplier, kind="stable")

    def clipped_mean(self, a: float, b: float, first: int = 0) -> float:
        """mean of min(max(v, a), b) over the sorted values from position `first` on (a ≤ b)."""
        i = max(first, int(np.searchsorted(self.sorted, a, side="right")))
        j = max(i, int(np.searchsorted(self.sorted, b, side="left")))
        return (a * (i - first) + float(self.prefix[j] - self.prefix[i]) + b * (self.n - j)) / (self.n - first)

    def at_most(self, x: np.ndarray) -> np.ndarray:
        """How many values are at most each of `x`."""
        return np.searchsorted(self.sorted, x, side="right")


@dataclass(frozen=True)
class Runs:
    """The run-length scenarios of one point: W_s = scale × the platform's multiplier in scenario s (`RunSampler`).

    Everything the objective reads of a run's uncertainty comes from here (module docstring of `starts.py` for the
    start): the expected cost lines (each line's mean over the runs, `masses`), the tail set of the mean–CVaR
    objective, and the lateness and deadline curves against any start law (`LateCurve`) — each from the platform's
    sorted multipliers, without an array of N per point."""

    scale: float
    platform: Platform
    _memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    """Derived data made on first use (the runs never change)."""

    @property
    def n(self) -> int:
        return self.platform.n

    @property
    def walls(self) -> np.ndarray:
        """Wall hours by scenario."""
        got = self._memo.get("walls")
        if got is None:
            got = self._memo["walls"] = self.scale * self.platform.multiplier
            got.flags.writeable = False
        return got

    @property
    def days(self) -> np.ndarray:
        """Whole days of training by scenario: max(1, ⌈W/24⌉), the deterministic convention."""
        got = self._memo.get("days")
        if got is None:
            got = self._memo["days"] = np.maximum(1, np.ceil(self.walls / 24.0 - 1e-9)).astype(np.int64)
            got.flags.writeable = False
        return got

    def tail(self) -> np.ndarray:
        """Indices of the ⌈5%⌉ longest runs."""
        p = self.platform
        return p.order[p.n - p.k:]

    def weights(self, cvar_weight: float) -> np.ndarray:
        """Each scenario's weight in the objective (1 − λ)·mean + λ·mean over the tail: (1 − λ)/N, plus λ/k on the
        k longest runs."""
        w = np.full(self.n, (1.0 - cvar_weight) / self.n)
        if cvar_weight > 0:
            w[self.tail()] += cvar_weight / self.platform.k
        return w

    def masses(self, grid: tuple[float, ...]) -> np.ndarray:
        """m: the mean over the runs of each grid hour's interpolation weight, so that for any function f known at
        the grid and linear between its hours, mean_s f(W_s) = m · f(grid). A point's cost lines are such functions
        (`CostCurve`): a binary search per segment of the grid, then a dot product per line — the universe prices
        every line of every quote key of every point it shows or bounds this way. The grid must span the runs
        (`span`)."""
        return self._masses(grid, 0)

    def tail_masses(self, grid: tuple[float, ...]) -> np.ndarray:
        """`masses` over the longest runs only (the CVaR part of the objective)."""
        return self._masses(grid, self.n - self.platform.k)

    def _masses(self, grid: tuple[float, ...], first: int) -> np.ndarray:
        """Segment by segment: with e_j = mean of clip((W − g_j)/(g_j+1 − g_j), 0, 1) = (mean of
        min(max(W, g_j), g_j+1) − g_j)/(g_j+1 − g_j), the weights are 1 − e_0, e_0 − e_1, …, e_last."""
        key = ("masses", grid, first)
        got = self._memo.get(key)
        if got is not None:
            return got
        if len(grid) == 1:
            got = np.ones(1)
        else:
            s = self.scale
            e = [(s * self.platform.clipped_mean(lo / s, hi / s, first) - lo) / (hi - lo)
                 for lo, hi in zip(grid, grid[1:], strict=False)]
            got = np.empty(len(grid))
            got[0] = 1.0 - e[0]
            for j in range(1, len(grid) - 1):
                got[j] = e[j - 1] - e[j]
            got[-1] = e[-1]
        self._memo[key] = got
        return got

    def mean_wall(self) -> float:
        return self.scale * float(self.platform.prefix[-1]) / self.n

    def span(self, kinks: Sequence[float]) -> tuple[float, ...]:
        """The grid of a cost line with these kinks over the runs: their shortest and longest, and every kink
        between."""
        lo, hi = self.scale * float(self.platform.sorted[0]), self.scale * float(self.platform.sorted[-1])
        return tuple(sorted({lo, hi, *(k for k in kinks if lo < k < hi)}))

    def curve(self, deadline: int, cvar_weight: float = 0.0) -> "LateCurve":
        """The lateness and deadline curves of these runs against `deadline` (kept per deadline and weight)."""
        key = ("curve", deadline, cvar_weight)
        got = self._memo.get(key)
        if got is None:
            got = self._memo[key] = self._curve(deadline, cvar_weight)
        return got

    def _curve(self, deadline: int, cvar_weight: float) -> "LateCurve":
        """A run takes at most k days iff its multiplier is at most 24(k + 10⁻⁹)/scale (⌈x⌉ ≤ k ⟺ x ≤ k): the
        runs of each length are counted by binary search over the sorted multipliers."""
        p, s = self.platform, self.scale
        first = max(1, math.ceil(s * float(p.sorted[0]) / 24.0 - 1e-9))
        last = max(1, math.ceil(s * float(p.sorted[-1]) / 24.0 - 1e-9))
        ks = np.arange(first, last + 1, dtype=float)
        le = p.at_most(24.0 * (ks + 1e-9) / s)    # runs of at most k days, k = first..last
        le[-1] = p.n
        share = le / p.n
        weight = share if cvar_weight <= 0 else \
            (1.0 - cvar_weight) * share + cvar_weight * np.maximum(0, le - (p.n - p.k)) / p.k
        return LateCurve.of_cumulative(first, deadline, weight, share)


@dataclass(frozen=True)
class LateCurve:
    """What runs of d_s whole days contribute once they start on day x, against a deadline D:
    g(x) = Σ_s ω_s·max(0, x + d_s − D) (weights ω: 1/N, or the objective's), and P(x + d ≤ D) = the share of runs
    with d_s ≤ D − x. Both from the runs' histogram of days, for any x at once: with W(>t) the weight of runs
    longer than t days and M(>t) their weighted days, g(x) = M(>D−x) − (D − x)·W(>D−x)."""

    deadline: int
    first: int
    """The shortest run (days): the histograms start here."""
    above_w: np.ndarray
    """above_w[i] = weight of the runs longer than first − 1 + i days (i = 0: all of them)."""
    above_m: np.ndarray
    """above_m[i] = their weighted days."""
    at_most: np.ndarray
    """at_most[i] = the share of runs of at most first − 1 + i days (i = 0: none)."""

    @classmethod
    def of(cls, days: np.ndarray, deadline: int, weights: np.ndarray | None) -> "LateCurve":
        """From each run's days (and weight: 1/N without)."""
        first = int(days.min())
        counts = np.bincount(days - first)
        w = counts / len(days) if weights is None else np.bincount(days - first, weights=weights)
        return cls.of_cumulative(first, deadline, np.cumsum(w), np.cumsum(counts) / len(days))

    @classmethod
    def of_cumulative(cls, first: int, deadline: int, weight: np.ndarray, share: np.ndarray) -> "LateCurve":
        """From the running weight and share of the runs of at most first, first + 1, … days."""
        w = np.diff(weight, prepend=0.0)
        k = np.arange(first, first + len(w), dtype=float)
        above_w = np.concatenate([np.cumsum(w[::-1])[::-1], [0.0]])
        above_m = np.concatenate([np.cumsum((w * k)[::-1])[::-1], [0.0]])
        at_most = np.concatenate([[0.0], share])
        return cls(deadline, first, above_w, above_m, at_most)

    def _index(self, t: np.ndarray) -> np.ndarray:
        """Position of "longer than t days" (or "at most t days") in the histograms."""
        return np.clip(t - self.first + 1, 0, len(self.above_w) - 1)

    def late(self, days: np.ndarray) -> np.ndarray:
        """g(x) at start days x (see class docstring)."""
        t = self.deadline - np.asarray(days, dtype=np.int64)
        i = self._index(t)
        return self.above_m[i] - t * self.above_w[i]

    def meets(self, days: np.ndarray) -> np.ndarray:
        """P(x + d ≤ D) at start days x."""
        t = self.deadline - np.asarray(days, dtype=np.int64)
        return self.at_most[self._index(t)]

    def expected_late(self, law: "StartLawLike") -> float:
        """Σ_x P(S = x)·g(x): the (weighted) expected days past the deadline, S integrated exactly."""
        return float(law.pmf() @ self.late(law.days()))

    def p_meet(self, law: "StartLawLike") -> float:
        """P(S + d ≤ D), S integrated exactly."""
        return float(law.pmf() @ self.meets(law.days()))


class StartLawLike(Protocol):
    def pmf(self) -> np.ndarray: ...
    def days(self) -> np.ndarray: ...


def price_tail_factor(a: Assumptions, alpha: float = CVAR_ALPHA) -> float:
    """(CVaR_α − E) of an estimated price's factor f (lognormal, σ `estimate_price_sigma`, mean
    m = 1 + `estimate_price_risk_pct`/100): for a lognormal, E[f | f above its α-quantile] = m Φ(σ − z_α)/(1 − α),
    so the factor is m (Φ(σ − z_α)/(1 − α) − 1). The price spread is independent of the run length, so its tail is
    priced apart and added to the run's: CVaR is subadditive, so the sum is at least the joint premium — a buyer
    who pays to cut the tail is never told it costs less than it does."""
    sigma = a.uncertainty.estimate_price_sigma
    mean = 1.0 + a.money.estimate_price_risk_pct / 100.0
    z = NormalDist().inv_cdf(alpha)
    return mean * (NormalDist().cdf(sigma - z) / (1.0 - alpha) - 1.0)


@dataclass(frozen=True)
class RiskStats:
    """What the risk table shows for one plan (days count from `as_of`; money in dollars; `answers/risk.py`)."""

    scenarios: int
    seed: int
    p_deadline: float | None
    finish_p50: int
    finish_p80: int
    finish_p90: int
    cost_expected: float
    """The expected completion cost: the cost lines and the price of lateness, their mean over the scenarios."""
    cost_p90: float
    cvar95: float
    cost_std_error: float
    """The sampling error of `cost_expected` (sd/√N over the scenarios)."""
    late_days_expected: float = 0.0
    """E[days past the deadline] (0 without one)."""
    objective: float = 0.0
    """What the objective minimises for this plan: the expected completion cost plus its tail premium (λ > 0)."""
    objective_std_error: float = 0.0
    """The sampling error of the objective (`answers/risk.objective_terms`: the expectation and its CVaR part)."""


def quantile(values: np.ndarray, q: float, *, presorted: bool = False) -> float:
    """The empirical q-quantile: the smallest sample value with at least a fraction q of the samples at or below
    it (an actual scenario's value, the same on every machine)."""
    s = values if presorted else np.sort(values)
    return float(s[max(0, math.ceil(round(q * len(s), 9)) - 1)])


def cvar(values: np.ndarray, alpha: float = CVAR_ALPHA, *, presorted: bool = False) -> float:
    """The mean of the worst ⌈(1 − α)·N⌉ values."""
    s = values if presorted else np.sort(values)
    k = max(1, math.ceil(round((1.0 - alpha) * len(s), 9)))
    return float(s[-k:].mean())
