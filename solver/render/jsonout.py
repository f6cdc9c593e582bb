"""JSON: the stable contract of `--format json` and `--save` (`schema_version`).

Byte-identical for identical inputs: keys sorted, floats rounded, no timings, no paths that depend on where the
command ran except the problem file as given.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..estimate.options import Universe
from ..inputs.problem import Problem
from ..inputs.saved import SCHEMA_VERSION
from ..solve.plan import ExcludedOption, Plan, PlanQuote, Result, billed_months


def _r(x: float, nd: int = 2) -> float:
    return float(round(x, nd))


def plan_dict(p: Plan) -> dict[str, Any]:
    return {
        "option": p.option, "accelerator": p.accelerator, "system": p.system, "mode": p.mode, "offer": p.offer,
        "vendor": p.vendor,
        "quotes": [_quote(q, p) for q in p.quotes],
        "nodes": p.nodes, "gpus": p.gpus, "start": p.start.isoformat(), "finish": p.finish.isoformat(),
        "training_days": _r(p.training_days),
        "memory_per_gpu_gb": {"required": _r(p.memory_required_gb), "available": _r(p.memory_available_gb)},
        "recompute": p.recompute, "tensor_parallel": p.tensor_parallel, "power_kw": _r(p.power_kw, 1),
        "racks": p.racks, "mfu": _r(p.utilisation, 4), "scale_out_efficiency": _r(p.efficiency, 4),
        "flops": float(f"{p.flops:.6e}"), "gpu_hours": _r(p.gpu_hours, 0),
        "expected_interruptions": _r(p.interruptions, 1),
        "cost_usd": {"total": _r(p.total_cost, 0), **{k: _r(v, 0) for k, v in p.lines.cost.items()}},
        "cash_usd": {"total": _r(p.total_cash, 0), **{k: _r(v, 0) for k, v in p.lines.cash.items()}},
        "rules_applied": list(p.rules_applied), "warnings": list(p.warnings),
        **({"after_run": p.after_run} if p.mode == "buy" else {}),
    }


def _quote(q: PlanQuote, p: Plan) -> dict[str, Any]:
    """A used quote: price, fabric, contract, and its dates (ordered; delivered for bought hardware; ready)."""
    out: dict[str, Any] = {
        "id": q.id, "nodes": q.nodes, "vendor": q.vendor, "kind": q.kind, "price": _r(q.price, 4),
        "price_unit": q.price_unit, "fabric": q.fabric, "commit_months": _r(q.commit_months),
        "ordered": q.ordered.isoformat() if q.ordered else None, "ready": q.ready.isoformat(),
        "valid_until": q.valid_until.isoformat(), "expected_slip_days": _r(q.expected_slip_days)}
    if q.mode == "buy":
        out["delivered"] = q.delivered.isoformat() if q.delivered else None
        out["wait_days"] = q.wait_days
    else:
        out["contract"] = q.contract
        out["billed_months"] = _r(billed_months(q, p.training_days * 24.0))
    return out


def excluded_dict(e: ExcludedOption) -> dict[str, Any]:
    return {"accelerator": e.accelerator, "mode": e.mode, "system": e.system, "proven": e.proven,
            "reasons": [{"group": r.group, "text": r.text, "where": r.where} for r in e.reasons]}


def result_dict(r: Result) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION, "problem": r.problem_name, "as_of": r.as_of.isoformat(),
        "status": r.status,
        "objective": {"value_units": r.objective, "bound_units": r.bound, "money_unit_usd": r.unit},
        "plan": plan_dict(r.plan) if r.plan else None,
        "alternatives": [{**plan_dict(a.plan), "delta_usd": _r(a.delta_usd, 0)} for a in r.alternatives],
        "excluded": [excluded_dict(e) for e in r.excluded],
        "expired_quotes": [{"id": q, "valid_until": d.isoformat()} for q, d in r.expired],
        "quotes_dated_after_as_of": [{"id": q, "quoted_on": d.isoformat()} for q, d in r.not_yet_quoted],
        "warnings": list(r.warnings),
        **({"explanation": r.explanation} if r.explanation is not None else {}),
        **({"unpriced": r.extra["unpriced"]} if r.extra.get("unpriced") else {}),
        **({"frontier": [frontier_dict(pt, r.plan, rel) for rel, pt in sorted(r.extra["frontier"].items())
                         if pt is not None]} if "frontier" in r.extra and r.plan is not None else {}),
    }


def frontier_dict(pt: Any, chosen: Plan | None = None, relation: str | None = None) -> dict[str, Any]:
    """A frontier point: the cheapest plan finishing by its date (answers/frontier.py)."""
    p = pt.plan
    out: dict[str, Any] = {"finish": p.finish.isoformat(), "cost_usd": _r(p.total_cost, 0),
                           "cash_usd": _r(p.total_cash, 0), "option": p.option, "accelerator": p.accelerator,
                           "offer": p.offer, "nodes": p.nodes, "gpus": p.gpus, "start": p.start.isoformat(),
                           "within_deadline": pt.within_deadline, "proven": pt.proven,
                           "quotes": {q.id: q.nodes for q in p.quotes}}
    if relation is not None:
        out["relation"] = relation
    if chosen is not None:
        out["delta_days"] = (p.finish - chosen.finish).days
        out["delta_usd"] = _r(p.total_cost - chosen.total_cost, 0)
    return out


def why_not_dict(out: dict[str, Any]) -> dict[str, Any]:
    d: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "target": out["target"], "kind": out["kind"],
                         "status": out["status"]}
    for key in ("reasons", "explanation", "lines", "break_even", "break_evens"):
        if key in out:
            d[key] = out[key]
    if "plan" in out:
        d["plan"] = plan_dict(out["plan"])
    if "chosen" in out:
        d["chosen"] = plan_dict(out["chosen"])
        d["delta_usd"] = _r(out["delta_usd"], 0)
    return d


def to_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def snapshot(problem: Problem, result: Result, universe: Universe) -> dict[str, Any]:
    """The saved form of a solve: the result, the problem as validated, and every quote the solve could use, with a
    digest of all of it (two saves of the same inputs have the same digest, whatever the files' comments)."""
    spec = json.loads(problem.spec.model_dump_json(by_alias=True))
    quotes = {q.id: {"system": q.system, "mode": q.mode, "price": q.price, "lead_time_days": q.lead_time_days,
                     "lead_time_p90_days": q.lead_time_p90_days, "max_nodes": q.max_nodes, "min_nodes": q.min_nodes,
                     "valid_until": q.valid_until.isoformat(), "kind": q.kind, "commit_months": q.commit_months,
                     "contract": q.term, "fabric": q.fabric_id}
              for o in universe.options for q in o.quotes}
    for q in universe.expired:
        quotes[q.id] = {"system": q.system, "mode": q.mode, "price": q.price if q.priced else None,
                        "expired": q.valid_until.isoformat()}
    for q in universe.unpriced:
        quotes[q.id] = {"system": q.system, "mode": q.mode, "price": None, "kind": q.kind,
                        "lead_time_days": q.lead_time_days, "valid_until": q.valid_until.isoformat()}
    assumptions = json.loads(problem.assumptions.values.model_dump_json())
    catalog = {"accelerators": {k: json.loads(v.model_dump_json(by_alias=True))
                                for k, v in problem.catalog.accelerators.items()},
               "systems": {k: json.loads(v.model_dump_json()) for k, v in problem.catalog.systems.items()}}
    digest = hashlib.sha256(json.dumps({"problem": spec, "as_of": problem.as_of.isoformat(), "quotes": quotes,
                                        "assumptions": assumptions, "catalog": catalog},
                                       sort_keys=True).encode()).hexdigest()
    return {"kind": "plan-result", "schema_version": SCHEMA_VERSION, "inputs": {
        "problem_file": problem.file, "overrides": list(problem.sets), "digest": digest, "problem": spec,
        "quotes": quotes}, "result": result_dict(result)}
