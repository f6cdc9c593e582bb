"""Why a program has no plan: a minimal set of the user's own limits that conflict, and how far each would move.

Same method as a single run (`conflicts.py`): every limit is a guarded group; a deletion filter over the groups
finds a subset-minimal infeasible set (each status a CP-SAT call with those groups enforced and the others dropped;
feasibility is monotone in the set, so the result is minimal when every call is decided). For each numeric group
of the conflict, the exact relaxation is one more call: every other group enforced, this one dropped, the quantity
it limits minimised (the latest end for a deadline, the spend of a quarter, the installed power of a segment …).
A workload with no candidate at all is reported before any solve, with why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any
from ..estimate.program import ProgramData
from ..estimate.program_chance import CONFIDENCE_GROUP
from ..model.program import UNIT, ProgramModel
from ..solve.engine import FEASIBLE, INFEASIBLE, OPTIMAL, UNKNOWN, Engine
from ..solve.program import date_of, fix_groups, lazily
from .conflicts import deletion_filter


@dataclass(frozen=True)
class Relaxation:
    group: str
    value: str | None
    """The limit at which the program becomes feasible, in the group's unit (a date, dollars, kW, nodes); None when
    no value of it alone does (another limit of the conflict binds as well once it moves)."""
    proven: bool
    amount: float | str | None = None
    """`value` typed, for JSON: a number in `unit` (dollars, kW, racks, nodes), or the ISO date of a deadline."""
    unit: str | None = None
    """usd, day (a date), kW, rack or node; None with `value`."""


@dataclass(frozen=True)
class ProgramExplanation:
    conflict: tuple[str, ...]
    proven: bool
    relaxations: tuple[Relaxation, ...]
    unplannable: tuple[tuple[str, str], ...]
    """Workloads with no candidate at all, with the reason."""


ORDER = ("after", "same_hardware_as", "earliest_start", "deadline", "max_nodes", "racks", "it_power_kw",
         "power_steps", "per_quarter_usd", "max_usd")
"""Tried for deletion last to first: money and capacity limits are dropped first, so a conflict keeps the
schedule statements (precedences, dates) a program is built around whenever they are part of one."""


def _rank(gid: str) -> tuple[int, str]:
    for i, key in enumerate(ORDER):
        if key in gid:
            return i, gid
    return len(ORDER), gid


def _status(pm: ProgramModel, engine: Engine, active: list[str]) -> str:
    """Whether the program has a plan with the `active` groups (rented capacities added lazily, `lazily`)."""
    st = lazily(pm.data, engine, set(active), None, "program conflict")[0].status
    return INFEASIBLE if st == INFEASIBLE else (UNKNOWN if st == UNKNOWN else FEASIBLE)


def _unplannable(data: ProgramData) -> list[tuple[str, str]]:
    out = []
    for w in data.workloads:
        if w.candidates:
            continue
        if w.considered == 0 or w.first_finish is None:
            reason = ("no allowed option fits it in memory at any size, or every allowed option is ruled out by "
                      "the policy, the site or a rule")
        else:
            reason = (f"no allowed option finishes it by {date_of(data, data.horizon)}, the program's last deadline "
                      f"(the earliest it can finish, alone, is {date_of(data, w.first_finish)}: move that deadline "
                      "at least there)")
        out.append((w.id, reason))
    return out


def _relaxed(data: ProgramData, gid: str, value: int, proven: bool) -> Relaxation:
    """The relaxation of `gid` to the model's `value`: its text (`_format`) and its typed amount and unit."""
    amount: float | str
    if "deadline" in gid:
        amount, unit = date_of(data, value).isoformat(), "day"
    elif gid == "budget.max_usd":
        amount, unit = value * UNIT, "usd"
    elif "per_quarter_usd" in gid:
        amount, unit = value, "usd"
    elif gid.startswith("site.it_power_kw") or gid.startswith("site.power_steps"):
        amount, unit = round(value / 10, 1), "kW"
    else:
        amount, unit = value, "rack" if gid == "site.racks" else "node"
    return Relaxation(gid, _format(data, gid, value), proven, amount, unit)


def _format(data: ProgramData, gid: str, value: int) -> str:
    if "deadline" in gid:
        return str(date_of(data, value))
    if gid == "budget.max_usd":
        return f"${value * UNIT:,.0f}"
    if "per_quarter_usd" in gid:
        return f"${value:,.0f}"
    if gid.startswith("site.it_power_kw") or gid.startswith("site.power_steps"):
        return f"{value / 10:,.1f} kW"
    if gid == "site.racks":
        return f"{value} racks"
    return f"{value} nodes"


