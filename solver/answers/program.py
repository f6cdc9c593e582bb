"""A program solved and explained: what `plan solve PROGRAM.yaml` reports.

Estimates (`estimate/program.py`), the model's optimum over the candidates (`solve/program.py`), the independent
check of the plan (`solve/program_check.py`), and for an infeasible program the minimal conflict with exact
relaxations (`program_explain.py`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from ..errors import InputError
from ..estimate.program import Candidate, ProgramData, gathered, program_data, reduced
from ..model.program import build_program_model
from ..inputs.names import did_you_mean
from ..inputs.program import ProgramProblem
from ..solve.engine import INFEASIBLE, Limits
from ..solve.program import ProgramOutcome, ProgramPlan, date_of, optimise, plan_waits
from ..solve.program_check import check_program
from .history import input_changes
from .program_decision import ProgramDecision, program_decision
from .program_explain import ProgramExplanation, explain, explain_widening


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
    chances: tuple[tuple[str, float], ...] = ()
    """Under `policy.deadline_confidence`: each workload with a deadline and the share of scenarios in which the
    plan meets it."""
    limits: Limits | None = field(default=None, compare=False, repr=False)
    """The limits of `decision`'s solves; None where no decision is asked for (a why-not's forced program, a
    frontier point)."""

    @cached_property
    def decision(self) -> ProgramDecision | None:
        """What the gated workload's bake-offs are worth (`program_decision.py`), computed on first use: `plan
        solve` shows it; `plan risk`, sweeps and sensitivity values never read it, and do not pay its solves."""
        if self.limits is None:
            return None
        return program_decision(self.program, self.data, self.outcome.plan, self.limits)


def solve_program(pp: ProgramProblem, limits: Limits) -> ProgramReport:
    """The program's plan; when it has none, the explanation is over candidates that include the options its
    policy and site rule out (`gathered(policy_barred=True)`), so that a conflict can name those sections too."""
    report = _solve_data(pp, program_data(pp), limits, lambda: reduced(gathered(pp, policy_barred=True)))
    return replace(report, limits=limits)




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
    limits with exact relaxations. A target only the policy or the site rules out (no allowed candidate matches)
    is forced among the candidates they bar, so that the conflict names the section that does."""
    wid, key = parse_target(pp, target)
    everything = gathered(pp)
    chosen = _solve_data(pp, reduced(everything), limits)
    normal = reduced(everything, exempt=wid)
    forced = _forced(normal, wid, key)

    def widened() -> ProgramData | None:
        return _forced(reduced(gathered(pp, policy_barred=True), exempt=wid), wid, key)

    if forced is not None:
        data = forced
        return ProgramWhyNot(target, wid, _count(forced, wid), None, chosen,
                             _solve_data(pp, forced, limits, lambda: widened() or data))
    wider = widened()
    if wider is None:
        reason = (f"no candidate of {wid} matches '{key}': not in the catalog, does not fit in memory, or cannot "
                  "finish by the program's last deadline")
        return ProgramWhyNot(target, wid, 0, reason, chosen, None)
    # The target's candidates are barred by the policy; the other workloads keep their allowed ones for the
    # conflict search, which the larger model then confirms (`explain_widening`).
    mine = next(w for w in wider.workloads if w.id == wid)
    narrow = replace(wider, workloads=tuple(mine if w.id == wid else w for w in normal.workloads))
    return ProgramWhyNot(target, wid, _count(wider, wid), None, chosen, _solve_data(pp, narrow, limits, lambda: wider))


def _count(data: ProgramData, wid: str) -> int:
    return len(next(w for w in data.workloads if w.id == wid).candidates)


def _forced(data: ProgramData, wid: str, key: str) -> ProgramData | None:
    """`data` with workload `wid` restricted to the candidates that match `key`; None when none does."""
    i = [w.id for w in data.workloads].index(wid)
    keep = tuple(c for c in data.workloads[i].candidates if _matches(c, key))
    if not keep:
        return None
    w = replace(data.workloads[i], candidates=keep)
    return replace(data, workloads=data.workloads[:i] + (w,) + data.workloads[i + 1:])


def _solve_data(pp: ProgramProblem, data: ProgramData, limits: Limits,
                explained: Callable[[], ProgramData] | None = None) -> ProgramReport:
    t0 = time.monotonic()
    outcome, engine = optimise(data, limits)
    if outcome.plan is not None:
        check_program(pp, outcome.plan)
    expl: ProgramExplanation | None = None
    groups: tuple[tuple[str, str], ...] = ()
    if outcome.status == INFEASIBLE:
        full = build_program_model(data)
        if explained is None:
            expl = explain(full, engine)
        else:
            full, expl = explain_widening(full, engine, lambda: build_program_model(explained()))
        groups = tuple(sorted((g.id, g.text) for g in full.groups.values()))
    return ProgramReport(pp, data, outcome, expl, groups, time.monotonic() - t0, engine.out_of_time,
                         chances(data, outcome.plan))


def chances(data: ProgramData, plan: ProgramPlan | None) -> tuple[tuple[str, float], ...]:
    """The share of scenarios in which each workload with a deadline meets it (`ProgramReport.chances`)."""
    if data.chance is None or plan is None:
        return ()
    deadlines = {w.id: w.deadline_day for w in data.workloads if w.deadline_day is not None}
    met = data.chance.met(plan_waits(data, plan), deadlines)
    return tuple((wid, met[wid] / data.chance.scenarios.n) for wid in sorted(met))




RUN_FIELDS = ("option", "nodes", "quotes", "start", "finish")


def _by_id(inputs: dict[str, Any]) -> dict[str, Any]:
    """Saved inputs with the workloads keyed by id, so a change reads `workloads.main.workload.tokens` and adding
    a workload does not shift the others' paths."""
    problem = dict(inputs["problem"])
    problem["workloads"] = {w.get("id", str(i)): w for i, w in enumerate(problem.get("workloads") or [])}
    return {**inputs, "problem": problem}


def headline(rep: ProgramReport) -> dict[str, Any]:
    """A program answer as a few plain fields (a sweep's or a sensitivity value's row): status, cost, cash, the
    program's end, each workload's run, the nodes bought per quote, or the conflict when it is infeasible."""
    o = rep.outcome
    row: dict[str, Any] = {"status": o.status, "cost_usd": None, "cash_usd": None, "finish": None,
                           "workloads": None, "bought": None, "conflict": None}
    plan = o.plan
    if plan is not None:
        bought: dict[str, int] = {}
        for p in plan.purchases:
            bought[p.quote.quote] = bought.get(p.quote.quote, 0) + p.quote.lot_nodes
        row.update(cost_usd=round(plan.cost_usd), cash_usd=round(plan.cash_usd),
                   finish=date_of(o.data, plan.end_day).isoformat(),
                   workloads=[{"id": r.workload, "option": r.candidate.option, "nodes": r.candidate.nodes,
                               "start": date_of(o.data, r.start_day).isoformat(),
                               "finish": date_of(o.data, r.end_day).isoformat(),
                               "quotes": [r.candidate.quote] if r.candidate.quote else []} for r in plan.runs],
                   bought=[{"quote": q, "nodes": n} for q, n in sorted(bought.items())])
    elif rep.explanation is not None:
        row["conflict"] = list(rep.explanation.conflict) + [f"workloads.{w}: {why}"
                                                            for w, why in rep.explanation.unplannable]
    return row


def program_diff(old_saved: dict[str, Any], new_saved: dict[str, Any]) -> dict[str, Any]:
    """What changed between two saved programs (`render.program.saved_program` shapes, read back with
    `inputs.saved`): status, each workload's run, the purchases (by quote and order day), cost and cash, and the
    input changes behind them (problem values by path, quote fields; the quotes either plan uses first) when both
    carry their inputs."""
    old, new = old_saved["result"], new_saved["result"]
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
    if old_saved.get("inputs") and new_saved.get("inputs"):
        used = {q for body in (a, b) for w in body.get("workloads", []) for q in w.get("quotes", [])}
        used |= {p["quote"] for body in (a, b) for p in body.get("purchases", [])}
        causes = input_changes(_by_id(old_saved["inputs"]), _by_id(new_saved["inputs"]), used)
        if causes:
            out["causes"] = [c.as_dict() for c in causes]
    return out


__all__ = ["ProgramReport", "ProgramWhyNot", "solve_program", "why_not_program", "parse_target", "program_diff",
           "headline"]
