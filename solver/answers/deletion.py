"""Shrinking an infeasible set of groups to a minimal conflict, given only a status oracle over sets of groups.

QuickXplain (U. Junker, AAAI 2004) with a one-by-one deletion to fall back on when a time limit leaves a check
undecided. Nothing here knows the model: the oracle is `PairOracle.status` for a single run (`relax.py`), the
program's own for a program (`program_explain.py`), so the same search serves both.
"""

from __future__ import annotations

from collections.abc import Callable, Set as AbstractSet

from ..solve.engine import INFEASIBLE, UNKNOWN
from .cores import Conflict


def deletion_filter(status: Callable[[list[str]], str], groups: list[str], seed: list[str] | None,
                    stop: Callable[[], bool] | None = None,
                    needed: Callable[[list[str]], set[str]] | None = None) -> Conflict:
    """Shrink an infeasible set of groups to a minimal one: the *preferred* minimal conflict for the order of
    `groups` (of `seed` when it is infeasible) — the one that deleting each group from last to first, whenever the
    rest stays infeasible, keeps.

    Found by QuickXplain (U. Junker, "QuickXplain: preferred explanations and relaxations for over-constrained
    problems", AAAI 2004): split the candidates in halves and recurse, so a conflict of k among n groups costs about
    2k·log₂(n/k) + 2k feasibility checks instead of n (an infeasible program has ~46 groups and 4 in conflict: ~25
    checks), and many are on small sets, quick to decide. Junker proves it returns the same preferred conflict as the
    deletion above when every check is decided. Feasibility is monotone (fewer groups, more plans), so the result
    is minimal. A check the time limit leaves undecided voids that argument: the deletion is then run as such, and a
    removal it cannot decide keeps its group (the conflict is then not proven minimal).

    `needed(start)` names groups of the infeasible start whose removal alone is shown to leave a plan. Every subset
    of the start without such a group has a plan too, so the deletion never removes one: it runs the same with them
    as QuickXplain's background, and only the others are candidates. With 7,871 of 7,875 needed capacities among
    92,704 groups named so, QuickXplain has a dozen candidates left.

    `stop()` true (`--max-seconds` spent) ends the search at once with the infeasible set it started from, not
    proven minimal: every further check would be undecided, and deleting one by one over thousands of quote
    capacities would itself outlast the limit by far (measured: bench/README.md, "Timings that used to live in
    docstrings (moved 2026-12-07)")."""
    core = seed if seed is not None and status(seed) == INFEASIBLE else list(groups)
    if not core:
        return Conflict((), True)
    kept = needed(core) & set(core) if needed is not None else set()
    background = [g for g in core if g in kept]
    candidates = [g for g in core if g not in kept]
    undecided = [False]

    def infeasible(active: list[str]) -> bool:
        if stop is not None and stop():
            raise _Stopped
        st = status(active)
        undecided[0] = undecided[0] or st == UNKNOWN
        return st == INFEASIBLE

    def preferred(background: list[str], added: bool, candidates: list[str]) -> list[str]:
        if added and infeasible(background):
            return []
        if len(candidates) == 1:
            return list(candidates)
        half = len(candidates) // 2
        first, second = candidates[:half], candidates[half:]
        later = preferred(background + first, True, second)
        return preferred(background + later, bool(later), first) + later

    try:
        found = set(preferred(background, bool(background), candidates)) if candidates else set()
    except _Stopped:
        return Conflict(tuple(core), False)
    if not undecided[0]:
        return Conflict(tuple(g for g in core if g in kept or g in found), True)
    return _delete_one_by_one(status, core, stop, kept)


class _Stopped(Exception):
    """The wall clock ended a conflict search (`deletion_filter`'s `stop`)."""


def _delete_one_by_one(status: Callable[[list[str]], str], core: list[str],
                       stop: Callable[[], bool] | None = None, kept: AbstractSet[str] = frozenset()) -> Conflict:
    """The deletion `deletion_filter` describes, one check per group, last to first; an undecided removal keeps its
    group and the result is not proven minimal. Groups in `kept` are known to stay (`needed`). `stop()` true keeps
    every group not yet tried."""
    proven = True
    i = len(core) - 1
    while i >= 0:
        if stop is not None and stop():
            return Conflict(tuple(core), False)
        if core[i] in kept:
            i -= 1
            continue
        trial = core[:i] + core[i + 1:]
        st = status(trial)
        if st == INFEASIBLE:
            core = trial
        elif st == UNKNOWN:
            proven = False
        i -= 1
    return Conflict(tuple(core), proven)


__all__ = ["deletion_filter"]
