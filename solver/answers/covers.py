"""Source 1 of `conflicts.py`: proofs from point-local facts (`model/screening.py`), no solve needed.

If the groups of a set exclude every point of a pair one by one, the set is infeasible. `covering_reason` finds a
greedy cover of the points' reasons and `shrink` makes it minimal among such proofs; `_shrunk` then drops each group
that a reason spanning points (capacity shared by node counts, budget across quotes) makes redundant, which only a
solve, or the pair's status from its point bounds, shows. `_items_cover` is the same test for a given set of
groups, with the point bounds (`Bounds.point_lower`) as a proof too; the pair oracle (`PairOracle._quick`) asks it
before building any model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Set as AbstractSet
from typing import Any

from ..estimate.options import Universe
from ..model.builder import Built
from ..model.groups import rank
from ..model.screening import Reasons
from ..solve.engine import INFEASIBLE, UNKNOWN
from ..solve.pipeline import Context
from .cores import Conflict, _decide, _units
from .witness import witness


def covering_reason(ctx: Context, sub: Universe) -> list[str] | None:
    """Source 1: a small set of groups whose point-local reasons cover every workable point of `sub`, shrunk by
    deletion to be minimal among such proofs; None when some point has no local reason (the reason is then about
    allocation, start dates or rules — left to CP-SAT)."""
    shared = _shared_singleton(ctx, sub)
    if shared is not None:
        return [shared]
    cover = _cover(ctx, sub, priced=False)
    if cover is not None and "budget.max_usd" in cover:
        # the budget was needed somewhere: with its reasons at every point it may cover the rest too
        cover = _cover(ctx, sub, priced=True)
    return cover


def _cover(ctx: Context, sub: Universe, *, priced: bool) -> list[str] | None:
    """The greedy cover of `covering_reason`; without `priced`, the budget's reasons (which need the point priced)
    are used only where nothing else excludes a point."""
    items: list[Reasons] = []
    for o in sub.options:
        for pt in o.points:
            if pt.workable:
                v = (ctx.screen.violations(pt) if priced else
                     ctx.screen.violations(pt, budget=False) or ctx.screen.violations(pt))
                if not v:
                    return None
                items.append(v)
    if not items:
        return None

    chosen: set[str] = set()
    first: dict[frozenset[str], tuple[int, str]] = {}   # an item's best-ranked group, once per distinct item

    def best(it: frozenset[str]) -> tuple[int, str]:
        got = first.get(it)
        if got is None:
            got = first[it] = min(rank(g) for g in it)
        return got

    def weight(it: frozenset[str]) -> tuple[int, tuple[int, str]]:
        return len(it - chosen), best(it)

    for its in items:
        if not any(it <= chosen for it in its):
            pick: frozenset[str] = min(its, key=weight)
            chosen |= pick
    return sorted(shrink(items, chosen), key=rank)


def shrink(items: list[Reasons], chosen: set[str]) -> set[str]:
    """The cover `chosen` (every point's items include one within it) less each group, latest rank first, that every
    point can do without: g goes when every point keeps an item within what is left that does not contain g, i.e.
    when g is in no point's core (the intersection of its items within what is left).

    Points with the same items are one; each core is kept with a count of the cores holding each group, and only the
    points that lose an item when g goes are looked at again (a marketplace pair has thousands of points, its
    capacity items hundreds of quotes)."""
    chosen = set(chosen)
    within: list[tuple[frozenset[str], ...]] = list({tuple(it for it in its if it <= chosen): None for its in items})
    cores = [frozenset.intersection(*row) for row in within]
    blocked = Counter(g for core in cores for g in core)
    holders: dict[str, set[int]] = {}
    for p, row in enumerate(within):
        for it in row:
            for g in it:
                holders.setdefault(g, set()).add(p)
    for g in sorted(chosen, key=rank, reverse=True):
        if blocked[g]:
            continue
        chosen.discard(g)
        for p in holders.get(g, ()):
            kept = tuple(it for it in within[p] if g not in it)
            if len(kept) == len(within[p]):
                continue
            core = frozenset.intersection(*kept)
            blocked.update(core - cores[p])
            within[p], cores[p] = kept, core
    return chosen


def _shared_singleton(ctx: Context, sub: Universe) -> str | None:
    """One group that alone excludes every workable point (memory, a policy, the site's racks …), found from the
    cheap point-local reasons: then it is the whole explanation, minimal since one group is."""
    common: set[str] | None = None
    for o in sub.options:
        for pt in o.points:
            if not pt.workable:
                continue
            singles = {next(iter(it)) for it in ctx.screen.violations(pt, budget=False) if len(it) == 1}
            common = singles if common is None else common & singles
            if not common:
                return None
    return min(common, key=rank) if common else None


def _shrunk(ctx: Context, sub: Universe, model: Callable[[], tuple[Built, list[Any]]], cover: list[str],
            status: Callable[[set[str]], str] | None = None) -> Conflict:
    """A point-local cover made minimal: each group (the quotes' capacities as one unit, `_units`) whose removal
    the model still finds infeasible is dropped
    (feasibility is monotone, so what is kept was needed when tested and stays needed). The cover is minimal among
    point-local proofs already; a reason that spans points (capacity shared by node counts, budget across quotes)
    can make a group of it redundant, which only a solve shows — `status` (`_pair_status_of`) when given, else the
    forced model. Once `--max-seconds` is spent the groups not yet tried stay, and minimality is not claimed."""
    core = list(cover)
    proven = True
    for unit in reversed(_units(sorted(cover, key=rank))):
        if ctx.engine.spent():
            return Conflict(tuple(sorted(core, key=rank)), False)
        trial = [h for h in core if h not in unit]
        if not trial or witness(ctx, sub, set(trial)):
            continue
        if _items_cover(ctx, sub, set(trial)):
            core = trial
            continue
        if status is not None:
            st = status(set(trial))
            if st == INFEASIBLE:
                core = trial
            elif st == UNKNOWN:
                proven = False
            continue
        b, forced = model()
        st = _decide(ctx, b, [b.lits[h] for h in trial if h in b.lits] + forced, "cover-shrink")
        if st == INFEASIBLE:
            core = trial
        elif st == UNKNOWN:
            proven = False
    return Conflict(tuple(sorted(core, key=rank)), proven)


def _items_cover(ctx: Context, sub: Universe, active: AbstractSet[str]) -> bool:
    """Every workable point of `sub` has a point-local reason within `active`, or no plan by its bounds under
    `active` (`Bounds.point_lower`: a relaxation of the model with those groups, so None there is a proof — the
    budget against the fills of the quotes ready in time, a capacity short of n): no plan, proven without a solve."""
    bounds = ctx.bounds if ctx.bounds.sound else None
    return all(any(it <= active for it in ctx.screen.violations(pt))
               or (bounds is not None and bounds.point_lower(pt, active) is None)
               for o in sub.options for pt in o.points if pt.workable)


__all__ = ["covering_reason", "shrink"]
