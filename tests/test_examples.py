"""Every example in constraints/ gives the answer class written in its header comment.

The classes are common sense from the seeds (000: a 200B pretraining run needs a datacenter-class cluster, not
RTX 5090s; 001: adapters on one cheap card, a 70B fine-tune on one 8-GPU node, liquid-only systems cannot go
into an air-cooled hall), not numbers copied from the program's output.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from solver.answers.report import solve_and_explain
from solver.inputs.catalog import load_catalog
from solver.inputs.problem import load_problem
from solver.render.jsonout import result_dict, to_json
from solver.solve.pipeline import SolveSettings

ROOT = Path(__file__).resolve().parent.parent
CAT = load_catalog([])


def _solve(name: str, **kw):
    return solve_and_explain(load_problem(ROOT / "constraints" / name), SolveSettings(**kw))[1]


def _reasons(r) -> dict[str, str]:
    """Every reason text and group of each excluded pair (or accelerator), joined."""
    out: dict[str, str] = {}
    for e in r.excluded:
        key = f"{e.accelerator}/{e.mode}" if e.mode else e.accelerator
        out[key] = (out.get(key, "") + " " + " ".join(f"{x.group or ''} {x.text}" for x in e.reasons)).strip()
    return out


@pytest.fixture(scope="module")
def results() -> dict:
    names = ["datacenter.yaml", "lora-small.yaml", "finetune-70b.yaml", "continued-pretrain-aircooled.yaml",
             "start-2027.yaml", "infeasible-budget.yaml"]
    return {n: _solve(n) for n in names}


def _class(accel: str) -> str:
    return CAT.accelerators[accel].cls


def test_every_example_is_covered(results: dict) -> None:
    files = sorted(p.name for p in (ROOT / "constraints").glob("*.yaml"))
    assert files == sorted(results), "a new example needs its expected answer class checked here"


def test_datacenter_is_a_datacenter_cluster(results: dict) -> None:
    r = results["datacenter.yaml"]
    assert r.status == "optimal"
    p = r.plan
    assert _class(p.accelerator) in ("datacenter", "tpu"), p.accelerator
    assert 100 <= p.gpus <= 20_000, p.gpus
    assert p.memory_required_gb <= p.memory_available_gb
    assert p.finish <= load_problem(ROOT / "constraints/datacenter.yaml").spec.schedule.deadline
    # seed 000: consumer cards cannot carry a 200B pretraining run; they are excluded with a reason.
    reasons = _reasons(r)
    assert "rtx-5090/buy" in reasons and reasons["rtx-5090/buy"]
    assert "no quote" in reasons["rubin"]


def test_lora_is_one_cheap_card(results: dict) -> None:
    p = results["lora-small.yaml"].plan
    assert p.gpus == 1
    assert _class(p.accelerator) in ("consumer", "workstation"), p.accelerator


def test_finetune_70b_is_one_or_two_8gpu_nodes_in_the_cloud(results: dict) -> None:
    p = results["finetune-70b.yaml"].plan
    assert p.accelerator in ("h100-sxm", "h200", "b200")
    assert CAT.systems[p.system].per_node == 8 and p.nodes <= 2
    assert p.mode == "cloud"


def test_aircooled_site_never_buys_liquid_systems(results: dict) -> None:
    r = results["continued-pretrain-aircooled.yaml"]
    plans = [r.plan] + [a.plan for a in r.alternatives]
    for p in plans:
        if p.mode == "buy":
            assert CAT.systems[p.system].cooling == "air", p.system
            assert p.power_kw <= 900
    reasons = _reasons(r)
    for liquid in ("gb200/buy", "gb300/buy", "mi355x/buy"):
        assert "site.cooling" in reasons[liquid], (liquid, reasons.get(liquid))


def test_2027_start_uses_blackwell_and_lists_unquoted_next_gen(results: dict) -> None:
    r = results["start-2027.yaml"]
    assert r.plan.accelerator in ("b200", "b300", "gb200", "gb300")
    reasons = _reasons(r)
    assert "no quote" in reasons["rubin"] and "no quote" in reasons["mi455x"]


def test_infeasible_budget_names_the_budget(results: dict) -> None:
    r = results["infeasible-budget.yaml"]
    assert r.status == "infeasible" and r.plan is None
    assert r.explanation is not None and "budget.max_usd" in r.explanation["conflict"]
    detail = {d["group"]: d for d in r.explanation["conflict_detail"]}
    assert detail["budget.max_usd"]["where"].endswith("infeasible-budget.yaml:25")


def test_alternatives_are_ranked_and_consistent(results: dict) -> None:
    for name, r in results.items():
        if r.plan is None:
            continue
        costs = [a.plan.total_cost for a in r.alternatives]
        assert costs == sorted(costs), name
        assert all(a.plan.total_cost >= r.plan.total_cost - 1e-6 for a in r.alternatives), name
        for a in r.alternatives:
            assert abs(a.delta_usd - (a.plan.total_cost - r.plan.total_cost)) < 1e-6


def test_same_inputs_same_json() -> None:
    a = to_json(result_dict(_solve("finetune-70b.yaml")))
    b = to_json(result_dict(_solve("finetune-70b.yaml")))
    assert a == b


@pytest.mark.parametrize("name", ["lora-small.yaml", "finetune-70b.yaml"])
def test_decomposed_solve_agrees_with_the_full_model(name: str) -> None:
    """The per-pair decomposition and the single full CP-SAT model must find the same optimum."""
    r = _solve(name, cross_check=True)
    assert r.status == "optimal"
