"""Saved plans and what changed between two of them (`--save`, `--compare-to`, `plan diff`).

A saved plan is the solve's JSON plus what produced it: a digest of the inputs, the problem as validated, and a
snapshot of every quote the solve could use (price, lead times, capacity, validity). A diff compares decisions,
dates and cost lines, and names the input changes behind them — the quote whose price moved, the problem value
that was edited — the way Infracost's `--compare-to` explains a cloud bill. Files are written atomically.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .errors import InputError, PlanCheckError
from .plan import Result
from .problem import LoadedProblem
from .render import SCHEMA_VERSION, result_dict, to_json
from .units import usd


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


def snapshot(lp: LoadedProblem, result: Result, universe: Any, extra_files: list[str]) -> dict[str, Any]:
    """The saved form of a solve (see module docstring)."""
    problem = json.loads(lp.problem.model_dump_json(by_alias=True))
    quotes = {q.id: {"system": q.system, "mode": q.mode, "price": q.price, "lead_time_days": q.lead_time_days,
                     "lead_time_p90_days": q.lead_time_p90_days, "max_nodes": q.max_nodes, "min_nodes": q.min_nodes,
                     "valid_until": q.valid_until.isoformat(), "kind": q.kind}
              for o in universe.options for q in o.quotes}
    for q in universe.expired:
        quotes[q.id] = {"system": q.system, "mode": q.mode, "price": q.price, "expired": q.valid_until.isoformat()}
    digest = hashlib.sha256()
    digest.update(Path(lp.source.file).read_bytes())
    for s in lp.overrides:
        digest.update(s.encode())
    for f in sorted(lp.problem.catalogs) + sorted(extra_files):
        for p in sorted(Path(f).rglob("*.yaml")) if Path(f).is_dir() else [Path(f)]:
            digest.update(p.read_bytes())
    digest.update(json.dumps(quotes, sort_keys=True).encode())
    return {"kind": "plan-result", "schema_version": SCHEMA_VERSION, "inputs": {
        "problem_file": lp.source.file, "overrides": lp.overrides, "digest": digest.hexdigest(),
        "problem": problem, "quotes": quotes}, "result": result_dict(result)}


def save(path: str | Path, data: dict[str, Any]) -> None:
    """Write atomically: a temporary file in the same folder, then rename over the target."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=str(target.parent or Path(".")))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(to_json(data))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_saved(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("saved plan not found", file=str(path)) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"not a saved plan (invalid JSON: {exc})", file=str(path)) from None
    if not isinstance(data, dict) or data.get("kind") != "plan-result":
        raise InputError("not a saved plan (expected the output of `plan solve --save`)", file=str(path))
    if data.get("schema_version") != SCHEMA_VERSION:
        raise InputError(f"saved with schema_version {data.get('schema_version')}, this plan reads "
                         f"{SCHEMA_VERSION}", file=str(path))
    return data


def _decision(plan: dict[str, Any] | None) -> Any:
    if not plan:
        return None
    return (plan["option"], plan["nodes"], tuple(sorted((q["id"], q["nodes"]) for q in plan["quotes"])))


def diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Structured differences between two saved solves, with the input changes that explain them."""
    ro, rn = old["result"], new["result"]
    po, pn = ro.get("plan"), rn.get("plan")
    out: dict[str, Any] = {"same_inputs": old["inputs"]["digest"] == new["inputs"]["digest"],
                           "status": [ro["status"], rn["status"]], "decision_changed": _decision(po) != _decision(pn)}
    changes: list[dict[str, Any]] = []
    if po and pn:
        for key in ("accelerator", "system", "mode", "nodes", "gpus", "start", "finish"):
            if po[key] != pn[key]:
                changes.append({"field": key, "from": po[key], "to": pn[key]})
        qo = {q["id"]: q["nodes"] for q in po["quotes"]}
        qn = {q["id"]: q["nodes"] for q in pn["quotes"]}
        if qo != qn:
            changes.append({"field": "quotes", "from": qo, "to": qn})
        lines = []
        for name in sorted(set(po["cost_usd"]) | set(pn["cost_usd"])):
            a, b = po["cost_usd"].get(name, 0.0), pn["cost_usd"].get(name, 0.0)
            if abs(a - b) >= 1:
                lines.append({"line": name, "from": a, "to": b, "delta": b - a})
        out["cost_lines"] = lines
    elif po or pn:
        changes.append({"field": "plan", "from": po and po["option"], "to": pn and pn["option"]})
    out["changes"] = changes
    out["causes"] = _causes(old["inputs"], new["inputs"], po, pn)
    return out


def _causes(io: dict[str, Any], inew: dict[str, Any], po: Any, pn: Any) -> list[str]:
    causes = []
    fo, fn = _flatten(io["problem"]), _flatten(inew["problem"])
    for k in sorted(set(fo) | set(fn)):
        if k == "catalogs":
            continue
        if fo.get(k) != fn.get(k):
            causes.append(f"problem {k}: {fo.get(k)!r} -> {fn.get(k)!r}")
    qo, qn = io["quotes"], inew["quotes"]
    relevant = {q["id"] for p in (po, pn) if p for q in p["quotes"]}
    for qid in sorted(set(qo) | set(qn)):
        a, b = qo.get(qid), qn.get(qid)
        if a == b:
            continue
        tag = " (used)" if qid in relevant else ""
        if a is None:
            causes.append(f"quote {qid}{tag}: new")
        elif b is None:
            causes.append(f"quote {qid}{tag}: removed")
        else:
            for k in sorted(set(a) | set(b)):
                if a.get(k) != b.get(k):
                    va, vb = a.get(k), b.get(k)
                    if k == "price" and isinstance(va, (int, float)) and isinstance(vb, (int, float)):
                        causes.append(f"quote {qid}{tag}: price {va:,.2f} -> {vb:,.2f}")
                    else:
                        causes.append(f"quote {qid}{tag}: {k} {va} -> {vb}")
    relevant_first = sorted(causes, key=lambda c: (" (used)" not in c, c))
    return relevant_first


def old_plan_today(lp: LoadedProblem, old: dict[str, Any], settings: Any,
                   prepared: Any = None) -> dict[str, Any] | None:
    """Is yesterday's decision still feasible under today's inputs, and what would it cost now?"""
    from .checker import check_plan
    from .plan import make_plan
    from .solve import prepare
    po = old["result"].get("plan")
    if not po:
        return None
    cat, aset, u = prepared or prepare(lp, settings)
    opt = next((o for o in u.options if o.id == po["option"]), None)
    if opt is None:
        return {"feasible": False, "reason": f"option {po['option']} is no longer offered (quotes expired or removed)"}
    pt = next((p for p in opt.points if p.n == po["nodes"]), None)
    alloc = {q["id"]: q["nodes"] for q in po["quotes"]}
    missing = [q for q in alloc if q not in {x.id for x in opt.quotes}]
    if pt is None or pt.time is None or missing:
        return {"feasible": False, "reason": "quotes no longer available: " + ", ".join(missing) if missing else
                "configuration no longer workable"}
    from .options import quote_ready_day
    ready = {q.id: quote_ready_day(q, opt, aset.values) for q in opt.quotes}
    start = max([opt.ready_day, u.earliest_day] + [ready[q] for q in alloc])
    plan = make_plan(lp.problem, aset.values, pt, alloc, start, lp.as_of, 0, 1, ready)
    plan.model_cost_units = int(plan.total_cost) + 1
    try:
        check_plan(lp, cat, aset.values, u, plan)
        return {"feasible": True, "cost_usd": round(plan.total_cost), "finish": plan.finish.isoformat()}
    except PlanCheckError as exc:
        return {"feasible": False, "reason": str(exc).split(": ", 1)[-1], "cost_usd": round(plan.total_cost)}


def render_diff(d: dict[str, Any], today: dict[str, Any] | None = None) -> str:
    if d["same_inputs"] and not d["changes"] and not d.get("cost_lines"):
        return "no change: same inputs, same plan.\n"
    lines = []
    if not d["changes"] and not d.get("cost_lines"):
        lines.append("no change in the plan.")
    for c in d["changes"]:
        lines.append(f"~ {c['field']:<12} {c['from']} -> {c['to']}")
    for c in d.get("cost_lines", []):
        sign = "+" if c["delta"] >= 0 else "-"
        lines.append(f"~ {c['line']:<22} {usd(c['from'])} -> {usd(c['to'])} ({sign}{usd(abs(c['delta']))})")
    if d["causes"]:
        lines.append("why (input changes):")
        lines += [f"  {c}" for c in d["causes"]]
    if today is not None:
        if today.get("feasible"):
            lines.append(f"the previous plan is still feasible today at {usd(today['cost_usd'])}, finishing "
                         f"{today['finish']}")
        else:
            lines.append(f"the previous plan is no longer feasible: {today.get('reason')}")
    return "\n".join(lines) + "\n"

