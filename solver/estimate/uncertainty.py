"""The uncertainty model behind scenario risk: what can turn out differently, and how it is drawn.

Sources of uncertainty (each a leaf of `assumptions.uncertainty` or a figure of the quote, overridable):
- achieved MFU: the estimate (`compute.py`) is the median; the real value is the estimate × exp(σ_c·Z_c +
  σ_s·Z_s + σ_k·Z_k), a part common to every platform (how far this workload's efficiency is from the model), one
  per software stack and one per hardware class (immature stacks and consumer cards miss by more). Calibrated on
  published training runs (catalogs/calibration.yaml).
- interruptions: Poisson, at the rates of `reliability` (the Llama 3 rate per GPU-hour, spot reclaims per node-hour);
  each one loses the restart time plus half a checkpoint interval (`compute.wall_time`).
- lead time of each quote: lognormal through its p50 and p90, capped at `lead_time_cap_quantile` (`cost.py`).
- porting: lognormal around `porting.delay_days` with σ `porting_delay_sigma`.
- the price of a quote of kind `estimate`: lognormal with σ `estimate_price_sigma` and a mean
  `money.estimate_price_risk_pct` above the estimate (so the expected cost equals the fixed premium).

Common random numbers: every source has its own stream, seeded from (`uncertainty.seed`, the source's name), so
every option, plan and what-if sees the same draw of the same source — differences between plans are differences
of the plans, not of the dice — and the same inputs give the same scenarios on any machine or executor. Streams are
prefixes of each other: the first N of 10·N scenarios are the N scenarios.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field

import numpy as np

from ..inputs.assumptions import Assumptions
from .cost import Z90, lead_cap, lognormal

POISSON_EXACT_MAX_MEAN = 30.0
"""Up to this mean, Poisson counts are drawn by the exact inverse CDF (one pass per count, so its cost grows with
μ); above it by the Cornish–Fisher normal expansion, which gives the exact count or one off (measured on 200,000
draws: one off in 0.8% of draws at μ = 30, 0.4% at μ = 100; means equal within 0.001 counts). A count is worth a
restart, hours in runs of weeks, so the difference never moves a finish day's distribution measurably; the exact
pass above 30 made the chance constraint's explanations 1.7× slower."""


def _stream_seed(seed: int, source: str) -> np.random.SeedSequence:
    return np.random.SeedSequence([seed, zlib.crc32(source.encode("utf-8"))])


GROUPS = {"mfu": "mfu:", "interruptions": "interruptions", "lead": "lead:", "porting": "porting:",
          "price": "price:"}
"""Groups of sources a tornado holds fixed one at a time, by the prefix of their source names."""


@dataclass
class Draws:
    """Standard normal draws per named source, N per source, made on first use and kept (read-only arrays).

    `held` fixes a group of sources at one standard-normal value in every scenario (a tornado's P10 or P90 of that
    uncertainty, the others left random); for MFU, the value of its combined spread."""

    seed: int
    n: int
    held: dict[str, float] = field(default_factory=dict)
    _normals: dict[str, np.ndarray] = field(default_factory=dict)

    def holding(self, group: str, z: float) -> "Draws":
        """The same draws with one group held at z (they share the arrays already made)."""
        if group not in GROUPS:
            raise ValueError(f"unknown uncertainty group {group!r}")
        return Draws(self.seed, self.n, {**self.held, group: z}, self._normals)

    def uniform(self, source: str) -> np.ndarray:
        """Φ of the source's normals (kept: the exact Poisson draws of every plan read them)."""
        key = "Φ:" + source
        got = self._normals.get(key)
        if got is None or any(source.startswith(GROUPS[g]) for g in self.held):
            got = normal_cdf(self.normal(source))
            if not any(source.startswith(GROUPS[g]) for g in self.held):
                self._normals[key] = got
        return got

    def normal(self, source: str) -> np.ndarray:
        for group, z in self.held.items():
            if source.startswith(GROUPS[group]):
                return np.full(self.n, z)
        got = self._normals.get(source)
        if got is None:
            got = np.random.Generator(np.random.PCG64(_stream_seed(self.seed, source))).standard_normal(self.n)
            got.flags.writeable = False
            self._normals[source] = got
        return got


_erfc = np.frompyfunc(math.erfc, 1, 1)


