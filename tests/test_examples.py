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


PROGRAMS = ["program-200b.yaml", "infeasible-program.yaml"]
"""Program files (`workloads:`), checked in test_program_examples.py and test_program_cli.py."""


def test_every_example_is_covered(results: dict) -> None:
    files = sorted(p.name for p in (ROOT / "constraints").glob("*.yaml"))
    assert files == sorted(list(results) + PROGRAMS), "a new example needs its expected answer class checked"


def test_datacenter_is_a_datacenter_cluster(results: dict) -> None:
    r = results["datacenter.yaml"]
    assert r.status == "optimal"
    p = r.plan
    assert _class(p.accelerator) in ("datacenter", "tpu"), p.accelerator
    assert 100 <= p.gpus <= 20_000, p.gpus
    assert p.memory_required_gb <= p.memory_available_gb
    assert p.finish <= load_problem(ROOT / "constraints/datacenter.yaml").spec.schedule.deadline
    assert len({q.fabric for q in p.quotes}) == 1, "one training job runs on one fabric"
    # seed 000: consumer cards cannot carry a 200B pretraining run; they are excluded with a reason.
    reasons = _reasons(r)
    assert "rtx-5090/buy" in reasons and reasons["rtx-5090/buy"]
    assert "no price yet" in reasons["rubin"] and "no quote" in reasons["h800"]


def test_datacenter_compares_buying_reserving_and_renting(results: dict) -> None:
    """The candidate table has the same accelerator bought, reserved and rented on demand, each with its own
    economics; on demand costs more than a reservation of the same accelerator that can meet the deadline."""
    r = results["datacenter.yaml"]
    plans = [r.plan] + [a.plan for a in r.alternatives]
    offers = {(p.accelerator, p.offer): p for p in plans}
    assert {("b200", "buy"), ("b200", "cloud"), ("b200", "cloud-reserved")} <= set(offers)
    bought = offers[("b200", "buy")]
    assert bought.lines.cost["resale_credit"] < 0 and bought.lines.cash["compute"] > bought.total_cost
    assert offers[("b200", "cloud")].total_cost > offers[("b200", "cloud-reserved")].total_cost


def test_datacenter_buys_when_the_cluster_is_kept() -> None:
    """Kept for the next models, a cluster bought for a 2-3 month run is charged only that share of its life:
    owning then beats every rental (the after_run default, resell, charges the value it loses)."""
    p = solve_and_explain(load_problem(ROOT / "constraints" / "datacenter.yaml", ["policy.after_run=reuse"]))[1]
    assert p.plan.mode == "buy" and p.plan.offer == "buy"
    plan = p.plan
    # paid in full, charged the share of a five-year life it is held: install (21 days) and the run
    share = plan.lines.cost["compute"] / plan.lines.cash["compute"]
    assert (21 + 0.8 * plan.training_days) / (5 * 365) < share <= (21 + plan.training_days) / (5 * 365) + 1e-9


def test_slip_is_zero_when_capacity_is_ready_long_before_the_start() -> None:
    """The 200B run planned to start in August 2027: rented capacity is asked for now and arrives months before
    the start (beyond the lead time's cap), so no slip can push the start: the slip line is absent."""
    r = solve_and_explain(load_problem(ROOT / "constraints" / "datacenter.yaml", [
        "schedule.earliest_start=2027-08-02", "schedule.deadline=2028-08-01", "policy.modes=[cloud]"]))[1]
    assert r.plan is not None and r.plan.mode == "cloud"
    assert "delivery_slip" not in r.plan.lines.cost
    assert all(q.expected_slip_days == 0 for q in r.plan.quotes)


def test_lora_is_one_rented_gpu_and_a_bought_card_is_charged_its_holding(results: dict) -> None:
    """One day-long adapter run: one GPU, rented. A desk-side card bought for it and kept afterwards is charged only
    the days it is held (a small share of its price), yet setting it up and holding it for those days still costs
    more than a day of a rented GPU; resold afterwards it would lose far more."""
    from solver.answers.whynot import why_not
    p = results["lora-small.yaml"].plan
    assert p.gpus == 1 and p.mode == "cloud"
    file = ROOT / "constraints" / "lora-small.yaml"
    kept = why_not(load_problem(file, ["policy.after_run=reuse"]), "rtx5090-1x-desktop-msrp")
    sold = why_not(load_problem(file), "rtx5090-1x-desktop-msrp")
    price = CAT.quotes["rtx5090-1x-desktop-msrp"].price
    assert kept["status"] == sold["status"] == "more_expensive"
    assert p.total_cost < kept["plan"].total_cost < 0.05 * price < sold["plan"].total_cost


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


def test_2027_start_uses_blackwell_and_prices_the_next_generation(results: dict) -> None:
    r = results["start-2027.yaml"]
    assert r.plan.accelerator in ("b200", "b300", "gb200", "gb300")
    reasons = _reasons(r)
    assert "no price yet" in reasons["rubin"] and "no price yet" in reasons["mi455x"]
    unpriced = {be["quote"]: be for be in r.extra["unpriced"]}
    # delivered (p90) after the deadline leaves no room to train: no price can make them the plan
    for qid in ("vr200-nvl72-unpriced-2027", "helios-mi455x-unpriced-2027"):
        assert unpriced[qid]["price"] is None and "schedule.deadline" in unpriced[qid]["reasons"], unpriced[qid]


def test_infeasible_budget_names_the_budget(results: dict) -> None:
    r = results["infeasible-budget.yaml"]
    assert r.status == "infeasible" and r.plan is None
    assert r.explanation is not None and "budget.max_usd" in r.explanation["conflict"]
    detail = {d["group"]: d for d in r.explanation["conflict_detail"]}
    assert detail["budget.max_usd"]["where"].endswith("infeasible-budget.yaml:25")


def test_an_unpriced_quote_at_its_break_even_is_chosen_and_a_step_above_is_not(results: dict) -> None:
    """The break-even of the contact-sales 181-day tier of Together's B200 ladder in the datacenter example, checked
    by solving the whole problem with the quote priced at it (chosen) and one cent per GPU-hour above it (not
    chosen)."""
    from solver.answers.unpriced import priced
    from solver.solve.pipeline import solve_problem
    qid = "together-b200-reserved-181d-plus"
    be = next(b for b in results["datacenter.yaml"].extra["unpriced"] if b["quote"] == qid)
    assert be["price"] is not None and be["price"] > 0 and be["unit"] == "usd per GPU-hour"
    problem = load_problem(ROOT / "constraints" / "datacenter.yaml")
    q = problem.catalog.quotes[qid]
    at = solve_problem(priced(problem, q, be["price"]), SolveSettings(alternatives=False))
    above = solve_problem(priced(problem, q, round(be["price"] + 0.01, 2)), SolveSettings(alternatives=False))
    assert [x.id for x in at.plan.quotes] == [qid]
    assert qid not in [x.id for x in above.plan.quotes]


def test_alternatives_are_ranked_and_consistent(results: dict) -> None:
    """Ranked by the model's objective — the cost in money units, then the finish (then the cost in dollars): two
    plans whose costs round to the same unit are ranked by their finish, so the dollars are in order up to one
    money unit (and strictly in order where the units differ)."""
    for name, r in results.items():
        if r.plan is None:
            continue
        costs = [a.plan.total_cost for a in r.alternatives]
        unit = r.unit
        assert all(b >= a - unit for a, b in zip(costs, costs[1:])), name
        assert all(a.plan.total_cost >= r.plan.total_cost - unit for a in r.alternatives), name
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
