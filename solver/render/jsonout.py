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
from ..solve.plan import ExcludedOption, Plan, Result


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
        "rules_applied": list(p.rules_applied), "warnings": list(p.warnings),
        **({"accounting": p.accounting} if p.mode == "buy" else {}),
    }


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
    }


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


def to_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def snapshot(problem: Problem, result: Result, universe: Universe) -> dict[str, Any]:
    """The saved form of a solve: the result, the problem as validated, and every quote the solve could use, with a
    digest of all of it (two saves of the same inputs have the same digest, whatever the files' comments)."""
    spec = json.loads(problem.spec.model_dump_json(by_alias=True))
    quotes = {q.id: {"system": q.system, "mode": q.mode, "price": q.price, "lead_time_days": q.lead_time_days,
                     "lead_time_p90_days": q.lead_time_p90_days, "max_nodes": q.max_nodes, "min_nodes": q.min_nodes,
                     "valid_until": q.valid_until.isoformat(), "kind": q.kind}
              for o in universe.options for q in o.quotes}
    for q in universe.expired:
        quotes[q.id] = {"system": q.system, "mode": q.mode, "price": q.price, "expired": q.valid_until.isoformat()}
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
