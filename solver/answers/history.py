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


PLAN_FIELDS = ("accelerator", "system", "mode", "offer", "nodes", "gpus", "start", "finish")
"""What a decision is, field by field (`offer`: on demand, reserved, spot or managed, from schema 2 on)."""
RISK_FIELDS = (("p_deadline", "P(deadline)"), ("late_days_expected", "expected days late"),
               ("finish_p90", "finish p90"), ("objective_usd", "expected cost with lateness"))
"""The risk figures a diff shows (each only when both saved plans carry it)."""


def _action(before: Any, after: Any) -> str:
    """`terraform plan`'s markers: add (nothing before), remove (nothing after), change."""
    if before in (None, 0) and after not in (None, 0):
        return "add"
    if after in (None, 0) and before not in (None, 0):
        return "remove"
    return "change"


def _plan_changes(po: dict[str, Any], pn: dict[str, Any]) -> list[dict[str, Any]]:
    """The decision's fields, each used quote's nodes, the cash, then the risk figures that differ."""
    changes: list[dict[str, Any]] = []
    for key in PLAN_FIELDS:
        if key in po and key in pn and po[key] != pn[key]:
            changes.append({"field": key, "from": po[key], "to": pn[key], "action": "change"})
    qo = {q["id"]: q["nodes"] for q in po["quotes"]}
    qn = {q["id"]: q["nodes"] for q in pn["quotes"]}
    for qid in sorted(set(qo) | set(qn)):
        a, b = qo.get(qid, 0), qn.get(qid, 0)
        if a != b:
            changes.append({"field": f"quote {qid}", "from": a, "to": b, "unit": "nodes", "action": _action(a, b)})
    cash_a, cash_b = po["cash_usd"].get("total"), pn["cash_usd"].get("total")
    if cash_a is not None and cash_b is not None and abs(cash_a - cash_b) >= 1:
        changes.append({"field": "cash", "from": cash_a, "to": cash_b, "unit": "usd", "action": "change"})
    ra, rb = po.get("risk") or {}, pn.get("risk") or {}
    for key, _label in RISK_FIELDS:
        if ra.get(key) is not None and rb.get(key) is not None and ra[key] != rb[key]:
            changes.append({"field": key, "from": ra[key], "to": rb[key], "action": "change",
                            **({"unit": "usd"} if key.endswith("_usd") else {})})
    return changes


def _cost_lines(po: dict[str, Any], pn: dict[str, Any]) -> list[dict[str, Any]]:
    """Cost lines (dollars) that moved by a dollar or more; a line only one plan has is added or removed."""
    lines = []
    for name in sorted(set(po["cost_usd"]) | set(pn["cost_usd"])):
        a, b = po["cost_usd"].get(name), pn["cost_usd"].get(name)
        if abs((a or 0.0) - (b or 0.0)) >= 1:
            action = "add" if a is None else "remove" if b is None else "change"
            lines.append({"line": name, "from": a or 0.0, "to": b or 0.0, "delta": (b or 0.0) - (a or 0.0),
                          "action": action})
    return lines


def _summary(d: dict[str, Any], po: dict[str, Any] | None, pn: dict[str, Any] | None) -> dict[str, Any]:
    """Counts by marker (decision fields, quotes and cost lines), the cost and cash deltas, and whether anything
    changed at all (what `plan diff`'s exit status says)."""
    rows = d["changes"] + d.get("cost_lines", [])
    count = {a: sum(1 for r in rows if r.get("action") == a) for a in ("add", "remove", "change")}
    out: dict[str, Any] = {"changed": bool(rows) or d["status"][0] != d["status"][1], "add": count["add"],
                           "remove": count["remove"], "change": count["change"]}
    if po and pn:
        out["cost_delta_usd"] = (pn["cost_usd"].get("total") or 0.0) - (po["cost_usd"].get("total") or 0.0)
        out["cash_delta_usd"] = (pn["cash_usd"].get("total") or 0.0) - (po["cash_usd"].get("total") or 0.0)
    return out


def diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Structured differences between two saved solves (validated by `inputs.saved.load_saved`), the way
    `terraform plan` lists them: each row carries an `action` (add, remove, change), and `summary` counts them and
    says whether anything changed."""
    ro, rn = old["result"], new["result"]
    po, pn = ro.get("plan"), rn.get("plan")
    out: dict[str, Any] = {"same_inputs": old["inputs"]["digest"] == new["inputs"]["digest"],
                           "same_problem": ro["problem"] == rn["problem"],
                           "problems": [ro["problem"], rn["problem"]],
                           "status": [ro["status"], rn["status"]], "decision_changed": _decision(po) != _decision(pn)}
    changes: list[dict[str, Any]] = []
    if po and pn:
        changes = _plan_changes(po, pn)
        out["cost_lines"] = _cost_lines(po, pn)
    elif po or pn:
        changes.append({"field": "plan", "from": po and po["option"], "to": pn and pn["option"],
                        "action": "add" if not po else "remove"})
    out["changes"] = changes
    out["summary"] = _summary(out, po, pn)
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
