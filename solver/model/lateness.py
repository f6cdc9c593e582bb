"""Lateness in the CP-SAT model: the charge of a plan on an option of several quotes, and the cuts that raise it.

A plan's quotes arrive independently and the run starts after the last, so its charge is the largest of its used
quotes' figures alone (`Outlook.alone`, recorded per point by the quote split in `builder.py` as `late_at`) and of
the cuts that hold (sets of quotes a solve found charged less than they cost together: `solve/pipeline.py`). One
constraint family of `build`, added right after the selection; `builder.add_late_cut` raises the charge made here in
a model already built, with the same literals (`cut_literals`, `_pin_and`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..estimate.options import Option
from ..estimate.outlook import LateCut
from .builder_state import BuilderState
from .money import units
from .timing import rule_delays


def add_lateness(bld: BuilderState, cuts: Sequence[LateCut]) -> None:
    """Lateness of a plan on an option of several quotes: the quotes it uses arrive independently and the run
    starts after the last, so its charge is at least each used quote's alone (`Outlook.alone`) — the model
    charges the largest of them — and, for a set of quotes a cut names at a point (a plan found to be charged
    less than its quotes together cost, `solve/pipeline.py`), that set's own figure whenever all of it is used
    there. Equalities again: `late` is the maximum of its terms, each pinned to its figure or to 0."""
    index = {(pt.option.id, pt.n): i for i, pt in enumerate(bld.points)}
    by_option: dict[str, list[LateCut]] = {}
    for cut in cuts:
        by_option.setdefault(cut.option, []).append(cut)
    for o in bld.options:
        if len(o.quotes) == 1:
            continue
        terms: list[Any] = []
        top = 0
        for q in o.quotes:
            at = bld.late_at.get(q.id)
            used = bld.u[q.id]
            if not at or isinstance(used, int) or used is bld.zero:
                continue
            hi = max(k for k, _ in at)
            t = bld.m.new_int_var(0, hi, f"late[{q.id}]")
            bld.m.add(t == sum(k * bld.z[i] for k, i in at)).only_enforce_if(used)
            bld.m.add(t == 0).only_enforce_if(~used)
            terms.append(t)
            top = max(top, hi)
        for cut in by_option.get(o.id, []):
            i = index.get((cut.option, cut.nodes))
            lits = [x for qid in cut.quotes
                    if (x := bld.u.get(qid)) is not None and not isinstance(x, int) and x is not bld.zero]
            if i is None or len(lits) < cut.needed:
                continue
            b = bld.m.new_bool_var(f"late_cut[{o.id}@{cut.nodes}]")
            _pin_and(bld.m, b, [bld.z[i], *cut_literals(bld.m, cut, lits)])
            terms.append(cut.units * b)
            top = max(top, cut.units)
        if not terms:
            continue
        late = bld.m.new_int_var(0, top, f"late[{o.id}]")
        bld.m.add_max_equality(late, [0, *terms])
        bld.cost_terms.append(_late_charge(bld, o, late, top))


def _late_charge(bld: BuilderState, o: Option, late: Any, top: int) -> Any:
    """The variable the option's lateness is charged by: `late` itself when a rule tests the cost (a cost
    condition must see the cost the plan has); otherwise a variable at least `late`, up to the most any of the
    option's points can be charged (`Outlook.late_ceiling`), which a later cut can raise in this very model
    (`add_late_cut`) without a rebuild — the minimisation holds it at the largest of its terms."""
    if any(r.when.cost is not None for r in bld.spec.rules):
        bld.late[o.id] = late
        return late
    delays = sum(rule_delays(bld.problem))   # every rule's delay, as the objective's ceiling counts them
    ceiling = max([top] + [units(bld.outlook.late_ceiling(o, pt, bld.universe.horizon, delays), bld.unit)
                           for pt in bld.points if pt.option is o and pt.workable])
    charged = bld.m.new_int_var(0, ceiling, f"late_charged[{o.id}]")
    bld.m.add(charged >= late)
    bld.late[o.id] = charged
    bld.raisable[o.id] = ceiling
    return charged


def cut_literals(m: Any, cut: LateCut, lits: Sequence[Any]) -> list[Any]:
    """The conditions on quotes under which `cut` applies (`lits`: the quotes' use literals, 1 for one every plan
    uses): each of them used; for a pool cut (`LateCut.at_least` k), one literal that is true exactly when k or
    more of them are used."""
    live = [x for x in lits if not isinstance(x, int)]
    if not cut.at_least or cut.at_least >= len(lits):
        return live
    need = cut.at_least - (len(lits) - len(live))     # quotes every plan uses count already
    if need <= 0:
        return []
    many = m.new_bool_var(f"late_pool[{cut.option}@{cut.nodes}>={cut.at_least}]")
    m.add(sum(live) >= need).only_enforce_if(many)
    m.add(sum(live) <= need - 1).only_enforce_if(~many)
    return [many]


def _pin_and(m: Any, b: Any, conds: Sequence[Any]) -> None:
    """b = the conjunction of `conds`, both ways."""
    for c in conds:
        m.add(b <= c)
    m.add(b >= sum(conds) - (len(conds) - 1))
