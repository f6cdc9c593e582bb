"""Branch and bound with CP-SAT at the leaves: model few points, prove, and add only what could still win.

Every point has a lower bound on the quantity being minimised (`model/bounds.py`). A model over the points with
the smallest bounds is solved to proven optimality; then every point whose bound is at most that optimum joins
and the model is solved again, until no point is left out that could match or beat it. Points whose bound
exceeds the proven optimum of a model containing all the others cannot do better, and none can tie, so the result
is the optimum over all points, and the tie-break among equal plans is that of the full model. If the kept points
have no plan at all, `GROWTH` times as many are kept, up to all of them. Used by the solve (objective) and by
explanations (minimal cost, cash or finish under a set of groups).

With `parts` (explanations), a growth whose model would be heavy (`PART_WEIGHT`) is searched part by part instead:
the least over a union of points is the least of the least over each part, so the points that could still win are
solved a few at a time, best bound first, until the next bound is not below the best plan found. Why: CP-SAT's
linear relaxation of a model over many points mixes them fractionally, and is far weaker than each point's own. At
100,000 quotes, dropping an infeasible deadline's one fabric per job leaves 112 points, each able to split its nodes
over more than a thousand rented quotes of every fabric, so a model of 32 of them has that weak mixed relaxation,
while each point alone has its own (measured: bench/README.md, "Timings that used to live in docstrings (moved
2026-12-07)"). Among plans of equal value the part solved first is kept (the full model would pick one of them
too, by its own search).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..estimate.options import Point

T = TypeVar("T")
Key = tuple[str, int]

INITIAL_POINTS = 32
"""Points in the first model of a search: a model of 32 points is small, and the optimum is usually among the 32
best bounds (bench/README.md), so most searches need one or two models (measured: bench/README.md, "Timings that
used to live in docstrings (moved 2026-12-07)")."""
INITIAL_WEIGHT = 256
"""Most quote variables (`weight` summed over the kept points) in a first model, beyond its first point. With a
marketplace catalog a bought option's point can split over a hundred quotes: 32 such points make a model of
thousands of split variables, mostly at points far from the optimum, while the best bound's point alone holds the
optimum more often than not."""
GROWTH = 4
"""Factor by which the kept points (and their weight) grow when they hold no plan at all: the number of re-solves
stays logarithmic in the number of points."""
PART_WEIGHT = INITIAL_WEIGHT * GROWTH
"""With `parts`, the most weight a grown model may have before the rest is searched part by part, and the most a
part has beyond its first point."""


@dataclass(frozen=True)
class Step(Generic[T]):
    """One solve over a set of kept points: `optimal` with its value, `infeasible`, or anything else (a time
    limit) — then the search stops, and the caller keeps the plan it found, if any, not proven the least. `value`
    is read only when the status is `optimal`, and by a search by parts, of the plan a time limit left."""

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
         weight: Callable[[Point], int] | None = None, parts: bool = False) -> Step[T]:
    """Run the search over `ranked` (bound, point), sorted by bound (see module docstring). `solve(keep, last)`
    solves over the kept point keys; `last` is the previous optimal step (a warm start). `weight(pt)` is the size
    a point adds to a model (its quote variables), which limits the first model as `INITIAL_WEIGHT` says, and with
    `parts` when the search goes on part by part."""
    size, budget = INITIAL_POINTS, INITIAL_WEIGHT
    keep = _first(ranked, size, budget, weight)
    last: Step[T] | None = None
    while True:
        step = solve(keep, last)
        if step.status == "optimal" and step.value is not None:
            need = {pt.key for lb, pt in ranked if lb <= step.value}
            if need <= keep:
                return step
            if parts and weight is not None and \
                    sum(weight(pt) for _lb, pt in ranked if pt.key in need or pt.key in keep) > PART_WEIGHT:
                return _by_parts(ranked, solve, weight, keep, step)
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


def _by_parts(ranked: Sequence[tuple[int, Point]], solve: Callable[[set[Key], Step[T] | None], Step[T]],
              weight: Callable[[Point], int], done: set[Key], best: Step[T]) -> Step[T]:
    """The search by parts (see module docstring), from `best`, the optimal step over the points `done`: the least
    over every point whose bound is below it (a point bounded at the best value can only tie, and the first plan
    found is kept). A part the time limit stops ends the search with its status and the least plan found so far,
    not proven."""
    assert best.value is not None
    least = best.value
    done = set(done)
    while True:
        rest = [(lb, pt) for lb, pt in ranked if pt.key not in done and lb < least]
        if not rest:
            return best
        part = _first(rest, INITIAL_POINTS, PART_WEIGHT, weight)
        step = solve(part, None)
        done |= part
        if step.status == "optimal" and step.value is not None:
            if step.value < least:
                best, least = step, step.value
        elif step.status != "infeasible":
            found = step if step.value is not None and step.value < least else best
            return Step(step.status, found.value, found.payload)
