"""The cost of a successful checkpoint ([seed-001], issue 41): every plan of the bundled 200B example — rented, and
bought with `policy.after_run: reuse` — carries hot spares, storage, data transfer, orchestration and failure
recovery, and its checkpointing (`plan.checkpoint`).

Each line of the two chosen plans is computed here by hand from the catalog YAML read with PyYAML (the assumptions,
the systems, the accelerators and the quotes), never by calling the code under test; the checkpoint interval against
Young/Daly, τ = √(2·δ·M), δ the write time and M the cluster's MTBF, computed here too. The formulas are README's
("The cost of a successful checkpoint", "How the estimates are computed").
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from cli import main
from test_golden_costs import A, HOURS_PER_MONTH, _number, checkpoint_lines, hand_run, provider, spare_share

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "constraints" / "datacenter.yaml"
PROBLEM = yaml.safe_load(EXAMPLE.read_text())
QUOTES = {q["id"]: {k: _number(v) for k, v in q.items()}
          for f in sorted((ROOT / "catalogs" / "quotes").glob("*.yaml"))
          for q in yaml.safe_load(f.read_text())["quotes"]}
SYSTEMS = {s["id"]: s for s in yaml.safe_load((ROOT / "catalogs" / "systems.yaml").read_text())["systems"]}
FIVE = ("spares", "storage", "data_transfer", "orchestration", "recovery")
PARAMS, TOKENS = _number(PROBLEM["workload"]["params"]), _number(PROBLEM["workload"]["tokens"])


def solve(*extra: str) -> dict[str, Any]:
    r = CliRunner().invoke(main, ["solve", str(EXAMPLE), "--format", "json", *extra])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def rented() -> dict[str, Any]:
    return solve()


@pytest.fixture(scope="module")
def bought() -> dict[str, Any]:
    return solve("--set", "policy.after_run=reuse")


def shape() -> tuple[int, int]:
    """(layers, hidden) of a model the problem gives no shape for: h = (h/L · P / 12)^(1/3) to a multiple of 128,
    L = P / (12 h²) (README "How the estimates are computed": P ≈ 12·L·h²)."""
    h = max(128, round((A["memory"]["hidden_per_layer"] * PARAMS / 12) ** (1 / 3) / 128) * 128)
    return max(1, round(PARAMS / (12 * h * h))), h


def run_of(plan: dict[str, Any]) -> dict[str, float]:
    layers, hidden = shape()
    return hand_run(params=PARAMS, tokens=TOKENS, layers=layers, hidden=hidden,
                    seq=PROBLEM["workload"]["seq_len"], system=plan["system"], nodes=plan["nodes"])


def assert_usd(got: float, want: float, name: str) -> None:
    assert got == pytest.approx(want, abs=1.0), (name, got, want)     # JSON rounds each line to the dollar


def test_every_plan_of_the_example_carries_the_five_lines_and_its_checkpoints(rented: dict[str, Any],
                                                                           bought: dict[str, Any]) -> None:
    assert rented["plan"]["mode"] == "cloud" and bought["plan"]["mode"] == "buy"
    plans = [rented["plan"], *rented["alternatives"], bought["plan"], *bought["alternatives"]]
    assert len(plans) >= 10
    for p in plans:
        for line in FIVE:
            assert p["cost_usd"].get(line, 0) > 0, (p["option"], line)
            assert p["cash_usd"].get(line, 0) > 0, (p["option"], line)     # paid: bills, spares, payroll
        c = p["checkpoint"]
        assert set(c) >= {"interval_minutes", "write_minutes", "mtbf_hours", "size_tb",
                          "cost_per_successful_checkpoint_usd"}
        assert all(c[k] > 0 for k in c), (p["option"], c)
        assert c["cost_per_successful_checkpoint_usd"] == pytest.approx(
            p["cost_usd"]["total"] / c["successful_checkpoints"], rel=1e-3)
    # bought servers carry their network only: storage is the plan's own line now, not 5% of the capex
    p = bought["plan"]
    capex = sum(QUOTES[q["id"]]["price_usd"] * q["nodes"] for q in p["quotes"])
    assert p["cash_usd"]["network_storage"] == pytest.approx(capex * A["money"]["network_capex_fraction"], abs=1)


def test_the_checkpoint_interval_is_young_daly(rented: dict[str, Any], bought: dict[str, Any]) -> None:
    """δ = checkpoint bytes (model states − gradients) ÷ (GB/s per node × nodes), M = 1 ÷ (the class's interruptions
    per GPU-hour × GPUs), τ = √(2·δ·M); a successful checkpoint per τ hours of work; the plan's total cost over them."""
    for plan in (rented["plan"], bought["plan"]):
        r, mem = A["reliability"], A["memory"]
        size = (mem["states_bytes_per_param"][PROBLEM["workload"]["optimizer"]] - mem["gradient_bytes_per_param"]) \
            * PARAMS
        delta = size / (r["checkpoint_write_gbps_per_node"] * 1e9 * plan["nodes"]) / 3600
        mtbf = 1 / (r["interruptions_per_gpu_hour"]["datacenter"] * plan["gpus"])
        tau = math.sqrt(2 * delta * mtbf)
        c = plan["checkpoint"]
        assert c["size_tb"] == pytest.approx(size / 1e12, abs=1e-4) and size / 1e12 == pytest.approx(2.8)
        assert c["write_minutes"] == pytest.approx(delta * 60, abs=1e-3)
        assert c["mtbf_hours"] == pytest.approx(mtbf, abs=0.01)
        assert c["interval_minutes"] == pytest.approx(tau * 60, abs=0.01)
        run = run_of(plan)
        assert run["tau"] == pytest.approx(tau) and plan["training_days"] == pytest.approx(run["wall"] / 24, abs=0.01)
        assert c["successful_checkpoints"] == pytest.approx(run["ideal"] / tau, abs=0.1)
        assert c["cost_per_successful_checkpoint_usd"] == pytest.approx(
            plan["cost_usd"]["total"] / (run["ideal"] / tau), abs=1.0)
    # a failure now costs the read-back too: τ/2 + δ + the 15-minute restart (the old flat figure is its last part)
    assert A["reliability"]["restart_hours"] == 0.25


