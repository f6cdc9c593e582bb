"""Independent plan checker: re-verifies a returned plan against every constraint, in plain Python.

It does not read the CP-SAT model or its coefficient tables. From the plan's decision (system, mode, node
count, quote allocation, start date) it recomputes memory, time, dates, power, racks and dollars with the
estimators, and evaluates every user limit, policy and rule directly. A violation is a bug in the model (or
a CP-SAT wrong answer, cf. google/or-tools#5293) and raises `PlanCheckError` — it is never shown as a plan.
"""

from __future__ import annotations

import math

from .assumptions import Assumptions
from .catalog import Catalog
from .compute import estimate_time, training_flops, utilisation
from .cost import Lines, buy_node_lines, cloud_node_lines, fixed_lines, managed_node_lines, slip_premium
from .errors import PlanCheckError
from .memory import memory_per_gpu
from .options import Universe
from .plan import Plan
from .problem import LoadedProblem
from .rules import matches_attrs, matches_point, quote_ids


def _close(a: float, b: float, rel: float = 1e-6) -> bool:
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


def recompute_lines(lp: LoadedProblem, cat: Catalog, a: Assumptions, plan: Plan, ideal_h: float, wall_h: float) -> Lines:
    p = lp.problem
    system = cat.systems[plan.system]
    accel = cat.accelerators[system.accelerator]
    porting = a.porting[accel.software][p.workload.framework]  # type: ignore[index]
    lines = fixed_lines(mode=plan.mode, gpus=plan.gpus, nodes=plan.nodes, wall_hours=wall_h, porting_weeks=porting.weeks, money=a.money)
    slip = 0.0
    for pq in plan.quotes:
        q = cat.quotes[pq.id]
        est = q.kind == "estimate"
        if plan.mode == "buy":
            assert p.site is not None
            per = buy_node_lines(price=q.price, nodes=plan.nodes, ideal_hours=ideal_h, wall_hours=wall_h,
                                 install_days=a.install_days[accel.cls], node_kw=float(system.node_kw.value),  # type: ignore[index]
                                 pue=p.site.pue, usd_per_kwh=p.site.electricity_usd_per_kwh, money=a.money,
                                 accounting=p.policy.accounting, consumer=accel.cls == "consumer", estimate=est)
        elif plan.mode == "cloud":
            per = cloud_node_lines(usd_per_gpu_hour=q.price, per_node=system.per_node, ideal_hours=ideal_h,
                                   wall_hours=wall_h, commit_months=q.commit_months, money=a.money, estimate=est)
        else:
            per = managed_node_lines(usd_per_month=q.price, ideal_hours=ideal_h, wall_hours=wall_h,
                                     commit_months=q.commit_months, money=a.money, estimate=est)
        for name, v in per.cost.items():
            lines.cost[name] = lines.cost.get(name, 0.0) + v * pq.nodes
        for name, v in per.cash.items():
            lines.cash[name] = lines.cash.get(name, 0.0) + v * pq.nodes
        slip = max(slip, slip_premium(q.lead_time_days, q.lead_time_p90_days, a.money))
    if slip:
        lines.add("delivery_slip", slip)
    return lines


