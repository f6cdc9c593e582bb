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
from ..estimate.memory import adapter_params, memory_per_gpu
from ..estimate.options import Universe
from ..estimate.scenarios import wall_hours
from ..estimate.uncertainty import Draws, lead_days, mfu_factor, porting_days
from ..inputs.catalog import PRICE_FIELDS, Accelerator, Quote, System
from ..inputs.problem import Problem
from ..inputs.rules import adjustments, delay_days, matches_attrs, matches_point, names_quote, option_attrs, \
    policy_breaches
from .plan import Plan

HOURS_PER_YEAR = 8760.0
RISK = ("delivery_slip", "consumer_risk", "estimate_price", "tail")
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
    capital, support and hall for the time held, energy for the run; risk premiums on top."""
    a, spec = problem.assumptions.values, problem.spec
    m = a.money
    site = spec.site
    assert site is not None
    capex = q.price * k
    extra = m.storage_capex_fraction + (m.network_capex_fraction if nodes > 1 else 0.0)
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
    kw_at_meter = float(system.node_kw.value) * k * site.pue
    led.charge("energy", kw_at_meter * ideal * site.electricity_usd_per_kwh)
    led.charge("failure_rework", kw_at_meter * (wall - ideal) * site.electricity_usd_per_kwh)
    if accel.cls == "consumer":
        led.charge("consumer_risk", capex * lost(wall) * m.consumer_risk_pct / 100.0)
    if q.kind == "estimate":
        driven = cluster * lost(wall) + (capital + support) * (before + wall) / HOURS_PER_YEAR
        led.charge("estimate_price", driven * m.estimate_price_risk_pct / 100.0)


def _rented(led: _Ledger, q: Quote, k: int, ideal: float, wall: float, problem: Problem, system: System) -> None:
    """k nodes rented (per GPU-hour) or contracted (per node-month) from quote q, billed at least for the
    commitment (and for the cloud's minimum billed hours)."""
    m = problem.assumptions.values.money
    month = HOURS_PER_YEAR / 12.0
    if q.mode == "cloud":
        floor = max(q.commit_months * month, m.cloud_min_billed_hours)
        per_hour = q.price * system.per_node * k
        billed_ideal, billed_wall = per_hour * max(ideal, floor), per_hour * max(wall, floor)
    else:
        billed_ideal = q.price * k * max(ideal / month, q.commit_months)
        billed_wall = q.price * k * max(wall / month, q.commit_months)
    led.charge("compute", billed_ideal)
    led.charge("failure_rework", billed_wall - billed_ideal)
    if q.kind == "estimate":
        led.charge("estimate_price", billed_wall * m.estimate_price_risk_pct / 100.0)


def _late_days(p50: float, p90: float | None, allowance: float, cap_q: float) -> float:
    """E[max(0, min(L, c) − allowance)] for L lognormal with median p50 and 90th percentile p90 (certain without a
    spread), capped at its `cap_q` quantile c: the textbook partial expectation E[L·1(L>B)] − B·P(L>B) =
    e^(μ+σ²/2)·Φ((μ+σ²−ln B)/σ) − B·Φ((μ−ln B)/σ), taken at B = allowance minus the same at B = c."""
    if p90 is None or p90 <= p50 or p50 <= 0:
        return max(0.0, p50 - allowance)
    mu, sigma = math.log(p50), (math.log(p90) - math.log(p50)) / _N.inv_cdf(0.9)

    def partial(b: float) -> float:
        if b <= 0:
            return math.exp(mu + sigma ** 2 / 2) - b
        ln_b = math.log(b)
        return (math.exp(mu + sigma ** 2 / 2) * _N.cdf((mu + sigma ** 2 - ln_b) / sigma)
                - b * _N.cdf((mu - ln_b) / sigma))

    if cap_q >= 1:
        return max(0.0, partial(allowance))
    cap = math.exp(mu + sigma * _N.inv_cdf(cap_q))
    return max(0.0, partial(allowance) - partial(cap)) if allowance < cap else 0.0


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


def _timing(problem: Problem, q: Quote, accel: Accelerator, start: int, delay: int) -> tuple[int, float]:
    """(days the quote's hardware waits for the start, expected slip days past the start): rented capacity is
    requested when the rules' delays are over; bought hardware is ordered just in time, or on its quote's last
    valid day when that comes first, and then waits."""
    a = problem.assumptions.values
    lead = q.lead_days(a.confidence)
    if q.mode != "buy":
        return 0, _late_days(q.lead_time_days, q.lead_time_p90_days, start - delay, a.lead_time_cap_quantile)
    install = a.install_days[accel.cls]  # type: ignore[index]
    jit = start - math.ceil(lead + install)
    last = (q.valid_until - problem.as_of).days
    order = jit if last < 0 else min(last, jit)
    return start - math.ceil(lead + install) - order, _late_days(q.lead_time_days, q.lead_time_p90_days,
                                                                 start - order - install, a.lead_time_cap_quantile)


def expected_lines(problem: Problem, plan: Plan, t: TimeEstimate, accel: Accelerator,
                   system: System) -> tuple[dict[str, float], dict[str, float]]:
    """Every cost and cash line of the plan, from catalog fields and assumptions (see module docstring)."""
    a, spec = problem.assumptions.values, problem.spec
    m = a.money
    led = _Ledger()
    ideal, wall = t.ideal_hours, t.wall_hours
    start, delay = _schedule(problem, plan, accel, system, _days(t))
    before = _Ledger()
    slip = 0.0
    for pq in plan.quotes:
        q = problem.catalog.quotes[pq.id]
        wait, late = _timing(problem, q, accel, start, delay)
        slip = max(slip, late * m.delay_cost_usd_per_day)
        if plan.mode == "buy":
            _buy(led, q, pq.nodes, plan.nodes, ideal, wall, wait, problem, accel, system)
            _buy(before, q, pq.nodes, plan.nodes, ideal, wall, 0, problem, accel, system)
        else:
            _rented(led, q, pq.nodes, ideal, wall, problem, system)
            _rented(before, q, pq.nodes, ideal, wall, problem, system)
    porting = a.porting[accel.software][spec.workload.framework]  # type: ignore[index]
    fte = m.ops_fte[plan.mode]  # type: ignore[index]
    engineers = (fte.base if plan.nodes > 1 else 0.0) + fte.per_1000_gpus * plan.gpus / 1000.0
    for ledger in (led, before):
        ledger.charge("porting", porting.weeks / 52.0 * 12.0 * m.engineer_usd_per_month)
        ledger.charge("operations", engineers * m.engineer_usd_per_month * max(wall, m.ops_min_days * 24.0)
                      / (HOURS_PER_YEAR / 12.0))
    if a.uncertainty.aversion > 0:  # like every premium of the point, part of what a rule's add_pct applies to
        runs = _longest_runs(problem, t, accel)
        tail = _run_tail(problem, plan, t, accel, system, start, delay, runs)
        led.charge("tail", tail)
        before.charge("tail", tail if plan.mode != "buy" else
                      _run_tail(problem, plan, t, accel, system, start, delay, runs, waits=False))
    base_for_pct = sum(before.cost.values())  # a rule's add_pct applies to the lines before delivery timing
    if slip:
        led.charge("delivery_slip", slip)
    attrs = _attrs(accel, system, plan.mode)
    for rule, then in adjustments(spec.rules, attrs, plan.gpus, plan.nodes, _days(t), plan.power_kw):
        if names_quote(rule, plan.allocation):
            led.charge("rules", (then.add_usd or 0.0) + base_for_pct * (then.add_pct or 0.0) / 100.0,
                       cash=then.add_usd or 0.0)
    return led.cost, led.cash


def _longest_runs(problem: Problem, t: TimeEstimate, accel: Accelerator) -> tuple[np.ndarray, np.ndarray]:
    """The scenarios' run lengths of the plan and the indices of the 5% longest (ties: lowest index first)."""
    a = problem.assumptions.values
    draws = Draws(a.uncertainty.seed, a.uncertainty.scenarios)
    walls = wall_hours(t, a.reliability.restart_hours, mfu_factor(draws, a, accel.software, accel.cls),
                       draws.normal("interruptions"), draws.uniform("interruptions"))
    return walls, np.argsort(-walls, kind="stable")[:max(1, math.ceil(round(0.05 * len(walls), 9)))]


def _run_tail(problem: Problem, plan: Plan, t: TimeEstimate, accel: Accelerator, system: System, start: int,
              delay: int, runs: tuple[np.ndarray, np.ndarray], waits: bool = True) -> float:
    """ω × (mean cost of the 5% longest runs − the plan's cost at the expected run), the run's cost in each
    scenario being this checker's own ledger at that run length (every hour billed or held, so no failure rework;
    no estimated-price premium: the scenarios price estimates by their own spread); `waits=False`: as if bought
    hardware did not wait (the lines a rule's add_pct applies to). The ledger is piecewise linear in the hours, with
    kinks where a floor or an age of the resale curve is crossed; it is evaluated at those and interpolated."""
    a = problem.assumptions.values
    u, m = a.uncertainty, a.money
    walls, longest = runs
    porting = a.porting[accel.software][problem.spec.workload.framework]  # type: ignore[index]
    fte = m.ops_fte[plan.mode]  # type: ignore[index]
    engineers = (fte.base if plan.nodes > 1 else 0.0) + fte.per_1000_gpus * plan.gpus / 1000.0
    held: list[tuple[Quote, int, int]] = []
    kinks = {m.ops_min_days * 24.0, m.cloud_min_billed_hours}
    for pq in plan.quotes:
        q = problem.catalog.quotes[pq.id]
        wait = _timing(problem, q, accel, start, delay)[0] if plan.mode == "buy" and waits else 0
        held.append((q, pq.nodes, wait))
        before = (a.install_days[accel.cls] + wait) * 24.0 if plan.mode == "buy" else 0.0  # type: ignore[index]
        kinks |= {q.commit_months * HOURS_PER_YEAR / 12.0, m.depreciation_years * HOURS_PER_YEAR - before}
        kinks |= {age * HOURS_PER_YEAR - before for age in m.resale_value_by_age_years}

    def cost_at(ideal: float, wall: float) -> float:
        led = _Ledger()
        for q, k, wait in held:
            if plan.mode == "buy":
                _buy(led, q, k, plan.nodes, ideal, wall, wait, problem, accel, system)
            else:
                _rented(led, q, k, ideal, wall, problem, system)
        led.charge("porting", porting.weeks / 52.0 * 12.0 * m.engineer_usd_per_month)
        led.charge("operations", engineers * m.engineer_usd_per_month * max(wall, m.ops_min_days * 24.0)
                   / (HOURS_PER_YEAR / 12.0))
        return sum(v for name, v in led.cost.items() if name != "estimate_price")

    lo, hi = float(walls.min()), float(walls.max())
    grid = sorted({lo, hi, *(k for k in kinks if lo < k < hi)})
    values = np.interp(walls, grid, [cost_at(h, h) for h in grid])
    run = u.aversion * (float(values[longest].mean()) - cost_at(t.ideal_hours, t.wall_hours))
    return run + u.aversion * _price_tail(problem, plan, t, accel, system, held)


def _price_tail(problem: Problem, plan: Plan, t: TimeEstimate, accel: Accelerator, system: System,
                held: list[tuple[Quote, int, int]]) -> float:
    """(CVaR95 − E) of the price factor of estimated quotes (lognormal: E[f | f ≥ q95] = m Φ(σ − z95)/0.05), times
    the price-driven part of their cost at the expected run (their ledger at the price less at price 0)."""
    a = problem.assumptions.values
    sigma, mean = a.uncertainty.estimate_price_sigma, 1.0 + a.money.estimate_price_risk_pct / 100.0
    factor = mean * (_N.cdf(sigma - _N.inv_cdf(0.95)) / 0.05 - 1.0)
    out = 0.0
    for q, k, wait in held:
        if q.kind != "estimate":
            continue
        priced, free = _Ledger(), _Ledger()
        for led, quote in ((priced, q), (free, q.model_copy(update={PRICE_FIELDS[q.mode]: 0.0}))):
            if plan.mode == "buy":
                _buy(led, quote, k, plan.nodes, t.ideal_hours, t.wall_hours, wait, problem, accel, system)
            else:
                _rented(led, quote, k, t.ideal_hours, t.wall_hours, problem, system)
        driven = sum(v for n, v in priced.cost.items() if n != "estimate_price") - \
            sum(v for n, v in free.cost.items() if n != "estimate_price")
        out += factor * driven
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
    util = utilisation(software=accel.software, accel_class=accel.cls, params=w.params, seq_len=w.seq_len,
                       precision=w.precision, has_fp8=accel.fp8_tflops.value is not None, method=w.method,
                       c=a.compute, rule_factor=rule_f).value
    shape = universe.shape
    flops = training_flops(w.params, w.tokens, w.method, plan.recompute, shape.layers, shape.hidden, w.seq_len)
    ckpt = adapter_params(shape, w.lora_rank or a.memory.lora_rank) if w.method in ("lora", "qlora") else w.params
    t = estimate_time(a=a, flops=flops, gpus=plan.gpus, nodes=plan.nodes, per_node=system.per_node,
                      network=system.network, peak_tflops=accel.peak_tflops(w.precision), util=util,
                      accel_class=accel.cls, checkpoint_bytes=a.reliability.checkpoint_bytes_per_param * ckpt,
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
    if w.recompute != "auto" and plan.recompute != w.recompute:
        bad.append(f"recompute {plan.recompute} differs from the requested {w.recompute}")
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
        lambda: _site(problem, plan, system),
        lambda: _policy_and_rules(problem, plan, t, accel, system, exact_cost),
        lambda: _deadline_confidence(problem, plan, t, accel),
    ]
    return [v for check in checks for v in check()] + money


def _deadline_confidence(problem: Problem, plan: Plan, t: TimeEstimate | None, accel: Accelerator) -> list[str]:
    """The share of risk scenarios in which the plan, as dated, finishes by the deadline (its own readiness per
    scenario from the plan's order dates; the scenario draws are the uncertainty model's)."""
    c = problem.spec.policy.deadline_confidence
    deadline = problem.spec.schedule.deadline
    if c is None or deadline is None or t is None:
        return []
    a = problem.assumptions.values
    draws = Draws(a.uncertainty.seed, a.uncertainty.scenarios)
    port = a.porting[accel.software][problem.spec.workload.framework]  # type: ignore[index]
    ready = np.ceil(porting_days(draws, a, f"{accel.software}/{problem.spec.workload.framework}",
                                 port.delay_days) - 1e-9)
    for pq in plan.quotes:
        q = problem.catalog.quotes[pq.id]
        ordered = (pq.ordered - problem.as_of).days if pq.ordered else 0
        inst = float(a.install_days[accel.cls]) if q.mode == "buy" else 0.0  # type: ignore[index]
        lead = lead_days(draws, q.id, q.lead_time_days, q.lead_time_p90_days, a.lead_time_cap_quantile)
        ready = np.maximum(ready, np.ceil(ordered + inst + lead - 1e-9))
    wall = wall_hours(t, a.reliability.restart_hours, mfu_factor(draws, a, accel.software, accel.cls),
                      draws.normal("interruptions"))
    start = (plan.start - problem.as_of).days
    finish = np.maximum(float(start), ready) + np.maximum(1.0, np.ceil(wall / 24.0 - 1e-9))
    met = int(np.count_nonzero(finish <= (deadline - problem.as_of).days))
    if met < math.ceil(round(c * draws.n, 9)):
        return [f"policy.deadline_confidence: finishes by {deadline} in {met / draws.n:.1%} of the scenarios, "
                f"below {c:.0%}"]
    return []


def check_plan(problem: Problem, universe: Universe, plan: Plan) -> None:
    """Raise `PlanCheckError` listing every violated constraint or inconsistent figure of a solved plan."""
    bad = violations(problem, universe, plan)
    if bad:
        raise PlanCheckError("plan check failed for " + plan.option + f" x{plan.nodes}: " + "; ".join(bad))


__all__ = ["check_plan", "violations", "expected_lines"]
