"""How well the time estimate predicts published training runs, and whether its uncertainty band is honest.

For each run of catalogs/calibration.yaml, `plan estimate` is asked the run's question (model size, tokens,
sequence, accelerator, cluster) and its expected GPU-hours (at the median MFU) and its P10-P90 band (scenarios of
MFU and interruptions) are set against the published figure. The MFU spread of `assumptions.uncertainty` is chosen
so that about 80% of the runs fall inside their band; this module measures that (README "Calibration").
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

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
