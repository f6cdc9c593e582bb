"""A program's answer as JSON (`program.{workloads, purchases, quarters, power, cost_usd}`), as text tables with a
Gantt chart in characters, and as a picture (PNG/SVG/PDF with the `chart` extra).

Money: `cost_usd` is what the program consumes (risk-adjusted: bought hardware net of resale, or its depreciation
when kept, plus the premiums of the single-run model), `cash_usd` what is paid out; a quarter's `spend_usd` is cash
committed in it (lots when ordered, rent as it runs).
"""

from __future__ import annotations

import hashlib
import json
import math
from datetime import date, timedelta
from typing import Any

from tabulate import tabulate

from ..answers.cash import program_quarters
from ..answers.program import ProgramReport, ProgramWhyNot
from ..answers.program_gates import DecisionGate, decision_gates, program_warnings, quarter_spend
from ..inputs.program import ProgramProblem
from ..inputs.units import usd
from ..inputs.saved import SCHEMA_VERSION
from ..answers.history import InputChange
from .diff import cause_text
from .jsonout import quote_snapshot
from .program_decision import decision_dict, decision_text
from ..solve.program import MAX_CHANCE_ROUNDS, ProgramPlan, power_profile

LIMITATIONS = (
    "each workload runs on one option from start to finish (moving a run from rented to owned nodes mid-run is "
    "not modelled: it would need variable-size intervals)",
    "a reservation serves the workload it was made for (one term is not shared by several workloads)",
    "the plan is chosen with deliveries at the lead-time confidence of the assumptions and expected run times, "
    "with no slip premium (policy.deadline_confidence makes each deadline a chance constraint over `plan risk`'s "
    "scenarios instead); `plan risk` takes the chosen plan apart by scenarios",
)


def _path(pp: ProgramProblem, gid: str) -> tuple[Any, ...] | None:
    parts = gid.split(".")
    if parts[0] == "workloads" and len(parts) >= 3:
        return ("workloads", pp.index_of(parts[1]), *parts[2:])
    if parts[0] == "quotes":
        return None
    if parts[0] == "rules":
        names = [r.name for r in pp.spec.rules]
        return ("rules", names.index(gid.partition(".")[2])) if gid.partition(".")[2] in names else None
    if gid.startswith("site.power_steps["):
        return ("site", "power_steps", int(gid[len("site.power_steps["):-1]))
    if gid.startswith("budget.per_quarter_usd."):
        return ("budget", "per_quarter_usd", gid.split(".", 2)[2])
    return tuple(parts)


def where_of(pp: ProgramProblem, gid: str) -> str:
    path = _path(pp, gid)
    return "the catalog quote" if path is None else pp.where(path)


def _d(pp: ProgramProblem, day: int) -> str:
    return (pp.as_of + timedelta(days=day)).isoformat()


QUARTERS_NOTE = ("spend_usd: cash committed (lots when ordered, rent as it runs), what budget.per_quarter_usd caps; "
                 "paid_usd: payments as they fall (deposits at order, balances the payment terms' days after "
                 "delivery, rent billed monthly; answers/cash.py)")


def all_quarters(pp: ProgramProblem, plan: ProgramPlan) -> list[dict[str, Any]]:
    """Cash committed and paid in every quarter from the first order or run to the last payment, with its cap if
    any (`QUARTERS_NOTE`)."""
    caps = pp.spec.budget.per_quarter_usd
    spend = quarter_spend(pp, plan)
    paid = {q.quarter: q.usd for q in program_quarters(pp, plan)}
    labels = sorted(set(spend) | set(caps) | set(paid))
    return [{"quarter": q, "spend_usd": round(spend.get(q, 0.0)), "paid_usd": round(paid.get(q, 0.0)),
             "cap_usd": caps.get(q)} for q in labels]


