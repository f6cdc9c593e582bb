"""How well the time estimate predicts published training runs, whether its band is honest, and the fit of both.

For each run of catalogs/calibration.yaml, `plan estimate` is asked the run's question (model size, tokens,
sequence, accelerator, cluster) and its GPU-hours at the median MFU and its P10-P90 band (scenarios of MFU and
interruptions) are set against the published figure (`check_runs`).

The error model (decision notes §3): ln(real MFU / modelled MFU) ~ N(μ(z), σ²), z the known features. The centre
μ = a + b·ln(balance / ref) — balance the chip's dense BF16 FLOPs per byte of memory bandwidth — and σ are fitted by
maximum likelihood (least squares for μ; σ² the mean squared residual with the degrees of freedom corrected) on the
fitting part of the runs (`fitting_part`: two of every three in file order) and judged on the rest: coverage of the
P10-P90 band, its median width (P90 / P10), the median error and the interval score (Gneiting & Raftery 2007),
which rewards a band only as wide as the evidence. Other features (model size, GPU count, tokens per GPU) are tested
the same way by `feature_scores` (leave-one-out over the fitting part); bench/calibrate.py prints it all, and the
figures in `assumptions.uncertainty.mfu_centre` and `mfu_sigma.common` are the fit printed there.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..inputs.assumptions import Assumptions
from ..inputs.calibration import Calibration, GpuHourRun
from ..inputs.catalog import Catalog
from .calculator import EstimateInput, run_estimate


@dataclass(frozen=True)
class RunCheck:
    run: GpuHourRun
    estimate: float
    p10: float
    p90: float

    @property
    def error(self) -> float:
        """Estimate ÷ published − 1 (negative: the estimate is too fast)."""
        return self.estimate / self.run.gpu_hours - 1.0

    @property
    def log_ratio(self) -> float:
        """ln(published ÷ estimate): the residual the MFU spread must cover."""
        return math.log(self.run.gpu_hours / self.estimate)

    @property
    def inside(self) -> bool:
        return self.p10 <= self.run.gpu_hours <= self.p90


@dataclass(frozen=True)
class Summary:
    runs: int
    median_abs_error: float
    worst_abs_error: float
    worst_run: str
    share_inside: float
    median_log_ratio: float


def check_runs(cal: Calibration, cat: Catalog, a: Assumptions) -> list[RunCheck]:
    out = []
    for run in cal.gpu_hour_runs:
        est = run_estimate(EstimateInput(accelerator=run.accelerator, gpus=run.gpus, params=run.params,
                                         tokens=run.tokens, seq_len=run.seq_len, recompute=run.recompute), cat, a)
        out.append(RunCheck(run, float(est["gpu_hours"]), float(est["gpu_hours_p10"]), float(est["gpu_hours_p90"])))
    return out


def summarise(checks: list[RunCheck]) -> Summary:
    errors = [abs(c.error) for c in checks]
    worst = max(checks, key=lambda c: abs(c.error))
    return Summary(len(checks), statistics.median(errors), abs(worst.error), worst.run.id,
                   sum(c.inside for c in checks) / len(checks), statistics.median(c.log_ratio for c in checks))


Z90 = 1.2815515655446004
"""The standard normal's 90th percentile: a P10-P90 band is the centre ± Z90·σ in log."""


def fitting_part(n: int) -> tuple[list[int], list[int]]:
    """(fitting, held out) positions of n runs: every third run (positions 2, 5, 8, …, in file order) is held out
    of the fit; the order of the file is that of publication within a family, so both parts span every family."""
    held = [i for i in range(n) if i % 3 == 2]
    return [i for i in range(n) if i % 3 != 2], held


def log_mfu_ratio(check: RunCheck) -> float:
    """ln(real MFU / the estimate's MFU) of a run: GPU-hours scale with 1 / MFU, so it is ln(estimate / published)
    (the estimate at the centre it was made with)."""
    return -check.log_ratio


@dataclass(frozen=True)
class CentreFit:
    """μ(z) = coefficients · (1, features…), σ the residual spread; `names` the features in order."""

    names: tuple[str, ...]
    coefficients: tuple[float, ...]
    sigma: float

    def centre(self, features: Sequence[float]) -> float:
        return self.coefficients[0] + sum(c * x for c, x in zip(self.coefficients[1:], features, strict=True))


def fit_centre(y: Sequence[float], features: Sequence[Sequence[float]], names: Sequence[str]) -> CentreFit:
    """Least squares of y on (1, features) — the maximum-likelihood centre of a normal error — and σ² = Σ residual²
    / (n − parameters), the unbiased residual variance."""
    x = np.column_stack([np.ones(len(y)), *[np.asarray(f, dtype=float) for f in features]]) if features else \
        np.ones((len(y), 1))
    yy = np.asarray(y, dtype=float)
    coef, *_ = np.linalg.lstsq(x, yy, rcond=None)
    dof = max(1, len(yy) - x.shape[1])
    sigma = math.sqrt(float(np.sum((yy - x @ coef) ** 2)) / dof)
    return CentreFit(tuple(names), tuple(float(c) for c in coef), sigma)


def interval_score(lo: float, hi: float, y: float, alpha: float = 0.2) -> float:
    """Gneiting & Raftery's interval score of a central (1 − α) interval [lo, hi] for the outcome y: its width plus
    2/α times the distance by which y falls outside. Lower is better; the true quantiles minimise its mean."""
    return (hi - lo) + (2.0 / alpha) * max(0.0, lo - y) + (2.0 / alpha) * max(0.0, y - hi)


@dataclass(frozen=True)
class BandScore:
    """How a set of bands did on its runs: share inside P10-P90, the median width P90 / P10, the median |error| of
    the centre (estimate / published − 1) and the mean interval score on ln GPU-hours."""

    runs: int
    coverage: float
    median_width: float
    median_abs_error: float
    interval_score: float


def score_checks(checks: Sequence[RunCheck]) -> BandScore:
    """`BandScore` of the product's own bands (`check_runs`)."""
    return BandScore(
        len(checks), sum(c.inside for c in checks) / len(checks),
        statistics.median(c.p90 / c.p10 for c in checks),
        statistics.median(abs(c.error) for c in checks),
        statistics.fmean(interval_score(math.log(c.p10), math.log(c.p90), math.log(c.run.gpu_hours)) for c in checks))


def feature_scores(y: Sequence[float], candidates: dict[str, Sequence[Sequence[float]]]) -> dict[str, BandScore]:
    """Each candidate set of features judged by leave-one-out on `y`: fitted without a run, the run's band is the
    centre ± Z90·σ in log; `BandScore` over the runs (width and score in log MFU)."""
    out = {}
    n = len(y)
    for name, feats in candidates.items():
        inside, widths, errors, scores = 0, [], [], []
        for k in range(n):
            keep = [i for i in range(n) if i != k]
            fit = fit_centre([y[i] for i in keep], [[f[i] for i in keep] for f in feats], [name] * len(feats))
            m = fit.centre([f[k] for f in feats])
            lo, hi = m - Z90 * fit.sigma, m + Z90 * fit.sigma
            inside += lo <= y[k] <= hi
            widths.append(math.exp(hi - lo))
            errors.append(abs(math.exp(y[k] - m) - 1.0))
            scores.append(interval_score(lo, hi, y[k]))
        out[name] = BandScore(n, inside / n, statistics.median(widths), statistics.median(errors),
                              statistics.fmean(scores))
    return out
