"""JSON: the stable contract of `--format json` and `--save` (`schema_version`).

Byte-identical for identical inputs: keys sorted, floats rounded, no timings, no paths that depend on where the
command ran except the problem file as given.
"""

from __future__ import annotations

import hashlib
import json
import math
from datetime import date, timedelta
from typing import Any

from ..estimate.checkpoints import CheckpointFigures
from ..estimate.options import Universe
from ..estimate.scenarios import RiskStats
from ..estimate.tco import TotalCost
from ..inputs.problem import Problem
from ..inputs.saved import SCHEMA_VERSION
from ..solve.plan import ExcludedOption, Plan, PlanQuote, Result, billed_months


def _r(x: float, nd: int = 2) -> float:
    return float(round(x, nd))


def plan_dict(p: Plan, risk: RiskStats | None = None, as_of: date | None = None,
              tco: TotalCost | None = None) -> dict[str, Any]:
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
        # a line the plan does not have (no porting on a mature stack: exactly 0) is absent, as the README says
        "cost_usd": {"total": _r(p.total_cost, 0), **{k: _r(v, 0) for k, v in p.lines.cost.items() if v != 0}},
        "cash_usd": {"total": _r(p.total_cash, 0), **{k: _r(v, 0) for k, v in p.lines.cash.items() if v != 0}},
        **({"checkpoint": checkpoint_dict(p.checkpoint)} if p.checkpoint is not None else {}),
        "cash_by_quarter": [{"quarter": q.quarter, "usd": _r(q.usd, 0), "hardware_usd": _r(q.hardware_usd, 0)}
                            for q in p.cash_by_quarter],
        "rules_applied": list(p.rules_applied), "warnings": list(p.warnings),
        **({"after_run": p.after_run} if p.mode == "buy" else {}),
        **({"risk": risk_dict(risk, as_of)} if risk is not None and as_of is not None else {}),
        **({"tco": tco_dict(tco)} if tco is not None else {}),
    }


def tco_dict(t: TotalCost) -> dict[str, Any]:
    """A plan's total cost over the horizon (estimate/tco.py): its lines in dollars; for bought hardware also the
    utilisation after the run and the rental its work displaces (null when the catalog rents no such accelerator)."""
    out: dict[str, Any] = {"horizon_years": _r(t.horizon_years, 4), "total_usd": _r(t.total_usd, 0),
                           "lines": {name: _r(v, 0) for name, v in t.lines if v != 0}}   # as cost_usd: no zero line
    if t.owned:
        out["utilisation_after_run"] = _r(t.utilisation_after_run or 0.0, 4)
        out["held_years"] = _r(t.held_years or 0.0, 4)
        out["displaced_rental"] = None if t.rental is None else {
            "quote": t.rental.quote, "usd_per_gpu_hour": _r(t.rental.usd_per_gpu_hour, 4),
            "decline_pct_per_year": _r(t.decline_pct_per_year or 0.0, 4)}
    return out


def checkpoint_dict(c: CheckpointFigures) -> dict[str, Any]:
    """A plan's checkpointing (estimate/checkpoints.py): null where no interruption is expected (no interval)."""
    def finite(x: float, nd: int) -> float | None:
        return _r(x, nd) if math.isfinite(x) else None

    return {"interval_minutes": finite(c.interval_hours * 60.0, 2), "write_minutes": _r(c.write_hours * 60.0, 3),
            "mtbf_hours": finite(c.mtbf_hours, 2), "size_tb": _r(c.size_tb, 4),
            "successful_checkpoints": _r(c.successful, 1),
            "cost_per_successful_checkpoint_usd": None if c.cost_per_successful_usd is None
            else _r(c.cost_per_successful_usd, 0)}