def relaxation(pm: ProgramModel, engine: Engine, gid: str) -> Relaxation | None:
    """The least value of `gid`'s quantity with every other group enforced (value None: dropping it is not enough;
    None: the time limit left it undecided)."""
    if not pm.quantities.get(gid):
        return None
    tops: list[Any] = []

    def goal(model: ProgramModel, trial: Any) -> None:
        top = trial.new_int_var(-(10 ** 15), 10 ** 15, "relaxed")
        trial.add_max_equality(top, model.quantities[gid])
        trial.minimize(top)
        tops.append(top)

    others = {g for g in pm.literals if g != gid}
    if gid.removeprefix("quotes.").removesuffix(".max_nodes") in dict(pm.data.rented_capacity):
        # a rented quote's capacity is a quantity only of the full model (the lazy ones may not hold its row)
        trial = fix_groups(pm, sorted(others))
        goal(pm, trial)
        out = engine.solve(trial, label=f"relax {gid}")
    else:
        out, _model = lazily(pm.data, engine, others, goal, f"relax {gid}")
    if out.status == INFEASIBLE:
        return Relaxation(gid, None, True)
    if out.status not in (OPTIMAL, FEASIBLE):
        return None
    if gid.endswith("schedule.deadline") and pm.data.chance is not None and CONFIDENCE_GROUP in others:
        return _deadline_at_confidence(pm, engine, gid, others, out.value(tops[-1]), out.status == OPTIMAL)
    return _relaxed(pm.data, gid, out.value(tops[-1]), out.status == OPTIMAL)


def _deadline_at_confidence(pm: ProgramModel, engine: Engine, gid: str, others: set[str], lo: int,
                            proven: bool) -> Relaxation | None:
    """The least day a deadline can move to and be met at `policy.deadline_confidence`, every other group
    enforced. Dropped, the deadline leaves its workloads unconstrained by the confidence too, so the least end
    found then (`lo`) is only a lower bound: days are tried from it at doubling steps, then bisected (meeting the
    confidence never gets harder as the deadline moves later). Each try is a program solved with its cuts."""
    def status(day: int) -> str:
        data = replace(pm.data, workloads=tuple(replace(w, deadline_day=day) if w.deadline_group == gid else w
                                                for w in pm.data.workloads))
        return lazily(data, engine, others | {gid}, None, f"relax {gid} at the confidence")[0].status

    first = status(lo)
    if first != INFEASIBLE:
        return _relaxed(pm.data, gid, lo, proven) if first != UNKNOWN else None
    below, step, top = lo, 7, pm.data.calendar_days
    while True:
        day = min(top, below + step)
        got = status(day)
        if got == UNKNOWN:
            return None
        if got != INFEASIBLE:
            break
        if day >= top:
            return Relaxation(gid, None, True)
        below, step = day, step * 2
    above = day
    while above - below > 1:
        mid = (below + above) // 2
        got = status(mid)
        if got == UNKNOWN:
            return None
        below, above = (mid, above) if got == INFEASIBLE else (below, mid)
    return _relaxed(pm.data, gid, above, True)


def explain(pm: ProgramModel, engine: Engine) -> ProgramExplanation:
    """See module docstring."""
    empty = _unplannable(pm.data)
    if empty:
        return ProgramExplanation((), True, (), tuple(empty))
    groups = sorted(pm.literals, key=_rank)
    conflict = deletion_filter(lambda act: _status(pm, engine, act), groups, None)
    relax = [r for g in conflict.groups if pm.groups[g].numeric for r in [relaxation(pm, engine, g)] if r]
    return ProgramExplanation(tuple(sorted(conflict.groups, key=_rank)), conflict.proven, tuple(relax), ())


def explain_widening(pm: ProgramModel, engine: Engine, wider: Callable[[], ProgramModel]
                     ) -> tuple[ProgramModel, ProgramExplanation]:
    """`explain` over `pm`, whose candidates leave out what the policy and the site rule out, checked against
    `wider()`, the model where those are groups too (`gathered(policy_barred=True)`), built only when needed.

    Why not search the wider model at once: it holds every workload's options over all accelerators and modes, and
    a conflict search makes dozens of solves, each of the whole wider model (measured: bench/README.md, "Timings
    that used to live in docstrings (moved 2026-12-07)"). A conflict C found with the policy enforced stays a
    minimal conflict of the wider model whenever C alone is infeasible there: C is infeasible, and C without any
    member was feasible even with the policy enforced, so it is without it too. Only when C alone has a plan in the
    wider model (a policy section is part of the reason), or a workload had no candidate at all, is the conflict
    searched again in the wider model."""
    expl = explain(pm, engine)
    big = wider()
    if not expl.unplannable and expl.conflict and _status(big, engine, list(expl.conflict)) == INFEASIBLE:
        return pm, expl
    return big, explain(big, engine)


def describe(pm: ProgramModel, gid: str) -> str:
    return pm.groups[gid].text if gid in pm.groups else gid


__all__ = ["ProgramExplanation", "Relaxation", "explain", "explain_widening", "relaxation", "describe"]
