"""The answer types: a `Plan` (one procurement decision with its numbers) and a `Result` (the plan, runners-up,
exclusions, solver status).

A plan's dollar lines are computed exactly from the point's estimates, not read back from the integer model, so
the report never shows rounding artefacts; the model's (rounded-up) cost is kept beside them for the checker.
**Cost** is what this run consumes (the value bought hardware loses while held, and the capital, hall and support
it ties up; bills; energy; engineering; risk premiums): the objective. **Cash** is what is paid or committed (bought
hardware in full, support, colocation rent, bills, energy, engineering; no premium, no resale proceeds): what a cash
budget limits (estimate/cost.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import Any

import numpy as np

from ..estimate.checkpoints import CheckpointFigures, checkpoint_figures
from ..estimate.cost import HOURS_PER_MONTH, LINE_ORDER, Lines, spare_fraction
from ..estimate.delivery import order_by_day, order_day, ready_offset, wait_days
from ..estimate.options import Point, Universe, spare_nodes_pct
from ..estimate.payments import Billing, Order, Payment, QuarterCash, Spend, by_quarter, payments, quote_terms
from ..estimate.outlook import Outlook, rule_delay as point_delay
from ..estimate.starts import start_law
from ..inputs.catalog import PRICE_UNITS, Quote
from ..inputs.problem import Problem
from ..inputs.rules import adjustments, delay_days, names_quote
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
    """The lead time the schedule uses (at `assumptions.confidence`)."""
    ready: date
    """When the capacity is usable (bought: delivered and installed)."""
    valid_until: date
    source: str
    fabric: str = ""
    contract: str | None = None
    commit_months: float = 0.0
    ordered: date | None = None
    delivered: date | None = None
    """Bought hardware: the planned delivery (installation follows)."""
    wait_days: int = 0
    """Bought hardware: days it is ready before the start because the quote had to be ordered by valid_until."""
    expected_slip_days: float = 0.0
    """Expected days its capacity arrives after the planned start (lognormal lead time capped; `starts.py`)."""
    max_term_months: float | None = None
    """A reserved tier's longest term; the hours past it are billed at `after_term_rate`."""
    after_term_rate: float = 0.0
    next_tier: str | None = None
    contact_sales: bool = False
    deposit_usd: float = 0.0
    """Bought hardware: what is paid on the order date (`estimate/payments.py`)."""
    balance_usd: float = 0.0
    balance_due: date | None = None
    """Bought hardware: when the rest of its price is due (delivery + the payment terms' days)."""


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
    after_run: str = "resell"
    offer: str = ""
    """buy, cloud (on demand), cloud-reserved, cloud-spot or managed (`Option.offer`)."""
    late_units: int | None = None
    """What the model charged for lateness on an option of several quotes (money units; None for one quote, whose
    charge is exact by construction): the pipeline compares it with the plan's joint figure (`late_cuts`)."""
    checkpoint: CheckpointFigures | None = None
    """Its checkpointing (Young/Daly interval, write time, MTBF, size) and its total cost per successful
    checkpoint ([seed-001]'s budgeting unit; `checkpoints.checkpoint_figures`)."""
    payments: tuple[Payment, ...] = ()
    """Its cash as dated payments: deposits, balances, monthly bills (`estimate/payments.py`, `with_payments`)."""

    @property
    def cash_by_quarter(self) -> tuple[QuarterCash, ...]:
        """Its payments by calendar quarter: they add up to its cash."""
        return by_quarter(self.payments)

    @property
    def total_cost(self) -> float:
        return self.lines.total_cost

    @property
    def total_cash(self) -> float:
        return self.lines.total_cash

    @property
    def pair(self) -> str:
        return f"{self.accelerator}/{self.offer or self.mode}"

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


def rule_delay(problem: Problem, pt: Point, alloc: dict[str, int]) -> int:
    """Days the rules that apply to a plan delay its start (they add up)."""
    return point_delay(problem, pt, alloc)


def planned_start(problem: Problem, pt: Point, alloc: dict[str, int]) -> int:
    """The day a plan starts: the latest of the earliest start, the option's readiness and every used quote's,
    each after the rules' delays (`delivery.py`)."""
    a = problem.assumptions.values
    delay = rule_delay(problem, pt, alloc)
    quotes = {q.id: q for q in pt.option.quotes}
    earliest = (problem.earliest_start - problem.as_of).days if problem.spec.schedule.earliest_start else 0
    offsets = [ready_offset(quotes[qid], pt.option.accel.cls, a) for qid in alloc]
    return max([earliest, pt.option.ready_day + delay] + [r + delay for r in offsets])


