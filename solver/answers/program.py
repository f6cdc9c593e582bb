"""A program solved and explained: what `plan solve PROGRAM.yaml` reports.

Estimates (`estimate/program.py`), the model's optimum over the candidates (`solve/program.py`), the independent
check of the plan (`solve/program_check.py`), and for an infeasible program the minimal conflict with exact
relaxations (`program_explain.py`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

from ..errors import InputError
from ..estimate.program import Candidate, ProgramData, gathered, program_data, reduced
from ..model.program import build_program_model
from ..inputs.names import did_you_mean
from ..inputs.program import ProgramProblem
from ..solve.engine import INFEASIBLE, Limits
from ..solve.program import ProgramOutcome, optimise
from ..solve.program_check import check_program
from .program_explain import ProgramExplanation, explain


@dataclass(frozen=True)
class ProgramReport:
    program: ProgramProblem
    data: ProgramData
    outcome: ProgramOutcome
    explanation: ProgramExplanation | None
    groups: tuple[tuple[str, str], ...]
    """(group id, what it says) of every limit the model enforced, when the program is explained (infeasible)."""
    seconds: float
    out_of_time: bool


def solve_program(pp: ProgramProblem, limits: Limits) -> ProgramReport:
    return _solve_data(pp, program_data(pp), limits)




@dataclass(frozen=True)
class ProgramWhyNot:
    """`plan explain PROGRAM --why-not WORKLOAD:ID`: the program's best plan with that workload on ID (an
    accelerator, system, option `system/offer`, mode or rented quote), against the chosen plan."""

    target: str
    workload: str
    matched: int
    """Candidates of the workload that match ID (0: it cannot run there at all, `reason` says why)."""
    reason: str | None
    chosen: ProgramReport
    forced: ProgramReport | None


def _matches(c: Candidate, key: str) -> bool:
    offer = c.option.partition("/")[2]
    return key.lower() in {c.accelerator, c.system, c.option, c.mode, offer, c.quote or ""}


def parse_target(pp: ProgramProblem, target: str) -> tuple[str, str]:
    """`main:b300` → ("main", "b300"); a one-line error naming `--why-not` otherwise."""
    wid, sep, key = target.partition(":")
    ids = [w.id for w, _ in pp.workloads]
    if not sep or not key:
        raise InputError("for a program, expected WORKLOAD:ID (e.g. main:b300 or sft:dgx-b200/buy)",
                         origin=f"--why-not {target}")
    if wid not in ids:
        raise InputError(f"no workload with id '{wid}'" + did_you_mean(wid, ids), origin=f"--why-not {target}")
    return wid, key


def why_not_program(pp: ProgramProblem, limits: Limits, target: str) -> ProgramWhyNot:
    """See `ProgramWhyNot`. The forced program is solved and explained like any program (its candidates for the
    workload restricted to the matching ones), so an impossible target gets a minimal conflict of the user's own
    limits with exact relaxations."""
    wid, key = parse_target(pp, target)
    everything = gathered(pp)
    chosen = _solve_data(pp, reduced(everything), limits)
    data = reduced(everything, exempt=wid)
    i = [w.id for w in data.workloads].index(wid)
    keep = tuple(c for c in data.workloads[i].candidates if _matches(c, key))
    if not keep:
        reason = (f"no candidate of {wid} matches '{key}': not in the catalog, excluded by the program's or the "
                  "workload's policy or rules, does not fit in memory, or cannot finish by the program's last "
                  "deadline")
        return ProgramWhyNot(target, wid, 0, reason, chosen, None)
    w = replace(data.workloads[i], candidates=keep)
    forced_data = replace(data, workloads=data.workloads[:i] + (w,) + data.workloads[i + 1:])
    return ProgramWhyNot(target, wid, len(keep), None, chosen, _solve_data(pp, forced_data, limits))


def _solve_data(pp: ProgramProblem, data: ProgramData, limits: Limits) -> ProgramReport:
    t0 = time.monotonic()
    outcome, engine = optimise(data, limits)
    if outcome.plan is not None:
        check_program(pp, outcome.plan)
    expl: ProgramExplanation | None = None
    groups: tuple[tuple[str, str], ...] = ()
    if outcome.status == INFEASIBLE:
        full = build_program_model(data)
        expl = explain(full, engine)
        groups = tuple(sorted((g.id, g.text) for g in full.groups.values()))
    return ProgramReport(pp, data, outcome, expl, groups, time.monotonic() - t0, engine.out_of_time)




RUN_FIELDS = ("option", "nodes", "quotes", "start", "finish")


def program_diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """What changed between two program answers (`render.program.program_dict` shapes; the old one from a file
    saved with `--save`): status, each workload's run, the purchases (by quote and order day), cost and cash."""
    out: dict[str, Any] = {}
    if old.get("status") != new.get("status"):
        out["status"] = [old.get("status"), new.get("status")]
    a, b = old.get("program") or {}, new.get("program") or {}
    runs_a = {w["id"]: w for w in a.get("workloads", [])}
    runs_b = {w["id"]: w for w in b.get("workloads", [])}
    changed = []
    for wid in sorted(set(runs_a) | set(runs_b)):
        wa, wb = runs_a.get(wid), runs_b.get(wid)
        if wa is None or wb is None:
            changed.append({"id": wid, "added" if wa is None else "removed": True})
            continue
        fields = {k: [wa.get(k), wb.get(k)] for k in RUN_FIELDS if wa.get(k) != wb.get(k)}
        if fields:
            changed.append({"id": wid, **fields})
    if changed:
        out["workloads"] = changed
    buys_a = {(p["quote"], p["order"]): p["nodes"] for p in a.get("purchases", [])}
    buys_b = {(p["quote"], p["order"]): p["nodes"] for p in b.get("purchases", [])}
    moved = [{"quote": q, "order": d, "nodes": [buys_a.get((q, d), 0), buys_b.get((q, d), 0)]}
             for q, d in sorted(set(buys_a) | set(buys_b)) if buys_a.get((q, d), 0) != buys_b.get((q, d), 0)]
    if moved:
        out["purchases"] = moved
    for key in ("cost_usd", "cash_usd"):
        if a.get(key) != b.get(key):
            out[key] = [a.get(key), b.get(key)]
    return out


__all__ = ["ProgramReport", "ProgramWhyNot", "solve_program", "why_not_program", "parse_target", "program_diff"]