def check_plan(lp: LoadedProblem, cat: Catalog, a: Assumptions, universe: Universe, plan: Plan) -> None:
    """Raise `PlanCheckError` listing every violated constraint or inconsistent figure."""
    p = lp.problem
    w = p.workload
    bad: list[str] = []
    system = cat.systems[plan.system]
    accel = cat.accelerators[system.accelerator]
    attrs = {"accelerator": accel.id, "system": system.id, "vendor": accel.vendor, "class": accel.cls,
             "mode": plan.mode, "ecc": bool(accel.ecc.value), "cooling": system.cooling,
             "software": accel.software, "network": system.network}

    # Decision consistency and quotes.
    if sum(q.nodes for q in plan.quotes) != plan.nodes:
        bad.append(f"quote allocation {[(q.id, q.nodes) for q in plan.quotes]} does not add up to {plan.nodes} nodes")
    if plan.gpus != plan.nodes * system.per_node:
        bad.append("gpus != nodes x per_node")
    for pq in plan.quotes:
        q = cat.quotes[pq.id]
        if q.system != plan.system or q.mode != plan.mode:
            bad.append(f"quote {q.id} is for {q.system}/{q.mode}, not {plan.system}/{plan.mode}")
        if pq.nodes > q.max_nodes:
            bad.append(f"quotes.{q.id}.max_nodes: {pq.nodes} > {q.max_nodes}")
        if pq.nodes < q.min_nodes:
            bad.append(f"quote {q.id}: {pq.nodes} nodes < min_nodes {q.min_nodes}")
        if q in universe.expired:
            bad.append(f"quote {q.id} is expired")

    # Memory.
    mem = memory_per_gpu(params=w.params, gpus=plan.gpus, per_node=system.per_node,
                         available_gb=float(accel.memory_gb.value), method=w.method, optimizer=w.optimizer,
                         seq_len=w.seq_len, recompute=plan.recompute, shape=universe.shape, mem=a.memory,
                         lora_rank=w.lora_rank, flash_attention=w.flash_attention)
    if not mem.fits:
        bad.append(f"workload.memory: needs {mem.required_gb:.1f} GB per GPU, has {mem.available_gb:g}")
    if w.recompute != "auto" and plan.recompute != w.recompute:
        bad.append(f"recompute {plan.recompute} differs from the requested {w.recompute}")

    # Time.
    rule_f = 1.0
    for rule in p.rules:
        t_ = rule.then
        if not isinstance(t_, str) and t_.mfu_factor and rule.when.quote is None and matches_attrs(rule.when, attrs) \
                and matches_point(rule.when, plan.gpus, plan.nodes, None, plan.power_kw):
            rule_f *= t_.mfu_factor
    util = utilisation(software=accel.software, accel_class=accel.cls, params=w.params, seq_len=w.seq_len,
                       precision=w.precision, has_fp8=accel.fp8_tflops.value is not None, method=w.method,
                       c=a.compute, rule_factor=rule_f).value
    flops = training_flops(w.params, w.tokens, w.method, plan.recompute, universe.shape.layers,
                           universe.shape.hidden, w.seq_len)
    ckpt_params = w.params
    if w.method in ("lora", "qlora"):
        ckpt_params = 18.0 * universe.shape.hidden * (w.lora_rank or a.memory.lora_rank) * universe.shape.layers
    t = estimate_time(a=a, flops=flops, gpus=plan.gpus, nodes=plan.nodes, per_node=system.per_node,
                      network=system.network, peak_tflops=accel.peak_tflops(w.precision), util=util,
                      accel_class=accel.cls, checkpoint_bytes=a.reliability.checkpoint_bytes_per_param * ckpt_params)
    if t is None:
        raise PlanCheckError("plan check: the chosen configuration is unworkable (failures)")
    days = max(1, math.ceil(t.days - 1e-9))
    if not _close(t.wall_hours, plan.training_days * 24.0):
        bad.append(f"training time {plan.training_days:.3f} d differs from recomputed {t.days:.3f} d")
    if (plan.finish - plan.start).days != days:
        bad.append(f"finish - start = {(plan.finish - plan.start).days} d, expected {days}")

    # Calendar.
    start_day = (plan.start - lp.as_of).days
    porting = a.porting[accel.software][w.framework]  # type: ignore[index]
    need = max(0, math.ceil(porting.delay_days), (accel.available_from.value - lp.as_of).days)
    delays = 0
    for rule in p.rules:
        t_ = rule.then
        if not isinstance(t_, str) and t_.delay_days and matches_attrs(rule.when, attrs) and \
                matches_point(rule.when, plan.gpus, plan.nodes, days, plan.power_kw):
            qids = quote_ids(rule.when)
            if qids is None or any(q.id in qids for q in plan.quotes):
                delays += math.ceil(t_.delay_days)
    install = a.install_days[accel.cls] if plan.mode == "buy" else 0.0  # type: ignore[index]
    for pq in plan.quotes:
        q = cat.quotes[pq.id]
        need = max(need, math.ceil(q.lead_days(a.confidence) + install))
    if start_day < need + delays and delays:
        bad.append(f"start day {start_day} is before hardware/porting readiness plus rule delays ({need}+{delays})")
    if start_day < need:
        bad.append(f"start day {start_day} is before readiness day {need} (lead time, install, porting)")
    if p.schedule.earliest_start and plan.start < p.schedule.earliest_start:
        bad.append(f"schedule.earliest_start: starts {plan.start} before {p.schedule.earliest_start}")
    if p.schedule.deadline and plan.finish > p.schedule.deadline:
        bad.append(f"schedule.deadline: finishes {plan.finish} after {p.schedule.deadline}")

    # Policy.
    pol = p.policy
    if plan.mode not in pol.modes:
        bad.append(f"policy.modes: {plan.mode} not allowed")
    if pol.require_ecc and not accel.ecc.value:
        bad.append("policy.require_ecc: accelerator has no ECC")
    inc = [s.lower() for s in pol.accelerators.include]
    if (inc and accel.id not in inc) or accel.id in [s.lower() for s in pol.accelerators.exclude]:
        bad.append("policy.accelerators")
    vinc = [s.lower() for s in pol.vendors.include]
    if (vinc and accel.vendor not in vinc) or accel.vendor in [s.lower() for s in pol.vendors.exclude]:
        bad.append("policy.vendors")
    if not pol.allow_estimates and any(cat.quotes[q.id].kind == "estimate" for q in plan.quotes):
        bad.append("policy.allow_estimates")

    # Site.
    if plan.mode == "buy":
        site = p.site
        if site is None:
            bad.append("buy without a site")
        else:
            if system.cooling not in site.cooling:
                bad.append(f"site.cooling: needs {system.cooling}")
            if plan.nodes * float(system.node_kw.value) > site.it_power_kw + 1e-6:
                bad.append(f"site.it_power_kw: {plan.nodes * float(system.node_kw.value):.1f} > {site.it_power_kw}")
            per_rack = min(int(system.nodes_per_rack.value) or 1, int(site.rack_power_kw // float(system.node_kw.value)))
            if per_rack < 1:
                bad.append(f"site.rack_power_kw: a node draws {system.node_kw.value} kW")
            elif math.ceil(plan.nodes / per_rack) > site.racks:
                bad.append(f"site.racks: needs {math.ceil(plan.nodes / per_rack)} > {site.racks}")

    # Money: recompute every line independently and compare with the plan's.
    lines = recompute_lines(lp, cat, a, plan, t.ideal_hours, t.wall_hours)
    rules_cost = plan.lines.cost.get("rules", 0.0)
    rules_cash = plan.lines.cash.get("rules", 0.0)
    exp_cost = lines.total_cost + rules_cost
    exp_cash = lines.total_cash + rules_cash
    base_for_pct = lines.total_cost - lines.cost.get("delivery_slip", 0.0)
    want_cost = want_cash = 0.0
    for rule in p.rules:
        t_ = rule.then
        if isinstance(t_, str) or not matches_attrs(rule.when, attrs) or \
                not matches_point(rule.when, plan.gpus, plan.nodes, days, plan.power_kw):
            continue
        qids = quote_ids(rule.when)
        if qids is not None and not any(q.id in qids for q in plan.quotes):
            continue
        want_cost += (t_.add_usd or 0.0) + base_for_pct * (t_.add_pct or 0.0) / 100.0
        want_cash += t_.add_usd or 0.0
    if not (_close(rules_cost, want_cost) and _close(rules_cash, want_cash)):
        bad.append(f"rule adjustments {rules_cost:.0f}/{rules_cash:.0f} differ from recomputed {want_cost:.0f}/{want_cash:.0f}")
    if not _close(exp_cost, plan.total_cost):
        bad.append(f"cost {plan.total_cost:,.0f} differs from recomputed {exp_cost:,.0f}")
    if not _close(exp_cash, plan.total_cash):
        bad.append(f"cash {plan.total_cash:,.0f} differs from recomputed {exp_cash:,.0f}")
    if plan.model_cost_units * plan.unit < exp_cost - 1e-6 * max(1.0, exp_cost):
        bad.append(f"model cost {plan.model_cost_units} x ${plan.unit} under-counts the exact cost {exp_cost:,.0f}")
    if p.budget.max_usd is not None:
        spent = exp_cash if p.budget.applies_to == "cash" else exp_cost
        if spent > p.budget.max_usd + 1e-6:
            bad.append(f"budget.max_usd: {spent:,.0f} > {p.budget.max_usd:,.0f}")

    # Hard rules.
    for rule in p.rules:
        if not isinstance(rule.then, str):
            continue
        when = rule.when
        hit = matches_attrs(when, attrs) and matches_point(when, plan.gpus, plan.nodes, days, plan.power_kw)
        qids = quote_ids(when)
        if qids is not None:
            hit = hit and any(q.id in qids for q in plan.quotes)
        if when.cost is not None:
            hit = hit and when.cost.test(plan.total_cost)
        if rule.then == "forbid" and hit:
            bad.append(f"rules.{rule.name}: plan matches a forbidden pattern")
        if rule.then == "require" and not hit:
            bad.append(f"rules.{rule.name}: plan does not match a required pattern")
    if bad:
        raise PlanCheckError("plan check failed for " + plan.option + f" x{plan.nodes}: " + "; ".join(bad))
