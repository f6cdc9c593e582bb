"""Branch and bound with CP-SAT at the leaves: model few points, prove, and add only what could still win.

Every point has a lower bound on the quantity being minimised (`model/bounds.py`). A model over the points with
the smallest bounds is solved to proven optimality; then every point whose bound is at most that optimum joins
and the model is solved again, until no point is left out that could match or beat it. Points whose bound
exceeds the proven optimum of a model containing all the others cannot do better, and none can tie, so the result
is the optimum over all points, and the tie-break among equal plans is that of the full model. If the kept points
have no plan at all, `GROWTH` times as many are kept, up to all of them. Used by the solve (objective) and by
explanations (minimal cost, cash or finish under a set of groups).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..estimate.options import Point

T = TypeVar("T")
Key = tuple[str, int]

INITIAL_POINTS = 32
"""Points in the first model of a search: a model of 32 points solves in milliseconds, and the optimum is usually
among the 32 best bounds (bench/README.md), so most searches need one or two models."""
GROWTH = 4
"""Factor by which the kept points grow when they hold no plan at all: the number of re-solves stays logarithmic
in the number of points."""


@dataclass(frozen=True)
class Step(Generic[T]):
    """One solve over a set of kept points: `optimal` with its value, `infeasible`, or anything else (a time
    limit) — then the search stops and the caller falls back to a model over every point."""

    status: str
    value: int | None
    payload: T


def grow(ranked: Sequence[tuple[int, Point]], solve: Callable[[set[Key], Step[T] | None], Step[T]]) -> Step[T]:
    """Run the search over `ranked` (bound, point), sorted by bound (see module docstring). `solve(keep, last)`
    solves over the kept point keys; `last` is the previous optimal step (a warm start)."""
    size = INITIAL_POINTS
    keep = {pt.key for _, pt in ranked[:size]}
    last: Step[T] | None = None
    while True:
        step = solve(keep, last)
        if step.status == "optimal" and step.value is not None:
            need = {pt.key for lb, pt in ranked if lb <= step.value}
            if need <= keep:
                return step
            keep |= need
            last = step
        elif step.status == "infeasible" and len(keep) < len(ranked):
            size *= GROWTH
            keep = {pt.key for _, pt in ranked[:size]}
        else:
            return step
