"""Renderers: the same `Result` as a terminal report, stable JSON, or Markdown.

JSON is the contract (`schema_version`), byte-identical for identical inputs: keys sorted, floats rounded,
no timings. The table report follows SkyPilot's optimizer output: the chosen plan with its numbers, then a
candidate table with a CHOSEN mark, then what could not work and why.
"""

from __future__ import annotations

import json
from typing import Any

from tabulate import tabulate

from .cost import RISK_LINES
from .plan import Plan, Result
from .units import si, usd

SCHEMA_VERSION = 1
LINE_LABEL = {"compute": "compute", "network_storage": "network + storage", "energy": "energy",
              "porting": "engineering: porting", "operations": "engineering: operations",
              "failure_rework": "risk: failure rework", "delivery_slip": "risk: delivery slip (p90-p50)",
              "consumer_risk": "risk: consumer hardware", "estimate_price": "risk: estimated price",
              "rules": "rules"}


def _r(x: float, nd: int = 2) -> float:
    return float(round(x, nd))


def plan_dict(p: Plan) -> dict[str, Any]:
    return {
        "option": p.option, "accelerator": p.accelerator, "system": p.system, "mode": p.mode, "vendor": p.vendor,
        "quotes": [{"id": q.id, "nodes": q.nodes, "vendor": q.vendor, "kind": q.kind, "price": _r(q.price, 4),
                    "price_unit": q.price_unit, "ready": q.ready.isoformat(), "valid_until": q.valid_until.isoformat()}
                   for q in p.quotes],
        "nodes": p.nodes, "gpus": p.gpus, "start": p.start.isoformat(), "finish": p.finish.isoformat(),
        "training_days": _r(p.training_days),
        "memory_per_gpu_gb": {"required": _r(p.memory_required_gb), "available": _r(p.memory_available_gb)},
        "recompute": p.recompute, "tensor_parallel": p.tensor_parallel, "power_kw": _r(p.power_kw, 1),
        "racks": p.racks, "mfu": _r(p.utilisation, 4), "scale_out_efficiency": _r(p.efficiency, 4),
        "flops": float(f"{p.flops:.6e}"), "gpu_hours": _r(p.gpu_hours, 0),
        "expected_interruptions": _r(p.interruptions, 1),
        "cost_usd": {"total": _r(p.total_cost, 0), **{k: _r(v, 0) for k, v in p.lines.cost.items()}},
        "cash_usd": {"total": _r(p.total_cash, 0), **{k: _r(v, 0) for k, v in p.lines.cash.items()}},
        "rules_applied": p.rules_applied, "warnings": p.warnings,
        **({"accounting": p.accounting} if p.mode == "buy" else {}),
    }


def result_dict(r: Result) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION, "problem": r.problem_name, "as_of": r.as_of.isoformat(),
        "status": r.status,
        "objective": {"value_units": r.objective, "bound_units": r.bound, "money_unit_usd": r.unit},
        "plan": plan_dict(r.plan) if r.plan else None,
        "alternatives": [{**plan_dict(a.plan), "delta_usd": _r(a.delta_usd, 0)} for a in r.alternatives],
        "excluded": [{"option": e.option, "reasons": e.reasons} for e in r.excluded],
        "warnings": r.warnings,
        **({"explanation": r.explanation} if r.explanation is not None else {}),
    }


def to_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def _status_line(r: Result) -> str:
    label = {"optimal": "OPTIMAL (proven)", "feasible": "FEASIBLE (time limit hit; not proven optimal)",
             "infeasible": "INFEASIBLE", "unknown": "UNKNOWN (time limit hit before any plan was found)"}[r.status]
    extra = ""
    if r.status == "feasible" and r.objective is not None:
        extra = f"  objective {r.objective} vs bound {r.bound}"
    return f"plan '{r.problem_name}' as of {r.as_of}: {label}{extra}"


def _quote_text(p: Plan) -> list[str]:
    out = []
    for q in p.quotes:
        price = f"${q.price:,.2f}/GPU-h" if q.mode == "cloud" else (
            f"{usd(q.price)}/node-month" if q.mode == "managed" else f"{usd(q.price)}/node")
        out.append(f"{q.id} x{q.nodes} ({q.vendor}, {price}, {q.kind}, ready {q.ready})")
    return out