def risk_dict(r: RiskStats, as_of: date) -> dict[str, Any]:
    """A plan's risk by scenarios (answers/risk.py): dates, dollars, the count and the seed that reproduce it."""
    def day(d: int) -> str:
        return (as_of + timedelta(days=d)).isoformat()

    return {"p_deadline": None if r.p_deadline is None else _r(r.p_deadline, 4),
            "finish_p50": day(r.finish_p50), "finish_p80": day(r.finish_p80), "finish_p90": day(r.finish_p90),
            "cost_expected_usd": _r(r.cost_expected, 0), "cost_p90_usd": _r(r.cost_p90, 0),
            "cvar95_usd": _r(r.cvar95, 0), "cost_std_error_usd": _r(r.cost_std_error, 0),
            "objective_usd": _r(r.objective, 0), "objective_std_error_usd": _r(r.objective_std_error, 0),
            "late_days_expected": _r(r.late_days_expected, 4),
            "scenarios": r.scenarios, "seed": r.seed}


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
        out["deposit_usd"] = _r(q.deposit_usd, 0)
        out["balance_usd"] = _r(q.balance_usd, 0)
        out["balance_due"] = q.balance_due.isoformat() if q.balance_due else None
    else:
        out["contract"] = q.contract
        out["billed_months"] = _r(billed_months(q, p.training_days * 24.0))
        if q.max_term_months is not None:
            out["max_term_months"] = _r(q.max_term_months)
            out["after_term_usd_per_gpu_hour"] = _r(q.after_term_rate, 4)
            out["next_tier"] = q.next_tier
        if q.contact_sales:
            out["contact_sales"] = True
    return out


def excluded_dict(e: ExcludedOption) -> dict[str, Any]:
    return {"accelerator": e.accelerator, "mode": e.mode, "system": e.system, "proven": e.proven,
            "reasons": [{"group": r.group, "text": r.text, "where": r.where} for r in e.reasons]}


def result_dict(r: Result) -> dict[str, Any]:
    risk: dict[str, RiskStats] = r.extra.get("risk", {})
    tco: dict[str, TotalCost] = r.extra.get("tco", {})
    return {
        "schema_version": SCHEMA_VERSION, "problem": r.problem_name, "as_of": r.as_of.isoformat(),
        "status": r.status,
        "objective": {"value_units": r.objective, "bound_units": r.bound, "money_unit_usd": r.unit,
                      **({"gap": _r(r.gap, 6)} if r.status == "feasible" and r.gap is not None else {})},
        **({"stopped_by": r.stopped_by} if r.stopped_by else {}),
        "plan": plan_dict(r.plan, risk.get(r.plan.option), r.as_of, tco.get(r.plan.option)) if r.plan else None,
        "alternatives": [{**plan_dict(a.plan, risk.get(a.plan.option), r.as_of, tco.get(a.plan.option)),
                          "delta_usd": _r(a.delta_usd, 0),
                          "proven_best": a.settled_usd == 0,
                          **({"best_may_cost_less_usd": _r(a.settled_usd, 0)} if a.settled_usd else {})}
                         for a in r.alternatives],
        "excluded": [excluded_dict(e) for e in r.excluded],
        "expired_quotes": [{"id": q, "valid_until": d.isoformat()} for q, d in r.expired],
        "quotes_dated_after_as_of": [{"id": q, "quoted_on": d.isoformat()} for q, d in r.not_yet_quoted],
        "warnings": list(r.warnings),
        **({"explanation": r.explanation} if r.explanation is not None else {}),
        **({"unpriced": r.extra["unpriced"]} if r.extra.get("unpriced") else {}),
        **({"confidence_steps": [step_dict(s, r.as_of) for s in r.extra["steps"]]}
           if "steps" in r.extra and r.plan is not None else {}),
    }


def risk_report_dict(rep: Any) -> dict[str, Any]:
    """`plan risk --format json` (answers/risk.RiskReport)."""
    as_of = rep.problem.as_of

    def day(d: float) -> str:
        return (as_of + timedelta(days=round(d))).isoformat()

    return {
        "schema_version": SCHEMA_VERSION, "problem": rep.problem.spec.name, "as_of": as_of.isoformat(),
        "deadline": rep.problem.spec.schedule.deadline.isoformat() if rep.problem.spec.schedule.deadline else None,
        "plan": plan_dict(rep.plan, rep.stats, as_of),
        "histogram": {"finish": [{"from": day(a), "to": day(b), "share": _r(w, 4)} for a, b, w in rep.finish_bins],
                      "cost": [{"from_usd": _r(a, 0), "to_usd": _r(b, 0), "share": _r(w, 4)}
                               for a, b, w in rep.cost_bins]},
        "tornado": [{"uncertainty": sw.group, "label": sw.label,
                     "p_deadline": [None if p is None else _r(p, 4) for p in sw.p_deadline],
                     "cost_expected_usd": [_r(c, 0) for c in sw.cost_expected]} for sw in rep.swings],
    }


