"""`plan risk PROGRAM`: the chosen program by scenarios — the chance that each workload, and all of them, meet
their deadlines, P50/P90 finish dates, and the distribution of what the program consumes.

The plan is fixed as `plan solve` chose it: each workload's option, nodes and quote, the lots with their order
days, the planned starts. In scenario s (the draws of `estimate/uncertainty.py`, the same sources and seeds as a
single run's `plan risk`):
- a run's wall hours are `scenarios.wall_hours` of its point: its MFU factor (shared by every run on the same
  software stack and accelerator class — one platform's surprise hits all its runs), its own interruptions;
  days = ⌈wall / 24⌉;
- a bought lot is delivered on its planned day (the order names the delivery date the plan needs; the plan
  allows the lead time at `assumptions.confidence`) or at order + L_s(quote) when the vendor is later than that
  (one lead-time draw per quote: a vendor's slip hits every lot ordered from it), and usable after installation;
  a rented run's capacity arrives L_s(quote) days after `as_of`; a software stack is ported after its scenario's
  porting time (whole days);
- a run starts at the latest of its planned start, its capacity (for owned nodes: the lots that were usable by its
  planned start in the plan), its software, the finish of the workloads it runs `after`, and the finish of the runs
  before it on the same resource (the same owned system or rented quote) — the plan's order is kept, nothing
  starts earlier than planned. This timing is `estimate/program_chance.py`'s `finishes`, the rule
  `policy.deadline_confidence` plans by, so the chances shown here are the ones the plan was chosen to meet;
- cost: each run's lines at its wall hours (rented: the quote's per-node cost functions with an estimated price
  times its scenario factor; owned: energy and operations), each lot's held-days cost at end_s − delivery_s (its
  price part times the factor for an estimated quote), porting once per stack, the rules' additions as planned, and
  the delay cost per day the program ends later than planned.
The premiums the planner adds for these risks (failure rework is in the expected wall time; the estimated-price
premium) are therefore replaced by their scenarios, as in a single run's `plan risk`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..estimate.options import Option, Point
from ..estimate.program import Candidate, LotQuote, held_tables, run_money
from ..estimate.program_chance import DrawnScenarios, finishes
from ..estimate.program_runs import lines_at, point_of
from ..estimate.scenarios import cvar, quantile
from ..estimate.uncertainty import Draws, price_factor
from ..inputs.catalog import PRICE_FIELDS
from ..inputs.program import ProgramProblem
from ..solve.program import RunPlan, plan_waits
from .program import ProgramReport
from .risk import LABEL, TORNADO_Z, UNFAVOURABLE, draws_for, histogram

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkloadRisk:
    id: str
    planned_finish: int
    deadline_day: int | None
    p_deadline: float | None
    finish_p50: int
    finish_p90: int


@dataclass(frozen=True)
class ProgramSwing:
    """One bar of the program's tornado: the chance all deadlines hold and the expected cost with one source of
    uncertainty held at its favourable and its unfavourable decile (the others random)."""

    group: str
    label: str
    p_all: tuple[float | None, float | None]
    cost_expected: tuple[float, float]


@dataclass(frozen=True)
class ProgramRisk:
    scenarios: int
    seed: int
    workloads: tuple[WorkloadRisk, ...]
    p_all: float | None
    """Share of scenarios in which every workload with a deadline meets it (None: no workload has one)."""
    end_planned: int
    end_p50: int
    end_p90: int
    cost_planned: float
    cost_expected: float
    cost_p90: float
    cvar95: float
    end_bins: list[tuple[float, float, float]]
    cost_bins: list[tuple[float, float, float]]
    swings: tuple[ProgramSwing, ...]


@dataclass(frozen=True)
class Simulated:
    finish: dict[str, np.ndarray]
    end: np.ndarray
    cost: np.ndarray


def _point_of(pp: ProgramProblem, c: Candidate) -> tuple[Option, Point]:
    """The option and point a candidate was priced from (its workload's universe over its one pair)."""
    return point_of(pp.problem_of(c.workload), c)


@dataclass(frozen=True)
class _Run:
    run: RunPlan
    option: Option
    point: Point
    extra_usd: float
    """The candidate's cost beyond its lines (the rules' additions), kept as planned."""


@dataclass(frozen=True)
class Prepared:
    """What the scenarios of one plan read and no draw changes, made once for every simulation of it (the risk
    and each bar of the tornado): each run's option and point, in the order they start, and each bought quote's
    held-days cost parts."""

    runs: tuple[_Run, ...]
    lot_parts: dict[str, tuple[np.ndarray, np.ndarray]]


def prepare_plan(pp: ProgramProblem, report: ProgramReport) -> Prepared:
    plan = report.outcome.plan
    assert plan is not None
    runs = []
    for r in sorted(plan.runs, key=lambda r: (r.start_day, r.end_day, r.workload)):
        o, pt = _point_of(pp, r.candidate)
        planned = run_money(pp.problem_of(r.workload), pt, r.candidate.quote)[0]
        runs.append(_Run(r, o, pt, r.candidate.cost_usd - planned))
    parts = {p.quote.quote: _lot_parts(pp, p.quote, report.data.calendar_days) for p in plan.purchases}
    return Prepared(tuple(runs), parts)


def _lines_at(pp: ProgramProblem, c: Candidate, o: Option, pt: Point, wall: np.ndarray,
              factor: np.ndarray | None) -> Any:
    """A run's cost lines (without porting, which the program pays once) at `wall` hours per scenario
    (`estimate.program_runs.lines_at`)."""
    return lines_at(pp.problem_of(c.workload), c, o, pt, wall, factor)


def _lot_parts(pp: ProgramProblem, lq: LotQuote, horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """Per node, by days held: (the part of the held-days cost that does not scale with the price, the part per
    dollar of price), without the estimated-price premium (the scenarios draw the price instead). The table is
    affine in the price, so two prices give both parts exactly."""
    problem = pp.first
    q = problem.catalog.quotes[lq.quote]
    system = problem.catalog.systems[q.system]
    field = PRICE_FIELDS[q.mode]
    plain = q.model_copy(update={"kind": "street"} if q.kind == "estimate" else {})
    at_1 = np.array(held_tables(plain.model_copy(update={field: 1.0}), system, problem, horizon)[0])
    at_2 = np.array(held_tables(plain.model_copy(update={field: 2.0}), system, problem, horizon)[0])
    return at_1 - (at_2 - at_1), at_2 - at_1


def simulate(pp: ProgramProblem, report: ProgramReport, draws: Draws, prepared: Prepared | None = None
             ) -> Simulated:
    """Every workload's finish day, the program's end and its cost in every scenario (see module docstring)."""
    plan = report.outcome.plan
    assert plan is not None
    prepared = prepared or prepare_plan(pp, report)
    a = pp.first.assumptions.values
    cat = pp.first.catalog
    sc = DrawnScenarios(draws, a, {p.quote.quote: (cat.quotes[p.quote.quote].lead_time_days,
                                                   cat.quotes[p.quote.quote].lead_time_p90_days)
                                   for p in plan.purchases})
    finish = finishes(sc, plan_waits(report.data, plan))
    cost = np.zeros(draws.n)
    for run in prepared.runs:
        c = run.run.candidate
        factor = price_factor(draws, a, c.quote) if c.quote is not None else None
        cost = cost + _lines_at(pp, c, run.option, run.point, sc.wall(c), factor) + run.extra_usd
    delivered = [np.maximum(p.delivered_day, p.order_day + sc.lead(p.quote.quote)) for p in plan.purchases]
    end = np.max(np.stack(list(finish.values())), axis=0)
    for p, day in zip(plan.purchases, delivered, strict=True):
        fixed, per_price = prepared.lot_parts[p.quote.quote]
        q = cat.quotes[p.quote.quote]
        held = np.clip(end - day, 0, len(fixed) - 1).astype(np.int64)
        price = q.price * (price_factor(draws, a, q.id) if q.kind == "estimate" else 1.0)
        cost = cost + p.quote.lot_nodes * (fixed[held] + price * per_price[held])
    cost = cost + sum(v for _, v in plan.porting)
    cost = cost + a.money.delay_cost_usd_per_day * np.maximum(0.0, end - plan.end_day)
    return Simulated({k: v.astype(np.int64) for k, v in finish.items()}, end.astype(np.int64), cost)


def _p_all(report: ProgramReport, sim: Simulated) -> float | None:
    met = np.ones(len(sim.cost), dtype=bool)
    any_deadline = False
    for w in report.data.workloads:
        if w.deadline_day is not None:
            any_deadline = True
            met &= sim.finish[w.id] <= w.deadline_day
    return float(np.count_nonzero(met)) / len(met) if any_deadline else None


def program_risk(pp: ProgramProblem, report: ProgramReport, bins: int = 12,
                 scenarios: int | None = None) -> ProgramRisk | None:
    """The chosen program's risk (see module docstring); None when there is no plan."""
    plan = report.outcome.plan
    if plan is None:
        return None
    draws = draws_for(pp.first, scenarios)
    log.info("program risk: %d scenarios", draws.n)
    prepared = prepare_plan(pp, report)
    sim = simulate(pp, report, draws, prepared)
    workloads = []
    for w in report.data.workloads:
        f = np.sort(sim.finish[w.id])
        p = None if w.deadline_day is None else float(np.count_nonzero(f <= w.deadline_day)) / len(f)
        workloads.append(WorkloadRisk(w.id, plan.run(w.id).end_day, w.deadline_day, p,
                                      int(quantile(f, 0.5, presorted=True)), int(quantile(f, 0.9, presorted=True))))
    end, cost = np.sort(sim.end), np.sort(sim.cost)
    swings = []
    for group in sorted(UNFAVOURABLE):
        figures = []
        for sign in (-1.0, 1.0):
            held = simulate(pp, report, draws.holding(group, sign * UNFAVOURABLE[group] * TORNADO_Z), prepared)
            figures.append((_p_all(report, held), float(held.cost.mean())))
        swings.append(ProgramSwing(group, LABEL[group], (figures[0][0], figures[1][0]),
                                   (figures[0][1], figures[1][1])))
    swings.sort(key=lambda s: (-(abs(s.p_all[0] - s.p_all[1]) if None not in s.p_all else 0.0),  # type: ignore
                               -abs(s.cost_expected[1] - s.cost_expected[0]), s.group))
    return ProgramRisk(draws.n, draws.seed, tuple(workloads), _p_all(report, sim), plan.end_day,
                       int(quantile(end, 0.5, presorted=True)), int(quantile(end, 0.9, presorted=True)),
                       plan.cost_usd, float(sim.cost.mean()), quantile(cost, 0.9, presorted=True),
                       cvar(cost, presorted=True), histogram(sim.end.astype(float), bins),
                       histogram(sim.cost, bins), tuple(swings))


__all__ = ["ProgramRisk", "WorkloadRisk", "ProgramSwing", "program_risk", "simulate", "Simulated"]
