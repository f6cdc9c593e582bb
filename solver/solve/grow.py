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
INITIAL_WEIGHT = 256
"""Most quote variables (`weight` summed over the kept points) in a first model, beyond its first point. With a
marketplace catalog a bought option's point can split over a hundred quotes: 32 such points make a model of
thousands of split variables, mostly at points far from the optimum, while the best bound's point alone holds the
optimum more often than not."""
GROWTH = 4
"""Factor by which the kept points (and their weight) grow when they hold no plan at all: the number of re-solves
stays logarithmic in the number of points."""


@dataclass(frozen=True)
class Step(Generic[T]):
    """One solve over a set of kept points: `optimal` with its value, `infeasible`, or anything else (a time
    limit) — then the search stops, and the caller keeps the plan it found, if any, not proven the least."""

    status: str
    value: int | None
    payload: T


def _first(ranked: Sequence[tuple[int, Point]], size: int, budget: int,
           weight: Callable[[Point], int] | None) -> set[Key]:
    """The keys of the best-bound points, at most `size` of them and, after the first, at most `budget` weight."""
    keep: set[Key] = set()
    spent = 0
    for _lb, pt in ranked[:size]:
        w = weight(pt) if weight is not None else 0
        if keep and spent + w > budget:
            break
        keep.add(pt.key)
        spent += w
    return keep


def grow(ranked: Sequence[tuple[int, Point]], solve: Callable[[set[Key], Step[T] | None], Step[T]],
         weight: Callable[[Point], int] | None = None) -> Step[T]:
    """Run the search over `ranked` (bound, point), sorted by bound (see module docstring). `solve(keep, last)`
    solves over the kept point keys; `last` is the previous optimal step (a warm start). `weight(pt)` is the size
    a point adds to a model (its quote variables), which limits the first model as `INITIAL_WEIGHT` says."""
    size, budget = INITIAL_POINTS, INITIAL_WEIGHT
    keep = _first(ranked, size, budget, weight)
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
            grown = keep
            while grown <= keep:
                size, budget = size * GROWTH, budget * GROWTH
                grown = _first(ranked, size, budget, weight) | keep
            keep = grown
        else:
            return step
