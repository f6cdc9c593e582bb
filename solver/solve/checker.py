"""Independent plan checker: re-verifies a returned plan against every constraint and re-derives its dollars.

It reads neither the CP-SAT model nor the cost functions of `estimate/cost.py`. From the plan's decision
(system, mode, node count, quote allocation, start date) it recomputes memory and time with the estimators
(themselves tested against hand calculations), dates, power and racks, evaluates every limit, policy and rule
(through `inputs/rules.py`, the shared *meaning* of the input), and recomputes every cost line from catalog fields
and assumptions with its own formulas, written per plan rather than per node. A formula bug in `cost.py`, in the
price templates or in the model therefore shows as a mismatch here. A violation is a bug in `plan` (or a CP-SAT
wrong answer, cf. google/or-tools#5293) and raises `PlanCheckError`; it is never shown as a plan.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from statistics import NormalDist

import numpy as np

from ..errors import PlanCheckError
from ..estimate.compute import TimeEstimate, estimate_time, training_flops, utilisation
from ..estimate.memory import Shape, memory_per_gpu, model_shape
from ..estimate.options import Universe
from ..estimate.scenarios import COUNT_SPREAD_SHARE
from ..estimate.uncertainty import Draws, lead_days, mfu_factor, porting_days
from ..inputs.catalog import PRICE_FIELDS, Accelerator, Quote, System
from ..inputs.problem import Problem
from ..inputs.rules import adjustments, delay_days, matches_attrs, matches_point, names_quote, option_attrs, \
    policy_breaches
from .check_lines import checkpoint_size, checkpoint_violations, data_lines, deposit_line, failure_rate, \
    payment_violations, run_lines, spare_share
from .plan import Plan

HOURS_PER_YEAR = 8760.0
RISK = ("lateness", "consumer_risk", "estimate_price", "tail")
"""Cost lines that are premiums, not payments: never part of cash."""
_N = NormalDist()


def _close(a: float, b: float, rel: float = 1e-6) -> bool:
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


class _Ledger:
    """Expected cost and cash lines, accumulated by name."""

    def __init__(self) -> None:
        self.cost: dict[str, float] = {}
        self.cash: dict[str, float] = {}

    def charge(self, name: str, cost: float, cash: float | None = None) -> None:
        self.cost[name] = self.cost.get(name, 0.0) + cost
        if name not in RISK:
            self.cash[name] = self.cash.get(name, 0.0) + (cost if cash is None else cash)


def _resale(age_years: float, curve: dict[float, float]) -> float:
    """The resale curve read at an age: straight between its points, flat beyond the last."""
    ages = sorted(curve)
    if age_years >= ages[-1]:
        return curve[ages[-1]]
    hi = next(a for a in ages if a >= age_years)
    if hi == ages[0]:
        return curve[hi]
    lo = ages[ages.index(hi) - 1]
    return curve[lo] + (curve[hi] - curve[lo]) * (age_years - lo) / (hi - lo)


def _buy(led: _Ledger, q: Quote, k: int, nodes: int, ideal: float, wall: float, wait: int, problem: Problem,
         accel: Accelerator, system: System) -> None:
    """k nodes bought from quote q and held from delivery: install, `wait` days, the run. Their value lost by the
    end (resold at the curve's value for that age, depreciated straight-line for reuse, written off when idle),
    capital, support and hall for the time held, energy for the run; the hot spares bought and held alike for the
    run as expected; risk premiums on top."""
    a, spec = problem.assumptions.values, problem.spec
    m = a.money
    site = spec.site
    assert site is not None
    capex = q.price * k
    extra = m.network_capex_fraction if nodes > 1 else 0.0
    s = spare_share(problem, nodes)
    cluster = capex * (1 + extra)
    before = (a.install_days[accel.cls] + wait) * 24.0  # type: ignore[index]
    after = spec.policy.after_run

    def lost(hours: float) -> float:
        """Fraction of the hardware's value gone after holding it `hours`."""
        if after == "idle":
            return 1.0
        if after == "reuse":
            return min(1.0, (before + hours) / (m.depreciation_years * HOURS_PER_YEAR)) * (1 - m.residual_fraction)
        return 1.0 - _resale((before + hours) / HOURS_PER_YEAR, m.resale_value_by_age_years)

    if after == "resell":
        led.charge("compute", capex, cash=capex)
        led.charge("network_storage", capex * extra, cash=capex * extra)
        led.charge("resale_credit", cluster * (lost(ideal) - 1.0), cash=0.0)
    else:
        led.charge("compute", capex * lost(ideal), cash=capex)
        led.charge("network_storage", capex * extra * lost(ideal), cash=capex * extra)
    led.charge("failure_rework", cluster * (lost(wall) - lost(ideal)), cash=0.0)
    capital = cluster * m.cost_of_capital_pct_per_year / 100.0
    support = cluster * m.support_pct_per_year / 100.0
    colo = site.colocation_usd_per_kw_month
    hall = float(system.node_kw.value) * k * (colo if colo is not None else m.facility_usd_per_kw_month) * 12.0
    for name, per_year, paid in (("capital", capital, False), ("support", support, True),
                                 ("facility", hall, colo is not None)):
        held, extra_h = (before + ideal) / HOURS_PER_YEAR * per_year, (wall - ideal) / HOURS_PER_YEAR * per_year
        led.charge(name, held, cash=held if paid else 0.0)
        led.charge("failure_rework", extra_h, cash=extra_h if paid else 0.0)
    deposit_line(led, problem, q, k, nodes)
    kw_at_meter = float(system.node_kw.value) * k * site.pue
    led.charge("energy", kw_at_meter * ideal * site.electricity_usd_per_kwh)
    led.charge("failure_rework", kw_at_meter * (wall - ideal) * site.electricity_usd_per_kwh)
    years = (before + wall) / HOURS_PER_YEAR
    if s > 0:
        led.charge("spares", s * (cluster * lost(wall) + (capital + support + hall) * years),
                   cash=s * (cluster + support * years + (hall * years if colo is not None else 0.0)))
    if accel.cls == "consumer":
        led.charge("consumer_risk", (1.0 + s) * capex * lost(wall) * m.consumer_risk_pct / 100.0)
    if q.kind == "estimate":
        driven = (1.0 + s) * (cluster * lost(wall) + (capital + support) * years)
        led.charge("estimate_price", driven * m.estimate_price_risk_pct / 100.0)


def _rented(led: _Ledger, q: Quote, k: int, nodes: int, ideal: float, wall: float, problem: Problem,
            system: System) -> None:
    """k of a plan's `nodes` nodes rented (per GPU-hour) or contracted (per node-month) from quote q, billed at least
    for the commitment (and for the cloud's minimum billed hours)."""
    m = problem.assumptions.values.money
    month = HOURS_PER_YEAR / 12.0
    own_wall = 0.0   # the part of the wall billing at the quote's own price (what an estimate is unsure of)
    if q.mode == "cloud":
        floor = max(q.commit_months * month, m.cloud_min_billed_hours)
        term = q.max_term_months * month if q.max_term_months is not None else math.inf
        gpus = system.per_node * k

        def billed(hours: float) -> tuple[float, float]:
            h = max(hours, floor)
            return q.price * gpus * min(h, term), q.after_term_rate * gpus * max(0.0, h - term)
        (ideal_own, ideal_after), (own_wall, wall_after) = billed(ideal), billed(wall)
        billed_ideal, billed_wall = ideal_own + ideal_after, own_wall + wall_after
    else:
        billed_ideal = q.price * k * max(ideal / month, q.commit_months)
        billed_wall = own_wall = q.price * k * max(wall / month, q.commit_months)
    led.charge("compute", billed_ideal)
    led.charge("failure_rework", billed_wall - billed_ideal)
    s = spare_share(problem, nodes)   # hot spares, billed as the plan's own nodes for the run as expected
    if s > 0:
        led.charge("spares", s * billed_wall)
    if q.kind == "estimate":
        led.charge("estimate_price", (1.0 + s) * own_wall * m.estimate_price_risk_pct / 100.0)


def _schedule(problem: Problem, plan: Plan, accel: Accelerator, system: System, days: int) -> tuple[int, int]:
    """(planned start day, rule delay): the latest of the earliest start, porting/availability and every used
    quote's order-to-ready time, after the rules' delays."""
    spec, a = problem.spec, problem.assumptions.values
    porting = a.porting[accel.software][spec.workload.framework]  # type: ignore[index]
    need = max(0, math.ceil(porting.delay_days), (accel.available_from.value - problem.as_of).days)
    install = a.install_days[accel.cls] if plan.mode == "buy" else 0.0  # type: ignore[index]
    for pq in plan.quotes:
        need = max(need, math.ceil(problem.catalog.quotes[pq.id].lead_days(a.confidence) + install))
    delay = sum(delay_days(then) for rule, then in adjustments(spec.rules, _attrs(accel, system, plan.mode),
                                                               plan.gpus, plan.nodes, days, plan.power_kw)
                if names_quote(rule, plan.allocation))
    earliest = (spec.schedule.earliest_start - problem.as_of).days if spec.schedule.earliest_start else 0
    return max(earliest, need + delay), delay


def _wait(problem: Problem, q: Quote, accel: Accelerator, start: int) -> int:
    """Days the quote's hardware waits for the start: bought hardware is ordered just in time, or on its quote's
    last valid day when that comes first, and then waits; rented capacity never waits."""
    a = problem.assumptions.values
    if q.mode != "buy":
        return 0
    ready = math.ceil(q.lead_days(a.confidence) + a.install_days[accel.cls])  # type: ignore[index]
    last = (q.valid_until - problem.as_of).days
    return max(0, start - ready - last) if last >= 0 else 0


def _ledger(problem: Problem, plan: Plan, accel: Accelerator, system: System, ideal: float, wall: float,
            waits: dict[str, int], shape: Shape) -> _Ledger:
    """Every line of the plan for a run of `ideal` hours without failures and `wall` with them, its bought
    hardware waiting the given days (the checkpoint lines: `check_lines.py`)."""
    a, spec = problem.assumptions.values, problem.spec
    m = a.money
    led = _Ledger()
    for pq in plan.quotes:
        q = problem.catalog.quotes[pq.id]
        if plan.mode == "buy":
            _buy(led, q, pq.nodes, plan.nodes, ideal, wall, waits.get(q.id, 0), problem, accel, system)
        else:
            _rented(led, q, pq.nodes, plan.nodes, ideal, wall, problem, system)
    data_lines(led, problem, plan, shape, wall)
    run_lines(led, problem, plan, failure_rate(problem, plan, accel), wall)
    porting = a.porting[accel.software][spec.workload.framework]  # type: ignore[index]
    fte = m.ops_fte[plan.mode]  # type: ignore[index]
    engineers = (fte.base if plan.nodes > 1 else 0.0) + fte.per_1000_gpus * plan.gpus / 1000.0
    led.charge("porting", porting.weeks / 52.0 * 12.0 * m.engineer_usd_per_month)
    led.charge("operations", engineers * m.engineer_usd_per_month * max(wall, m.ops_min_days * 24.0)
               / (HOURS_PER_YEAR / 12.0))
    return led


class _Runs:
    """The plan's run scenarios as this checker reads them: wall hours and whole days per scenario (the uncertainty
    model's MFU draws), the 5% longest, and the mean of any of the plan's lines over them — each line evaluated by this
    checker's ledger at the hours where a line changes slope (a commitment's floor, the minimum operations time, the
    ages of the resale curve, the depreciation life) and interpolated between them."""

    def __init__(self, problem: Problem, plan: Plan, t: TimeEstimate, accel: Accelerator) -> None:
        a = problem.assumptions.values
        draws = Draws(a.uncertainty.seed, a.uncertainty.scenarios)
        # The run at the scenario's MFU, its interruptions at their expected count for that length (the run's
        # planned wall time scales with 1 / MFU: failures, checkpoints and restarts are a share of the run) —
        # unless their count's spread is material (`scenarios.count_spread_matters`): then drawn.
        measured = problem.spec.workload.measured_mfu
        factor = mfu_factor(draws, a, accel.software, accel.cls, measured is not None and accel.id in measured)
        self.walls = t.wall_hours / factor
        counted = _counted_walls(t, a.reliability.restart_hours, factor, draws)
        if counted is not None:
            self.walls = counted
        self.days = np.maximum(1.0, np.ceil(self.walls / 24.0 - 1e-9))
        self.longest = np.argsort(-self.walls, kind="stable")[:max(1, math.ceil(round(0.05 * len(self.walls), 9)))]
        m = a.money
        kinks = {m.ops_min_days * 24.0, m.cloud_min_billed_hours, m.depreciation_years * HOURS_PER_YEAR}
        before = (a.install_days[accel.cls] if plan.mode == "buy" else 0.0) * 24.0  # type: ignore[index]
        for pq in plan.quotes:
            q = problem.catalog.quotes[pq.id]
            if q.max_term_months is not None:
                kinks.add(q.max_term_months * HOURS_PER_YEAR / 12.0)
            for wait in (0.0, 24.0 * pq.wait_days):
                kinks |= {q.commit_months * HOURS_PER_YEAR / 12.0,
                          m.depreciation_years * HOURS_PER_YEAR - before - wait}
                kinks |= {age * HOURS_PER_YEAR - before - wait for age in m.resale_value_by_age_years}
        lo, hi = float(self.walls.min()), float(self.walls.max())
        self.grid = sorted({lo, hi, *(k for k in kinks if lo < k < hi)})

    def mean(self, at: Callable[[float], float]) -> tuple[float, float]:
        """(mean over every run, mean over the longest) of a function of the run's hours, linear between kinks."""
        values = np.interp(self.walls, self.grid, [at(h) for h in self.grid])
        return float(values.mean()), float(values[self.longest].mean())


def _counted_walls(t: TimeEstimate, restart_hours: float, factor: np.ndarray, draws: Draws) -> np.ndarray | None:
    """The runs with their interruption count drawn, when the count's variance μr² exceeds the share
    `COUNT_SPREAD_SHARE` of the MFU's, W²·Var(1/m) (None otherwise): W_s = c·ideal/m_s + K_s·r, K_s the Poisson
    quantile of the scenario's uniform, found here by summing the pmf in logs (lgamma)."""
    if t.interruptions <= 0 or t.wall_hours <= 0:
        return None
    lam = t.interruptions / t.wall_hours
    tau = t.checkpoint_interval_hours if math.isfinite(t.checkpoint_interval_hours) else 0.0
    lost_each = tau / 2.0 + t.checkpoint_write_hours + restart_hours   # half an interval, the read-back, restart
    if t.interruptions * lost_each ** 2 <= COUNT_SPREAD_SHARE * t.wall_hours ** 2 * float(np.var(1.0 / factor)):
        return None
    work = t.ideal_hours * (1.0 + lam * tau / 2.0) / factor
    mean = lam * work / (1.0 - lam * lost_each)
    u = np.array([0.5 * math.erfc(-z / math.sqrt(2.0)) for z in draws.normal("interruptions").tolist()])
    counts = np.zeros(len(u))
    below = np.ones(len(u), dtype=bool)
    cdf = np.zeros(len(u))
    log_mean = np.log(mean)
    k = 0
    while below.any() and k < 100_000:
        cdf = cdf + np.exp(-mean + k * log_mean - math.lgamma(k + 1))
        below = cdf < u
        counts += below
        k += 1
    return work + counts * lost_each


def _late_price(problem: Problem) -> float:
    late = getattr(problem.spec.objective, "late_usd_per_day", None)
    return float(late if late is not None else problem.assumptions.values.money.delay_cost_usd_per_day)


def _cvar_weight(problem: Problem) -> float:
    weight = getattr(problem.spec.objective, "cvar_weight", None)
    return float(weight if weight is not None else problem.assumptions.values.uncertainty.aversion)


def _start_distribution(problem: Problem, plan: Plan, accel: Accelerator, delay: int) -> tuple[int, np.ndarray]:
    """(first day, P(the run starts on each day from it)): the latest of the earliest start, the accelerator's
    availability and the port of the software (after the rules' delays) and every used quote's capacity, each a
    lognormal time (median and 90th percentile; the port's median and σ) capped at the quantile
    `lead_time_cap_quantile`, independent of each other — in whole days, by `math.erfc`."""
    a, spec = problem.assumptions.values, problem.spec
    z_cap = _N.inv_cdf(min(a.lead_time_cap_quantile, 1.0 - 1e-12))
    parts: list[tuple[float, float, float, float]] = []   # (shift, log median, sigma, cap)
    for pq in plan.quotes:
        q = problem.catalog.quotes[pq.id]
        shift = float((pq.ordered - problem.as_of).days if pq.ordered else delay)
        if q.mode == "buy":
            shift += float(a.install_days[accel.cls])  # type: ignore[index]
        p50, p90 = q.lead_time_days, q.lead_time_p90_days
        if p90 is None or p90 <= p50 or p50 <= 0:
            parts.append((shift, 0.0, 0.0, p50))
        else:
            sigma = (math.log(p90) - math.log(p50)) / _N.inv_cdf(0.9)
            parts.append((shift, math.log(p50), sigma, math.exp(math.log(p50) + sigma * z_cap)))
    port = a.porting[accel.software][spec.workload.framework]  # type: ignore[index]
    if port.delay_days > 0:
        sigma = a.uncertainty.porting_delay_sigma
        parts.append((float(delay), math.log(port.delay_days), sigma,
                      port.delay_days * (math.exp(sigma * z_cap) if sigma > 0 else 1.0)))
    earliest = (spec.schedule.earliest_start - problem.as_of).days if spec.schedule.earliest_start else 0
    first = max(earliest, max(0, (accel.available_from.value - problem.as_of).days) + delay)
    last = max([first] + [math.ceil(shift + cap - 1e-9) for shift, _mu, _s, cap in parts])
    cdf = []
    for x in range(first, last + 1):
        p = 1.0
        for shift, mu, sigma, cap in parts:
            y = x - shift
            if y >= cap - 1e-9:
                continue
            p *= 0.0 if y <= 0 or sigma <= 0 else 0.5 * math.erfc(-(math.log(y) - mu) / sigma / math.sqrt(2.0))
        cdf.append(p)
    cdf[-1] = 1.0
    return first, np.diff(np.array(cdf), prepend=0.0)


def _lateness(problem: Problem, plan: Plan, accel: Accelerator, runs: _Runs, delay: int
              ) -> tuple[float, float, float | None]:
    """(expected days past the deadline — or `schedule.late_after` —, the same over the longest runs, P(deadline)):
    every start day weighed by its probability against every run scenario's days."""
    deadline = problem.spec.schedule.late_after or problem.spec.schedule.deadline
    if deadline is None:
        return 0.0, 0.0, None
    first, pmf = _start_distribution(problem, plan, accel, delay)
    d = (deadline - problem.as_of).days
    live = np.flatnonzero(pmf > 0.0)
    x, p = first + live, pmf[live]

    def spread(days: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The distinct run lengths and the share of runs of each."""
        values, counts = np.unique(days, return_counts=True)
        return values, counts / len(days)

    values, share = spread(runs.days)
    over = np.maximum(0.0, x[:, None] + values[None, :] - d)      # days late: start day × run length
    late = float(p @ (over @ share))
    meets = float(p @ ((over <= 0.0) @ share))
    values, share = spread(runs.days[runs.longest])
    tail = float(p @ (np.maximum(0.0, x[:, None] + values[None, :] - d) @ share))
    return late, tail, meets


def expected_lines(problem: Problem, plan: Plan, t: TimeEstimate, accel: Accelerator,
                   system: System) -> tuple[dict[str, float], dict[str, float]]:
    """Every cost and cash line of the plan, from catalog fields and assumptions (see module docstring): the lines as
    planned (the run at the median MFU, failures at their expectation), `throughput` (the mean of the whole ledger
    over the run scenarios less the planned ledger), `lateness` (the price of a late day × the expected days past
    the deadline), `tail` (λ × the mean over the longest runs less the mean, of the ledger and the lateness; an
    estimated price's own spread), and the rules (a percentage applies to the lines before waiting and lateness)."""
    spec = problem.spec
    start, delay = _schedule(problem, plan, accel, system, _days(t))
    waits = {pq.id: _wait(problem, problem.catalog.quotes[pq.id], accel, start) for pq in plan.quotes}
    runs = _Runs(problem, plan, t, accel)
    weight = _cvar_weight(problem)
    w_ = spec.workload
    shape = model_shape(w_.params, problem.assumptions.values.memory, w_.layers, w_.hidden, w_.heads, w_.vocab)
    led = _ledger(problem, plan, accel, system, t.ideal_hours, t.wall_hours, waits, shape)
    before = 0.0
    for w in (waits, {}):
        planned = _ledger(problem, plan, accel, system, t.ideal_hours, t.wall_hours, w, shape)
        cost, cost_tail = runs.mean(lambda h: sum(_ledger(problem, plan, accel, system, h, h, w, shape).cost.values()))
        cash, _ = runs.mean(lambda h: sum(_ledger(problem, plan, accel, system, h, h, w, shape).cash.values()))
        throughput = cost - sum(planned.cost.values())
        tail = weight * (cost_tail - cost + _price_tail(problem, plan, accel, system, runs, w))
        if w is waits:
            led.charge("throughput", throughput, cash=cash - sum(planned.cash.values()))
            if weight > 0:
                led.charge("tail", tail)
        else:
            before = sum(planned.cost.values()) + throughput + tail
    late, late_tail, _p = _lateness(problem, plan, accel, runs, delay)
    price = _late_price(problem)
    if late * price:
        led.charge("lateness", late * price)
    if weight > 0 and (late_tail - late) * price:
        led.charge("tail", weight * (late_tail - late) * price)
    attrs = _attrs(accel, system, plan.mode)
    for rule, then in adjustments(spec.rules, attrs, plan.gpus, plan.nodes, _days(t), plan.power_kw):
        if names_quote(rule, plan.allocation):
            led.charge("rules", (then.add_usd or 0.0) + before * (then.add_pct or 0.0) / 100.0,
                       cash=then.add_usd or 0.0)
    return led.cost, led.cash


def _price_tail(problem: Problem, plan: Plan, accel: Accelerator, system: System, runs: _Runs,
                waits: dict[str, int]) -> float:
    """(CVaR95 − E) of the price factor of estimated quotes (lognormal: E[f | f ≥ q95] = m Φ(σ − z95)/0.05), times
    the mean over the runs of the price-driven part of their cost (their ledger at the price less at price 0,
    without the estimated-price premium)."""
    a = problem.assumptions.values
    sigma, mean = a.uncertainty.estimate_price_sigma, 1.0 + a.money.estimate_price_risk_pct / 100.0
    factor = mean * (_N.cdf(sigma - _N.inv_cdf(0.95)) / 0.05 - 1.0)
    out = 0.0
    for pq in plan.quotes:
        q = problem.catalog.quotes[pq.id]
        if q.kind != "estimate":
            continue
        free = q.model_copy(update={PRICE_FIELDS[q.mode]: 0.0})

        def driven(h: float, q: Quote = q, free: Quote = free, k: int = pq.nodes) -> float:
            total = 0.0
            for quote, sign in ((q, 1.0), (free, -1.0)):
                led = _Ledger()
                if plan.mode == "buy":
                    _buy(led, quote, k, plan.nodes, h, h, waits.get(q.id, 0), problem, accel, system)
                else:
                    _rented(led, quote, k, plan.nodes, h, h, problem, system)
                total += sign * sum(v for n, v in led.cost.items() if n != "estimate_price")
            return total
        out += factor * runs.mean(driven)[0]
    return out


def _attrs(accel: Accelerator, system: System, mode: str) -> dict[str, object]:
    return option_attrs(accelerator=accel.id, system=system.id, vendor=accel.vendor, cls=accel.cls, mode=mode,
                        ecc=bool(accel.ecc.value), cooling=system.cooling, software=accel.software,
                        network=system.network)


def _days(t: TimeEstimate) -> int:
    return max(1, math.ceil(t.days - 1e-9))


def _time(problem: Problem, universe: Universe, plan: Plan, accel: Accelerator, system: System) -> TimeEstimate:
    spec, a = problem.spec, problem.assumptions.values
    w = spec.workload
    rule_f = 1.0
    for rule, then in adjustments(spec.rules, _attrs(accel, system, plan.mode), plan.gpus, plan.nodes, None,
                                  plan.power_kw):
        if then.mfu_factor and rule.when.quote is None:
            rule_f *= then.mfu_factor
    centre = a.uncertainty.mfu_centre   # the calibrated centre, by the chip's FLOPs per byte, from the catalog
    balance = min(centre.balance_max, max(centre.balance_min, accel.bf16_tflops.value / accel.memory_bw_tbs.value))
    size = min(centre.params_max, max(centre.params_min, w.params))
    slope = centre.per_log_balance + centre.per_log_balance_log_params * math.log(size / centre.params_ref)
    util = utilisation(software=accel.software, accel_class=accel.cls, params=w.params, seq_len=w.seq_len,
                       precision=w.precision, has_fp8=accel.fp8_tflops.value is not None, method=w.method,
                       c=a.compute, rule_factor=rule_f,
                       calibration=math.exp(centre.intercept + slope * math.log(balance / centre.balance_ref))
                       if accel.cls in centre.classes else 1.0,
                       measured=(w.measured_mfu or {}).get(accel.id)).value
    shape = universe.shape
    flops = training_flops(w.params, w.tokens, w.method, plan.recompute, shape.layers, shape.hidden, w.seq_len)
    t = estimate_time(a=a, flops=flops, gpus=plan.gpus, nodes=plan.nodes, per_node=system.per_node,
                      network=system.network, peak_tflops=accel.peak_tflops(w.precision), util=util,
                      accel_class=accel.cls, checkpoint_bytes=checkpoint_size(problem, shape),
                      preemptible=any(problem.catalog.quotes[pq.id].contract == "spot" for pq in plan.quotes))
    if t is None:
        raise PlanCheckError(f"plan check: {plan.option} x{plan.nodes} is unworkable (failures eat the run)")
    return t


def _allocation(problem: Problem, universe: Universe, plan: Plan, system: System) -> list[str]:
    bad = []
    if sum(q.nodes for q in plan.quotes) != plan.nodes:
        bad.append(f"quote allocation {[(q.id, q.nodes) for q in plan.quotes]} does not add up to {plan.nodes} nodes")
    if plan.gpus != plan.nodes * system.per_node:
        bad.append("gpus != nodes x per_node")
    expired = {q.id for q in universe.expired} | {q.id for q in universe.not_yet_quoted}
    for pq in plan.quotes:
        q = problem.catalog.quotes[pq.id]
        if q.system != plan.system or q.mode != plan.mode:
            bad.append(f"quote {q.id} is for {q.system}/{q.mode}, not {plan.system}/{plan.mode}")
        if pq.nodes > q.max_nodes:
            bad.append(f"quotes.{q.id}.max_nodes: {pq.nodes} > {q.max_nodes}")
        if pq.nodes < q.min_nodes:
            bad.append(f"quote {q.id}: {pq.nodes} nodes < min_nodes {q.min_nodes}")
        if q.id in expired:
            bad.append(f"quote {q.id} is not valid on {problem.as_of}")
    return bad


def _memory(problem: Problem, universe: Universe, plan: Plan, accel: Accelerator, system: System) -> list[str]:
    w, a = problem.spec.workload, problem.assumptions.values
    mem = memory_per_gpu(params=w.params, gpus=plan.gpus, per_node=system.per_node,
                         available_gb=float(accel.memory_gb.value), method=w.method, optimizer=w.optimizer,
                         seq_len=w.seq_len, recompute=plan.recompute, shape=universe.shape, mem=a.memory,
                         lora_rank=w.lora_rank, flash_attention=w.flash_attention)
    bad = []
    if not mem.fits:
        bad.append(f"workload.memory: needs {mem.required_gb:.1f} GB per GPU, has {mem.available_gb:g}")
    # Whatever the inputs say (a bad override, an assumption file gone wrong): no part of the memory is negative.
    negative = [name for name, gb in (("model states", mem.states_gb), ("activations", mem.activations_gb),
                                      ("overhead", mem.overhead_gb)) if not gb >= 0.0]
    negative += [f"risk.memory.states_bytes_per_param.{k}" for k, v in a.memory.states_bytes_per_param.items()
                 if not v >= 0.0]
    if negative:
        bad.append(f"workload.memory: negative memory ({', '.join(negative)}): no plan can rely on it")
    if w.recompute != "auto" and plan.recompute != w.recompute:
        bad.append(f"recompute {plan.recompute} differs from the requested {w.recompute}")
    return bad


def _physical(problem: Problem, plan: Plan) -> list[str]:
    """What no input can make true: hardware is ordered no earlier than today, delivered no earlier than ordered,
    usable no earlier than delivered, and the run starts no earlier than every quote it uses is usable."""
    bad = []
    for q in plan.quotes:
        if q.ordered is not None and q.ordered < problem.as_of:
            bad.append(f"quote {q.id}: ordered {q.ordered}, before as_of {problem.as_of}")
        if q.ordered is not None and q.delivered is not None and q.delivered < q.ordered:
            bad.append(f"quote {q.id}: delivered {q.delivered}, before it is ordered {q.ordered}")
        if q.delivered is not None and q.ready < q.delivered:
            bad.append(f"quote {q.id}: ready {q.ready}, before it is delivered {q.delivered}")
        if q.mode == "buy" and plan.start < q.ready:
            bad.append(f"quote {q.id}: the run starts {plan.start}, before its hardware is ready {q.ready}")
    return bad


def _calendar(problem: Problem, plan: Plan, t: TimeEstimate, accel: Accelerator, system: System) -> list[str]:
    spec = problem.spec
    bad = []
    days = _days(t)
    if not _close(t.wall_hours, plan.training_days * 24.0):
        bad.append(f"training time {plan.training_days:.3f} d differs from recomputed {t.days:.3f} d")
    if (plan.finish - plan.start).days != days:
        bad.append(f"finish - start = {(plan.finish - plan.start).days} d, expected {days}")
    start, delay = _schedule(problem, plan, accel, system, days)
    start_day = (plan.start - problem.as_of).days
    if start_day != start:
        bad.append(f"start day {start_day} is not the planned start {start} (the latest of earliest start, "
                   f"readiness and rule delays {delay})")
    if spec.schedule.earliest_start and plan.start < spec.schedule.earliest_start:
        bad.append(f"schedule.earliest_start: starts {plan.start} before {spec.schedule.earliest_start}")
    if spec.schedule.deadline and plan.finish > spec.schedule.deadline:
        bad.append(f"schedule.deadline: finishes {plan.finish} after {spec.schedule.deadline}")
    return bad


def _site(problem: Problem, plan: Plan, system: System) -> list[str]:
    if plan.mode != "buy":
        return []
    site = problem.spec.site
    if site is None:
        return ["buy without a site"]
    bad = []
    node_kw = float(system.node_kw.value)
    if plan.nodes * node_kw > site.it_power_kw + 1e-6:
        bad.append(f"site.it_power_kw: {plan.nodes * node_kw:.1f} > {site.it_power_kw}")
    per_rack = min(int(system.nodes_per_rack.value) or 1, int(site.rack_power_kw // node_kw))
    if per_rack < 1:
        bad.append(f"site.rack_power_kw: a node draws {node_kw} kW")
    elif math.ceil(plan.nodes / per_rack) > site.racks:
        bad.append(f"site.racks: needs {math.ceil(plan.nodes / per_rack)} > {site.racks}")
    return bad


def _policy_and_rules(problem: Problem, plan: Plan, t: TimeEstimate, accel: Accelerator, system: System,
                      exact_cost: float) -> list[str]:
    spec = problem.spec
    attrs = _attrs(accel, system, plan.mode)
    bad = policy_breaches(spec, attrs, ())
    quotes = [problem.catalog.quotes[pq.id] for pq in plan.quotes]
    fabrics = {"site" if q.mode == "buy" else (q.fabric or "quote:" + q.id) for q in quotes}
    if len(fabrics) > spec.policy.max_fabrics:
        bad.append(f"policy.max_fabrics: the nodes come from {len(fabrics)} fabrics ({', '.join(sorted(fabrics))})")
    spot = any(q.contract == "spot" for q in quotes)
    if spot and plan.nodes > 1 and spec.workload.method in ("pretrain", "continued_pretrain") \
            and not spec.policy.allow_preemptible:
        bad.append("policy.allow_preemptible: spot capacity for multi-node pretraining")
    if spot and not all(q.contract == "spot" for q in quotes):
        bad.append("spot and non-spot capacity mixed in one job")
    if not spec.policy.allow_estimates and any(problem.catalog.quotes[q.id].kind == "estimate" for q in plan.quotes):
        bad.append("policy.allow_estimates: the plan uses an estimated price")
    days = _days(t)
    for rule in spec.rules:
        if not isinstance(rule.then, str):
            continue
        hit = matches_attrs(rule.when, attrs) and matches_point(rule.when, plan.gpus, plan.nodes, days,
                                                                plan.power_kw) and names_quote(rule, plan.allocation)
        if rule.when.cost is not None:
            hit = hit and rule.when.cost.test(exact_cost)
        if rule.then == "forbid" and hit:
            bad.append(f"rules.{rule.name}: plan matches a forbidden pattern")
        if rule.then == "require" and not hit:
            bad.append(f"rules.{rule.name}: plan does not match a required pattern")
    return bad


def _money(problem: Problem, plan: Plan, t: TimeEstimate, accel: Accelerator, system: System,
           check_model_units: bool) -> tuple[list[str], float]:
    cost, cash = expected_lines(problem, plan, t, accel, system)
    bad = []
    for name in sorted(set(cost) | set(plan.lines.cost)):
        if not _close(cost.get(name, 0.0), plan.lines.cost.get(name, 0.0)):
            bad.append(f"cost line {name} {plan.lines.cost.get(name, 0.0):,.2f} differs from recomputed "
                       f"{cost.get(name, 0.0):,.2f}")
    for name in sorted(set(cash) | set(plan.lines.cash)):
        if not _close(cash.get(name, 0.0), plan.lines.cash.get(name, 0.0)):
            bad.append(f"cash line {name} {plan.lines.cash.get(name, 0.0):,.2f} differs from recomputed "
                       f"{cash.get(name, 0.0):,.2f}")
    exact_cost, exact_cash = sum(cost.values()), sum(cash.values())
    if check_model_units and plan.model_cost_units * plan.unit < exact_cost - 1e-6 * max(1.0, exact_cost):
        bad.append(f"model cost {plan.model_cost_units} x ${plan.unit} under-counts the exact cost {exact_cost:,.0f}")
    budget = problem.spec.budget
    if budget.max_usd is not None:
        spent = exact_cash if budget.applies_to == "cash" else exact_cost
        if spent > budget.max_usd + 1e-6:
            bad.append(f"budget.max_usd: {spent:,.0f} > {budget.max_usd:,.0f}")
    return bad, exact_cost


def violations(problem: Problem, universe: Universe, plan: Plan, *, model_units: bool = True) -> list[str]:
    """Every constraint the plan violates and every figure that does not add up (empty: the plan is sound).

    `model_units=False` skips the comparison with the model's rounded cost, for a plan that did not come from a
    model (yesterday's decision re-priced today)."""
    system = problem.catalog.systems[plan.system]
    accel = problem.catalog.accelerators[system.accelerator]
    t = _time(problem, universe, plan, accel, system)
    money, exact_cost = _money(problem, plan, t, accel, system, model_units)
    checks: list[Callable[[], list[str]]] = [
        lambda: _allocation(problem, universe, plan, system),
        lambda: _memory(problem, universe, plan, accel, system),
        lambda: _calendar(problem, plan, t, accel, system),
        lambda: _physical(problem, plan),
        lambda: _site(problem, plan, system),
        lambda: _policy_and_rules(problem, plan, t, accel, system, exact_cost),
        lambda: _deadline_confidence(problem, plan, t, accel),
        lambda: checkpoint_violations(problem, plan, universe.shape, t.ideal_hours,
                                      failure_rate(problem, plan, accel)),
        lambda: payment_violations(problem, plan),
    ]
    return [v for check in checks for v in check()] + money


def _deadline_confidence(problem: Problem, plan: Plan, t: TimeEstimate | None, accel: Accelerator) -> list[str]:
    """The chance that the plan, as dated, finishes by the deadline (its start law from the plan's own order days,
    the run scenarios of the uncertainty model's draws: `_lateness`)."""
    c = problem.spec.policy.deadline_confidence
    deadline = problem.spec.schedule.late_after or problem.spec.schedule.deadline
    if c is None or deadline is None or t is None:
        return []
    system = problem.catalog.systems[plan.system]
    _start, delay = _schedule(problem, plan, accel, system, _days(t))
    _late, _tail, p = _lateness(problem, plan, accel, _Runs(problem, plan, t, accel), delay)
    if p is not None and p < c - 1e-6:
        return [f"policy.deadline_confidence: finishes by {deadline} with probability {p:.1%}, below {c:.0%}"]
    return []


def check_plan(problem: Problem, universe: Universe, plan: Plan) -> None:
    """Raise `PlanCheckError` listing every violated constraint or inconsistent figure of a solved plan."""
    bad = violations(problem, universe, plan)
    if bad:
        raise PlanCheckError("plan check failed for " + plan.option + f" x{plan.nodes}: " + "; ".join(bad))


__all__ = ["check_plan", "violations", "expected_lines"]