def _workloads(pp: ProgramProblem, plan: ProgramPlan) -> list[dict[str, Any]]:
    gates = {g.workload: g for g in decision_gates(pp, plan)}
    out = []
    for r in plan.runs:
        c = r.candidate
        out.append({"id": r.workload, "accelerator": c.accelerator, "option": c.option, "mode": c.mode,
                    "nodes": c.nodes, "gpus": c.gpus, "start": _d(pp, r.start_day), "finish": _d(pp, r.end_day),
                    "days": c.days, "owned": c.owned, "quotes": [c.quote] if c.quote else [],
                    "cost_usd": round(c.cost_usd), "cash_usd": round(c.cash_usd)})
        if r.workload in gates:
            out[-1]["decision_gate"] = _gate(pp, gates[r.workload])
    return out


def _gate(pp: ProgramProblem, g: DecisionGate) -> dict[str, Any]:
    """A gated workload's `decision_gate`: its gates, the day they finish, and its first lot order (owned) or the
    last day to commit its rented quote."""
    out: dict[str, Any] = {"after": list(g.after), "gates_finish": _d(pp, g.gates_finish)}
    if g.ordered is not None:
        out["ordered"] = _d(pp, g.ordered)
    if g.commit_by is not None:
        out["commit_by"] = _d(pp, g.commit_by)
    return out


def _gate_text(pp: ProgramProblem, g: DecisionGate) -> str:
    head = f"{g.workload}'s hardware is decided after {', '.join(g.after)} (finished {_d(pp, g.gates_finish)})"
    if g.commit_by is not None and g.commit_by == g.gates_finish:
        return f"{head}: commit {g.quote} on {_d(pp, g.commit_by)} for the planned start"
    if g.commit_by is not None:
        return f"{head}: commit {g.quote} between {_d(pp, g.gates_finish)} and {_d(pp, g.commit_by)}"
    if g.ordered is not None:
        return f"{head}: its {g.system} lots are ordered from {_d(pp, g.ordered)}"
    return head


def _purchases(pp: ProgramProblem, plan: ProgramPlan) -> list[dict[str, Any]]:
    """One entry per order: the lots of one quote ordered the same day (identical lots arrive together)."""
    groups: dict[tuple[str, int], list[Any]] = {}
    for p in plan.purchases:
        groups.setdefault((p.quote.quote, p.order_day), []).append(p)
    out = []
    for (qid, day), ps in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        first = ps[0]
        out.append({"quote": qid, "system": first.quote.system, "order": _d(pp, day),
                    "delivered": _d(pp, first.delivered_day), "usable": _d(pp, first.usable_day), "lots": len(ps),
                    "nodes": sum(p.quote.lot_nodes for p in ps), "held_days": first.held_days,
                    "capex_usd": round(sum(p.capex_usd for p in ps)), "cost_usd": round(sum(p.cost_usd for p in ps)),
                    "cash_usd": round(sum(p.cash_usd for p in ps))})
    return out


def _power(rep: ProgramReport, plan: ProgramPlan) -> list[dict[str, Any]]:
    return [{"from": _d(rep.program, day), "installed_kw": round(kw, 1),
             "limit_kw": lim if math.isfinite(lim) else None, "group": g}  # no limit: null, never JSON's Infinity
            for day, kw, lim, g in power_profile(rep.data, plan)]


def _explanation(rep: ProgramReport) -> dict[str, Any] | None:
    e = rep.explanation
    if e is None:
        return None
    texts = dict(rep.groups)
    return {"conflict": [{"group": g, "text": texts.get(g, g), "where": where_of(rep.program, g)}
                         for g in e.conflict],
            "proven_minimal": e.proven,
            "relaxations": [{"group": r.group, "to": r.amount, "unit": r.unit, "proven": r.proven}
                            for r in e.relaxations],
            "unplannable": [{"workload": w, "reason": why} for w, why in e.unplannable]}


