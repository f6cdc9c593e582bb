"""Solving a program: the optimum over the candidates, decoded into a plan in dollars and days, and re-checked.

The model's money is in $1k rounded up; the plan's figures are recomputed here in dollars from the estimates
(candidate lines, each lot's held-days table at its days held, porting once per stack), and the independent checker
(`program_check.py`) re-verifies the plan against the catalog, the calendar and the limits. An infeasible program
is explained by `answers/program_explain.py`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from ..estimate.program import Candidate, LotQuote, ProgramData, relaxed
from ..estimate.program_chance import CONFIDENCE_GROUP, LotAt, RunAt, Waits, waits
from ..model.program import ProgramModel, build_program_model, objective, objective_weight
from .engine import FEASIBLE, INFEASIBLE, OPTIMAL, UNKNOWN, Engine, Limits, Outcome

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunPlan:
    workload: str
    candidate: Candidate
    start_day: int
    end_day: int


@dataclass(frozen=True)
class Purchase:
    """One bought lot: ordered, delivered, usable (after installation), held until the program's end."""

    quote: LotQuote
    k: int
    order_day: int
    delivered_day: int
    usable_day: int
    held_days: int
    cost_usd: float
    cash_usd: float

    @property
    def capex_usd(self) -> float:
        return self.quote.capex_usd_per_node * self.quote.lot_nodes


@dataclass(frozen=True)
class ProgramPlan:
    runs: tuple[RunPlan, ...]
    purchases: tuple[Purchase, ...]
    porting: tuple[tuple[str, float], ...]
    end_day: int
    cost_usd: float
    cash_usd: float
    model_cost_units: int

    def run(self, wid: str) -> RunPlan:
        return next(r for r in self.runs if r.workload == wid)


@dataclass(frozen=True)
class ProgramOutcome:
    """`status`: optimal (proven over the candidates), feasible (a plan, not proven: the time limit),
    infeasible (proven), unknown (no plan found within the time limit)."""

    status: str
    plan: ProgramPlan | None
    bound_units: int | None
    """A proven lower bound of the program's cost in model units ($1k)."""
    data: ProgramData


def date_of(data: ProgramData, day: int) -> date:
    return data.as_of + timedelta(days=day)


def fix_groups(pm: ProgramModel, active: list[str]) -> Any:
    """A copy of the model with the `active` groups enforced (the others dropped)."""
    m = pm.model
    m.clear_objective()
    trial = m.clone()
    for gid in active:
        trial.add_bool_and([pm.literals[gid]])
    return trial


def decode(pm: ProgramModel, out: Outcome) -> ProgramPlan:
    """The plan a solution describes: each workload's run, the lots bought with their held-days cost and cash (read
    from the quote's tables at the days actually held), porting once per stack."""
    data = pm.data
    runs = []
    for wi, w in enumerate(data.workloads):
        ci = next(ci for ci, _ in pm.candidates(wi) if out.value(pm.x[wi, ci]))
        runs.append(RunPlan(w.id, w.candidates[ci], out.value(pm.start[wi]), out.value(pm.end[wi])))
    end = out.value(pm.program_end)
    purchases = []
    for lot in pm.lots:
        if not out.value(lot.present):
            continue
        lq = lot.quote
        order = out.value(lot.order)
        delivered = order + lq.lead_days
        held = end - delivered
        purchases.append(Purchase(lq, lot.k, order, delivered, delivered + lq.install_days, held,
                                  lq.held_cost_usd[held] * lq.lot_nodes, lq.held_cash_usd[held] * lq.lot_nodes))
    porting: dict[str, float] = {}
    for r in runs:
        porting[r.candidate.porting_key] = r.candidate.porting_usd
    ported = tuple(sorted(porting.items()))
    cost = sum(r.candidate.cost_usd for r in runs) + sum(p.cost_usd for p in purchases) + sum(v for _, v in ported)
    cash = sum(r.candidate.cash_usd for r in runs) + sum(p.cash_usd for p in purchases) + sum(v for _, v in ported)
    return ProgramPlan(tuple(runs), tuple(purchases), ported, end, cost, cash, out.value(pm.cost))


MAX_ROUNDS = 12
"""Most solves `optimise` makes while adding the capacities of rented quotes a plan overfills (each round adds at
least one quote, and a program's plan uses one quote per rented workload)."""


def overfilled(data: ProgramData, plan: ProgramPlan, active: set[str] | None = None) -> set[str]:
    """Rented quotes the plan asks for more nodes than they have on some day (only quotes whose capacity group is
    `active`, when given: a dropped capacity is no limit)."""
    cap = dict(data.quote_capacity)
    out: set[str] = set()
    for r in plan.runs:
        q = r.candidate.quote
        if q is None or q in out or (active is not None and f"quotes.{q}.max_nodes" not in active):
            continue
        for day in range(r.start_day, r.end_day):
            used = sum(o.candidate.nodes for o in plan.runs
                       if o.candidate.quote == q and o.start_day <= day < o.end_day)
            if used > cap[q]:
                out.add(q)
                break
    return out


Goal = Callable[[ProgramModel, Any], Any]
"""Sets the objective of a trial model (given the built model and its copy with the groups fixed); returns the
expression it minimises, or None for a feasibility check."""


