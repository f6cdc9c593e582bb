"""Property tests: the CP-SAT optimum equals exhaustive enumeration, every plan passes the independent checker,
and tightening a limit (or excluding the chosen accelerator) never lowers the optimal cost.

Problems are random but small: a reduced node grid (≤ 12 nodes) so the brute force can enumerate every split of
nodes over every quote, plus a random extra quote file so options have several quotes with different prices,
capacities and lead times.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tempfile
from datetime import date, timedelta
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.inputs.problem import load_problem
from solver.model.builder import build
from solver.solve.brute import brute_force
from solver.solve.checker import check_plan
from solver.solve.pipeline import SolveSettings, optimise, prepare, solve_problem

EXAMPLES = int(os.environ.get("PLAN_PROPERTY_EXAMPLES", "30"))  # raise for a long soak run
GRID = ["risk.node_grid.fine_until=8", "risk.node_grid.max_nodes=12", "risk.node_grid.step_until_512=2"]
ACCELS = ["rtx-4090", "rtx-5090", "rtx-pro-6000", "a100-80gb", "h100-sxm", "h200", "b200", "gb200", "mi300x",
          "mi355x", "tpu7x", "gaudi3", "cerebras-cs3"]
SYSTEMS = ["dgx-b200", "dgx-h100", "hgx-h200", "rtx5090-1x", "rtx4090-4x", "mi355x-8x", "gb200-nvl72", "tpu7x-4"]


@st.composite
def problems(draw: Any) -> dict[str, Any]:
    method = draw(st.sampled_from(["pretrain", "full_finetune", "lora", "qlora", "continued_pretrain"]))
    params = draw(st.sampled_from([1e9, 7e9, 13e9, 70e9, 200e9]))
    tokens = draw(st.sampled_from([1e8, 1e9, 2e10, 3e11]))
    start_off = draw(st.integers(0, 60))
    span = draw(st.integers(20, 500))
    p: dict[str, Any] = {
        "name": "random", "as_of": "2026-12-01",
        "workload": {"method": method, "params": params, "tokens": tokens,
                     "seq_len": draw(st.sampled_from([2048, 4096, 8192])),
                     "precision": draw(st.sampled_from(["bf16", "fp8"])),
                     "optimizer": draw(st.sampled_from(["adamw", "adamw_8bit"])),
                     "recompute": draw(st.sampled_from(["selective", "full", "auto"])),
                     "framework": draw(st.sampled_from(["pytorch", "jax"]))},
        "schedule": {"earliest_start": (date(2027, 1, 1) + timedelta(days=start_off)).isoformat(),
                     "deadline": (date(2027, 1, 1) + timedelta(days=start_off + span)).isoformat()},
        "policy": {"modes": draw(st.lists(st.sampled_from(["buy", "cloud", "managed"]), min_size=1, max_size=3,
                                          unique=True)),
                   "require_ecc": draw(st.booleans()),
                   "accelerators": {"include": draw(st.lists(st.sampled_from(ACCELS), min_size=1, max_size=4,
                                                              unique=True))},
                   "after_run": draw(st.sampled_from(["resell", "reuse", "idle"])),
                   "max_fabrics": draw(st.sampled_from([1, 1, 2])),
                   "allow_preemptible": draw(st.booleans())},
        "objective": draw(st.sampled_from(["cost", "time", {"cost": 1, "delay_cost_usd_per_day": 20000}])),
    }
    if draw(st.booleans()):  # late delivery has a price: the slip premium depends on the planned start
        p["risk"] = {"money": {"delay_cost_usd_per_day": draw(st.sampled_from([5000, 50000]))}}
    if draw(st.booleans()):
        p["site"] = {"it_power_kw": draw(st.sampled_from([5, 50, 200, 2000])),
                     "cooling": draw(st.sampled_from([["air"], ["air", "liquid"]])),
                     "racks": draw(st.integers(1, 20)), "rack_power_kw": draw(st.sampled_from([15, 40, 140])),
                     "electricity_usd_per_kwh": 0.1, "pue": 1.3}
        if draw(st.booleans()):
            p["site"]["colocation_usd_per_kw_month"] = 180
    if draw(st.booleans()):
        p["budget"] = {"max_usd": draw(st.sampled_from([5e3, 1e5, 2e6, 5e7, 1e9])),
                       "applies_to": draw(st.sampled_from(["cash", "cost"]))}
    rules = []
    if draw(st.booleans()):
        rules.append({"name": "no-consumer-at-scale", "when": {"class": "consumer", "gpus": {"gt": 4}},
                      "then": "forbid"})
    if draw(st.booleans()):
        rules.append({"name": "amd-validation", "when": {"vendor": "amd"},
                      "then": {"delay_days": 30, "add_usd": 200000}})
    if draw(st.booleans()):
        rules.append({"name": "prefer-owned", "when": {"mode": "cloud"}, "then": {"add_pct": 10}})
    if draw(st.booleans()):
        rules.append({"name": "cap-big-plans", "when": {"cost": {"gt": 3e6}}, "then": "forbid"})
    if draw(st.booleans()):
        rules.append({"name": "need-nodes", "when": {"nodes": {"ge": 2}}, "then": "require"})
    if draw(st.booleans()):  # a second delay on top of amd-validation: delays add up
        rules.append({"name": "security-review", "when": {"mode": draw(st.sampled_from(["buy", "cloud"]))},
                      "then": {"delay_days": 12}})
    if draw(st.booleans()):  # a rule that names quotes applies only when one of them is used
        rules.append({"name": "broker-fee", "when": {"quote": ["rnd-0", "lambda-b200-8x-ondemand"]},
                      "then": {"add_usd": 30000, "delay_days": 5}})
    if draw(st.booleans()):  # a negative surcharge switches the bounds off: the full model must still be exact
        rules.append({"name": "prefer-buy", "when": {"mode": "buy"}, "then": {"add_pct": -5}})
    p["rules"] = rules
    return p


@st.composite
def extra_quotes(draw: Any) -> list[dict[str, Any]]:
    """Random quotes over the bundled ones: buy quotes that may expire early (their hardware then waits for the
    start), cloud quotes on a few shared fabrics, on demand, reserved or spot."""
    out = []
    for i in range(draw(st.integers(0, 3))):
        mode = draw(st.sampled_from(["buy", "cloud"]))
        q: dict[str, Any] = {"id": f"rnd-{i}", "system": draw(st.sampled_from(SYSTEMS)), "mode": mode,
                             "vendor": "random", "min_nodes": (lo := draw(st.integers(1, 3))),
                             "max_nodes": lo + draw(st.integers(0, 6)), "lead_time_days": draw(st.integers(0, 120)),
                             "quoted_on": "2026-11-01",
                             "valid_until": draw(st.sampled_from(["2026-12-10", "2027-02-15", "2027-12-31"])),
                             "kind": draw(st.sampled_from(["list", "estimate"])), "source": "hypothesis"}
        if draw(st.booleans()):
            q["lead_time_days"] = max(1, q["lead_time_days"])
            q["lead_time_p90_days"] = q["lead_time_days"] + draw(st.integers(0, 90))
        if mode == "buy":
            q["price_usd"] = draw(st.sampled_from([3000, 50000, 300000, 3000000]))
        else:
            q["usd_per_gpu_hour"] = draw(st.sampled_from([0.5, 2.0, 6.0]))
            contract = draw(st.sampled_from(["on_demand", "reserved", "spot"]))
            q["contract"] = contract
            q["commit_months"] = 1 if contract == "reserved" else 0
            fabric = draw(st.sampled_from([None, "fab-a", "fab-b"]))
            if fabric is not None:
                q["fabric"] = fabric
        out.append(q)
    return out


BUNDLED = (
    # buy
    "rtx4090-4x-workstation-msrp", "rtx5090-1x-desktop-msrp", "rtx-pro-6000-1x-workstation-msrp",
    "dgx-h100-semianalysis-estimate", "hgx-h100-server-2026-street", "hgx-h200-server-estimate",
    "dgx-b200-nvidia-list", "dgx-b200-reseller-fast", "gb200-nvl72-rack-estimate", "mi300x-8x-server-estimate",
    "mi355x-8x-estimate", "gaudi3-8x-kit-estimate", "cerebras-cs3-system-estimate", "vr200-nvl72-unpriced-2027",
    # cloud: on demand, reserved, spot
    "lambda-b200-8x-ondemand", "coreweave-b200-8x-ondemand", "coreweave-h100-8x-ondemand", "nebius-h100-8x-ondemand",
    "coreweave-h100-8x-reserved-12mo", "lambda-h100-1cc-16gpu-reserved", "coreweave-h200-8x-ondemand",
    "tensorwave-mi300x-8x-ondemand", "coreweave-b200-8x-spot", "nebius-b200-8x-preemptible",
    "runpod-rtx5090-1x-ondemand", "lambda-a100-80gb-8x-ondemand", "coreweave-gb200-nvl72-ondemand",
    "gcp-tpu7x-ondemand-estimate",
    # managed
    "gcp-tpu7x-capacity-contract-12mo", "cerebras-cs3-managed-training-estimate")
"""The bundled quotes the random problems plan over (every mode, contract and fabric kind, a few quotes per option):
the whole catalog would give options of a dozen quotes, whose every split the enumeration cannot walk."""


def _load(problem: dict[str, Any], quotes: list[dict[str, Any]], tmp: Path, sets: list[str] | None = None):
    if quotes:
        (tmp / "q.yaml").write_text(yaml.safe_dump({"quotes": quotes}))
        problem = {**problem, "catalogs": ["q.yaml"]}
    if not any(q["id"] == "rnd-0" for q in quotes):  # a rule may name rnd-0; without it, name a bundled quote only
        problem = {**problem, "rules": [
            {**r, "when": {**r["when"], "quote": [q for q in r["when"]["quote"] if q != "rnd-0"]}}
            if isinstance(r["when"].get("quote"), list) else r for r in problem.get("rules", [])]}
    f = tmp / "p.yaml"
    f.write_text(yaml.safe_dump(problem, sort_keys=False))
    loaded = load_problem(f, GRID + (sets or []))
    cat = loaded.files_catalog
    assert cat is not None
    keep = {k: v for k, v in cat.quotes.items() if k in BUNDLED or k.startswith("rnd-")}
    return loaded.with_catalog(dataclasses.replace(cat, quotes=MappingProxyType(keep)))


def cost_objective(problem: dict[str, Any]) -> dict[str, Any]:
    """The problem with objective `cost` where it was `time` (whose objective value depends on the model's cost
    bound, which the enumeration does not have)."""
    return {**problem, "objective": "cost" if problem["objective"] == "time" else problem["objective"]}


def assert_optimum_equals_enumeration(problem: dict[str, Any], quotes: list[dict[str, Any]]) -> None:
    """The decomposed solve (with every part the problem switches on) and the enumeration of every plan agree:
    both infeasible, or the same proven optimum."""
    with tempfile.TemporaryDirectory() as d:
        p = _load(problem, quotes, Path(d))
        ctx = prepare(p)
        result = solve_problem(p, ctx.settings, ctx)
        brute = brute_force(p, ctx.universe, ctx.unit)
        if brute is None:
            assert result.status == "infeasible", result.plan and result.plan.option
            return
        assert result.status == "optimal" and result.objective == brute.objective, (result.plan, brute)


def _solve(problem: Any) -> tuple[Any, Any, Any]:
    """One model over every point of the problem (no decomposition, no bound pruning), optimised."""
    ctx = prepare(problem, SolveSettings())
    b = build(problem, ctx.universe, ctx.screen, ctx.unit)
    return ctx, b, optimise(ctx, b)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), extra_quotes())
def test_cpsat_optimum_equals_brute_force(problem: dict[str, Any], quotes: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = _load(problem, quotes, Path(d))
        ctx, b, out = _solve(p)
        brute = brute_force(p, ctx.universe, b.unit, cost_hi=b.cost_hi)
        if brute is None:
            assert out.status == "infeasible", f"CP-SAT found {out.plan and out.plan.option}; enumeration nothing"
            return
        assert out.status == "optimal", f"enumeration found {brute} but CP-SAT says {out.status}"
        assert out.objective == brute.objective, (out.plan and out.plan.option, out.plan and out.plan.nodes, brute)
        assert out.plan is not None
        check_plan(p, ctx.universe, out.plan)
        fabrics = {q.fabric for q in out.plan.quotes}
        assert len(fabrics) <= p.spec.policy.max_fabrics, fabrics     # one job, one fabric (unless allowed)


def _cost(problem: dict[str, Any], quotes: list[dict[str, Any]],
          sets: list[str] | None = None) -> tuple[str, float | None, Any]:
    with tempfile.TemporaryDirectory() as d:
        p = _load(problem, quotes, Path(d), sets)
        _ctx, _b, out = _solve(p)
        return out.status, (out.plan.model_cost_units if out.plan else None), out.plan


@settings(max_examples=max(5, EXAMPLES // 2), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), extra_quotes(), st.sampled_from(["budget", "deadline", "power", "exclude"]))
def test_tightening_never_lowers_cost(problem: dict[str, Any], quotes: list[dict[str, Any]], what: str) -> None:
    problem = {**problem, "objective": "cost"}
    status, cost, plan = _cost(problem, quotes)
    if plan is None:
        return
    if what == "budget":
        sets = [f"budget.max_usd={max(1.0, plan.total_cash * 0.8):.0f}"]
    elif what == "deadline":
        sets = [f"schedule.deadline={plan.finish.replace(day=1).isoformat()}"] \
            if plan.finish.replace(day=1) > (plan.start) else []
    elif what == "power":
        if "site" not in problem:
            return
        sets = [f"site.it_power_kw={max(1.0, problem['site']['it_power_kw'] * 0.5)}"]
    else:
        sets = [f"policy.accelerators.exclude=[{plan.accelerator}]"]
    if not sets:
        return
    try:
        status2, cost2, _ = _cost(problem, quotes, sets)
    except Exception as exc:  # a tightened deadline can fall before earliest_start: that is bad input, not a bug
        assert "deadline" in str(exc)
        return
    if cost2 is not None:
        assert cost2 >= cost, f"tightening {what} lowered the optimum from {cost} to {cost2}"


def test_money_unit_rounding_is_conservative_against_budget(tmp_path: Path) -> None:
    """Rounding money up never accepts an over-budget plan: with the budget one dollar below the chosen plan's exact
    cash, whatever plan is chosen has exact cash within the budget."""
    base = yaml.safe_load((Path(__file__).resolve().parent.parent / "constraints" / "finetune-70b.yaml").read_text())
    f = tmp_path / "p.yaml"
    f.write_text(yaml.safe_dump(base))
    *_, out = _solve(load_problem(f))
    plan = out.plan
    assert plan is not None
    limit = math.floor(plan.total_cash) - 1
    *_, out2 = _solve(load_problem(f, [f"budget.max_usd={limit}"]))
    if out2.plan is not None:
        assert out2.plan.total_cash <= limit
        assert out2.plan.decision() != plan.decision()
