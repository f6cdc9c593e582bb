"""The independent checker of a program plan: every constraint and every bought lot's money, from the files.

It reads the validated program (spec, catalog, assumptions) and the decoded plan — never the CP-SAT model — and
recomputes, day by day, what the model was asked to guarantee: one run per workload inside its own and the
program's dates, precedences, decision gates (`decide_after`: the run starts, its rented quote is committed and its
system's lots are ordered no sooner than its gates finish), the same accelerator where asked, owned nodes in use
never above the lots usable that day, rented quotes never above their capacity, installed power never above the
limit of that day (the steps included), racks, each quarter's committed cash under its cap, the program budget;
and it prices each bought lot again from its quote and the assumptions (own resale interpolation), so that a wrong
table, a wrong held time or a wrong rounding in the model cannot pass (ortools 9.15's wrong-optimum bug is why every
plan is re-checked).
"""

from __future__ import annotations

import math
from datetime import date, timedelta
from typing import Any

import numpy as np

from ..errors import PlanCheckError
from ..estimate.scenarios import wall_hours
from ..estimate.uncertainty import Draws, lead_days, mfu_factor, porting_days
from ..inputs.program import ProgramProblem, quarter_of
from ..inputs.rules import adjustments, delay_days, lot_allowed, names_quote, option_attrs, program_run_hits
from .program import ProgramPlan, Purchase, RunPlan

TOL_USD = 1.0


def _resale(age_years: float, curve: dict[float, float]) -> float:
    pts = sorted(curve.items())
    if age_years <= pts[0][0]:
        return pts[0][1]
    for (a0, v0), (a1, v1) in zip(pts, pts[1:], strict=False):
        if age_years <= a1:
            return v0 + (v1 - v0) * (age_years - a0) / (a1 - a0)
    return pts[-1][1]


def lot_money(pp: ProgramProblem, p: Purchase) -> tuple[float, float]:
    """(cost, cash) of a bought lot held `p.held_days` after delivery, from the catalog and assumptions."""
    problem = pp.first
    q = problem.catalog.quotes[p.quote.quote]
    system = problem.catalog.systems[q.system]
    money = problem.assumptions.values.money
    after = problem.spec.policy.after_run
    price = float(q.price_usd or 0.0) * p.quote.lot_nodes
    hw = price * (1.0 + money.network_capex_fraction)
    years = p.held_days / 365.0
    if after == "resell":
        loss = 1.0 - _resale(years, money.resale_value_by_age_years)
    elif after == "reuse":
        loss = min(1.0, years / money.depreciation_years) * (1.0 - money.residual_fraction)
    else:
        loss = 1.0
    carry = hw * (money.cost_of_capital_pct_per_year + money.support_pct_per_year) / 100.0 * years
    site_facility = problem.spec.site.colocation_usd_per_kw_month if problem.spec.site else None
    per_kw_month = site_facility if site_facility is not None else money.facility_usd_per_kw_month
    facility = float(system.node_kw.value) * p.quote.lot_nodes * per_kw_month * p.held_days * 24.0 / 730.0
    cost = hw * loss + carry + facility
    if problem.catalog.accelerators[system.accelerator].cls == "consumer":
        cost += price * loss * money.consumer_risk_pct / 100.0
    if q.kind == "estimate":
        cost += (hw * loss + carry) * money.estimate_price_risk_pct / 100.0
    support = hw * money.support_pct_per_year / 100.0 * years
    cash = hw + support + (facility if site_facility is not None else 0.0)
    return cost, cash


def _dates(pp: ProgramProblem, wid: str) -> tuple[date, date | None]:
    w = pp.spec.workloads[pp.index_of(wid)]
    s = pp.spec.schedule
    starts = [d for d in (s.earliest_start, w.schedule.earliest_start) if d is not None] or [pp.as_of]
    ends = [d for d in (s.deadline, w.schedule.deadline) if d is not None]
    return max(starts), (min(ends) if ends else None)