def test_the_rented_plans_lines_by_hand(rented: dict[str, Any]) -> None:
    """Reserved B200 capacity (Together): spares = s × GPU-hours billed for the run as expected × its rate (the hours
    past the tier's term at the rate after it); storage, transfers, orchestration and recovery at a GPU cloud's
    rates (`test_golden_costs.checkpoint_lines`)."""
    plan = rented["plan"]
    assert [q["id"] for q in plan["quotes"]] == ["together-b200-reserved-91-180d"]
    q = QUOTES["together-b200-reserved-91-180d"]
    wall = run_of(plan)["wall"]
    gpus, nodes = plan["gpus"], plan["nodes"]
    h = max(wall, q["commit_months"] * HOURS_PER_MONTH, A["money"]["cloud_min_billed_hours"])
    term = q["max_term_months"] * HOURS_PER_MONTH
    billed = gpus * (q["usd_per_gpu_hour"] * min(h, term) + q["after_term_usd_per_gpu_hour"] * max(0.0, h - term))
    cls = provider("cloud", q["vendor"])
    assert cls == "gpu_cloud"
    want = {"spares": spare_share(nodes) * billed,
            **checkpoint_lines(mode="cloud", cls=cls, nodes=nodes, gpus=gpus, wall=wall, params=PARAMS,
                               tokens=TOKENS)}
    assert want["data_transfer"] == pytest.approx(16_000 * 0.09)    # 16 TB in from a hyperscaler; no egress here
    for name, value in want.items():
        assert_usd(plan["cost_usd"][name], value, name)
        assert_usd(plan["cash_usd"][name], value, name)


def test_the_bought_plans_lines_by_hand(bought: dict[str, Any]) -> None:
    """Bought B200 servers kept for reuse: spares = s × (price × (1 + network) × the depreciation of the time held
    + capital and support on it + the hall) for the run as expected, cash s × (price × (1 + network) + support);
    storage and transfers at your own file system's and transit's rates; recovery adds a technician's node swap for
    the hardware share of the failures."""
    plan = bought["plan"]
    m = A["money"]
    wall = run_of(plan)["wall"]
    nodes, gpus = plan["nodes"], plan["gpus"]
    s = spare_share(nodes)
    kw = SYSTEMS[plan["system"]]["node_kw"]["value"]
    cost = cash = 0.0
    for pq in plan["quotes"]:
        q = QUOTES[pq["id"]]
        hw = q["price_usd"] * pq["nodes"] * (1 + m["network_capex_fraction"])
        held = (A["install_days"]["datacenter"] + pq["wait_days"]) * 24 + wall
        years = held / 8760
        loss = min(1.0, held / (m["depreciation_years"] * 8760)) * (1 - m["residual_fraction"])
        carry = hw * (m["cost_of_capital_pct_per_year"] + m["support_pct_per_year"]) / 100 * years
        hall = kw * pq["nodes"] * m["facility_usd_per_kw_month"] * held / HOURS_PER_MONTH   # own hall: not cash
        cost += s * (hw * loss + carry + hall)
        cash += s * (hw + hw * m["support_pct_per_year"] / 100 * years)
    assert_usd(plan["cost_usd"]["spares"], cost, "spares")
    assert_usd(plan["cash_usd"]["spares"], cash, "spares")
    want = checkpoint_lines(mode="buy", cls="owned", nodes=nodes, gpus=gpus, wall=wall, params=PARAMS, tokens=TOKENS)
    assert want["data_transfer"] == pytest.approx(16_000 * (0.09 + 0.005) + 14_000 * 0.005)
    for name, value in want.items():
        assert_usd(plan["cost_usd"][name], value, name)
        assert_usd(plan["cash_usd"][name], value, name)


def test_no_spares_when_the_policy_keeps_none() -> None:
    """`policy.spare_nodes_pct: 0` drops the line and nothing else changes in the run."""
    got = solve("--set", "policy.spare_nodes_pct=0")["plan"]
    assert "spares" not in got["cost_usd"] and got["checkpoint"]["interval_minutes"] > 0
    assert all(got["cost_usd"][k] > 0 for k in FIVE if k != "spares")


def test_the_full_report_shows_the_checkpoint_line() -> None:
    r = CliRunner().invoke(main, ["solve", str(EXAMPLE), "--verbose"], env={"COLUMNS": "120"})
    assert r.exit_code == 0, r.output
    line = next(x for x in r.stdout.splitlines() if x.startswith("  checkpoint    "))
    assert "2.80 TB every" in line and "Young/Daly" in line and "successful checkpoints" in line
    for label in ("hot spares", "storage (checkpoints, data)", "data transfer", "orchestration + observability",
                  "engineering: failure recovery"):
        assert any(x.strip().startswith(label) for x in r.stdout.splitlines()), label
