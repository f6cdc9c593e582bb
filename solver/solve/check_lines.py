"""The independent checker's own formulas for the lines of a successful checkpoint ([seed-001]): hot spares' share,
storage, data transfer, orchestration and failure recovery, and the plan's checkpoint figures (Young/Daly).

Written again from the catalog fields and the assumptions, per plan rather than per node, never by calling
`estimate/cost.py` or `estimate/checkpoints.py` (`checker.py` says why): a formula bug there shows as a mismatch.
"""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Protocol

from ..estimate.memory import Shape, adapter_params
from ..inputs.assumptions import ProviderClass
from ..inputs.catalog import Accelerator, Quote
from ..inputs.problem import Problem
from .plan import Plan

MONTH_HOURS = 8760.0 / 12.0


class Charges(Protocol):
    def charge(self, name: str, cost: float, cash: float | None = None) -> None: ...


def spare_share(problem: Problem, nodes: int) -> float:
    """Spare nodes per node: `policy.spare_nodes_pct` (else the reliability assumption) / 100, for clusters of more
    than one node."""
    pct = problem.spec.policy.spare_nodes_pct
    if pct is None:
        pct = problem.assumptions.values.reliability.spare_nodes_pct
    return pct / 100.0 if nodes > 1 else 0.0


def failure_rate(problem: Problem, plan: Plan, accel: Accelerator) -> float:
    """λ, the plan's interruptions per hour: the class's rate per GPU-hour × GPUs, + spot reclaims × nodes."""
    r = problem.assumptions.values.reliability
    spot = any(problem.catalog.quotes[pq.id].contract == "spot" for pq in plan.quotes)
    return r.interruptions_per_gpu_hour[accel.cls] * plan.gpus + (  # type: ignore[index]
        r.spot_interruptions_per_node_hour * plan.nodes if spot else 0.0)


def checkpoint_size(problem: Problem, shape: Shape) -> float:
    """Bytes of a checkpoint: (model-state bytes − gradient bytes) per trained parameter × trained parameters (the
    adapters of a LoRA run, the whole model otherwise)."""
    w, mem = problem.spec.workload, problem.assumptions.values.memory
    if w.method in ("lora", "qlora"):
        return max(0.0, mem.adapter_state_bytes_per_param - mem.gradient_bytes_per_param) * \
            adapter_params(shape, w.lora_rank or mem.lora_rank)
    return max(0.0, mem.states_bytes_per_param[w.optimizer] - mem.gradient_bytes_per_param) * w.params


def _rates_class(problem: Problem, mode: str, vendor: str) -> ProviderClass:
    if mode == "buy":
        return "owned"
    for name, cls in problem.assumptions.values.data.provider_class.items():
        if vendor == name or vendor.startswith(f"{name} ") or vendor.startswith(f"{name}("):
            return cls
    return "gpu_cloud"


def data_lines(led: Charges, problem: Problem, plan: Plan, shape: Shape, hours: float) -> None:
    """storage and data_transfer: each quote's share of the plan's nodes pays its provider's rates for (kept
    checkpoints + dataset) TB × months of the run, the dataset in (its source's egress + ingress) and the kept
    checkpoints out (egress)."""
    d = problem.assumptions.values.data
    ckpt_tb = checkpoint_size(problem, shape) / 1e12
    dataset_tb = problem.spec.workload.tokens * d.dataset_bytes_per_token / 1e12
    for pq in plan.quotes:
        cls = _rates_class(problem, plan.mode, pq.vendor)
        share = pq.nodes / plan.nodes
        months = hours / MONTH_HOURS
        led.charge("storage", share * (ckpt_tb * d.checkpoints_kept + dataset_tb) * months
                   * d.storage_usd_per_tb_month[cls])
        moved = dataset_tb * 1000.0 * (d.dataset_source_egress_usd_per_gb + d.ingress_usd_per_gb[cls]) \
            + ckpt_tb * d.checkpoints_kept * 1000.0 * d.egress_usd_per_gb[cls]
        led.charge("data_transfer", share * moved)


def run_lines(led: Charges, problem: Problem, plan: Plan, rate: float, hours: float) -> None:
    """orchestration (nodes × $/node-month × months) and recovery (λ·hours interruptions × (engineer hours + the
    hardware share × own hours to replace a node) × the engineer-month ÷ its hours)."""
    a = problem.assumptions.values
    m, r = a.money, a.reliability
    led.charge("orchestration", plan.nodes * m.orchestration_usd_per_node_month * hours / MONTH_HOURS)
    each = m.engineer_hours_per_failure + r.hardware_failure_share * r.node_replacement_hours[plan.mode]  # type: ignore
    led.charge("recovery", rate * hours * each * m.engineer_usd_per_month / m.engineer_hours_per_month)