def frontier_dict(pt: Any) -> dict[str, Any]:
    """A frontier point: the cheapest plan finishing by its date (answers/frontier.py), its chance of meeting your
    deadline and whether it is the chosen plan."""
    p = pt.plan
    return {"finish": p.finish.isoformat(), "cost_usd": _r(p.total_cost, 0), "cash_usd": _r(p.total_cash, 0),
            "p_deadline": None if pt.p_deadline is None else _r(pt.p_deadline, 4), "chosen": pt.chosen,
            "option": p.option, "accelerator": p.accelerator, "offer": p.offer, "provider": provider(p),
            "nodes": p.nodes, "gpus": p.gpus, "start": p.start.isoformat(), "within_deadline": pt.within_deadline,
            "proven": pt.proven, "quotes": {q.id: q.nodes for q in p.quotes}}


def provider(p: Plan) -> str:
    """Who supplies the plan's nodes: its quotes' vendors, in the order of the quotes."""
    return " + ".join(dict.fromkeys(q.vendor for q in p.quotes))


def step_dict(step: Any, as_of: date) -> dict[str, Any]:
    """A step up in confidence (answers/steps.py)."""
    p = step.plan
    return {"target": step.target, "p_deadline": _r(step.p_deadline, 4), "objective_usd": _r(p.total_cost, 0),
            "delta_usd": _r(step.delta_usd, 0), "option": p.option, "accelerator": p.accelerator, "offer": p.offer,
            "provider": provider(p), "nodes": p.nodes, "finish": p.finish.isoformat(), "proven": step.proven,
            "quotes": {q.id: q.nodes for q in p.quotes}}


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


def sweep_dict(problem: Problem, axes: Any, rows: Any) -> dict[str, Any]:
    """`plan sweep --format json`: the grid's axes and one row per point in grid order (nothing that depends on
    the executor, the worker count or the time taken)."""
    return {"schema_version": SCHEMA_VERSION, "problem": problem.spec.name, "as_of": problem.as_of.isoformat(),
            "axes": [{"path": a.path, "values": list(a.values)} for a in axes],
            "points": [{"index": r.index, "set": {s.partition("=")[0]: s.partition("=")[2] for s in r.sets},
                        "status": r.status, "plan": r.plan, "risk": r.risk,
                        "conflict": None if r.conflict is None else list(r.conflict)} for r in rows]}


def swept_row(name: str, row: dict[str, Any]) -> dict[str, Any]:
    """A sensitivity sweep's row as JSON: `value` the number swept (`unit` factor: today's value times it; days:
    added to every lead time), not its label (`80%`, `+30 d`)."""
    rest = {k: v for k, v in row.items() if k not in ("name", "sets", "value", "swept")}
    return {**rest, "value": row["swept"], "unit": "days" if name == "lead_time_days" else "factor"}


def sensitivity_dict(break_even: list[dict[str, Any]], sweeps: dict[str, list[dict[str, Any]]], problem: str,
                     as_of: str) -> dict[str, Any]:
    """`plan sensitivity --format json`: which problem and version (as every command's JSON), the break-even prices
    and each sweep's rows (`swept_row`)."""
    return {"schema_version": SCHEMA_VERSION, "problem": problem, "as_of": as_of, "break_even": break_even,
            "sweeps": {k: [swept_row(k, r) for r in rows] for k, rows in sweeps.items()}}


def to_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def quote_snapshot(q: Any) -> dict[str, Any]:
    """The fields of a quote a saved answer keeps, to name the quote changes behind a changed decision."""
    return {"system": q.system, "mode": q.mode, "price": q.price if q.priced else None,
            "lead_time_days": q.lead_time_days, "lead_time_p90_days": q.lead_time_p90_days, "max_nodes": q.max_nodes,
            "min_nodes": q.min_nodes, "valid_until": q.valid_until.isoformat(), "kind": q.kind,
            "commit_months": q.commit_months, "contract": q.term, "fabric": q.fabric_id}


def snapshot(problem: Problem, result: Result, universe: Universe) -> dict[str, Any]:
    """The saved form of a solve: the result, the problem as validated, and every quote the solve could use, with a
    digest of all of it (two saves of the same inputs have the same digest, whatever the files' comments)."""
    spec = json.loads(problem.spec.model_dump_json(by_alias=True))
    quotes = {q.id: quote_snapshot(q) for o in universe.options for q in o.quotes}
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
