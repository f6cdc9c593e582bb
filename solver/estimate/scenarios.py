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
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..inputs.assumptions import MoneyA
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
