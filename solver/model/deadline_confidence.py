"""The deadline's confidence in the CP-SAT model: the group `policy.deadline_confidence`.

Finishing by the deadline in a share c of the risk scenarios needs the run to start by a latest day for the chosen
point and each set of quotes it uses (`estimate/chance.py`); the cuts of plans whose quotes, taken jointly, missed
it (`solve/cuts.py`) add such latest starts for sets of quotes. A family of `build` of its own: it reads only the
selection's literals and the start, and exists only when the problem asks for a confidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..estimate.chance import ChanceCut, quote_sets
from .builder_state import BuilderState
from .cpsat import cp_model


def add_deadline_confidence(bld: BuilderState, cuts: Sequence[ChanceCut]) -> None:
    """start ≤ F*(point, quote) for the chosen point and each quote it uses (`estimate/chance.py`): a necessary
    condition of finishing by the deadline in a share c of the scenarios; plus the cuts of plans whose quotes,
    taken jointly, missed it (`solve/cuts.py`). A quote with no nodes variable at a point (the presolve or
    the bounds left it out there) cannot be used with that point, so it needs no constraint there."""
    chance = bld.screen.chance
    if chance is None:
        return
    lit = bld.group("policy.deadline_confidence", "limit", ("policy", "deadline_confidence"),
                    f"finish by the deadline in {chance.confidence:.0%} of the risk scenarios", "share",
                    chance.confidence)
    index = {(pt.option.id, pt.n): i for i, pt in enumerate(bld.points)}
    for i, pt in enumerate(bld.points):
        single = len(pt.option.quotes) == 1
        usable = [q for q in pt.option.quotes if _used(bld, q.id) is not None
                  and (single or (q.id, i) in bld.y)]
        for qs in quote_sets(usable):
            _latest_start(bld, [bld.z[i], *(_used(bld, q.id) for q in qs)],
                          chance.latest_start(pt.option, pt, qs), lit)
    for cut in cuts:
        at = index.get((cut.option, cut.nodes))
        if at is not None and all(qid in bld.u and _used(bld, qid) is not None for qid in cut.quotes):
            _latest_start(bld, [bld.z[at], *(_used(bld, qid) for qid in cut.quotes)], cut.latest_start, lit)


def _used(bld: BuilderState, qid: str) -> Any:
    """The literal "quote qid is used", True when its option has no other quote (the point implies it), None
    when it cannot be (dropped as dominated)."""
    used = bld.u[qid]
    if used is bld.zero or (isinstance(used, int) and used == 0):
        return None
    return used if isinstance(used, cp_model.IntVar) else True


def _latest_start(bld: BuilderState, conds: list[Any], latest: int | None, lit: Any) -> None:
    """start ≤ latest when every condition holds; the conditions cannot all hold when there is no latest."""
    conds = [c for c in conds if c is not True]
    if latest is None:
        bld.m.add_bool_or([~c for c in conds]).only_enforce_if(lit)
    elif latest < bld.horizon:
        bld.m.add(bld.start <= latest).only_enforce_if([*conds, lit])