def lazily(data: ProgramData, engine: Engine, active: set[str] | None, goal: Goal | None, label: str,
           thorough: bool = False) -> tuple[Outcome, ProgramModel]:
    """Solve with the `active` groups enforced (None: every group), two kinds of constraints added lazily:
    - rented quotes' capacities: the first model enforces none of them, so that candidates on different quotes
      dominate each other and the model is small (`estimate.program.relaxed`); a plan that overfills a quote whose
      capacity is active adds it (after `MAX_ROUNDS` of them, every capacity);
    - with `policy.deadline_confidence` active, a plan that misses a deadline in too many scenarios adds its cuts
      (`ProgramChance.learn`), at most `MAX_CHANCE_ROUNDS` times (then the answer is `unknown`, never a plan that
      misses).
    Each round's model is a relaxation of the program's, so an infeasible one proves the program infeasible, and a
    plan that passes both checks is the program's optimum. `thorough`: CP-SAT's full presolve (`Engine.solver`),
    for the program's optimisation rather than the many small solves of an explanation."""
    enforced: set[str] = set()
    every = {q for q, _ in data.quote_capacity}
    capacity_rounds = chance_rounds = 0
    while True:
        small = build_program_model(relaxed(data, enforced), checking=goal is None)
        trial = fix_groups(small, sorted(g for g in small.literals if active is None or g in active))
        if goal is not None:
            goal(small, trial)
        round_ = capacity_rounds + chance_rounds + 1
        out = engine.solve(trial, label=f"{label} (round {round_})", thorough=thorough)
        log.debug("%s round %d: %s, %d candidates, %d capacities, %d cuts", label, round_, out.status,
                  sum(len(w.candidates) for w in small.data.workloads), len(enforced),
                  len(data.chance.cuts) if data.chance else 0)
        if not out.has_solution:
            return out, small
        plan = decode(small, out)
        over = overfilled(data, plan, active)
        if over and enforced != every:
            capacity_rounds += 1
            enforced = enforced | over if capacity_rounds < MAX_ROUNDS else every
            continue
        if not _misses(data, plan, active):
            return out, small
        chance_rounds += 1
        if chance_rounds >= MAX_CHANCE_ROUNDS:
            log.info("%s: %d rounds of deadline-confidence cuts without a plan that meets them", label,
                     chance_rounds)
            return Outcome(UNKNOWN, out.solver), small


MAX_CHANCE_ROUNDS = 40
"""Most plans `lazily` simulates under `policy.deadline_confidence` before it answers `unknown`."""


def _misses(data: ProgramData, plan: ProgramPlan, active: set[str] | None) -> list[str]:
    """The workloads the plan makes miss their enforced deadline at the confidence (their cuts learnt); none when
    the confidence is not enforced."""
    chance = data.chance
    if chance is None or (active is not None and CONFIDENCE_GROUP not in active):
        return []

    def on(gid: str | None) -> bool:
        return gid is not None and (active is None or gid in active)

    deadlines = {w.id: w.deadline_day for w in data.workloads
                 if w.deadline_day is not None and on(w.deadline_group)}
    after = {w.id: w.after for w in data.workloads if w.after and on(f"workloads.{w.id}.after")}
    return chance.learn(*timed(plan), deadlines, after, {w.id: w.candidates for w in data.workloads})


def timed(plan: ProgramPlan) -> tuple[list[RunAt], list[LotAt]]:
    """The plan's runs and lots as the scenarios' timing rule reads them (`program_chance.py`)."""
    runs = [RunAt(r.workload, r.candidate, r.start_day, r.end_day) for r in plan.runs]
    lots = [LotAt(p.quote.quote, p.k, p.quote.system, p.order_day, p.delivered_day, p.quote.install_days)
            for p in plan.purchases]
    return runs, lots


def plan_waits(data: ProgramData, plan: ProgramPlan) -> dict[str, Waits]:
    """What each run of the plan waits for in the scenarios, every precedence of the program kept (what `plan risk`,
    the reported shares and the frontier's dates read)."""
    return waits(*timed(plan), {w.id: w.after for w in data.workloads})


def optimise(data: ProgramData, limits: Limits) -> tuple[ProgramOutcome, Engine]:
    """The cheapest plan over the candidates with every group enforced (`lazily`), and the engine whose limits
    and clock an explanation continues with."""
    engine = Engine(limits)
    if any(not w.candidates for w in data.workloads):
        return ProgramOutcome(INFEASIBLE, None, None, data), engine
    out, model = lazily(data, engine, None, lambda pm, trial: trial.minimize(objective(pm)), "program",
                        thorough=True)
    plan = decode(model, out) if out.has_solution else None
    proven_cost = data.objective[0] == "cost" and out.status in (OPTIMAL, FEASIBLE)
    bound = out.bound() // objective_weight(model) if proven_cost else None
    return ProgramOutcome(out.status, plan, bound, data), engine


def power_profile(data: ProgramData, plan: ProgramPlan) -> list[tuple[int, float, float, str]]:
    """(day, installed kW from that day, limit on that day, group) at every day the installed power or the limit
    changes, from the first delivery or limit change to the program's end."""
    days = sorted({p.delivered_day for p in plan.purchases} | {w.first for w in data.power if w.first <= plan.end_day})
    out = []
    for d in days:
        kw = sum(p.quote.node_kw * p.quote.lot_nodes for p in plan.purchases if p.delivered_day <= d)
        win = next((w for w in data.power if w.first <= d < w.end), None)
        out.append((d, kw, win.limit if win else float("inf"), win.group if win else ""))
    return out


__all__ = ["RunPlan", "Purchase", "ProgramPlan", "ProgramOutcome", "optimise", "fix_groups", "decode",
           "lazily", "overfilled", "power_profile", "date_of", "timed", "plan_waits",
           "MAX_CHANCE_ROUNDS", "OPTIMAL", "FEASIBLE", "INFEASIBLE", "UNKNOWN"]
