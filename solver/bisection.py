"""One search shared by the stages: the least integer at which a monotone condition holds."""

from __future__ import annotations

from collections.abc import Callable


def least_holding(lo: int, hi: int, holds: Callable[[int], bool]) -> int:
    """The least x in [lo, hi] with `holds(x)`, for a condition that never stops holding as x rises and holds at
    `hi` (not checked: the caller knows it). ⌈log2(hi − lo + 1)⌉ calls."""
    while lo < hi:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


__all__ = ["least_holding"]