def plan_block(p: Plan, r: Result, deadline: Any = None, budget: Any = None, applies_to: str = "cash") -> str:
    lines = [f"CHOSEN  {p.accelerator} · {p.system} · {p.mode}  —  {p.nodes} nodes = {p.gpus} GPUs"]
    q = _quote_text(p)
    lines.append(f"  quotes        {q[0]}")
    lines += [f"                {x}" for x in q[1:]]
    slack = f"; deadline {deadline}, {(deadline - p.finish).days} days slack" if deadline else ""
    lines.append(f"  schedule      start {p.start} -> finish {p.finish}  ({p.training_days:.1f} days of training{slack})")
    lines.append(f"  memory/GPU    {p.memory_required_gb:.1f} GB required of {p.memory_available_gb:g} GB "
                 f"(recompute {p.recompute}, tensor parallel {p.tensor_parallel})")
    lines.append(f"  throughput    MFU {p.utilisation:.1%} x scale-out {p.efficiency:.1%}; {p.flops:.3g} FLOPs; "
                 f"{si(p.gpu_hours)} GPU-hours incl. ~{p.interruptions:.0f} expected interruptions")
    site = f"{p.power_kw:,.0f} kW IT" + (f" in {p.racks} racks" if p.racks is not None else " (not on your site)")
    lines.append(f"  power         {site}")
    bud = f"; budget {usd(budget)} ({applies_to})" if budget else ""
    lines.append(f"  cost          {usd(p.total_cost)} risk-adjusted completion cost; cash committed {usd(p.total_cash)}{bud}")
    if p.mode == "buy":
        basis = ("straight-line depreciation over the holding period (delivery to finish)"
                 if p.accounting == "depreciation" else "full capex")
        lines.append(f"  basis         bought hardware charged as {basis} (policy.accounting)")
    rows = []
    for name, v in p.lines.cost.items():
        cash = p.lines.cash.get(name)
        if abs(v) < 0.5 and not cash:
            continue
        rows.append([LINE_LABEL.get(name, name), usd(v), usd(cash) if cash is not None and name not in RISK_LINES else "-"])
    rows.append(["total", usd(p.total_cost), usd(p.total_cash)])
    table = tabulate(rows, headers=["line", "cost", "cash"], tablefmt="simple", colalign=("left", "right", "right"))
    lines += ["    " + x for x in table.splitlines()]
    if p.rules_applied:
        lines.append(f"  rules applied {', '.join(p.rules_applied)}")
    return "\n".join(lines)


def candidates_table(r: Result, fmt: str = "simple", top: int | None = None) -> str:
    rows = []
    entries = ([(r.plan, 0.0, True)] if r.plan else []) + [(a.plan, a.delta_usd, False) for a in r.alternatives]
    if top is not None:
        entries = entries[: max(1, top)]
    for p, delta, chosen in entries:
        flag = "CHOSEN" if chosen else ""
        est = "*" if any(q.kind == "estimate" for q in p.quotes) else ""
        rows.append([flag, f"{p.accelerator}/{p.mode}", p.system + est, p.nodes, p.gpus, str(p.start), str(p.finish),
                     f"{p.training_days:.0f}", usd(p.total_cost), "" if chosen else f"+{usd(delta)}", usd(p.total_cash)])
    return tabulate(rows, headers=["", "accelerator/mode", "system", "nodes", "GPUs", "start", "finish", "days",
                                   "cost", "delta", "cash"], tablefmt=fmt)


def excluded_table(r: Result, fmt: str = "simple", width: int = 110) -> str:
    rows = []
    for e in r.excluded:
        reasons = e.reasons
        text = reasons[0] if len(reasons) == 1 else "; ".join(x.split(" (")[0] for x in reasons)
        if fmt == "simple" and len(text) > width:
            text = text[: width - 3] + "..."
        rows.append([e.option, text])
    return tabulate(rows, headers=["cannot work", "why (minimal set of your constraints that rules it out)"],
                    tablefmt=fmt)


def render_table(r: Result, deadline: Any = None, budget: Any = None, applies_to: str = "cash",
                 top: int | None = None) -> str:
    out = [_status_line(r), ""]
    if r.plan:
        out += [plan_block(r.plan, r, deadline, budget, applies_to), ""]
    if r.warnings:
        out += ["WARNINGS"] + [f"  ! {w}" for w in r.warnings] + [""]
    if r.plan or r.alternatives:
        out += ["Best plan for each accelerator and mode that can work (* = rests on an estimated price):",
                candidates_table(r, top=top), ""]
    if r.explanation:
        out += [render_explanation_text(r.explanation), ""]
    if r.excluded:
        out += ["Options that cannot work:", excluded_table(r), ""]
    return "\n".join(out).rstrip() + "\n"


def _plan_brief(p: dict[str, Any] | None) -> str:
    if not p:
        return ""
    return (f"{p['accelerator']}/{p['mode']} {p['nodes']} nodes ({p['gpus']} GPUs), cost {usd(p['cost_usd'])}, "
            f"finish {p['finish']}")