def plan_lines(problem: Problem, pt: Point, alloc: dict[str, int], outlook: Outlook,
               start_day: int | None = None) -> tuple[Lines, list[str]]:
    """Exact dollar lines of a point with a quote allocation, planned to start on `start_day` (default: its planned
    start): fixed + per node (with any wait of bought hardware) + lateness + rules, in report order. A rule's add_pct
    applies to the lines before delivery timing (no lateness, no waiting)."""
    a = problem.assumptions.values
    start = planned_start(problem, pt, alloc) if start_day is None else start_day
    delay = rule_delay(problem, pt, alloc)
    quotes = {q.id: q for q in pt.option.quotes}
    base = pt.fixed
    lines = pt.fixed
    for qid, k in sorted(alloc.items()):
        q = quotes[qid]
        base = base.merged(pt.per_node[qid].scaled(k))
        waited = wait_days(q, start, ready_offset(q, pt.option.accel.cls, a), order_by_day(q, problem.as_of))
        lines = lines.merged(pt.per_node.waited_lines(qid, waited).scaled(k))
    late = outlook.lateness(pt.option, pt, outlook.plan_law(pt.option, [quotes[qid] for qid in sorted(alloc)],
                                                            start, delay))
    if late.expected_usd or late.tail_usd:
        lines = lines.merged(Lines({"lateness": late.expected_usd, **({"tail": late.tail_usd} if late.tail_usd
                                                                      else {})}, {}))
    cost_add, cash_add, names = rule_lines(problem, pt, alloc, base.total_cost)
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


def make_plan(problem: Problem, universe: Universe, d: Decision, unit: int, outlook: Outlook) -> Plan:
    """The plan of a decision, with its exact dollar lines, dates and warnings."""
    pt = find_point(universe, d.option, d.nodes)
    assert pt is not None and pt.time is not None, f"decision {d} is not a workable point"
    o = pt.option
    as_of = problem.as_of
    alloc = d.quotes
    planned = d.planned_day if d.planned_day is not None else d.start_day
    lines, names = plan_lines(problem, pt, alloc, outlook, planned)
    delay = rule_delay(problem, pt, alloc)
    quotes = tuple(_plan_quote(problem, pt, q, alloc[q.id], planned, delay, outlook)
                   for q in o.quotes if alloc.get(q.id, 0) > 0)
    start = as_of + timedelta(days=d.start_day)
    t = pt.time
    return with_payments(problem, Plan(
        option=o.id, accelerator=o.accel.id, system=o.system.id, mode=o.mode, vendor=o.accel.vendor, nodes=pt.n,
        gpus=pt.gpus, quotes=quotes, start=start, finish=start + timedelta(days=pt.days),
        training_days=t.days, memory_required_gb=pt.memory.required_gb, memory_available_gb=pt.memory.available_gb,
        recompute=pt.memory.recompute, tensor_parallel=pt.memory.tensor_parallel, power_kw=pt.power_kw,
        racks=pt.racks_with_power if o.mode == "buy" else None, utilisation=t.utilisation, efficiency=t.efficiency,
        flops=t.flops, gpu_hours=t.wall_hours * pt.gpus, interruptions=t.interruptions, lines=lines,
        model_cost_units=d.cost_units, unit=unit, rules_applied=tuple(names),
        warnings=tuple(_warnings(quotes, o.mode, o.accel.cls, as_of, t.wall_hours)),
        after_run=problem.spec.policy.after_run, offer=o.offer, late_units=d.late_units,
        checkpoint=checkpoint_figures(t, lines.total_cost)))


def plan_spend(problem: Problem, plan: Plan) -> Spend:
    """What the plan's payments are made of (`estimate/payments.Spend`): its cash lines and dates; each bought
    quote's hardware price — price × nodes × (1 + network share of a multi-node cluster) × (1 + hot spares per
    node), what its `compute`, `network_storage` and the spares' hardware are paid for — with its order and
    delivery dates and terms; each rented quote's share of the bills (price × nodes × billed months)."""
    m = problem.assumptions.values.money
    hw = (1.0 + (m.network_capex_fraction if plan.nodes > 1 else 0.0)) * (
        1.0 + spare_fraction(plan.nodes, spare_nodes_pct(problem)))
    wall_hours = plan.training_days * 24.0
    bought = tuple(Order(q.id, q.price * q.nodes * hw, q.ordered or plan.start, q.delivered or q.ready,
                            quote_terms(problem.catalog.quotes[q.id], m)) for q in plan.quotes if q.mode == "buy")
    rented = tuple(Billing(q.id, q.price * q.nodes * billed_months(q, wall_hours), billed_months(q, wall_hours))
                   for q in plan.quotes if q.mode != "buy")
    return Spend(tuple(plan.lines.cash.items()), plan.start, plan.finish, plan.training_days, bought, rented)


def with_payments(problem: Problem, plan: Plan) -> Plan:
    """The plan with its payments, and each bought quote with its deposit, balance and the balance's due date."""
    spend = plan_spend(problem, plan)
    lots = {p.ref: p for p in spend.purchases}
    quotes = tuple(replace(q, deposit_usd=lots[q.id].deposit_usd, balance_usd=lots[q.id].balance_usd,
                           balance_due=lots[q.id].balance_due) if q.id in lots else q for q in plan.quotes)
    return replace(plan, quotes=quotes, payments=payments(spend))