def program_dict(rep: ProgramReport) -> dict[str, Any]:
    pp, o = rep.program, rep.outcome
    plan = o.plan
    body: dict[str, Any] | None = None
    if plan is not None:
        body = {"workloads": _workloads(pp, plan), "purchases": _purchases(pp, plan),
                "quarters": all_quarters(pp, plan), "quarters_note": QUARTERS_NOTE, "power": _power(rep, plan),
                "porting": [{"stack": k, "cost_usd": round(v)} for k, v in plan.porting],
                "finish": _d(pp, plan.end_day), "cost_usd": round(plan.cost_usd), "cash_usd": round(plan.cash_usd),
                "bound_usd": o.bound_units * 1000 if o.bound_units is not None else None}
        if rep.data.objective[0] != "cost":
            body["objective"] = objective_text(rep)
        if rep.decision is not None:
            body["decision"] = decision_dict(rep.decision)
        if rep.data.chance is not None:
            body["deadline_confidence"] = {
                "confidence": rep.data.chance.confidence, "scenarios": rep.data.chance.scenarios.n,
                "met": [{"workload": w, "share": round(p, 4)} for w, p in rep.chances]}
    return {"schema_version": SCHEMA_VERSION, "problem": pp.spec.name, "as_of": pp.as_of.isoformat(),
            "status": o.status, "program": body, "explanation": _explanation(rep),
            "warnings": list(program_warnings(pp, plan)) if plan is not None else [],
            "candidates": {"per_workload": {w.id: len(w.candidates) for w in rep.data.workloads},
                           "sizes_per_option": rep.data.sizes_per_option,
                           "note": "the optimum is over these candidates (risk.program.sizes_per_option widens "
                                   "them)"},
            "limitations": list(LIMITATIONS)}


def _m(amount: float | None) -> str:
    """Compact dollars with their unit ($1.21M, $410k, $2.4k): a $2,400 bake-off is not "$0.00M"."""
    return "-" if amount is None else usd(amount)