def _fmt(v: Any, unit: str) -> str:
    if unit == "usd" and isinstance(v, (int, float)):
        return usd(v)
    if isinstance(v, float):
        return f"{v:,.0f}" if v.is_integer() else f"{v:,.6g}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def render_explanation_text(expl: dict[str, Any]) -> str:
    lines = ["NO PLAN satisfies all constraints." if not expl.get("subject") else
             f"{expl['subject']} cannot be part of any plan."]
    if expl.get("conflict"):
        lines.append("Conflict (minimal: dropping any one of these makes the rest feasible):")
        for c in expl.get("conflict_detail", []):
            lines.append(f"  {c['group']:<34} {c['text']:<48} {c['where']}")
    if expl.get("relaxations"):
        lines.append("Smallest single change that restores feasibility (everything else held):")
        for r in expl["relaxations"]:
            lines.append(f"  {r['group']:<34} {_fmt(r['from'], r['unit']):>12} -> {_fmt(r['to'], r['unit']):<12}"
                         f" {_plan_brief(r.get('plan'))}")
    drops = [a for a in expl.get("alternatives", []) if "relax" not in a]
    if drops:
        lines.append("Other ways out (dropping these constraints):")
        for a in drops:
            lines.append(f"  drop {' + '.join(a['drop']):<29} -> {_plan_brief(a.get('plan'))}")
    comb = expl.get("combined")
    if comb:
        lines.append("Cheapest combined relaxation (smallest total relative change, then cost):")
        for c in comb["changes"]:
            lines.append(f"  {c['group']:<34} {_fmt(c['from'], c['unit']):>12} -> {_fmt(c['to'], c['unit'])}")
        lines.append(f"  -> {_plan_brief(comb.get('plan'))}")
    if not expl.get("relaxations") and not drops and not comb and expl.get("conflict"):
        lines.append("No single change of these constraints restores feasibility.")
    return "\n".join(lines)


def render_markdown(r: Result, deadline: Any = None, budget: Any = None, applies_to: str = "cash",
                    top: int | None = None) -> str:
    out = [f"# Plan: {r.problem_name}", "", f"*{_status_line(r)}*", ""]
    if r.plan:
        p = r.plan
        out += ["## Chosen plan", "", "```", plan_block(p, r, deadline, budget, applies_to), "```", ""]
    if r.warnings:
        out += ["## Warnings", ""] + [f"- {w}" for w in r.warnings] + [""]
    if r.plan or r.alternatives:
        out += ["## Candidates", "", candidates_table(r, fmt="github", top=top), ""]
    if r.explanation:
        out += ["## Why there is no plan", "", "```", render_explanation_text(r.explanation), "```", ""]
    if r.excluded:
        out += ["## Options that cannot work", "", excluded_table(r, fmt="github"), ""]
    return "\n".join(out).rstrip() + "\n"


def why_not_dict(out: dict[str, Any]) -> dict[str, Any]:
    d: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "target": out["target"], "kind": out["kind"],
                         "status": out["status"]}
    for key in ("reasons", "explanation", "lines", "break_even"):
        if key in out:
            d[key] = out[key]
    if "plan" in out:
        d["plan"] = plan_dict(out["plan"])
    if "chosen" in out:
        d["chosen"] = plan_dict(out["chosen"])
        d["delta_usd"] = _r(out["delta_usd"], 0)
    return d


def render_why_not(out: dict[str, Any]) -> str:
    t = out["target"]
    st = out["status"]
    if st == "excluded":
        return f"{t}: cannot be chosen.\n" + "".join(f"  - {r}\n" for r in out["reasons"])
    if st == "infeasible":
        return render_explanation_text(out["explanation"]) + "\n"
    p: Any = out.get("plan")
    c: Any = out.get("chosen")
    if st == "chosen":
        return f"{t} is part of the chosen plan: {p.option} x{p.nodes} at {usd(p.total_cost)}.\n"
    lines = [f"{t} can work but costs more: its best plan is {p.option} x{p.nodes} ({p.gpus} GPUs) at "
             f"{usd(p.total_cost)}, finishing {p.finish}; the chosen plan is {c.option} x{c.nodes} at "
             f"{usd(c.total_cost)} ({'+' if out['delta_usd'] >= 0 else ''}{usd(out['delta_usd'])}).", ""]
    rows = [[LINE_LABEL.get(r["line"], r["line"]), usd(r["target"]), usd(r["chosen"]),
             ("+" if r["delta"] >= 0 else "") + usd(r["delta"])] for r in out["lines"]]
    lines.append(tabulate(rows, headers=["line", t, "chosen", "delta"], tablefmt="simple",
                          colalign=("left", "right", "right", "right")))
    be = out.get("break_even")
    if be:
        lines.append("")
        if be.get("price") is None:
            lines.append(f"Break-even: {be['note']} (quote {be['quote']}).")
        else:
            lines.append(f"Break-even: quote {be['quote']} would win at {be['price']:,.2f} {be['unit']} or less "
                         f"(today {be['current']:,.2f}).")
    return "\n".join(lines) + "\n"
