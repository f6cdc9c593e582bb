"""The answer types: a `Plan` (one procurement decision with its numbers) and a `Result` (the plan, runners-up,
exclusions, solver status).

A plan's dollar lines are computed exactly from the point's estimates, not read back from the integer model, so
the report never shows rounding artefacts; the model's (rounded-up) cost is kept beside them for the checker.
**Cost** is what this run consumes (depreciation of bought hardware over the time it is held, bills, energy,
engineering, risk premiums): the objective. **Cash** is what is paid or committed (bought hardware in full, bills,
energy, engineering; no risk premium): what a cash budget limits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from ..estimate.cost import LINE_ORDER, Lines, slip_premium
from ..estimate.options import Point, Universe, option_quote_ready
from ..inputs.catalog import PRICE_UNITS
from ..inputs.problem import Problem
from ..inputs.rules import adjustments, names_quote
from ..model.decode import Decision


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Plan:
    option: str
    accelerator: str
    system: str
    mode: str
    vendor: str
    nodes: int
    gpus: int
    quotes: tuple[PlanQuote, ...]
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
    rules_applied: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    accounting: str = "depreciation"

    @property
    def total_cost(self) -> float:
        return self.lines.total_cost

    @property
    def total_cash(self) -> float:
        return self.lines.total_cash

    @property
    def pair(self) -> str:
        return f"{self.accelerator}/{self.mode}"

    @property
    def allocation(self) -> dict[str, int]:
        return {q.id: q.nodes for q in self.quotes}

    def decision(self) -> tuple[str, int, tuple[tuple[str, int], ...]]:
        return (self.option, self.nodes, tuple((q.id, q.nodes) for q in self.quotes))


def rule_lines(problem: Problem, pt: Point, alloc: dict[str, int], base_cost: float) -> tuple[float, float, list[str]]:
    """Dollar adjustments of the rules that apply to a plan: (cost added, cash added, rule names)."""
    cost_add = cash_add = 0.0
    names: list[str] = []
    for rule, then in adjustments(problem.spec.rules, pt.option.attrs, pt.gpus, pt.n, pt.days, pt.power_kw):
        if not names_quote(rule, alloc):
            continue
        cost_add += (then.add_usd or 0.0) + base_cost * (then.add_pct or 0.0) / 100.0
        cash_add += then.add_usd or 0.0
        names.append(rule.name)
    return cost_add, cash_add, names


def plan_lines(problem: Problem, pt: Point, alloc: dict[str, int]) -> tuple[Lines, list[str]]:
    """Exact dollar lines of a point with a quote allocation (fixed + per node + slip + rules), in report order."""
    a = problem.assumptions.values
    lines = pt.fixed
    quotes = {q.id: q for q in pt.option.quotes}
    for qid, k in sorted(alloc.items()):
        lines = lines.merged(pt.per_node[qid].scaled(k))
    slip = max((slip_premium(quotes[q].lead_time_days, quotes[q].lead_time_p90_days, a.money) for q in alloc),
               default=0.0)
    if slip:
        lines = lines.merged(Lines({"delivery_slip": slip}, {}))
    cost_add, cash_add, names = rule_lines(problem, pt, alloc, lines.total_cost - slip)
    if cost_add or cash_add:
        lines = lines.merged(Lines({"rules": cost_add}, {"rules": cash_add}))
    ordered = Lines({k: lines.cost[k] for k in LINE_ORDER if k in lines.cost},
                    {k: lines.cash[k] for k in LINE_ORDER if k in lines.cash})
    return ordered, names


def find_point(universe: Universe, option: str, nodes: int) -> Point | None:
    for o in universe.options:
        if o.id == option:
            return next((pt for pt in o.points if pt.n == nodes), None)
    return None


def make_plan(problem: Problem, universe: Universe, d: Decision, unit: int) -> Plan:
    """The plan of a decision, with its exact dollar lines, dates and warnings."""
    pt = find_point(universe, d.option, d.nodes)
    assert pt is not None and pt.time is not None, f"decision {d} is not a workable point"
    o = pt.option
    a = problem.assumptions.values
    as_of = problem.as_of
    alloc = d.quotes
    lines, names = plan_lines(problem, pt, alloc)
    quotes = tuple(PlanQuote(q.id, alloc[q.id], q.vendor, q.kind, q.mode, q.price, PRICE_UNITS[q.mode],
                             q.lead_days(a.confidence), as_of + timedelta(days=option_quote_ready(q, o, a)),
                             q.valid_until, q.source)
                   for q in o.quotes if alloc.get(q.id, 0) > 0)
    start = as_of + timedelta(days=d.start_day)
    t = pt.time
    return Plan(
        option=o.id, accelerator=o.accel.id, system=o.system.id, mode=o.mode, vendor=o.accel.vendor, nodes=pt.n,
        gpus=pt.gpus, quotes=quotes, start=start, finish=start + timedelta(days=pt.days),
        training_days=t.days, memory_required_gb=pt.memory.required_gb, memory_available_gb=pt.memory.available_gb,
        recompute=pt.memory.recompute, tensor_parallel=pt.memory.tensor_parallel, power_kw=pt.power_kw,
        racks=pt.racks_with_power if o.mode == "buy" else None, utilisation=t.utilisation, efficiency=t.efficiency,
        flops=t.flops, gpu_hours=t.wall_hours * pt.gpus, interruptions=t.interruptions, lines=lines,
        model_cost_units=d.cost_units, unit=unit, rules_applied=tuple(names),
        warnings=tuple(_warnings(quotes, o.mode, o.accel.cls, as_of, start)),
        accounting=problem.spec.policy.accounting)


def _warnings(quotes: tuple[PlanQuote, ...], mode: str, cls: str, as_of: date, start: date) -> list[str]:
    out = []
    for pq in quotes:
        if pq.kind == "estimate":
            out.append(f"ESTIMATED PRICE: quote {pq.id} is an estimate, not a real offer ({pq.source}); "
                       "get a real quote before committing")
        if pq.valid_until < as_of:
            out.append(f"EXPIRED QUOTE: {pq.id} expired on {pq.valid_until} (used because --allow-expired)")
        elif mode == "buy" and pq.valid_until < start - timedelta(days=math.ceil(pq.lead_time_days)):
            out.append(f"quote {pq.id} expires {pq.valid_until}, before the latest order date for this start")
    if cls == "consumer":
        out.append("consumer cards: no ECC, and datacenter use voids the warranty [seed-000]; risk premium applied")
    return out


@dataclass(frozen=True)
class Alternative:
    plan: Plan
    delta_usd: float


@dataclass(frozen=True)
class Reason:
    """One reason an option cannot work: a constraint group of the user's (with what it means and where it was
    stated), or — for what cannot be modelled at all — a sentence."""

    text: str
    group: str | None = None
    where: str | None = None


@dataclass(frozen=True)
class ExcludedOption:
    """An accelerator/mode pair (or an accelerator, or one system of a pair) that cannot be part of any plan.

    For a pair, `reasons` are a minimal set of the user's groups that rules it out; `proven` is False when a time
    limit stopped the search for a minimal set."""

    accelerator: str
    mode: str | None
    system: str | None
    reasons: tuple[Reason, ...]
    proven: bool = True


def exclusion_order(e: ExcludedOption) -> tuple[str, str, str]:
    return (e.accelerator, e.mode or "", e.system or "")


@dataclass(frozen=True)
class Result:
    """Everything `plan solve` answers. `explanation` is filled for an infeasible problem by the answers stage."""

    status: str
    plan: Plan | None
    alternatives: tuple[Alternative, ...]
    excluded: tuple[ExcludedOption, ...]
    objective: int | None
    bound: int | None
    solve_seconds: float
    warnings: tuple[str, ...]
    problem_name: str
    as_of: date
    as_of_defaulted: bool
    unit: int
    expired: tuple[tuple[str, date], ...] = ()
    not_yet_quoted: tuple[tuple[str, date], ...] = ()
    infeasible_pairs: tuple[str, ...] = ()
    explanation: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
