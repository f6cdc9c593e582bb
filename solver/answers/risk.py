"""Risk of the chosen plan and its runners-up, by scenarios: the chance of meeting the deadline, P50/P80/P90 finish
dates, the expected cost, its P90 and CVaR95 (`estimate/scenarios.py` gives the model; `uncertainty.py` the draws).

Every plan of one answer is evaluated on the same draws (common random numbers), so a difference between two
plans' figures is a difference of the plans. The seed and the count are `assumptions.uncertainty` (or
`--scenarios`), reported with the figures.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
import numpy as np

from ..estimate.delivery import install_days
from ..estimate.options import Option, Point, node_cost_at, plan_fixed_cost_at
from ..estimate.scenarios import CostCurve, RiskStats, stats, wall_hours, wall_kinks
from ..estimate.uncertainty import Draws, lead_days, mfu_factor, porting_days, price_factor
from ..inputs.problem import Problem
from ..solve.pipeline import Context, SolveSettings, prepare, solve_problem
from ..solve.plan import Plan, Result

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outcomes:
    """One plan's scenarios: finish day (from as_of), cost in dollars, and the parts behind them."""

    finish_day: np.ndarray
    cost: np.ndarray
    wall_hours: np.ndarray
    slip_days: np.ndarray


def draws_for(problem: Problem, scenarios: int | None = None) -> Draws:
    u = problem.assumptions.values.uncertainty
    return Draws(u.seed, scenarios or u.scenarios)


def _point(ctx: Context, plan: Plan) -> tuple[Option, Point]:
    for o in ctx.universe.options:
        if o.id == plan.option:
            for pt in o.points:
                if pt.n == plan.nodes and pt.time is not None:
                    return o, pt
    raise LookupError(f"plan {plan.option} x{plan.nodes} is not a point of this problem")


def outcomes(ctx: Context, plan: Plan, draws: Draws) -> Outcomes:
    """The plan in every scenario (see `estimate/scenarios.py`)."""
    problem = ctx.problem
    a = problem.assumptions.values
    o, pt = _point(ctx, plan)
    assert pt.time is not None
    wall = wall_hours(pt.time, a.reliability.restart_hours, mfu_factor(draws, a, o.accel.software, o.accel.cls),
                      draws.normal("interruptions"), draws.uniform("interruptions"))
    start_day = (plan.start - problem.as_of).days
    slip = _slip_days(problem, o, plan, draws, start_day)
    days = np.maximum(1.0, np.ceil(wall / 24.0 - 1e-9))
    finish = start_day + np.ceil(slip - 1e-9) + days
    cost = _cost(problem, o, plan, draws, wall) + a.money.delay_cost_usd_per_day * slip
    return Outcomes(finish.astype(np.int64), cost, wall, slip)


def _slip_days(problem: Problem, o: Option, plan: Plan, draws: Draws, start_day: int) -> np.ndarray:
    """Days by which the start moves past the planned start: the latest of the quotes' late deliveries and a late
    port of the software."""
    a = problem.assumptions.values
    slip = np.zeros(draws.n)
    for pq in plan.quotes:
        q = problem.catalog.quotes[pq.id]
        ordered = (pq.ordered - problem.as_of).days if pq.ordered is not None else 0
        allowance = start_day - ordered - install_days(q.mode, o.accel.cls, a)
        lead = lead_days(draws, q.id, q.lead_time_days, q.lead_time_p90_days, a.lead_time_cap_quantile)
        slip = np.maximum(slip, lead - allowance)
    if o.porting.delay_days > 0:
        port = porting_days(draws, a, f"{o.accel.software}/{problem.spec.workload.framework}", o.porting.delay_days)
        slip = np.maximum(slip, port - start_day)
    return slip


def _cost(problem: Problem, o: Option, plan: Plan, draws: Draws, wall: np.ndarray) -> np.ndarray:
    """Cost per scenario without the premiums the scenarios cover (see `estimate/scenarios.py`)."""
    a = problem.assumptions.values
    lo, hi = float(wall.min()), float(wall.max())
    n = plan.nodes
    total = CostCurve.of(lambda h: plan_fixed_cost_at(o, problem, n, h), lo, hi, wall_kinks(a.money, 0.0, 0.0))(wall)
    total = total + plan.lines.cost.get("rules", 0.0)
    for pq in plan.quotes:
        q = problem.catalog.quotes[pq.id]
        before = (install_days(q.mode, o.accel.cls, a) + pq.wait_days) * 24.0
        kinks = wall_kinks(a.money, q.commit_months, before)
        grid = sorted({lo, hi, *(k for k in kinks if lo < k < hi)})
        pairs = [node_cost_at(o, q, problem, n, h, pq.wait_days) for h in grid]
        c0 = CostCurve(np.array(grid), np.array([p[0] for p in pairs]))(wall)
        c1 = CostCurve(np.array(grid), np.array([p[1] for p in pairs]))(wall)
        price = q.price * (price_factor(draws, a, q.id) if q.kind == "estimate" else 1.0)
        total = total + pq.nodes * (c0 + price * c1)
    return total