def normal_cdf(z: np.ndarray) -> np.ndarray:
    """Φ(z), elementwise (math.erfc: numpy has no erf of its own, and scipy is not a dependency)."""
    out: np.ndarray = np.asarray(0.5 * _erfc(-np.asarray(z, dtype=float) / math.sqrt(2.0)), dtype=float)
    return out


def mfu_factor(draws: Draws, a: Assumptions, software: str, accel_class: str) -> np.ndarray:
    """Real MFU ÷ estimated MFU per scenario (median 1)."""
    held = draws.held.get("mfu")
    if held is not None:
        return np.full(draws.n, math.exp(held * mfu_sigma(a, software, accel_class)))
    s = a.uncertainty.mfu_sigma
    log = s.common * draws.normal("mfu:common")
    sw = s.software[software]  # type: ignore[index]
    if sw > 0:
        log = log + sw * draws.normal(f"mfu:software:{software}")
    k = s.accel_class[accel_class]  # type: ignore[index]
    if k > 0:
        log = log + k * draws.normal(f"mfu:class:{accel_class}")
    return np.exp(log)


def mfu_sigma(a: Assumptions, software: str, accel_class: str) -> float:
    """σ of log MFU for a platform: the independent parts in quadrature."""
    s = a.uncertainty.mfu_sigma
    return math.sqrt(s.common ** 2 + s.software[software] ** 2 + s.accel_class[accel_class] ** 2)  # type: ignore[index]


def poisson_inverse(z: np.ndarray, mean: np.ndarray, u: np.ndarray | None = None) -> np.ndarray:
    """Poisson(mean) counts driven by standard normals z: the smallest k with P(K ≤ k) ≥ Φ(z), elementwise.
    Inverse-CDF sampling keeps the coupling of common random numbers (a larger mean never gives a smaller count
    for the same z). Above `POISSON_EXACT_MAX_MEAN`, the Cornish–Fisher expansion μ + √μ·z + (z² − 1)/6."""
    z = np.asarray(z, dtype=float)
    mean = np.broadcast_to(np.asarray(mean, dtype=float), z.shape)
    out = np.zeros(z.shape)
    small = mean <= POISSON_EXACT_MAX_MEAN
    if small.any():
        mu, u = mean[small], (normal_cdf(z) if u is None else u)[small]
        pmf = np.exp(-mu)
        cdf = pmf.copy()
        k = np.zeros(mu.shape)
        top = float(np.max(mu))
        for i in range(1, int(top + 12.0 * math.sqrt(top) + 20.0) + 1):
            below = cdf < u
            if not below.any():
                break
            k += below
            pmf = pmf * mu / i
            cdf = cdf + pmf
        out[small] = k
    big = ~small
    if big.any():
        mu, zz = mean[big], z[big]
        out[big] = np.maximum(0.0, np.floor(mu + np.sqrt(mu) * zz + (zz * zz - 1.0) / 6.0 + 0.5))
    return out


def lead_days(draws: Draws, qid: str, p50: float, p90: float | None, cap_quantile: float) -> np.ndarray:
    """A quote's lead time per scenario: lognormal through its p50 and p90, capped (`cost.lead_cap`); certain
    without a spread."""
    fit = lognormal(p50, p90)
    if fit is None:
        return np.full(draws.n, float(p50))
    mu, sigma = fit
    return np.minimum(np.exp(mu + sigma * draws.normal(f"lead:{qid}")), lead_cap(p50, p90, cap_quantile))


def porting_days(draws: Draws, a: Assumptions, key: str, median_days: float) -> np.ndarray:
    """Calendar days to port the software stack per scenario (median `porting.delay_days`)."""
    if median_days <= 0:
        return np.zeros(draws.n)
    return median_days * np.exp(a.uncertainty.porting_delay_sigma * draws.normal(f"porting:{key}"))


def price_factor(draws: Draws, a: Assumptions, qid: str) -> np.ndarray:
    """Real price ÷ estimated price of a quote of kind `estimate`, per scenario: lognormal with σ
    `estimate_price_sigma` and mean 1 + `estimate_price_risk_pct`/100."""
    sigma = a.uncertainty.estimate_price_sigma
    mean = 1.0 + a.money.estimate_price_risk_pct / 100.0
    return np.exp(math.log(mean) - sigma * sigma / 2.0 + sigma * draws.normal(f"price:{qid}"))


__all__ = ["Draws", "GROUPS", "Z90", "mfu_factor", "mfu_sigma", "poisson_inverse", "lead_days", "porting_days",
           "price_factor", "normal_cdf"]
