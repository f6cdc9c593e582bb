"""Scenario evaluation: a plan's finish date and cost in each of N scenarios, and the statistics a risk table shows.

A plan fixes the option, the node count, the quotes with their nodes and order dates, and the planned start. In
scenario s (`uncertainty.py` draws the sources):
- wall hours: ideal_s = ideal / m_s (m_s the MFU factor); checkpointing keeps its overhead factor c = 1 + δ/τ;
  K_s ~ Poisson(λ · ideal_s · c / (1 − ℓ)) interruptions (the expected count of the scenario's run), each losing
  r = R + τ/2 hours: wall_s = ideal_s · c + K_s · r. Its mean is the deterministic wall of `compute.wall_time`.
- start: the planned start, later when capacity or the software is late: each quote's capacity arrives
  min(L_s, cap) days after its order (plus installation), the software after the scenario's porting time; the slip
  is the largest lateness past the planned start (jointly over the quotes, not the premium's slowest-quote bound).
- finish: start_s + ⌈wall_s / 24⌉ days, the deterministic convention.
- cost: each quote's per-node cost at wall_s (the model's own cost functions, `options.node_cost`), with the price
  of an estimated quote × its scenario price factor; the per-plan lines at wall_s; the rules' lines as planned;
  plus the delay cost per day × the slip. The premiums the scenarios cover (failure rework, delivery slip,
  estimated prices) are therefore not added: their expectation is what the scenarios average to.

Each cost function of the wall time is piecewise linear with known kinks (a commitment's floor, the minimum
operations time, the ages of the resale curve, the end of the depreciation life), so it is evaluated exactly at the
kinks and the ends of the scenarios' range and interpolated (`CostCurve`); tests compare it with direct evaluation.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..inputs.assumptions import Assumptions, MoneyA
from .compute import TimeEstimate
from .cost import HOURS_PER_MONTH, HOURS_PER_YEAR
from .uncertainty import poisson_inverse

CVAR_ALPHA = 0.95
"""CVaR level: the mean cost of the worst 5% of scenarios (the tail a risk-averse buyer pays to cut)."""


def wall_hours(t: TimeEstimate, restart_hours: float, mfu: np.ndarray, interruption_z: np.ndarray,
               interruption_u: np.ndarray | None = None) -> np.ndarray:
    """Wall hours per scenario (see module docstring), from the deterministic estimate at the median MFU.

    The estimate's parts are recovered from it: λ = interruptions / wall, δ = λτ²/2 (τ = √(2δ/λ)),
    c = 1 + δ/τ, ℓ = λ(R + τ/2)."""
    ideal = t.ideal_hours / mfu
    if t.interruptions <= 0 or t.wall_hours <= 0:
        return ideal * (t.wall_hours / t.ideal_hours if t.ideal_hours > 0 else 1.0)
    lam = t.interruptions / t.wall_hours
    tau = t.checkpoint_interval_hours if math.isfinite(t.checkpoint_interval_hours) else 0.0
    checkpoint = 1.0 + (lam * tau / 2.0 if tau > 0 else 0.0)
    per_interruption = restart_hours + tau / 2.0
    lost = lam * per_interruption
    expected = lam * ideal * checkpoint / (1.0 - lost)
    return ideal * checkpoint + poisson_inverse(interruption_z, expected, interruption_u) * per_interruption


def wall_kinks(money: MoneyA, commit_months: float, held_before_hours: float) -> list[float]:
    """Wall hours at which some per-node or per-plan cost line changes slope: a commitment's floor, the minimum
    billed hours, the minimum operations time, the depreciation life and the resale curve's ages (bought hardware
    is held `held_before_hours` before the run)."""
    kinks = [commit_months * HOURS_PER_MONTH, money.cloud_min_billed_hours, money.ops_min_days * 24.0,
             money.depreciation_years * 365.0 * 24.0 - held_before_hours]
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


@dataclass(frozen=True)
class RunTail:
    """The run-length scenarios of one point, for the mean–CVaR objective (`assumptions.uncertainty.aversion`).

    With aversion ω the objective prices a plan at (1 − ω) × its cost + ω × CVaR95 of its cost, PyPSA's mean–CVaR
    ([pypsa-cvar], [rockafellar-uryasev2000]) with the model's cost as the mean: the premium (line `tail`) is
    ω × (CVaR95 − cost). It is priced for the run-length uncertainty (MFU and interruptions), which every plan at
    a point shares: CVaR95 of a cost line f is the mean of f over the 5% longest runs. Every cost line rises with
    the run's length (hours billed, held, operated; a resale value that falls with age), so the 5% longest runs are
    the 5% dearest for every line alike, and the CVaR of their sum is the sum of their CVaRs — linear in the nodes
    of each quote, so the model carries the premium as one more per-node and per-plan line and stays exact. An
    estimated price adds its own tail (`price_tail_factor`); the delivery uncertainty, which depends on the start
    the model chooses, keeps its expectation (the slip line).

    The base is the model's cost (the run at the median MFU, failures at their expectation), not the scenarios'
    mean: with ω = 0 nothing changes, and the premium never rewards a plan for a mean the objective does not see
    (a run that often stops short of a commitment's floor has a thin tail above a higher mean)."""

    walls: np.ndarray
    longest: np.ndarray
    """Indices of the ⌈(1 − α)·N⌉ longest runs (ties broken by scenario index, so the same on every machine)."""
    aversion: float

    @classmethod
    def of(cls, walls: np.ndarray, aversion: float, alpha: float = CVAR_ALPHA) -> "RunTail":
        k = max(1, math.ceil(round((1.0 - alpha) * len(walls), 9)))
        cut = np.partition(walls, len(walls) - k)[len(walls) - k]   # the k-th longest run, in O(N)
        above = np.flatnonzero(walls > cut)
        ties = np.flatnonzero(walls == cut)[:k - len(above)]        # ties: the lowest scenario indices
        return cls(walls, np.concatenate([above, ties]), aversion)

    def premium(self, fn: Callable[[float], float], kinks: Sequence[float], base: float) -> float:
        """ω (mean over the longest runs − `base`) of a cost line given as a function of wall hours, exact between
        its kinks (`CostCurve`, `wall_kinks`); `base` is the line's cost in the model."""
        lo, hi = float(self.walls.min()), float(self.walls.max())
        values = CostCurve.of(fn, lo, hi, kinks)(self.walls)
        return self.aversion * (float(values[self.longest].mean()) - base)


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
    """What the risk table shows for one plan (days count from `as_of`; money in dollars)."""

    scenarios: int
    seed: int
    p_deadline: float | None
    finish_p50: int
    finish_p80: int
    finish_p90: int
    cost_expected: float
    cost_p90: float
    cvar95: float
    cost_std_error: float


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


def stats(finish_days: np.ndarray, cost: np.ndarray, deadline_day: int | None, seed: int) -> RiskStats:
    n = len(cost)
    p = None if deadline_day is None else float(np.count_nonzero(finish_days <= deadline_day)) / n
    f, c = np.sort(finish_days), np.sort(cost)
    return RiskStats(n, seed, p, int(quantile(f, 0.5, presorted=True)), int(quantile(f, 0.8, presorted=True)),
                     int(quantile(f, 0.9, presorted=True)), float(cost.mean()), quantile(c, 0.9, presorted=True),
                     cvar(c, presorted=True), float(cost.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0)
