"""Risk of the chosen plan and its runners-up, by scenarios: the chance of meeting the deadline, P50/P80/P90 finish
dates, the expected days late, the expected completion cost (what the objective minimises) with its sampling error,
its P90 and CVaR95 (`estimate/outlook.py` gives the model; `uncertainty.py` the draws).

Two readings of the same scenarios, each where it is exact:
- the expectation, the chance of the deadline and the finish dates integrate the start exactly against the run
  scenarios (`starts.py`, conditional Monte Carlo): per run scenario s, the completion cost given the run
  f̄_s = cost(W_s) + price of a late day × E_S[max(0, S + d_s − D)], an estimated price at its mean; these are the
  figures the objective was computed from, so the expected cost equals the plan's cost (less its tail premium);
- the spread of the cost (its P90, CVaR95 and histogram) needs every source drawn together: the start of each
  scenario is drawn too (each quote's lead time, the port; the run starts when the last is there), and an estimated
  price is its scenario's draw.

Every plan of one answer is evaluated on the same draws (common random numbers), so a difference between two plans'
figures is a difference of the plans, and its sampling error is the paired one (`difference_std_error`).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np

from ..estimate.delivery import install_days
from ..estimate.options import Option, Point, node_cost_at, plan_fixed_cost_at
from ..estimate.outlook import Outlook, reference_day, rule_delay
from ..estimate.scenarios import CVAR_ALPHA, CostCurve, RiskStats, cvar, cvar_weight, quantile, wall_kinks
from ..estimate.starts import StartLaw
from ..estimate.uncertainty import Draws, lead_days, porting_days, price_factor
from ..inputs.problem import Problem
from ..solve.pipeline import Context, SolveSettings, prepare, solve_problem
from ..solve.plan import Plan, Result

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outcomes:
    """One plan's scenarios: the conditional completion cost f̄_s of each run scenario, and the joint draws — finish
    day (from as_of), completion cost in dollars, wall hours, and days late."""

    expected: np.ndarray
    """f̄_s: cost given the run, the start integrated exactly (module docstring)."""
    finish_day: np.ndarray
    cost: np.ndarray
    wall_hours: np.ndarray
    late_days: np.ndarray
    law: StartLaw
    run_days: np.ndarray


def draws_for(problem: Problem, scenarios: int | None = None, seed: int | None = None) -> Draws:
    u = problem.assumptions.values.uncertainty
    return Draws(u.seed if seed is None else seed, scenarios or u.scenarios)


def _point(ctx: Context, plan: Plan) -> tuple[Option, Point]:
    for o in ctx.universe.options:
        if o.id == plan.option:
            for pt in o.points:
                if pt.n == plan.nodes and pt.time is not None:
                    return o, pt
    raise LookupError(f"plan {plan.option} x{plan.nodes} is not a point of this problem")


def _orders(problem: Problem, plan: Plan) -> list[tuple[object, int]]:
    return [(problem.catalog.quotes[pq.id], (pq.ordered - problem.as_of).days if pq.ordered is not None else 0)
            for pq in plan.quotes]


def outcomes(ctx: Context, plan: Plan, draws: Draws) -> Outcomes:
    """The plan in every scenario (module docstring)."""
    problem = ctx.problem
    out = Outlook.of(problem, None if _own_draws(problem, draws) else draws)
    o, pt = _point(ctx, plan)
    runs = out.runs(o, pt)
    delay = rule_delay(problem, pt, plan.allocation)
    law = out.law(o, _orders(problem, plan), delay)  # type: ignore[arg-type]
    cost, driven = _cost(problem, o, plan, runs.walls)
    rules = plan.lines.cost.get("rules", 0.0)
    start = _sampled_start(problem, o, plan, draws, out.floor(o, delay), delay)
    finish = start + runs.days
    deadline = out.deadline_day
    late = np.zeros(draws.n) if deadline is None else np.maximum(0, finish - deadline).astype(float)
    given_run = np.zeros(draws.n) if deadline is None else \
        _late_given_run(law, runs.days, deadline)
    held_price = "price" in draws.held
    expected = cost + rules + out.price * given_run
    sampled = cost + rules + out.price * late
    for qid, drive in driven:
        q = problem.catalog.quotes[qid]
        factor = price_factor(draws, problem.assumptions.values, q.id)
        expected = expected + drive * q.price * (factor if held_price else _mean_factor(problem))
        sampled = sampled + drive * q.price * factor
    return Outcomes(expected, finish.astype(np.int64), sampled, runs.walls, late, law, runs.days)


def _own_draws(problem: Problem, draws: Draws) -> bool:
    """Whether `draws` are the problem's own (its seed and count, nothing held): the solve's outlook has them."""
    u = problem.assumptions.values.uncertainty
    return not draws.held and draws.seed == u.seed and draws.n == u.scenarios


def _mean_factor(problem: Problem) -> float:
    return 1.0 + problem.assumptions.values.money.estimate_price_risk_pct / 100.0


def _late_given_run(law: StartLaw, days: np.ndarray, deadline: int) -> np.ndarray:
    """E_S[max(0, S + d_s − D)] for each run scenario's days d_s: the start law against each distinct run length
    (a few hundred), then looked up per scenario."""
    x = law.days()
    pmf = law.pmf()
    keep = pmf > 0
    values, where = np.unique(days, return_inverse=True)
    late = np.maximum(0, x[keep][None, :] + values[:, None] - deadline) @ pmf[keep]
    return late[where]


def _sampled_start(problem: Problem, o: Option, plan: Plan, draws: Draws, floor: int, delay: int) -> np.ndarray:
    """The day the run starts in each scenario when every source is drawn: the latest of the floor, the port
    (after the rules' delays) and each quote's capacity, from its order day (`starts.py`)."""
    a = problem.assumptions.values
    start = np.full(draws.n, float(floor))
    for pq in plan.quotes:
        q = problem.catalog.quotes[pq.id]
        ordered = (pq.ordered - problem.as_of).days if pq.ordered is not None else delay
        lead = lead_days(draws, q.id, q.lead_time_days, q.lead_time_p90_days, a.lead_time_cap_quantile)
        start = np.maximum(start, np.ceil(ordered + install_days(q.mode, o.accel.cls, a) + lead - 1e-9))
    if o.porting.delay_days > 0:
        port = porting_days(draws, a, f"{o.accel.software}/{problem.spec.workload.framework}", o.porting.delay_days)
        start = np.maximum(start, np.ceil(port - 1e-9) + delay)
    return start.astype(np.int64)


def _cost(problem: Problem, o: Option, plan: Plan, wall: np.ndarray) -> tuple[np.ndarray, list[tuple[str, np.ndarray]]]:
    """Cost per run scenario without the estimated prices' price-driven part, and that part per estimated quote
    per dollar of its price (the model's own cost functions at each run's hours: `options.node_cost_at`)."""
    a = problem.assumptions.values
    lo, hi = float(wall.min()), float(wall.max())
    n = plan.nodes
    total = CostCurve.of(lambda h: plan_fixed_cost_at(o, problem, n, h), lo, hi, wall_kinks(a.money, 0.0, 0.0))(wall)
    driven: list[tuple[str, np.ndarray]] = []
    for pq in plan.quotes:
        q = problem.catalog.quotes[pq.id]
        before = (install_days(q.mode, o.accel.cls, a) + pq.wait_days) * 24.0
        kinks = wall_kinks(a.money, q.commit_months, before, q.term_hours)
        grid = sorted({lo, hi, *(k for k in kinks if lo < k < hi)})
        pairs = [node_cost_at(o, q, problem, n, h, pq.wait_days) for h in grid]
        c0 = CostCurve(np.array(grid), np.array([p[0] for p in pairs]))(wall)
        c1 = CostCurve(np.array(grid), np.array([p[1] for p in pairs]))(wall)
        total = total + pq.nodes * c0
        if q.kind == "estimate":
            driven.append((q.id, pq.nodes * c1))
        else:
            total = total + pq.nodes * q.price * c1
    return total, driven


def objective_terms(expected: np.ndarray, weight: float) -> np.ndarray:
    """Each scenario's term h_s of the objective's estimator, whose mean is (1 − λ)·mean f̄ + λ·CVaR95 f̄ to first
    order (the influence function of CVaR: VaR + (f̄ − VaR)⁺/(1 − α)): sd(h)/√N is the objective's sampling error,
    and sd(h − h')/√N that of its difference to another plan on the same draws."""
    if weight <= 0:
        return expected
    var = quantile(expected, CVAR_ALPHA)
    return (1.0 - weight) * expected + weight * (var + np.maximum(0.0, expected - var) / (1.0 - CVAR_ALPHA))


def stats_of(ctx: Context, plan: Plan, out: Outcomes, draws: Draws) -> RiskStats:
    """What the risk table shows for one plan (module docstring)."""
    n = draws.n
    finish = _finish_law(out.law, out.run_days)
    p, late = _against_deadline(finish, reference_day(ctx.problem))
    costs = np.sort(out.cost)
    terms = objective_terms(out.expected, cvar_weight(ctx.problem))
    return RiskStats(scenarios=n, seed=draws.seed, p_deadline=p, finish_p50=finish.quantile(0.5),
                     finish_p80=finish.quantile(0.8), finish_p90=finish.quantile(0.9),
                     cost_expected=float(out.expected.mean()), cost_p90=quantile(costs, 0.9, presorted=True),
                     cvar95=cvar(costs, presorted=True), cost_std_error=_std_error(out.expected),
                     late_days_expected=late, objective=plan.total_cost, objective_std_error=_std_error(terms))


def _std_error(values: np.ndarray) -> float:
    """sd/√N of a mean over the scenarios."""
    n = len(values)
    return float(values.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0


def _against_deadline(finish: StartLaw, deadline: int | None) -> tuple[float | None, float]:
    """(P(finish ≤ deadline), E[days past it]) of a finish law; (None, 0) without a deadline."""
    if deadline is None:
        return None, 0.0
    p = 0.0 if deadline < finish.lo else float(finish.cdf[min(len(finish.cdf) - 1, deadline - finish.lo)])
    return p, float(finish.pmf() @ np.maximum(0, finish.days() - deadline))


def deadline_chance(ctx: Context, plan: Plan) -> tuple[float | None, float]:
    """(P(deadline), E[days late]) of a plan over the problem's own scenarios, exact in the start (`outcomes`
    without its cost): what the risk table shows for it, at the price of a few array operations."""
    problem = ctx.problem
    deadline = reference_day(problem)
    if deadline is None:
        return None, 0.0
    out = Outlook.of(problem)
    o, pt = _point(ctx, plan)
    law = out.law(o, _orders(problem, plan), rule_delay(problem, pt, plan.allocation))  # type: ignore[arg-type]
    return _against_deadline(_finish_law(law, out.runs(o, pt).days), deadline)


def _finish_law(start: StartLaw, days: np.ndarray) -> StartLaw:
    """The law of S + d: the start's law convolved with the run scenarios' days (exact in S, the sample's in d)."""
    first = int(days.min())
    hist = np.bincount(days - first) / len(days)
    pmf = np.convolve(start.pmf(), hist)
    cdf = np.minimum(1.0, np.cumsum(pmf))
    cdf[-1] = 1.0
    return StartLaw(start.lo + first, cdf)


def plan_risk(ctx: Context, plan: Plan, draws: Draws) -> RiskStats:
    return stats_of(ctx, plan, outcomes(ctx, plan, draws), draws)


@dataclass(frozen=True)
class RiskTable:
    """The risk of the chosen plan and of each runner-up (by option id), and the sampling error of each one's
    difference in objective to the chosen plan (paired: the same draws)."""

    stats: dict[str, RiskStats]
    difference_std_error: dict[str, float]


def risk_table(ctx: Context, result: Result, scenarios: int | None = None) -> dict[str, RiskStats]:
    """The risk of the chosen plan and of each runner-up, by option id, on one set of draws."""
    return risk_and_differences(ctx, result, scenarios).stats


def risk_and_differences(ctx: Context, result: Result, scenarios: int | None = None) -> RiskTable:
    plans = ([result.plan] if result.plan is not None else []) + [alt.plan for alt in result.alternatives]
    if not plans:
        return RiskTable({}, {})
    draws = draws_for(ctx.problem, scenarios)
    log.info("risk: %d plans x %d scenarios", len(plans), draws.n)
    weight = cvar_weight(ctx.problem)
    stats: dict[str, RiskStats] = {}
    terms: dict[str, np.ndarray] = {}
    for p in plans:
        out = outcomes(ctx, p, draws)
        stats[p.option] = stats_of(ctx, p, out, draws)
        terms[p.option] = objective_terms(out.expected, weight)
    diffs: dict[str, float] = {}
    if result.plan is not None and draws.n > 1:
        base = terms[result.plan.option]
        for p in plans[1:]:
            diffs[p.option] = float((terms[p.option] - base).std(ddof=1) / math.sqrt(draws.n))
    return RiskTable(stats, diffs)


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
    """Which uncertainty moves the chance of the deadline (then the expected cost) most, largest first: each held at
    its own favourable and unfavourable decile (its P10 and P90 — for delivery, every quote's lead time at that
    quantile of its own law), the others random."""
    out = []
    for group in sorted(UNFAVOURABLE):
        figures = []
        for sign in (-1.0, 1.0):
            held = draws.holding(group, sign * UNFAVOURABLE[group] * TORNADO_Z)
            o = outcomes(ctx, plan, held)
            st = stats_of(ctx, plan, o, held)
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


def law_histogram(law: StartLaw, bins: int) -> list[tuple[float, float, float]]:
    """(from, to, probability) of a law on days over equal-width bins of its support (with probability > 0)."""
    pmf = law.pmf()
    live = np.flatnonzero(pmf > 1e-12)
    lo, hi = law.lo + int(live[0]), law.lo + int(live[-1])
    if hi <= lo:
        return [(float(lo), float(hi), 1.0)]
    edges = np.linspace(lo, hi, bins + 1)
    days = law.days()
    which = np.clip(np.searchsorted(edges, days, side="right") - 1, 0, bins - 1)
    mass = np.bincount(which, weights=pmf, minlength=bins)
    return [(float(edges[i]), float(edges[i + 1]), float(mass[i])) for i in range(bins)]


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
    return analyse_plan(ctx, result.plan, bins)


def analyse_plan(ctx: Context, plan: Plan, bins: int) -> RiskReport:
    """A solved plan taken apart by scenarios (what `analyse` gives for the chosen plan): its figures, its finish
    and cost histograms and its tornado, on the problem's own draws."""
    problem = ctx.problem
    draws = draws_for(problem)
    out = outcomes(ctx, plan, draws)
    return RiskReport(problem, plan, stats_of(ctx, plan, out, draws), reference_day(problem),
                      law_histogram(_finish_law(out.law, out.run_days), bins), histogram(out.cost, bins),
                      tornado(ctx, plan, draws))


__all__ = ["Outcomes", "outcomes", "plan_risk", "risk_table", "risk_and_differences", "RiskTable", "draws_for",
           "tornado", "histogram", "law_histogram", "Swing", "RiskReport", "analyse", "analyse_plan",
           "objective_terms"]
