"""The published training runs the time estimate is calibrated on (catalogs/calibration.yaml), validated."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from . import bundled
from .schema import Strict, validate


class GpuHourRun(Strict):
    """A run whose owners published its GPU-hours (or its cluster and wall-clock days)."""

    id: str
    model: str
    params: float = Field(gt=0)
    tokens: float = Field(gt=0)
    seq_len: int = Field(ge=16)
    seq_len_published: bool = True
    accelerator: str
    gpus: int = Field(ge=1)
    gpus_published: bool
    recompute: Literal["none", "selective", "full"]
    gpu_hours: float = Field(gt=0)
    basis: Literal["published", "chips_x_days", "rate_scaled", "third_party"]
    scope: str
    source: str
    as_of: str
    quality: Literal["primary", "secondary"]


class MfuPoint(Strict):
    """A run whose owners published its model-FLOPs utilisation (or a range of it)."""

    id: str
    model: str
    params: float = Field(gt=0)
    hardware: str
    accelerator: str | None
    gpus: int | None
    mfu: float | list[float]
    note: str
    source: str
    as_of: str
    quality: Literal["primary", "secondary"]


class Calibration(Strict):
    gpu_hour_runs: list[GpuHourRun]
    mfu_points: list[MfuPoint]


class CalibrationFile(Strict):
    calibration: Calibration


def load_calibration() -> Calibration:
    src = bundled.load("calibration.yaml")
    return validate(CalibrationFile, src).calibration
