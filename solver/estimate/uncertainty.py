"""The uncertainty model behind scenario risk: what can turn out differently, and how it is drawn.

Sources of uncertainty (each a leaf of `assumptions.uncertainty` or a figure of the quote, overridable):
- achieved MFU: the estimate (`compute.py`) is the median; the real value is the estimate × exp(σ_c·Z_c +
  σ_s·Z_s + σ_k·Z_k), a part common to every platform (how far this workload's efficiency is from the model), one
  per software stack and one per hardware class (immature stacks and consumer cards miss by more). Calibrated on
  published training runs (catalogs/calibration.yaml).
- interruptions: Poisson, at the rates of `reliability` (the Llama 3 rate per GPU-hour, spot reclaims per node-hour);
  each one loses half a checkpoint interval, a checkpoint's write time and the restart (`compute.wall_time`).
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
restart, hours in runs of weeks, so the difference never moves a finish day's distribution measurably, while the
exact pass's cost keeps growing with μ above it (measured: bench/README.md, "Timings that used to live in
docstrings (moved 2026-12-07)")."""


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


_PHI_STEP = 1.0 / 64.0
_PHI_Z = np.arange(-10.0, 10.0 + _PHI_STEP / 2, _PHI_STEP)
_PHI_TABLE = np.array([0.5 * math.erfc(-z / math.sqrt(2.0)) for z in _PHI_Z.tolist()])
_PHI_SLOPE = np.exp(-_PHI_Z ** 2 / 2.0) / math.sqrt(2.0 * math.pi)


def phi(z: np.ndarray) -> np.ndarray:
    """Φ(z) elementwise, fast: cubic Hermite interpolation of a table of `math.erfc` on steps of 1/64 with the exact
    density as the slope — within 3·10⁻¹⁰ of Φ (the error of cubic Hermite interpolation is at most h⁴/384 ×
    max|Φ⁗| = 2.6·10⁻¹⁰ here; tests compare it with `math.erfc`): a few array operations, where calling
    `math.erfc` per element, as a start law over a marketplace option's thousands of quotes would (`starts.py`), is
    a Python call per element (measured: bench/README.md, "Timings that used to live in docstrings (moved
    2026-12-07)"). 0 and 1 beyond ±10."""
    z = np.asarray(z, dtype=float)
    x = np.clip(z, -10.0, 10.0 - 1e-12)
    pos = (x + 10.0) / _PHI_STEP
    i = np.minimum(pos.astype(np.int64), len(_PHI_Z) - 2)
    t = pos - i
    y0, y1 = _PHI_TABLE[i], _PHI_TABLE[i + 1]
    m0, m1 = _PHI_SLOPE[i] * _PHI_STEP, _PHI_SLOPE[i + 1] * _PHI_STEP
    t2 = t * t
    t3 = t2 * t
    out = (2 * t3 - 3 * t2 + 1) * y0 + (t3 - 2 * t2 + t) * m0 + (-2 * t3 + 3 * t2) * y1 + (t3 - t2) * m1
    out = np.where(z <= -10.0, 0.0, np.where(z >= 10.0, 1.0, out))
    return np.clip(out, 0.0, 1.0)


def mfu_factor(draws: Draws, a: Assumptions, software: str, accel_class: str, measured: bool = False) -> np.ndarray:
    """Real MFU ÷ estimated MFU per scenario (median 1). On a platform the user measured, one part of spread,
    `measured_mfu_sigma`, on the common draw: the measurement replaces what the model and the platform's maturity
    leave unknown."""
    held = draws.held.get("mfu")
    if held is not None:
        return np.full(draws.n, math.exp(held * mfu_sigma(a, software, accel_class, measured)))
    if measured:
        return np.exp(a.uncertainty.measured_mfu_sigma * draws.normal("mfu:common"))
    s = a.uncertainty.mfu_sigma
    log = s.common * draws.normal("mfu:common")
    sw = s.software[software]  # type: ignore[index]
    if sw > 0:
        log = log + sw * draws.normal(f"mfu:software:{software}")
    k = s.accel_class[accel_class]  # type: ignore[index]
    if k > 0:
        log = log + k * draws.normal(f"mfu:class:{accel_class}")
    return np.exp(log)


def mfu_sigma(a: Assumptions, software: str, accel_class: str, measured: bool = False) -> float:
    """σ of log MFU for a platform: the independent parts in quadrature (one, on a platform the user measured)."""
    if measured:
        return a.uncertainty.measured_mfu_sigma
    s = a.uncertainty.mfu_sigma
    return math.sqrt(s.common ** 2 + s.software[software] ** 2 + s.accel_class[accel_class] ** 2)  # type: ignore[index]


def poisson_inverse(z: np.ndarray, mean: np.ndarray, u: np.ndarray | None = None,
                    shift: np.ndarray | None = None, exact: bool = False) -> np.ndarray:
    """Poisson(mean) counts driven by standard normals z: the smallest k with P(K ≤ k) ≥ Φ(z), elementwise.
    Inverse-CDF sampling keeps the coupling of common random numbers (a larger mean never gives a smaller count
    for the same z). Above `POISSON_EXACT_MAX_MEAN` (unless `exact`: the objective's own draws), the Cornish–Fisher
    expansion μ + √μ·z + (z² − 1)/6 (`shift`: (z² − 1)/6 + ½ of these z, when the caller keeps it)."""
    z = np.asarray(z, dtype=float)
    mean = np.broadcast_to(np.asarray(mean, dtype=float), z.shape)
    limit = math.inf if exact else POISSON_EXACT_MAX_MEAN
    if float(mean.min()) > limit:   # every count by the expansion: no masks
        extra = (z * z - 1.0) / 6.0 + 0.5 if shift is None else shift
        return np.maximum(0.0, np.floor(mean + np.sqrt(mean) * z + extra))
    out = np.zeros(z.shape)
    small = mean <= limit
    if small.any():
        mu, u = mean[small], (normal_cdf(z) if u is None else u)[small]
        out[small] = poisson_search(mu, u)
    big = ~small
    if big.any():
        mu, zz = mean[big], z[big]
        out[big] = np.maximum(0.0, np.floor(mu + np.sqrt(mu) * zz + (zz * zz - 1.0) / 6.0 + 0.5))
    return out


def poisson_search(mu: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The smallest k with P(K ≤ k) ≥ u for K ~ Poisson(mu), elementwise, by summing the pmf (pmf_k = pmf_k−1 ·
    μ/k) on the draws still below their u only: a draw leaves once its count is found, so rare events (most
    counts 0) cost one pass over the few that are not."""
    k = np.zeros(mu.shape)
    pmf = np.exp(-mu)
    cdf = pmf.copy()
    live = np.flatnonzero(cdf < u)
    mu_l, u_l, pmf_l, cdf_l = mu[live], u[live], pmf[live], cdf[live]
    top = float(np.max(mu)) if mu.size else 0.0
    for i in range(1, int(top + 12.0 * math.sqrt(top) + 20.0) + 1):
        if not live.size:
            break
        k[live] += 1.0
        pmf_l = pmf_l * mu_l / i
        cdf_l = cdf_l + pmf_l
        keep = cdf_l < u_l
        if not keep.all():
            live, mu_l, u_l, pmf_l, cdf_l = live[keep], mu_l[keep], u_l[keep], pmf_l[keep], cdf_l[keep]
    return k


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
           "price_factor", "normal_cdf", "phi", "poisson_search"]