def plan_risk(ctx: Context, plan: Plan, draws: Draws) -> RiskStats:
    out = outcomes(ctx, plan, draws)
    return stats(out.finish_day, out.cost, ctx.universe.deadline_day, draws.seed)


def risk_table(ctx: Context, result: Result, scenarios: int | None = None) -> dict[str, RiskStats]:
    """The risk of the chosen plan and of each runner-up, by option id, on one set of draws."""
    plans = ([result.plan] if result.plan is not None else []) + [alt.plan for alt in result.alternatives]
    if not plans:
        return {}
    draws = draws_for(ctx.problem, scenarios)
    log.info("risk: %d plans x %d scenarios", len(plans), draws.n)
    return {p.option: plan_risk(ctx, p, draws) for p in plans}


TORNADO_Z = 1.2815515655446004
"""Each uncertainty of the tornado is held at its 10th and 90th percentile (z = ∓1.28), the others left random."""
UNFAVOURABLE = {"mfu": -1.0, "interruptions": 1.0, "lead": 1.0, "porting": 1.0, "price": 1.0}
"""The direction in which each source hurts: a low MFU; many interruptions, long lead times and porting, high
prices."""
LABEL = {"mfu": "achieved MFU", "interruptions": "interruptions", "lead": "delivery lead times",
         "porting": "porting the software", "price": "estimated prices"}


@dataclass(frozen=True)
class Swing:
    """One bar of the tornado: the plan's figures with one source held at its favourable and unfavourable
    decile."""

    group: str
    label: str
    p_deadline: tuple[float | None, float | None]
    cost_expected: tuple[float, float]

    @property
    def size(self) -> float:
        if self.p_deadline[0] is not None and self.p_deadline[1] is not None:
            return abs(self.p_deadline[0] - self.p_deadline[1])
        return 0.0


def tornado(ctx: Context, plan: Plan, draws: Draws) -> list[Swing]:
    """Which uncertainty moves the chance of the deadline (then the expected cost) most, largest first."""
    out = []
    for group in sorted(UNFAVOURABLE):
        figures = []
        for sign in (-1.0, 1.0):
            held = draws.holding(group, sign * UNFAVOURABLE[group] * TORNADO_Z)
            st = plan_risk(ctx, plan, held)
            figures.append((st.p_deadline, st.cost_expected))
        out.append(Swing(group, LABEL[group], (figures[0][0], figures[1][0]), (figures[0][1], figures[1][1])))
    return sorted(out, key=lambda s: (-s.size, -abs(s.cost_expected[1] - s.cost_expected[0]), s.group))


def histogram(values: np.ndarray, bins: int) -> list[tuple[float, float, float]]:
    """(from, to, share of scenarios) over equal-width bins from the smallest to the largest value."""
    lo, hi = float(values.min()), float(values.max())
    if hi <= lo:
        return [(lo, hi, 1.0)]
    counts, edges = np.histogram(values, bins=bins, range=(lo, hi))
    return [(float(edges[i]), float(edges[i + 1]), float(counts[i]) / len(values)) for i in range(bins)]


@dataclass(frozen=True)
class RiskReport:
    """`plan risk`: the chosen plan, its figures, its distributions and its tornado."""

    problem: Problem
    plan: Plan
    stats: RiskStats
    deadline_day: int | None
    finish_bins: list[tuple[float, float, float]]
    cost_bins: list[tuple[float, float, float]]
    swings: list[Swing]


def analyse(problem: Problem, settings: SolveSettings, bins: int) -> RiskReport | None:
    """Solve the problem and take its chosen plan apart by scenarios; None when there is no plan."""
    ctx = prepare(problem, settings)
    result = solve_problem(problem, ctx.settings, ctx)
    if result.plan is None:
        return None
    draws = draws_for(problem)
    out = outcomes(ctx, result.plan, draws)
    return RiskReport(problem, result.plan, stats(out.finish_day, out.cost, ctx.universe.deadline_day, draws.seed),
                      ctx.universe.deadline_day, histogram(out.finish_day.astype(float), bins),
                      histogram(out.cost, bins), tornado(ctx, result.plan, draws))


__all__ = ["Outcomes", "outcomes", "plan_risk", "risk_table", "draws_for", "tornado", "histogram", "Swing",
           "RiskReport", "analyse"]