def _runs(pp: ProgramProblem, plan: ProgramPlan) -> list[str]:
    bad: list[str] = []
    day = pp.as_of
    cat = pp.first.catalog
    for r in plan.runs:
        c = r.candidate
        first, last = _dates(pp, r.workload)
        if day + timedelta(days=r.start_day) < first:
            bad.append(f"{r.workload} starts before its earliest start {first}")
        if last is not None and day + timedelta(days=r.end_day) > last:
            bad.append(f"{r.workload} ends after its deadline {last}")
        if r.end_day - r.start_day != c.days or r.start_day < c.ready_day:
            bad.append(f"{r.workload}: run of {r.end_day - r.start_day} days for a {c.days}-day candidate, or "
                       "before it is ready")
        if c.quote is not None:
            q = cat.quotes[c.quote]
            if q.system != c.system or not q.min_nodes <= c.nodes <= q.max_nodes:
                bad.append(f"{r.workload}: {c.nodes} nodes of {q.id} outside its quote")
    ids = {r.workload: r for r in plan.runs}
    for w in pp.spec.workloads:
        for a in w.after:
            if ids[w.id].start_day < ids[a].end_day:
                bad.append(f"{w.id} starts before {a} ends")
        if w.same_hardware_as and ids[w.id].candidate.accelerator != ids[w.same_hardware_as].candidate.accelerator:
            bad.append(f"{w.id} is not on {w.same_hardware_as}'s accelerator")
    return bad


def _gates(pp: ProgramProblem, plan: ProgramPlan) -> list[str]:
    """`decide_after`: with G the latest finish of a workload's gates, its run starts on or after G; on a rented
    quote, on or after G + the quote's lead time at the confidence + the rules' delays at that run (committed on G
    at the soonest, and by its `valid_until`); on owned nodes, every lot of its system is ordered on or after G."""
    bad: list[str] = []
    a = pp.first.assumptions.values
    cat = pp.first.catalog
    runs = {r.workload: r for r in plan.runs}
    for w in pp.spec.workloads:
        if not w.decide_after:
            continue
        r, gate = runs[w.id], max(runs[g].end_day for g in w.decide_after)
        c = r.candidate
        if r.start_day < gate:
            bad.append(f"{w.id} starts before its decision gates ({', '.join(w.decide_after)}) finish")
        if c.quote is not None:
            q = cat.quotes[c.quote]
            kw = c.nodes * float(cat.systems[c.system].node_kw.value)
            delay = sum(delay_days(then) for rule, then in adjustments(pp.spec.rules, _attrs(pp, c.system, c.mode),
                                                                         c.gpus, c.nodes, c.days, kw)
                        if names_quote(rule, [q.id]))
            if r.start_day < gate + math.ceil(q.lead_days(a.confidence)) + delay:
                bad.append(f"{w.id}: {q.id} would have to be committed before its decision gates finish")
            if pp.as_of + timedelta(days=gate) > q.valid_until:
                bad.append(f"{w.id}: {q.id} is committed after its decision gates finish, when it has expired")
        else:
            early = [p for p in plan.purchases if p.quote.system == c.system and p.order_day < gate]
            if early:
                bad.append(f"{w.id} runs on {c.system} lots ordered before its decision gates finish "
                           f"({early[0].quote.quote} on day {early[0].order_day})")
    return bad


def _lots(pp: ProgramProblem, plan: ProgramPlan) -> list[str]:
    bad: list[str] = []
    a = pp.first.assumptions.values
    cat = pp.first.catalog
    count: dict[str, int] = {}
    for p in plan.purchases:
        q = cat.quotes[p.quote.quote]
        accel = cat.accelerators[cat.systems[q.system].accelerator]
        if pp.as_of + timedelta(days=p.order_day) > q.valid_until or p.order_day < 0:
            bad.append(f"{q.id} ordered outside its validity")
        if p.delivered_day != p.order_day + math.ceil(q.lead_days(a.confidence)) or \
                p.usable_day != p.delivered_day + math.ceil(a.install_days[accel.cls]):
            bad.append(f"{q.id}: delivery or installation dates do not follow its lead time")
        if p.held_days != plan.end_day - p.delivered_day:
            bad.append(f"{q.id}: held {p.held_days} days, not delivery to the program's end")
        if p.usable_day >= plan.end_day:
            bad.append(f"{q.id}: a lot usable on day {p.usable_day}, when the program has ended (it serves nothing)")
        cost, cash = lot_money(pp, p)
        if abs(cost - p.cost_usd) > TOL_USD + 1e-9 * abs(cost) or abs(cash - p.cash_usd) > TOL_USD + 1e-9 * cash:
            bad.append(f"{q.id}: lot cost {p.cost_usd:,.0f}/{p.cash_usd:,.0f} recomputed as {cost:,.0f}/{cash:,.0f}")
        count[q.id] = count.get(q.id, 0) + p.quote.lot_nodes
    for qid, n in count.items():
        if n > cat.quotes[qid].max_nodes:
            bad.append(f"{qid}: {n} nodes bought, quote offers {cat.quotes[qid].max_nodes}")
    return bad


