"""`risk.uncertainty.aversion` (ω of the mean–CVaR objective): the tail premium of a plan is ω × (mean cost of its 5%
longest runs − its mean cost over every run), plus ω × (CVaR95 − E) of an estimated price; CP-SAT still finds the
exact optimum, and a higher aversion buys a thinner tail.

Independent checks: the premium of a rented plan recomputed in the test from the quote's rate, the engineers and the
scenario run lengths (by hand, not through the cost templates); the lognormal CVaR factor against a sample; the
optimum against exhaustive enumeration; the direction in which ω moves the answer.
"""

from __future__ import annotations

import math
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.answers.risk import draws_for
from solver.estimate.scenarios import price_tail_factor
from solver.estimate.uncertainty import mfu_factor
from solver.inputs.problem import load_problem
from solver.solve.pipeline import SolveSettings, prepare, solve_problem
from test_optimality import assert_optimum_equals_enumeration, cost_objective, extra_quotes, problems

ROOT = Path(__file__).resolve().parent.parent
FINETUNE = ROOT / "constraints" / "finetune-70b.yaml"
DATACENTER = ROOT / "constraints" / "datacenter.yaml"


def _poisson_quantile(mean: float, u: float) -> int:
    """The smallest k with P(Poisson(mean) ≤ k) ≥ u, by the pmf in logs (an implementation of the test's own)."""
    k, cdf = 0, math.exp(-mean)
    while cdf < u:
        k += 1
        cdf += math.exp(-mean + k * math.log(mean) - math.lgamma(k + 1))
    return k


def _runs_by_hand(t: Any, a: Any, draws: Any, accel: Any) -> np.ndarray:
    """Wall hours per scenario: the planned wall over the scenario's MFU factor; where the interruption count's
    variance μr² exceeds 0.1 × the MFU's (W²·Var(1/m)), c·ideal/m + K·r with K drawn from the scenario's uniform."""
    factor = mfu_factor(draws, a, accel.software, accel.cls)
    lam = t.interruptions / t.wall_hours
    tau, delta = t.checkpoint_interval_hours, t.checkpoint_write_hours
    r = tau / 2 + delta + a.reliability.restart_hours          # half an interval, the read-back, the restart
    if t.interruptions * r ** 2 <= 0.1 * t.wall_hours ** 2 * float(np.var(1 / factor)):
        return t.wall_hours / factor
    work = t.ideal_hours * (1 + delta / tau) / factor
    mean = lam * work / (1 - lam * r)
    u = [NormalDist().cdf(z) for z in draws.normal("interruptions")]
    return work + np.array([_poisson_quantile(m, x) for m, x in zip(mean, u)]) * r


