"""Source 2 of `conflicts.py`: CP-SAT assumption cores, and the feasibility check every conflict search shares.

A feasibility-only model (no objective, one worker, presolve off — google/or-tools#5141) with every group literal as
an assumption; the solver's core is a hint, mapped through our own literal table, re-verified, then shrunk by
deletion (`minimal_conflict`). `_decide` is the status with a set of literals fixed, the check behind every
deletion (`covers._shrunk`, `PairOracle.pair_status`); `_units` is how the deletions group the quotes' capacities.
`Conflict` is what every search returns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..model.builder import Built
from ..model.groups import capacity_quote
from ..solve.engine import INFEASIBLE, UNKNOWN
from ..solve.pipeline import Context


@dataclass(frozen=True)
class Conflict:
    """A set of group ids that cannot all hold; `proven` is False when a time limit left minimality undecided."""

    groups: tuple[str, ...]
    proven: bool = True


def _decide(ctx: Context, b: Built, active: list[Any], label: str) -> str:
    """Whether the model has a plan with the `active` literals true (the others free): a copy with them fixed,
    solved with presolve. Only the core itself needs assumptions (and presolve off, google/or-tools#5141); a status
    does not, and presolve on fixed literals settles in a second what the assumption search could not in 20."""
    m = b.model
    m.clear_objective()
    m.clear_assumptions()
    trial = m.clone()
    for lit in active:
        trial.add_bool_and([lit])
    return ctx.engine.solve(trial, label=label).status


def minimal_conflict(ctx: Context, b: Built, forced: list[Any], order: list[str] | None = None,
                     shown: Callable[[set[str]], bool] | None = None) -> Conflict | None:
    """A subset-minimal set of group ids infeasible together with `forced` (source 2), the quotes' capacities
    counted as one unit (`_units`); None if feasible.

    `shown(active)` may prove a deletion feasible without a solve (`witness.py`). Minimal because feasibility is
    monotone (fewer groups, more plans): a group kept was needed when tested, and the
    final set is a subset of the set it was tested in."""
    groups = order or sorted(b.lits)
    m = b.model
    m.clear_objective()
    m.clear_assumptions()
    m.add_assumptions([b.lits[g] for g in groups] + forced)
    try:
        out = ctx.engine.solve(m, label="core", presolve=False)
    finally:
        m.clear_assumptions()
    if out.status != INFEASIBLE:
        return None if out.status != UNKNOWN else Conflict(tuple(groups), proven=False)
    index = {b.lits[g].index: g for g in groups}
    hinted = {index[i] for i in out.solver.sufficient_assumptions_for_infeasibility() if i in index}
    core = [g for g in groups if g in hinted]
    if not core or _decide(ctx, b, [b.lits[g] for g in core] + forced, "core-check") != INFEASIBLE:
        core = list(groups)
    units = _units(core)
    proven = True
    i = 0
    while i < len(units):
        trial = units[:i] + units[i + 1:]
        if shown is not None and shown({g for unit in trial for g in unit}):
            i += 1
            continue
        st = _decide(ctx, b, [b.lits[g] for unit in trial for g in unit] + forced, "core-shrink")
        if st == INFEASIBLE:
            units = trial
        else:
            proven = proven and st != UNKNOWN
            i += 1
    return Conflict(tuple(g for unit in units for g in unit), proven)


def _units(groups: list[str]) -> list[tuple[str, ...]]:
    """The groups as the conflict search deletes them: each on its own, except the quotes' capacities, one unit
    (at the place of the first). A marketplace pair has hundreds of quotes; deleting their capacities one by one
    would cost a solve each and say little more than "the quotes' capacities" does."""
    caps = tuple(g for g in groups if capacity_quote(g) is not None)
    out: list[tuple[str, ...]] = []
    for g in groups:
        if capacity_quote(g) is None:
            out.append((g,))
        elif g == caps[0]:
            out.append(caps)
    return out


__all__ = ["Conflict", "minimal_conflict"]
