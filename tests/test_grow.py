"""The branch and bound of `solve/grow.py` on made-up points, against the least over all of them.

Each point has a lower bound and a true least (or no plan); a "solve" over kept points returns the least of the
kept ones, as CP-SAT would over a model of those points. Whatever the bounds, weights and limits, the search must
return the least over every point (bounds are only lower bounds), by growing one model or by parts; a part that a
time limit stops ends the search unproven with the least plan found so far.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import solver.solve.grow as grow_mod
from solver.solve.grow import Step, grow


@dataclass(frozen=True)
class FakePoint:
    key: tuple[str, int]
    weight: int


@st.composite
def instances(draw: Any) -> tuple[list[tuple[int, FakePoint]], dict[tuple[str, int], int | None]]:
    """(ranked (bound, point) sorted by bound, each point's true least or None)."""
    n = draw(st.integers(min_value=1, max_value=40))
    rows = []
    least: dict[tuple[str, int], int | None] = {}
    for k in range(n):
        bound = draw(st.integers(min_value=0, max_value=60))
        value = draw(st.one_of(st.none(), st.integers(min_value=bound, max_value=bound + 30)))
        pt = FakePoint(("o", k), draw(st.integers(min_value=1, max_value=600)))
        rows.append((bound, k, pt))
        least[pt.key] = value
    rows.sort(key=lambda t: (t[0], t[1]))
    return [(b, pt) for b, _k, pt in rows], least


def _solver(least: dict[tuple[str, int], int | None], calls: list[set[tuple[str, int]]],
            stops_at: tuple[str, int] | None = None) -> Any:
    """A solve over kept points: the least of theirs (first key on ties), `infeasible` if none has a plan; with
    `stops_at`, a model holding that point is stopped by a "time limit" with its plan found but not proven."""
    def solve(keep: set[tuple[str, int]], _last: Step[Any] | None) -> Step[Any]:
        calls.append(set(keep))
        found = sorted((v, key) for key in keep if (v := least[key]) is not None)
        if stops_at is not None and stops_at in keep:
            return Step("feasible", found[-1][0] if found else None, found[-1][1] if found else None)
        if not found:
            return Step("infeasible", None, None)
        return Step("optimal", found[0][0], found[0][1])
    return solve


SMALL_PART = 700
"""`PART_WEIGHT` under `small_limits`."""


@contextmanager
def small_limits() -> Iterator[None]:
    """First models of 2 points and parts of little weight, so that both ways of growing run on small instances."""
    old = grow_mod.INITIAL_POINTS, grow_mod.INITIAL_WEIGHT, grow_mod.PART_WEIGHT
    grow_mod.INITIAL_POINTS, grow_mod.INITIAL_WEIGHT, grow_mod.PART_WEIGHT = 2, 300, SMALL_PART
    try:
        yield
    finally:
        grow_mod.INITIAL_POINTS, grow_mod.INITIAL_WEIGHT, grow_mod.PART_WEIGHT = old


@settings(max_examples=300, deadline=None)
@given(instances(), st.booleans())
def test_the_search_finds_the_least_over_every_point(inst: Any, parts: bool) -> None:
    ranked, least = inst
    calls: list[set[tuple[str, int]]] = []
    with small_limits():
        found = grow(ranked, _solver(least, calls), lambda pt: pt.weight, parts=parts)
    plans = [v for v in least.values() if v is not None]
    if not plans:
        assert found.status == "infeasible"
        return
    assert found.status == "optimal"
    assert found.value == min(plans)
    assert least[found.payload] == found.value


@settings(max_examples=200, deadline=None)
@given(instances())
def test_by_parts_no_model_is_heavier_than_a_part_once_the_parts_start(inst: Any) -> None:
    """Once a grown model would weigh more than `PART_WEIGHT`, every later model is one part: a single point or at
    most `PART_WEIGHT` in all (the point of the search by parts), and no point is solved in two parts."""
    ranked, least = inst
    calls: list[set[tuple[str, int]]] = []
    with small_limits():
        grow(ranked, _solver(least, calls), lambda pt: pt.weight, parts=True)
    weight = {pt.key: pt.weight for _b, pt in ranked}
    solved: set[tuple[str, int]] = set()
    for k, keep in enumerate(calls):
        if k and not keep & solved:  # a part: nothing in it was solved before (a grown model holds the last one)
            assert len(keep) == 1 or sum(weight[key] for key in keep) <= SMALL_PART
        solved |= keep


def test_a_heavy_growth_is_searched_part_by_part() -> None:
    """Hand-made: the first point's plan is 10; three more points are bounded at 5, 8 and 12. Growing one model
    would join the three bounded within 10 (weight 3,000 > `PART_WEIGHT`), so they are solved apart, best bound
    first: the point bounded at 5 has a plan of 9, after which the one bounded at 8 is still solved (8 ≤ 9) and
    the one at 12 never is."""
    pts = [FakePoint(("o", k), 1000) for k in range(4)]
    ranked = [(4, pts[0]), (5, pts[1]), (8, pts[2]), (12, pts[3])]
    least = {pts[0].key: 10, pts[1].key: 9, pts[2].key: 11, pts[3].key: 1}
    calls: list[set[tuple[str, int]]] = []
    found = grow(ranked, _solver(least, calls), lambda pt: pt.weight, parts=True)
    assert (found.status, found.value, found.payload) == ("optimal", 9, pts[1].key)
    assert calls == [{pts[0].key}, {pts[1].key}, {pts[2].key}]
    # Without parts the same growth is one model of the three points under 10, and the same least.
    calls.clear()
    found = grow(ranked, _solver(least, calls), lambda pt: pt.weight)
    assert (found.status, found.value) == ("optimal", 9)
    assert calls == [{pts[0].key}, {pts[0].key, pts[1].key, pts[2].key}]


def test_a_part_stopped_by_the_time_limit_ends_the_search_unproven_with_the_least_found() -> None:
    pts = [FakePoint(("o", k), 1000) for k in range(4)]
    ranked = [(4, pts[0]), (5, pts[1]), (6, pts[2]), (7, pts[3])]
    # The stopped part's plan (8) is below the proven one (10): it is the plan returned, not proven.
    least = {pts[0].key: 10, pts[1].key: 8, pts[2].key: 7, pts[3].key: 20}
    found = grow(ranked, _solver(least, [], stops_at=pts[1].key), lambda pt: pt.weight, parts=True)
    assert (found.status, found.value, found.payload) == ("feasible", 8, pts[1].key)
    # Its plan (12) above the proven 10: the proven one is kept, and the search still says it was stopped.
    least[pts[1].key] = 12
    found = grow(ranked, _solver(least, [], stops_at=pts[1].key), lambda pt: pt.weight, parts=True)
    assert (found.status, found.value, found.payload) == ("feasible", 10, pts[0].key)
