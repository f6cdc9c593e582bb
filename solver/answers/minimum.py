"""What a minimisation over the pairs (`PairOracle.minimize`) is asked and answers: the bound on its quantity and
its result.

The quantity is bounded per point either by one of the point bounds (`Bounds.point_lower`: cost, cash, finish day,
picked by `BOUND_KIND`) or by a `PointFloor` (a quote's nodes, the start: `relax.py`); `budgeted` is the expression
the budget limits. A `Minimum` is proven only when its pair's solve was optimal and every pair was decided.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..estimate.options import Point
from ..inputs.problem import Problem
from ..model.builder import Built
from ..solve.engine import OPTIMAL, Outcome


NO_FLOOR = 2 ** 62
"""The floor of a pair with no open point (it has no candidates either)."""
BOUND_KIND = {"cost": 0, "cash": 1, "finish": 2}
"""Which of a point's lower bounds (`Bounds.point_lower`: cost, cash, finish day) bounds each minimised quantity."""
PointFloor = Callable[[Point], int]
"""A lower bound on a minimised quantity at every plan of a point under the minimisation's active groups, for a
quantity the point bounds do not bound (a quote's nodes, the start: `PairOracle.quote_floor`, `relax.py`)."""
Kind = int | PointFloor
"""What bounds a bounded minimisation: a `BOUND_KIND` index into `Bounds.point_lower`, or a `PointFloor`."""


def budgeted(problem: Problem) -> Callable[[Built], Any]:
    """What the budget limits, as a model expression: the plan's cash or its cost (`budget.applies_to`)."""
    if problem.spec.budget.applies_to == "cash":
        return lambda b: b.cash
    return lambda b: b.cost


def _kind(lower: str | PointFloor) -> Kind:
    return BOUND_KIND[lower] if isinstance(lower, str) else lower


@dataclass(frozen=True)
class Minimum:
    """The result of one minimisation: the value, the model and the outcome (for reading the plan), the pair, and
    whether every pair was decided (`complete`): only then is the minimum over the whole problem proven."""

    value: int
    model: Built
    outcome: Outcome
    pair: str = ""
    complete: bool = True

    @property
    def proven(self) -> bool:
        return self.outcome.status == OPTIMAL and self.complete


__all__ = ["NO_FLOOR", "BOUND_KIND", "PointFloor", "Kind", "budgeted", "Minimum"]