def deposit_line(led: Charges, problem: Problem, q: Quote, k: int, nodes: int) -> None:
    """deposit_capital of k nodes bought from quote q: the deposit — the quote's `deposit_pct` (else the money
    assumption's) of the servers, their network share and their hot spares — times the cost of capital for the
    whole days from order to delivery (the lead time at the schedule's confidence), over a 365-day year."""
    a = problem.assumptions.values
    m = a.money
    pct = m.deposit_pct if q.deposit_pct is None else q.deposit_pct
    days = math.ceil(q.lead_days(a.confidence))
    hardware = q.price * k * (1.0 + (m.network_capex_fraction if nodes > 1 else 0.0)) * (1.0 + spare_share(problem,
                                                                                                         nodes))
    usd = hardware * pct / 100.0 * m.cost_of_capital_pct_per_year / 100.0 * days / 365.0
    if usd > 0:
        led.charge("deposit_capital", usd, cash=0.0)


def payment_violations(problem: Problem, plan: Plan) -> list[str]:
    """The plan's payments against the cash and the terms: its quarters add up to its cash, and each bought quote's
    deposit (its share of the hardware price, `deposit_line`) falls on its order date, its balance the terms' days
    after delivery."""
    m = problem.assumptions.values.money
    bad = []
    paid = sum(x.usd for x in plan.cash_by_quarter)
    if abs(paid - plan.total_cash) > 1e-6 * max(1.0, abs(plan.total_cash)):
        bad.append(f"cash by quarter adds up to {paid:,.2f}, not the plan's cash {plan.total_cash:,.2f}")
    for pq in plan.quotes:
        if pq.mode != "buy":
            continue
        q = problem.catalog.quotes[pq.id]
        pct = m.deposit_pct if q.deposit_pct is None else q.deposit_pct
        terms = m.payment_terms_days if q.payment_terms_days is None else q.payment_terms_days
        hardware = q.price * pq.nodes * (1.0 + (m.network_capex_fraction if plan.nodes > 1 else 0.0)) \
            * (1.0 + spare_share(problem, plan.nodes))
        if abs(pq.deposit_usd - hardware * pct / 100.0) > 1e-6 * max(1.0, hardware):
            bad.append(f"quote {pq.id}'s deposit {pq.deposit_usd:,.2f} is not {pct:g}% of {hardware:,.2f}")
        if pq.delivered is not None and pq.balance_due != pq.delivered + timedelta(days=math.ceil(terms - 1e-9)):
            bad.append(f"quote {pq.id}'s balance is due {pq.balance_due}, not {terms:g} days after delivery")
    return bad


def checkpoint_violations(problem: Problem, plan: Plan, shape: Shape, ideal_hours: float, rate: float) -> list[str]:
    """The plan's checkpoint figures against δ = size ÷ (write GB/s × nodes), M = 1/λ, τ = √(2δM), successful
    checkpoints = ideal hours ÷ τ, cost per successful checkpoint = total cost ÷ that."""
    c = plan.checkpoint
    if c is None:
        return ["the plan has no checkpoint figures"]
    size = checkpoint_size(problem, shape)
    delta = size / (problem.assumptions.values.reliability.checkpoint_write_gbps_per_node * 1e9 * plan.nodes) / 3600.0
    mtbf = 1.0 / rate if rate > 0 else math.inf
    tau = math.sqrt(2.0 * delta * mtbf) if delta > 0 and math.isfinite(mtbf) else (0.0 if delta <= 0 else math.inf)
    want = {"size_tb": size / 1e12, "write_hours": delta, "mtbf_hours": mtbf, "interval_hours": tau}
    bad = [f"checkpoint {k} {getattr(c, k):.6g} differs from recomputed {v:.6g}" for k, v in want.items()
           if not (getattr(c, k) == v or abs(getattr(c, k) - v) <= 1e-6 * max(1.0, abs(v)))]
    if math.isfinite(tau) and tau > 0 and c.cost_per_successful_usd is not None:
        per = plan.total_cost / (ideal_hours / tau)
        if abs(c.cost_per_successful_usd - per) > 1e-6 * max(1.0, per):
            bad.append(f"cost per successful checkpoint {c.cost_per_successful_usd:,.2f} differs from {per:,.2f}")
    return bad


__all__ = ["spare_share", "failure_rate", "checkpoint_size", "data_lines", "run_lines", "deposit_line",
           "payment_violations", "checkpoint_violations"]