def test_a_rented_plans_premium_by_hand() -> None:
    """Cloud billing is rate × GPUs × max(hours, floor), with the hot spares (1 + s) of it; operations are
    engineers × $/month × max(hours, minimum) / 730; storage, orchestration and recovery are linear in the hours;
    porting and transfers do not depend on them. The premium is ω (mean over the 500 longest of 10,000 runs − the
    mean over every run); the plan's `throughput` line is the mean less the cost at the planned hours."""
    omega = 0.5
    problem = load_problem(FINETUNE, [f"risk.uncertainty.aversion={omega}"])
    ctx = prepare(problem, SolveSettings(alternatives=False))
    plan = solve_problem(problem, ctx.settings, ctx).plan
    assert plan is not None and plan.mode == "cloud" and len(plan.quotes) == 1
    assert "lateness" not in plan.lines.cost, "the test's hand figure leaves lateness out"
    pt = next(p for o in ctx.universe.options if o.id == plan.option for p in o.points if p.n == plan.nodes)
    a = problem.assumptions.values
    q = problem.catalog.quotes[plan.quotes[0].id]
    assert pt.time is not None
    walls = _runs_by_hand(pt.time, a, draws_for(problem), pt.option.accel)
    floor = max(q.commit_months * 730.0, a.money.cloud_min_billed_hours)
    fte = a.money.ops_fte["cloud"]
    engineers = (fte.base if plan.nodes > 1 else 0.0) + fte.per_1000_gpus * plan.gpus / 1000.0
    spares = a.reliability.spare_nodes_pct / 100.0 if plan.nodes > 1 else 0.0
    w = problem.spec.workload
    stored_tb = (w.params * (a.memory.states_bytes_per_param[w.optimizer] - a.memory.gradient_bytes_per_param)
                 * a.data.checkpoints_kept + w.tokens * a.data.dataset_bytes_per_token) / 1e12
    assert not q.vendor.startswith(("AWS", "Google Cloud", "Microsoft Azure", "Oracle OCI"))   # a GPU cloud
    per_hour = stored_tb * a.data.storage_usd_per_tb_month["gpu_cloud"] / 730.0 \
        + plan.nodes * a.money.orchestration_usd_per_node_month / 730.0 \
        + pt.time.interruptions / pt.time.wall_hours * (a.money.engineer_hours_per_failure
                                                         + a.reliability.hardware_failure_share
                                                         * a.reliability.node_replacement_hours["cloud"]) \
        * a.money.engineer_usd_per_month / a.money.engineer_hours_per_month

    def cost(hours: Any) -> Any:
        return (1 + spares) * q.price * plan.gpus * np.maximum(hours, floor) + per_hour * hours + \
            engineers * a.money.engineer_usd_per_month * np.maximum(hours, a.money.ops_min_days * 24.0) / 730.0

    by_run = cost(walls)
    longest = np.sort(by_run)[-math.ceil(0.05 * len(walls)):]
    want = omega * (longest.mean() - by_run.mean())
    assert want > 0
    assert abs(plan.lines.cost["tail"] - want) <= 1e-6 * want, (plan.lines.cost["tail"], want)
    assert "tail" not in plan.lines.cash  # a premium, never paid
    planned = cost(pt.time.wall_hours)  # the model's planned lines bill every expected hour
    assert plan.lines.cost["throughput"] == pytest.approx(by_run.mean() - planned, rel=1e-6)


def test_the_estimated_price_tail_factor_matches_a_sample() -> None:
    problem = load_problem(FINETUNE)
    a = problem.assumptions.values
    sigma, mean = a.uncertainty.estimate_price_sigma, 1.0 + a.money.estimate_price_risk_pct / 100.0
    f = np.exp(math.log(mean) - sigma ** 2 / 2 + sigma * np.random.default_rng(5).standard_normal(2_000_000))
    top = np.sort(f)[-len(f) // 20:]
    assert abs(price_tail_factor(a) - (top.mean() - f.mean())) < 2e-3
    z = NormalDist().inv_cdf(0.95)
    assert abs(price_tail_factor(a) - mean * (NormalDist().cdf(sigma - z) / 0.05 - 1)) < 1e-12


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(problems(), extra_quotes(), st.sampled_from([0.3, 1.0]))
def test_the_averse_optimum_equals_enumeration(problem: dict[str, Any], quotes: list[dict[str, Any]],
                                               omega: float) -> None:
    problem = {**cost_objective(problem),
               "risk": {**problem.get("risk", {}), "uncertainty": {"aversion": omega, "scenarios": 400}}}
    assert_optimum_equals_enumeration(problem, quotes)


def test_more_aversion_buys_a_thinner_tail() -> None:
    """For the exact optimum of cost + ω·T over a fixed set of plans (T = CVaR95 − cost), T of the chosen plan never
    rises with ω and its cost without the premium never falls (swap argument on the two objectives)."""
    last_tail, last_base = math.inf, -math.inf
    for omega in (0.1, 0.5, 1.0):
        problem = load_problem(DATACENTER, [f"risk.uncertainty.aversion={omega}", "risk.uncertainty.scenarios=2000"])
        result = solve_problem(problem, SolveSettings(alternatives=False))
        assert result.status == "optimal" and result.plan is not None
        tail = result.plan.lines.cost.get("tail", 0.0) / omega
        base = result.plan.total_cost - result.plan.lines.cost.get("tail", 0.0)
        slack = 2 * result.plan.nodes * result.unit  # the model rounds each node's lines up to its money unit
        assert tail <= last_tail + slack and base >= last_base - slack, (omega, tail, last_tail, base, last_base)
        last_tail, last_base = tail, base