def gantt_text(pp: ProgramProblem, plan: ProgramPlan, width: int = 60) -> str:
    """One row per workload (`=` running) and per bought quote (`.` on order, `+` installing, `#` usable), over
    the days from the first order or start to the program's end."""
    first = min([r.start_day for r in plan.runs] + [p.order_day for p in plan.purchases])
    span = max(1, plan.end_day - first)

    def col(day: int) -> int:
        return min(width - 1, max(0, (day - first) * width // span))

    rows = []
    for r in plan.runs:
        line = [" "] * width
        for c in range(col(r.start_day), max(col(r.start_day) + 1, col(r.end_day))):
            line[c] = "="
        rows.append((r.workload, "".join(line)))
    for qid in sorted({p.quote.quote for p in plan.purchases}):
        line = [" "] * width
        for p in (p for p in plan.purchases if p.quote.quote == qid):
            for c in range(col(p.order_day), col(p.delivered_day)):
                line[c] = "." if line[c] == " " else line[c]
            for c in range(col(p.delivered_day), col(p.usable_day)):
                line[c] = "+"
            for c in range(col(p.usable_day), width):
                line[c] = "#"
        rows.append((f"buy {qid}", "".join(line)))
    pad = max(len(n) for n, _ in rows)
    head = f"{'':{pad}}  {_d(pp, first)}{'':>{max(1, width - 20)}}{_d(pp, plan.end_day)}"
    return "\n".join([head] + [f"{n:{pad}} |{line}|" for n, line in rows]) + "\n"


def _plan_text(rep: ProgramReport, plan: ProgramPlan) -> list[str]:
    pp = rep.program
    d = program_dict(rep)["program"]
    out = [tabulate([[w["id"], w["option"], w["nodes"], w["gpus"], w["start"], w["finish"], w["days"],
                      w["quotes"][0] if w["quotes"] else "owned", _m(w["cost_usd"])] for w in d["workloads"]],
                    headers=["workload", "option", "nodes", "GPUs", "start", "finish", "days", "on", "run cost"]),
           ""]
    gates = decision_gates(pp, plan)
    if gates:
        out += ["Decision gates (decide_after: nothing ordered or committed before the gates finish):"]
        out += [f"  {_gate_text(pp, g)}" for g in gates] + [""]
        if rep.decision is not None:
            out += decision_text(rep.decision) + [""]
    if plan.purchases:
        out += ["Purchases (order, delivery, installed and usable; held until the program ends):",
                tabulate([[p["quote"], p["lots"], p["nodes"], p["order"], p["delivered"], p["usable"],
                           _m(p["capex_usd"]), _m(p["cost_usd"])] for p in d["purchases"]],
                         headers=["quote", "lots", "nodes", "order", "delivered", "usable", "capex", "cost"]), ""]
    out += ["Cash per quarter: committed (lots when ordered, rent as it runs: what the caps limit) and paid (deposits "
            "at order, balances after delivery, rent monthly):",
            tabulate([[q["quarter"], _m(q["spend_usd"]), _m(q["paid_usd"]), _m(q["cap_usd"])] for q in d["quarters"]],
                     headers=["quarter", "committed", "paid", "cap"]), ""]
    if d["power"]:
        out += ["Site IT power installed (bought lots from delivery) against the limit:",
                tabulate([[p["from"], f"{p['installed_kw']:,.1f}", f"{p['limit_kw']:,.0f}"] for p in d["power"]],
                         headers=["from", "installed kW", "limit kW"], disable_numparse=True,
                         colalign=("left", "right", "right")), ""]
    out += [gantt_text(pp, plan)]
    ported = ", ".join(f"{k} {_m(v)}" for k, v in plan.porting if v > 0) or "none"
    out += [f"Program cost {_m(plan.cost_usd)} (what it consumes, risk-adjusted); cash {_m(plan.cash_usd)} "
            f"(what is paid); porting once per stack: {ported}; program ends {d['finish']}."]
    if rep.data.objective[0] != "cost":
        out += [f"Objective: {objective_text(rep)}."]
    if rep.data.chance is not None:
        met = ", ".join(f"{w} {p:.1%}" for w, p in rep.chances)
        out += [f"Deadline confidence {rep.data.chance.confidence:.0%}: each workload with a deadline meets it in at "
                f"least that share of {rep.data.chance.scenarios.n:,} risk scenarios (the timing of `plan risk`): "
                f"{met}."]
    return out


def objective_text(rep: ProgramReport) -> str:
    """What the plan minimised, when it is not cost first."""
    kind, per_day = rep.data.objective
    if kind == "time":
        return "the program's end first, then its cost"
    return f"cost plus ${per_day:,.0f} per day until the program ends"


def _explanation_text(rep: ProgramReport) -> list[str]:
    e = rep.explanation
    if e is None:
        return []
    out = []
    for wid, why in e.unplannable:
        out.append(f"  workload {wid}: {why}")
    texts = dict(rep.groups)
    if e.conflict:
        out.append("These limits cannot all hold" + ("" if e.proven else " (minimality not proven: time limit)")
                   + ":")
        out += [f"  - {g}: {texts.get(g, g)} ({where_of(rep.program, g)})" for g in e.conflict]
    moves = [f"{r.group} to {r.value}" for r in e.relaxations if r.value is not None]
    if moves:
        out.append("Relax one: " + "; or ".join(moves))
    alone = [r.group for r in e.relaxations if r.value is None]
    if alone:
        out.append("Not enough alone (another limit binds once it moves): " + ", ".join(alone))
    return out


def render_program(rep: ProgramReport) -> str:
    o = rep.outcome
    n = sum(len(w.candidates) for w in rep.data.workloads)
    status = {"optimal": "OPTIMAL", "feasible": "FEASIBLE (not proven optimal: time limit)",
              "infeasible": "INFEASIBLE", "unknown": "UNKNOWN (no plan found within the time limit)"}[o.status]
    lines = [f"Program {rep.program.spec.name}: {status} over {n:,} candidate runs "
             f"({rep.data.sizes_per_option} sizes per option and quote) for {len(rep.data.workloads)} workloads", ""]
    if o.status == "feasible" and o.plan is not None and o.bound_units is not None:
        model = o.plan.model_cost_units
        gap = (model - o.bound_units) / model if model > 0 else 0.0
        lines += [f"The time limit stopped the search: this is the best program found (model cost "
                  f"${model * 1000 / 1e6:,.2f}M); no program costs less than ${o.bound_units * 1000 / 1e6:,.2f}M "
                  f"(proven bound; gap {gap:.1%}). With more time (--time-limit, --max-seconds) the answer may "
                  "change.", ""]
    elif o.status == "unknown" and rep.data.chance is not None and not rep.out_of_time:
        lines += [f"No program was found: either the time limit stopped a search (--time-limit), or "
                  f"{MAX_CHANCE_ROUNDS} plans in a row missed a deadline at policy.deadline_confidence, each adding "
                  "its cuts, without one that meets them all. Neither is a proof that no program exists.", ""]
    elif o.status == "unknown":
        lines += ["The time limit stopped the search before any program was found; with more time (--time-limit, "
                  "--max-seconds) one may be.", ""]
    if o.plan is not None:
        lines += _plan_text(rep, o.plan)
        warnings = program_warnings(rep.program, o.plan)
        if warnings:
            lines += ["", "WARNINGS"] + [f"  ! {w}" for w in warnings]
    lines += _explanation_text(rep)
    lines += ["", "Not modelled: " + "; ".join(LIMITATIONS) + "."]
    return "\n".join(lines) + "\n"


def why_not_dict(ans: ProgramWhyNot) -> dict[str, Any]:
    chosen = ans.chosen.outcome.plan
    forced = ans.forced.outcome.plan if ans.forced is not None else None
    return {"schema_version": SCHEMA_VERSION, "target": ans.target, "workload": ans.workload,
            "candidates": ans.matched, "reason": ans.reason,
            "chosen_cost_usd": round(chosen.cost_usd) if chosen else None,
            "cost_usd": round(forced.cost_usd) if forced else None,
            "delta_usd": round(forced.cost_usd - chosen.cost_usd) if forced and chosen else None,
            "status": ans.forced.outcome.status if ans.forced is not None else "infeasible",
            "program": program_dict(ans.forced)["program"] if ans.forced is not None else None,
            "explanation": _explanation(ans.forced) if ans.forced is not None else None}


def render_why_not(ans: ProgramWhyNot) -> str:
    """Why a workload does not run on the target: what the program would cost if it did, or what forbids it."""
    lines = [f"Why not {ans.workload} on '{ans.target.partition(':')[2]}'?"]
    chosen = ans.chosen.outcome.plan
    if ans.forced is None:
        return "\n".join(lines + [f"  {ans.reason}"]) + "\n"
    plan = ans.forced.outcome.plan
    if plan is None:
        lines.append(f"  It cannot run there with every other limit kept ({ans.matched} candidate runs tried):")
        lines += ["  " + t for t in _explanation_text(ans.forced)]
        return "\n".join(lines) + "\n"
    run = plan.run(ans.workload)
    c = run.candidate
    delta = f" ({'+' if plan.cost_usd >= chosen.cost_usd else '-'}{_m(abs(plan.cost_usd - chosen.cost_usd))} " \
        f"against the chosen plan's {_m(chosen.cost_usd)})" if chosen else ""
    lines.append(f"  It can: the best program with it costs {_m(plan.cost_usd)}{delta}, with {ans.workload} on "
                 f"{c.option} x{c.nodes} ({c.quote or 'owned'}) from {_d(ans.chosen.program, run.start_day)} to "
                 f"{_d(ans.chosen.program, run.end_day)}.")
    lines += ["", *_plan_text(ans.forced, plan)]
    return "\n".join(lines) + "\n"


def render_program_diff(diff: dict[str, Any], title: str) -> str:
    """The changes `answers.program.program_diff` found, one line each."""
    if not diff:
        return f"{title} nothing changed.\n"
    lines = [title]
    if "status" in diff:
        lines.append(f"  status {diff['status'][0]} -> {diff['status'][1]}")
    for w in diff.get("workloads", []):
        if w.get("added") or w.get("removed"):
            lines.append(f"  {w['id']}: {'new workload' if w.get('added') else 'no longer in the program'}")
            continue
        parts = [f"{k} {_show(v[0])} -> {_show(v[1])}" for k, v in w.items() if k != "id"]
        lines.append(f"  {w['id']}: " + "; ".join(parts))
    for p in diff.get("purchases", []):
        lines.append(f"  buy {p['quote']} ordered {p['order']}: {p['nodes'][0]} -> {p['nodes'][1]} nodes")
    for key, name in (("cost_usd", "cost"), ("cash_usd", "cash")):
        if key in diff and None not in diff[key]:
            a, b = diff[key]
            lines.append(f"  {name} {_m(a)} -> {_m(b)} ({'+' if b >= a else '-'}{_m(abs(b - a))})")
    if diff.get("causes"):
        lines.append("why (input changes):")
        lines += [f"  {cause_text(InputChange.of(c))}" for c in diff["causes"]]
    return "\n".join(lines) + "\n"


def _show(v: Any) -> str:
    if isinstance(v, list):
        return ",".join(map(str, v)) or "owned"
    return str(v)


def saved_program(rep: ProgramReport) -> dict[str, Any]:
    """What `plan solve PROGRAM --save` writes: the answer, marked as a program's."""
    pp = rep.program
    spec = json.loads(pp.spec.model_dump_json(by_alias=True))
    quotes = {qid: quote_snapshot(q) for qid, q in sorted(pp.first.catalog.quotes.items())}
    assumptions = json.loads(pp.first.assumptions.values.model_dump_json())
    digest = hashlib.sha256(json.dumps({"problem": spec, "as_of": pp.as_of.isoformat(), "quotes": quotes,
                                        "assumptions": assumptions}, sort_keys=True).encode()).hexdigest()
    sets = [c.origin[len("--set "):] for c in pp.changes if c.origin.startswith("--set ")]
    return {"kind": "program-result", "schema_version": SCHEMA_VERSION,
            "inputs": {"problem_file": pp.file, "overrides": sets, "digest": digest, "problem": spec,
                       "quotes": quotes},
            "result": program_dict(rep)}


def gantt_chart(rep: ProgramReport, path: str) -> None:
    """The Gantt chart as a picture: runs as bars, lots from order to usable, the power limit's steps."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plan = rep.outcome.plan
    if plan is None:
        return
    pp = rep.program
    rows = [r.workload for r in plan.runs] + sorted({f"buy {p.quote.quote}" for p in plan.purchases})
    fig, ax = plt.subplots(figsize=(9, 0.5 * len(rows) + 1.5))

    def day(d: int) -> date:
        return pp.as_of + timedelta(days=d)

    for i, r in enumerate(plan.runs):
        ax.barh(i, r.end_day - r.start_day, left=r.start_day, color="tab:blue")
        ax.annotate(f"{r.candidate.option} x{r.candidate.nodes}", (r.start_day, i), fontsize=7, va="center")
    for p in plan.purchases:
        i = rows.index(f"buy {p.quote.quote}")
        ax.barh(i, p.delivered_day - p.order_day, left=p.order_day, color="0.8")
        ax.barh(i, plan.end_day - p.usable_day, left=p.usable_day, color="tab:green", alpha=0.3)
    ax.set_yticks(range(len(rows)), rows)
    ticks = list(range(0, plan.end_day + 1, max(1, plan.end_day // 6)))
    ax.set_xticks(ticks, [day(t).isoformat() for t in ticks], rotation=30, fontsize=7)
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


__all__ = ["program_dict", "render_program", "gantt_text", "gantt_chart", "where_of", "all_quarters",
           "why_not_dict", "render_why_not", "render_program_diff", "saved_program", "LIMITATIONS"]
