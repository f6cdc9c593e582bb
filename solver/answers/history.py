"""What changed between two saved solves, and which inputs caused it (`--compare-to`, `plan diff`).

A saved plan carries the problem as validated and a snapshot of every quote the solve could use, so a diff can
name the input changes behind a changed decision — the quote whose price moved, the problem value that was edited —
the way Infracost's `--compare-to` explains a cloud bill. Everything here is structured data; `render/diff.py`
prints it.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ..estimate.options import option_quote_ready
from ..inputs.rules import adjustments, delay_days, names_quote
from ..model.decode import Decision
from ..solve.checker import violations
from ..solve.pipeline import Context
from ..solve.plan import make_plan


def _flatten(node: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(node, dict):
        for k, v in node.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(node, list) and node and all(isinstance(x, dict) for x in node):
        for i, v in enumerate(node):
            out.update(_flatten(v, f"{prefix}[{i}]"))
    else:
        out[prefix] = node
    return out


def _decision(plan: dict[str, Any] | None) -> Any:
    if not plan:
        return None
    return (plan["option"], plan["nodes"], tuple(sorted((q["id"], q["nodes"]) for q in plan["quotes"])))


def diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Structured differences between two saved solves (validated by `inputs.saved.load_saved`)."""
    ro, rn = old["result"], new["result"]
    po, pn = ro.get("plan"), rn.get("plan")
    out: dict[str, Any] = {"same_inputs": old["inputs"]["digest"] == new["inputs"]["digest"],
                           "same_problem": ro["problem"] == rn["problem"],
                           "problems": [ro["problem"], rn["problem"]],
                           "status": [ro["status"], rn["status"]], "decision_changed": _decision(po) != _decision(pn)}
    changes: list[dict[str, Any]] = []
    if po and pn:
        for key in ("accelerator", "system", "mode", "nodes", "gpus", "start", "finish"):
            if po[key] != pn[key]:
                changes.append({"field": key, "from": po[key], "to": pn[key]})
        qo = {q["id"]: q["nodes"] for q in po["quotes"]}
        qn = {q["id"]: q["nodes"] for q in pn["quotes"]}
        for qid in sorted(set(qo) | set(qn)):
            if qo.get(qid, 0) != qn.get(qid, 0):
                changes.append({"field": f"quote {qid}", "from": qo.get(qid, 0), "to": qn.get(qid, 0), "unit": "nodes"})
        lines = []
        for name in sorted(set(po["cost_usd"]) | set(pn["cost_usd"])):
            a, b = po["cost_usd"].get(name, 0.0), pn["cost_usd"].get(name, 0.0)
            if abs(a - b) >= 1:
                lines.append({"line": name, "from": a, "to": b, "delta": b - a})
        out["cost_lines"] = lines
    elif po or pn:
        changes.append({"field": "plan", "from": po and po["option"], "to": pn and pn["option"]})
    out["changes"] = changes
    out["causes"] = input_changes(old["inputs"], new["inputs"],
                                  {q["id"] for p in (po, pn) if p for q in p["quotes"]})
    return out


def input_changes(io: dict[str, Any], inew: dict[str, Any], relevant: set[str]) -> list[dict[str, Any]]:
    """Input changes: problem values (by path) and quote fields, the quotes in `relevant` (those either answer
    uses) first."""
    causes: list[dict[str, Any]] = []
    fo, fn = _flatten(io["problem"]), _flatten(inew["problem"])
    for k in sorted(set(fo) | set(fn)):
        if k != "catalogs" and fo.get(k) != fn.get(k):
            causes.append({"kind": "problem", "path": k, "from": fo.get(k), "to": fn.get(k), "used": True})
    qo, qn = io["quotes"], inew["quotes"]
    for qid in sorted(set(qo) | set(qn)):
        a, b = qo.get(qid), qn.get(qid)
        if a == b:
            continue
        used = qid in relevant
        if a is None or b is None:
            causes.append({"kind": "quote", "id": qid, "change": "new" if a is None else "removed", "used": used})
            continue
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                causes.append({"kind": "quote", "id": qid, "field": k, "from": a.get(k), "to": b.get(k),
                               "used": used})
    return sorted(causes, key=lambda c: (not c["used"], c["kind"] != "quote", c.get("id", ""), c.get("path", ""),
                                         c.get("field", "")))


def old_plan_today(ctx: Context, old: dict[str, Any]) -> dict[str, Any] | None:
    """Is yesterday's decision still feasible under today's inputs, and what would it cost now?"""
    po = old["result"].get("plan")
    if not po:
        return None
    u, problem = ctx.universe, ctx.problem
    a = problem.assumptions.values
    opt = next((o for o in u.options if o.id == po["option"]), None)
    if opt is None:
        return {"feasible": False, "reason": f"option {po['option']} is no longer offered (quotes expired or removed)"}
    pt = next((p for p in opt.points if p.n == po["nodes"]), None)
    alloc = {q["id"]: q["nodes"] for q in po["quotes"]}
    missing = sorted(q for q in alloc if q not in {x.id for x in opt.quotes})
    if missing:
        return {"feasible": False, "reason": "quotes no longer available: " + ", ".join(missing)}
    if pt is None or pt.time is None:
        return {"feasible": False, "reason": "configuration no longer workable"}
    delay = sum(delay_days(then) for rule, then in adjustments(problem.spec.rules, opt.attrs, pt.gpus, pt.n, pt.days,
                                                                pt.power_kw) if names_quote(rule, alloc))
    ready = {q.id: option_quote_ready(q, opt, a) for q in opt.quotes}
    start = max([opt.ready_day + delay, u.earliest_day] + [ready[q] + delay for q in alloc])
    plan = make_plan(problem, u, Decision(opt.id, pt.n, tuple(sorted(alloc.items())), start, 0), ctx.unit,
                     ctx.screen.outlook)
    bad = violations(problem, u, plan, model_units=False)
    out: dict[str, Any] = {"feasible": not bad, "cost_usd": round(plan.total_cost),
                           "finish": (problem.as_of + timedelta(days=start + pt.days)).isoformat()}
    if bad:
        out["reason"] = "; ".join(bad)
    return out
