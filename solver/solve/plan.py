"""The result types: a `Plan` (one procurement decision with its numbers) and a `Result` (the plan, runners-up,
exclusions, solver status). Dollar lines are recomputed exactly from the point's estimates, not read back from
the integer model, so the report never shows rounding artefacts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from .assumptions import Assumptions
from .cost import LINE_ORDER, Lines, slip_premium
from .options import Point
from .problem import Problem
from .rules import matches_attrs, matches_point, quote_ids


@dataclass
class PlanQuote:
    id: str
    nodes: int
    vendor: str
    kind: str
    mode: str
    price: float
    price_unit: str
    lead_time_days: float
    ready: date
    valid_until: date
    source: str


@dataclass
class Plan:
    option: str
    accelerator: str
    system: str
    mode: str
    vendor: str
    nodes: int
    gpus: int
    quotes: list[PlanQuote]
    start: date
    finish: date
    training_days: float
    memory_required_gb: float
    memory_available_gb: float
    recompute: str
    tensor_parallel: int
    power_kw: float
    racks: int | None
    utilisation: float
    efficiency: float
    flops: float
    gpu_hours: float
    interruptions: float
    lines: Lines
    model_cost_units: int
    unit: int
    rules_applied: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    accounting: str = "depreciation"

    @property
    def total_cost(self) -> float:
        return self.lines.total_cost

    @property
    def total_cash(self) -> float:
        return self.lines.total_cash

    def decision(self) -> tuple[str, int, tuple[tuple[str, int], ...]]:
        return (self.option, self.nodes, tuple((q.id, q.nodes) for q in self.quotes))


def _price_unit(mode: str) -> str:
    return {"buy": "usd per node", "cloud": "usd per GPU-hour", "managed": "usd per node-month"}[mode]


def rule_lines(problem: Problem, pt: Point, alloc: dict[str, int], base_cost: float) -> tuple[float, float, list[str]]:
    """Dollar adjustments from matching rules: (cost add, cash add, names)."""
    cost_add = cash_add = 0.0
    names: list[str] = []
    for rule in problem.rules:
        then = rule.then
        if isinstance(then, str):
            continue
        when = rule.when
        if not (matches_attrs(when, pt.option.attrs) and matches_point(when, pt.gpus, pt.n, pt.days, pt.power_kw)):
            continue
        qids = quote_ids(when)
        if qids is not None and not any(q in alloc for q in qids):
            continue
        hit = False
        if then.add_usd:
            cost_add += then.add_usd
            cash_add += then.add_usd
            hit = True
        if then.add_pct:
            cost_add += base_cost * then.add_pct / 100.0
            hit = True
        if then.delay_days or then.mfu_factor:
            hit = True
        if hit:
            names.append(rule.name)
    return cost_add, cash_add, names


def plan_lines(problem: Problem, a: Assumptions, pt: Point, alloc: dict[str, int]) -> tuple[Lines, list[str]]:
    """Exact dollar lines of a point with a quote allocation (fixed + per node + slip + rules)."""
    lines = pt.fixed
    quotes = {q.id: q for q in pt.option.quotes}
    for qid, k in sorted(alloc.items()):
        lines = lines.merged(pt.per_node[qid].scaled(k))
    slip = max((slip_premium(quotes[q].lead_time_days, quotes[q].lead_time_p90_days, a.money)
                for q in alloc), default=0.0)
    if slip:
        lines.add("delivery_slip", slip)
    cost_add, cash_add, names = rule_lines(problem, pt, alloc, lines.total_cost - slip)
    if cost_add or cash_add:
        lines.cost["rules"] = lines.cost.get("rules", 0.0) + cost_add
        lines.cash["rules"] = lines.cash.get("rules", 0.0) + cash_add
    ordered = Lines({k: lines.cost[k] for k in LINE_ORDER if k in lines.cost},
                    {k: lines.cash[k] for k in LINE_ORDER if k in lines.cash})
    return ordered, names


def make_plan(problem: Problem, a: Assumptions, pt: Point, alloc: dict[str, int], start_day: int, as_of: date,
              model_units: int, unit: int, ready_day: dict[str, int]) -> Plan:
    o = pt.option
    assert pt.time is not None
    lines, names = plan_lines(problem, a, pt, alloc)
    quotes = []
    for q in o.quotes:
        if alloc.get(q.id, 0) > 0:
            quotes.append(PlanQuote(q.id, alloc[q.id], q.vendor, q.kind, q.mode, q.price, _price_unit(q.mode),
                                    q.lead_days(a.confidence), as_of + timedelta(days=ready_day[q.id]),
                                    q.valid_until, q.source))
    start = as_of + timedelta(days=start_day)
    warnings = []
    for pq in quotes:
        if pq.kind == "estimate":
            warnings.append(f"ESTIMATED PRICE: quote {pq.id} is an estimate, not a real offer ({pq.source}); "
                            "get a real quote before committing")
        if pq.valid_until < as_of:
            warnings.append(f"EXPIRED QUOTE: {pq.id} expired on {pq.valid_until} (used because --allow-expired)")
        elif o.mode == "buy" and pq.valid_until < start - timedelta(days=math.ceil(pq.lead_time_days)):
            warnings.append(f"quote {pq.id} expires {pq.valid_until}, before the latest order date for this start")
    if o.accel.cls == "consumer":
        warnings.append("consumer cards: no ECC / datacenter use voids the warranty (seed 000); risk premium applied")
    t = pt.time
    return Plan(
        option=o.id, accelerator=o.accel.id, system=o.system.id, mode=o.mode, vendor=o.accel.vendor, nodes=pt.n,
        gpus=pt.gpus, quotes=quotes, start=start, finish=start + timedelta(days=pt.days),
        training_days=t.days, memory_required_gb=pt.memory.required_gb, memory_available_gb=pt.memory.available_gb,
        recompute=pt.memory.recompute, tensor_parallel=pt.memory.tensor_parallel, power_kw=pt.power_kw,
        racks=pt.racks_with_power if o.mode == "buy" else None, utilisation=t.utilisation, efficiency=t.efficiency,
        flops=t.flops, gpu_hours=t.wall_hours * pt.gpus, interruptions=t.interruptions, lines=lines,
        model_cost_units=model_units, unit=unit, rules_applied=names, warnings=warnings,
        accounting=problem.policy.accounting)


@dataclass
class Alternative:
    plan: Plan
    delta_usd: float


@dataclass
class ExcludedOption:
    option: str
    reasons: list[str]


@dataclass
class Result:
    status: str
    plan: Plan | None
    alternatives: list[Alternative]
    excluded: list[ExcludedOption]
    objective: Any
    bound: Any
    solve_seconds: float
    warnings: list[str]
    problem_name: str
    as_of: date
    as_of_defaulted: bool
    unit: int
    explanation: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