def _rules(pp: ProgramProblem, plan: ProgramPlan) -> list[str]:
    """Every forbid/require rule at every run (its option's attributes from the catalog, its size, days, power
    n × node kW, its rented quote or the bought quotes whose lots it used, its own cost), and at every lot."""
    bad: list[str] = []
    cat = pp.first.catalog
    rules = pp.spec.rules
    bought: dict[str, set[str]] = {}
    for p in plan.purchases:
        q = cat.quotes[p.quote.quote]
        if not lot_allowed(rules, q.id, _attrs(pp, q.system, q.mode)):
            bad.append(f"{q.id}: bought, but a rule forbids it or requires other quotes")
        bought.setdefault(q.system, set()).add(q.id)
    for r in plan.runs:
        c = r.candidate
        system = cat.systems[c.system]
        lots = sorted(bought.get(c.system, set())) if c.owned else []
        for rule in rules:
            if not isinstance(rule.then, str):
                continue
            hit = program_run_hits(rule, _attrs(pp, c.system, c.mode), c.gpus, c.nodes, c.days,
                                   c.nodes * float(system.node_kw.value), c.quote, lots, c.cost_usd)
            if (rule.then == "forbid" and hit) or (rule.then == "require" and not hit):
                bad.append(f"{r.workload}: its run breaks rules.{rule.name}")
    return bad


def _attrs(pp: ProgramProblem, system_id: str, mode: str) -> dict[str, Any]:
    cat = pp.first.catalog
    system = cat.systems[system_id]
    accel = cat.accelerators[system.accelerator]
    return option_attrs(accelerator=accel.id, system=system.id, vendor=accel.vendor, cls=accel.cls, mode=mode,
                        ecc=bool(accel.ecc.value), cooling=system.cooling, software=accel.software,
                        network=system.network)


def _daily(pp: ProgramProblem, plan: ProgramPlan) -> list[str]:
    """Pools, rented capacity and power on every day of the program."""
    bad: list[str] = []
    site = pp.spec.site
    steps = sorted(site.power_steps, key=lambda s: s.from_) if site else []
    for d in range(0, plan.end_day + 1):
        today = pp.as_of + timedelta(days=d)
        running = [r for r in plan.runs if r.start_day <= d < r.end_day]
        for system in {r.candidate.system for r in running if r.candidate.owned}:
            used = sum(r.candidate.nodes for r in running if r.candidate.owned and r.candidate.system == system)
            have = sum(p.quote.lot_nodes for p in plan.purchases if p.quote.system == system and p.usable_day <= d)
            if used > have:
                bad.append(f"{today}: {used} owned {system} nodes in use, {have} usable")
        for qid in {r.candidate.quote for r in running if r.candidate.quote}:
            used = sum(r.candidate.nodes for r in running if r.candidate.quote == qid)
            if used > pp.first.catalog.quotes[qid].max_nodes:
                bad.append(f"{today}: {used} nodes of {qid} rented at once")
        if site is not None:
            limit = site.it_power_kw
            for s in steps:
                if s.from_ <= today:
                    limit = s.it_power_kw
            kw = sum(p.quote.node_kw * p.quote.lot_nodes for p in plan.purchases if p.delivered_day <= d)
            if kw > limit + 1e-6:
                bad.append(f"{today}: {kw:,.1f} kW installed, limit {limit:,.0f} kW")
    if site is not None:
        racks = sum(p.quote.racks_per_lot for p in plan.purchases)
        if racks > site.racks:
            bad.append(f"{racks} racks used, site has {site.racks}")
    return bad


def _money(pp: ProgramProblem, plan: ProgramPlan) -> list[str]:
    bad: list[str] = []
    caps = pp.spec.budget.per_quarter_usd
    spend: dict[str, float] = {}
    for p in plan.purchases:
        label = quarter_of(pp.as_of + timedelta(days=p.order_day))
        spend[label] = spend.get(label, 0.0) + p.capex_usd
    for r in plan.runs:
        if r.candidate.owned:
            continue
        per_day = r.candidate.cash_usd / r.candidate.days
        for d in range(r.start_day, r.end_day):
            label = quarter_of(pp.as_of + timedelta(days=d))
            spend[label] = spend.get(label, 0.0) + per_day
    for label, cap in caps.items():
        if spend.get(label, 0.0) > cap + TOL_USD:
            bad.append(f"{label}: {spend[label]:,.0f} committed, cap {cap:,.0f}")
    parts_cost = sum(r.candidate.cost_usd for r in plan.runs) + sum(p.cost_usd for p in plan.purchases) + \
        sum(v for _, v in plan.porting)
    if abs(parts_cost - plan.cost_usd) > TOL_USD:
        bad.append(f"cost {plan.cost_usd:,.0f} is not the sum of its parts {parts_cost:,.0f}")
    budget = pp.spec.budget
    limited = plan.cash_usd if budget.applies_to == "cash" else plan.cost_usd
    if budget.max_usd is not None and limited > budget.max_usd + TOL_USD:
        bad.append(f"{budget.applies_to} {limited:,.0f} over the budget {budget.max_usd:,.0f}")
    items = len(plan.runs) + 2 * len(plan.purchases) + len(plan.porting) + 2
    if not plan.cost_usd - TOL_USD <= plan.model_cost_units * 1000.0 <= plan.cost_usd + items * 1000.0:
        bad.append(f"model cost {plan.model_cost_units} k$ does not round {plan.cost_usd:,.0f} up")
    return bad


