"""Small array helpers shared by the presolve, the screen and the bounds."""

from __future__ import annotations

import numpy as np


def distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of a 1-D array: `np.unique(values)` for the plain arrays used here, without its
    cost. numpy 2's `unique` consults `np.ma` on every call, which imports `numpy.ma` into a process the first
    time — the parent and each forked child of a marketplace solve alike, on the critical path — and adds its
    checks to every call over a sort (the bounds ask twice per point; measured: bench/README.md, "Timings that used
    to live in docstrings (moved 2026-12-07)")."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


__all__ = ["distinct"]