def _plan_quote(problem: Problem, pt: Point, q: Quote, nodes: int, planned: int, delay: int,
                outlook: Outlook) -> PlanQuote:
    """A used quote with its dates: ordered, delivered (bought), ready, and how long it waits or may arrive late."""
    a = problem.assumptions.values
    as_of = problem.as_of
    cls = pt.option.accel.cls
    offset = ready_offset(q, cls, a)
    order_by = order_by_day(q, as_of)
    ordered = order_day(q, planned, delay, offset, order_by)
    arrival = start_law(0, [outlook.arrival(pt.option, q, ordered)])
    late = arrival.pmf() @ np.maximum(0, arrival.days() - planned)
    return PlanQuote(
        q.id, nodes, q.vendor, q.kind, q.mode, q.price, PRICE_UNITS[q.mode], q.lead_days(a.confidence),
        as_of + timedelta(days=ordered + offset), q.valid_until, q.source, fabric=q.fabric_id, contract=q.term,
        commit_months=q.commit_months, ordered=as_of + timedelta(days=ordered),
        delivered=as_of + timedelta(days=ordered + math.ceil(q.lead_days(a.confidence))) if q.mode == "buy" else None,
        wait_days=wait_days(q, planned, offset, order_by), expected_slip_days=float(late),
        max_term_months=q.max_term_months, after_term_rate=q.after_term_rate, next_tier=q.next_tier,
        contact_sales=q.contact_sales)


EXPIRING_DAYS = 30
"""A used quote that expires within this many days of as_of is warned about: the plan rests on signing it soon."""


def billed_months(pq: PlanQuote, wall_hours: float) -> float:
    """Months a rented quote bills: the run, or the whole committed term when that is longer."""
    return max(wall_hours / HOURS_PER_MONTH, pq.commit_months)


def _warnings(quotes: tuple[PlanQuote, ...], mode: str, cls: str, as_of: date, wall_hours: float) -> list[str]:
    out = []
    for pq in quotes:
        if pq.kind == "estimate":
            out.append(f"ESTIMATED PRICE: quote {pq.id} is an estimate, not a real offer ({pq.source}); "
                       "get a real quote before committing")
        if pq.valid_until < as_of:
            out.append(f"EXPIRED QUOTE: {pq.id} expired on {pq.valid_until} (used because --allow-expired)")
        elif (pq.valid_until - as_of).days <= EXPIRING_DAYS and pq.wait_days == 0:
            out.append(f"quote {pq.id} expires {pq.valid_until}, in {(pq.valid_until - as_of).days} days: sign it "
                       "by then or have it renewed")
        elif pq.wait_days > 0:
            out.append(f"quote {pq.id} expires {pq.valid_until}: ordered then, its hardware waits {pq.wait_days} "
                       "days for the start (charged)")
        if pq.commit_months > 0 and pq.commit_months * HOURS_PER_MONTH > wall_hours:
            out.append(f"quote {pq.id} commits {pq.commit_months:g} months, billed in full; the run uses "
                       f"{wall_hours / HOURS_PER_MONTH:.1f}")
        out += _term_warnings(pq, wall_hours)
    if cls == "consumer":
        out.append("consumer cards: no ECC, and datacenter use voids the warranty [seed-000]; risk premium applied")
    return out


def _term_warnings(pq: PlanQuote, wall_hours: float) -> list[str]:
    """A tier the planned run outlasts (its last months at the rate after the term: ask for the next tier) and a
    tier sold by contact only (its price is not a list price yet)."""
    out = []
    if pq.max_term_months is not None and wall_hours > pq.max_term_months * HOURS_PER_MONTH:
        beyond = wall_hours / HOURS_PER_MONTH - pq.max_term_months
        ask = f"; ask the provider for its longer tier ({pq.next_tier})" if pq.next_tier else ""
        out.append(f"TERM: quote {pq.id}'s price covers {pq.max_term_months:.1f} months; the planned run's last "
                   f"{beyond:.1f} months are billed at ${pq.after_term_rate:,.2f}/GPU-h past the term{ask}")
    if pq.contact_sales:
        out.append(f"CONTACT SALES: quote {pq.id} is a tier sold by contact only: its price is not a list price; "
                   "get the provider's quote before committing")
    return out


@dataclass(frozen=True)
class Alternative:
    """The best plan found of a pair other than the winner's, and what it costs more than the winner (dollars)."""

    plan: Plan
    delta_usd: float
    settled_usd: float = 0.0
    """0 when `plan` is its pair's proven best; else the pair was searched only to within this many dollars of its
    best (`settle.SETTLE_GAP`: it cannot win), and its best plan may cost up to this much less."""


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
    stopped_by: str | None = None
    """The wall-clock limit that stopped the search (`--max-seconds S`), or None: the answer may change with more
    time."""

    @property
    def gap(self) -> float | None:
        """(objective − bound) / objective of an unproven plan: how much better the optimum could still be."""
        if self.objective is None or self.bound is None or self.objective <= 0:
            return None
        return max(0.0, (self.objective - self.bound) / self.objective)