def _confidence(pp: ProgramProblem, plan: ProgramPlan) -> list[str]:
    """`policy.deadline_confidence`: each workload with a deadline meets it in at least ⌈c·N⌉ of the scenarios.
    Its own walk over the runs in the order they start, from the draws (not the planner's `finishes` or its cuts):
    a run starts on the latest of its planned day, its port, its rented capacity or the lots of its system usable by
    its planned day (each no earlier than its planned delivery), the runs it follows, and the runs that ended
    before it on the same quote or system; it lasts ⌈wall / 24⌉ days of its point's scenario wall time."""
    c = pp.spec.policy.deadline_confidence
    if c is None:
        return []
    a = pp.first.assumptions.values
    cat = pp.first.catalog
    draws = Draws(a.uncertainty.seed, a.uncertainty.scenarios)
    need = math.ceil(round(c * draws.n, 9))

    def lead(qid: str) -> np.ndarray:
        q = cat.quotes[qid]
        return np.ceil(lead_days(draws, qid, q.lead_time_days, q.lead_time_p90_days, a.lead_time_cap_quantile)
                       - 1e-9)

    finish: dict[str, np.ndarray] = {}
    done: list[RunPlan] = []
    for r in sorted(plan.runs, key=lambda r: (r.start_day, r.end_day, r.workload)):
        cand, sc = r.candidate, r.candidate.scenario
        if sc is None:
            return [f"{r.workload}: no scenario data to check the deadline confidence"]
        start = np.maximum(float(r.start_day), np.ceil(porting_days(draws, a, sc.port_key, sc.port_days) - 1e-9))
        if cand.quote is not None:
            start = np.maximum(start, np.ceil(lead(cand.quote) + sc.install_days - 1e-9))
        for p in plan.purchases:
            if cand.quote is None and p.quote.system == cand.system and p.usable_day <= r.start_day:
                start = np.maximum(start, np.maximum(p.delivered_day, p.order_day + lead(p.quote.quote))
                                   + p.quote.install_days)
        after = pp.spec.workloads[pp.index_of(r.workload)].after
        for o in done:
            shared = o.candidate.quote == cand.quote and (cand.quote is not None or o.candidate.system == cand.system)
            if o.workload in after or (shared and o.end_day <= r.start_day):
                start = np.maximum(start, finish[o.workload])
        wall = wall_hours(sc.time, a.reliability.restart_hours, mfu_factor(draws, a, sc.software, sc.cls, sc.measured),
                          draws.normal(f"interruptions:{r.workload}"), draws.uniform(f"interruptions:{r.workload}"))
        finish[r.workload] = start + np.maximum(1.0, np.ceil(wall / 24.0 - 1e-9))
        done.append(r)
    bad = []
    for wid, days in finish.items():
        last = _dates(pp, wid)[1]
        if last is None:
            continue
        met = int(np.count_nonzero(days <= (last - pp.as_of).days))
        if met < need:
            bad.append(f"{wid} meets its deadline {last} in {met / draws.n:.1%} of the scenarios, under "
                       f"policy.deadline_confidence {c}")
    return bad


def program_violations(pp: ProgramProblem, plan: ProgramPlan) -> list[str]:
    return (_runs(pp, plan) + _gates(pp, plan) + _lots(pp, plan) + _rules(pp, plan) + _daily(pp, plan)
            + _money(pp, plan) + _confidence(pp, plan))


def check_program(pp: ProgramProblem, plan: ProgramPlan) -> None:
    bad = program_violations(pp, plan)
    if bad:
        raise PlanCheckError("program plan fails the independent check: " + "; ".join(bad[:5]))


__all__ = ["check_program", "program_violations", "lot_money"]
