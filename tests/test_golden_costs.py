"""Golden plans: every cost and cash line, and the dates, computed by hand here from the catalog numbers.

One plan per procurement mode — bought servers (price less resale value at the age reached, network and storage
share, capital, support, the hall, energy, failure rework, estimated-price premium, expected delivery slip), bought
servers that must wait months for the start (idle holding), cloud capacity under a commitment that outlasts the
run, a managed contract with porting from PyTorch to TPU — each forced by a `require` rule so the decision is
known. The numbers
come from the catalog YAML read here with PyYAML (not through `plan`), and the formulas are written out below from
the documented model (README "How the estimates are computed"); nothing calls the code under test except the
solve itself, through the command line. A formula bug in the estimators, the price templates or the model shows
here as a line that does not match.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Callable
from datetime import date, timedelta
from statistics import NormalDist
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from cli import main

ROOT = Path(__file__).resolve().parent.parent
CAT = ROOT / "catalogs"
HOURS_PER_MONTH = 8760 / 12


def _number(v: Any) -> Any:
    """A catalog figure as a number: PyYAML reads 1.0e11 and 25k as strings (YAML 1.1), plan reads them as numbers."""
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            if v[-1:] in "kKMBT" and v[:-1].replace(".", "", 1).isdigit():
                return float(v[:-1]) * {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}[v[-1]]
    return v


def _leaves(node: Any) -> Any:
    """The assumptions tree with each sourced leaf replaced by its value."""
    if isinstance(node, dict) and "value" in node and "source" in node:
        v = node["value"]
        return {k: _number(x) for k, x in v.items()} if isinstance(v, dict) else _number(v)
    if isinstance(node, dict):
        return {k: _leaves(v) for k, v in node.items()}
    return node


A = _leaves(yaml.safe_load((CAT / "assumptions.yaml").read_text())["assumptions"])
SYSTEMS = {s["id"]: s for s in yaml.safe_load((CAT / "systems.yaml").read_text())["systems"]}
ACCELS = {a["id"]: a for a in yaml.safe_load((CAT / "accelerators.yaml").read_text())["accelerators"]}


def hand_hours(*, params: float, tokens: float, layers: int, hidden: int, seq: int, system: str, nodes: int,
               delay_cost: float = 0.0) -> tuple[float, float]:
    """(ideal, expected wall) hours of `hand_run`."""
    run = hand_run(params=params, tokens=tokens, layers=layers, hidden=hidden, seq=seq, system=system, nodes=nodes)
    return run["ideal"], run["wall"]


def hand_run(*, params: float, tokens: float, layers: int, hidden: int, seq: int, system: str,
             nodes: int) -> dict[str, float]:
    """Ideal and expected wall hours, and the failure model's parts: FLOPs = (6·P + 12·L·h·s)·T over GPUs × dense
    BF16 peak × MFU × scale-out efficiency; the MFU with the calibrated centre, exp(a + ln(clamped FLOPs per byte /
    ref)·(b + c·ln(clamped params / ref))), on a datacenter chip; then Llama 3 interruptions λ per hour, a
    checkpoint of (model states − gradients) bytes written in δ = size / (GB/s per node × nodes), every
    τ = √(2·δ·M) hours (Young/Daly, M = 1/λ), each interruption losing τ/2 + δ + restart (README)."""
    sys_ = SYSTEMS[system]
    acc = ACCELS[sys_["accelerator"]]
    c = A["compute"]
    gpus = nodes * sys_["per_node"]
    size = 1.0 if params >= c["size_reference_params"] else max(
        c["size_floor"], 1 - c["size_penalty_per_decade"] * math.log10(c["size_reference_params"] / params))
    seqf = 1.0 if seq <= c["seq_reference"] else max(
        c["seq_floor"], 1 - c["seq_penalty_per_doubling"] * math.log2(seq / c["seq_reference"]))
    centre = A["uncertainty"]["mfu_centre"]   # calibrated by FLOPs per byte and size, on the stacks fitted on
    balance = min(centre["balance_max"], max(centre["balance_min"],
                                             acc["bf16_tflops"]["value"] / acc["memory_bw_tbs"]["value"]))
    clamped = min(centre["params_max"], max(centre["params_min"], params))
    slope = centre["per_log_balance"] + centre["per_log_balance_log_params"] * math.log(clamped / centre["params_ref"])
    calibration = math.exp(centre["intercept"] + slope * math.log(balance / centre["balance_ref"])) \
        if acc["class"] in centre["classes"] else 1.0
    mfu = min(c["max_mfu"], c["mfu_base"][acc["software"]] * c["class_factor"][acc["class"]] * size * seqf
              * calibration)
    net = A["scale_out"][sys_["network"]]
    eff = net["intra"] if sys_["per_node"] > 1 else 1.0
    if nodes > 1:
        eff *= 1 - net["per_doubling"] * math.log2(nodes)
    eff = max(net["floor"], eff)
    flops = (6 * params + 12 * layers * hidden * seq) * tokens
    ideal = flops / (gpus * acc["bf16_tflops"]["value"] * 1e12 * mfu * eff) / 3600
    r, mem = A["reliability"], A["memory"]
    lam = r["interruptions_per_gpu_hour"][acc["class"]] * gpus
    size = (mem["states_bytes_per_param"]["adamw"] - mem["gradient_bytes_per_param"]) * params
    delta = size / (r["checkpoint_write_gbps_per_node"] * 1e9 * nodes) / 3600
    tau = math.sqrt(2 * delta * (1 / lam))
    wall = ideal * (1 + delta / tau) / (1 - lam * (tau / 2 + delta + r["restart_hours"]))
    return {"ideal": ideal, "wall": wall, "lam": lam, "delta": delta, "tau": tau, "size": size, "mfu": mfu,
            "eff": eff}


def operations(mode: str, nodes: int, gpus: int, wall: float) -> float:
    fte = A["money"]["ops_fte"][mode]
    engineers = (fte["base"] if nodes > 1 else 0.0) + fte["per_1000_gpus"] * gpus / 1000
    billed_hours = max(wall, A["money"]["ops_min_days"] * 24)
    return engineers * A["money"]["engineer_usd_per_month"] * billed_hours / HOURS_PER_MONTH


def porting(software: str, framework: str) -> float:
    return A["porting"][software][framework]["weeks"] * A["money"]["engineer_usd_per_month"] * 12 / 52


def solve(tmp: Path, problem: str, quote: str) -> dict[str, Any]:
    (tmp / "q.yaml").write_text(quote)
    (tmp / "p.yaml").write_text(problem)
    r = CliRunner().invoke(main, ["solve", str(tmp / "p.yaml"), "--quotes", str(tmp / "q.yaml"), "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["plan"]


def assert_lines(got: dict[str, float], want: dict[str, float]) -> None:
    """Every line the plan reports equals the hand figure (to a dollar: JSON rounds each line), and nothing else."""
    got = {k: v for k, v in got.items() if k != "total" and abs(v) >= 0.5}
    want = {k: v for k, v in want.items() if abs(v) >= 0.5}
    assert set(got) == set(want), (sorted(got), sorted(want))
    for k, v in want.items():
        assert got[k] == pytest.approx(v, abs=1.0), (k, {kk: (got[kk], round(want[kk])) for kk in want})


def resale(age_years: float) -> float:
    """The catalog's resale curve read by hand: straight between its ages, flat after the last."""
    curve = sorted((float(k), v) for k, v in A["money"]["resale_value_by_age_years"].items())
    for (a0, v0), (a1, v1) in zip(curve, curve[1:], strict=False):
        if a0 <= age_years <= a1:
            return v0 + (v1 - v0) * (age_years - a0) / (a1 - a0)
    return curve[-1][1]


def late_days(p50: float, p90: float, allowance: float) -> float:
    """Expected days past the allowance for a lead time lognormal through p50/p90, capped at the quantile
    `lead_time_cap_quantile` (README "Delivery slip"), by the lognormal partial expectation."""
    n = NormalDist()
    mu, sigma = math.log(p50), math.log(p90 / p50) / n.inv_cdf(0.9)
    cap = math.exp(mu + sigma * n.inv_cdf(A["lead_time_cap_quantile"]))

    def partial(b: float) -> float:   # E[(L - b)+]
        return math.exp(mu + sigma ** 2 / 2) * n.cdf((mu + sigma ** 2 - math.log(b)) / sigma) - \
            b * n.cdf((mu - math.log(b)) / sigma)
    return max(0.0, partial(allowance) - partial(cap)) if allowance < cap else 0.0


def owned(*, price: float, nodes: int, ideal: float, wall: float, wait_days: float, system: str,
          pue: float, tariff: float, estimate: bool, lead_days: float) -> tuple[dict[str, float], dict[str, float]]:
    """(cost, cash) lines of nodes bought and sold after the run (the default `after_run: resell`), held from
    delivery: install + wait + run (README "The cost of owning"); the deposit paid at order (`money.deposit_pct` of
    the servers, network and hot spares) costs its capital for the `lead_days` from order to delivery."""
    m = A["money"]
    capex = nodes * price
    extra = m["network_capex_fraction"] if nodes > 1 else 0.0     # the network; storage is its own line
    cluster = capex * (1 + extra)
    s = spare_share(nodes)
    before = (A["install_days"]["datacenter"] + wait_days) * 24
    held_i, held_w = before + ideal, before + wall
    it_kw = SYSTEMS[system]["node_kw"]["value"] * nodes
    per_year = m["cost_of_capital_pct_per_year"] / 100, m["support_pct_per_year"] / 100
    hall = it_kw * m["facility_usd_per_kw_month"] * 12                       # $ per year
    cost = {
        "compute": capex, "network_storage": capex * extra,
        "resale_credit": -cluster * resale(held_i / 8760),
        "capital": cluster * per_year[0] * held_i / 8760,
        "support": cluster * per_year[1] * held_i / 8760,
        "facility": hall * held_i / 8760,
        "energy": it_kw * pue * ideal * tariff,
        "failure_rework": cluster * (resale(held_i / 8760) - resale(held_w / 8760))
        + (cluster * sum(per_year) + hall) * (wall - ideal) / 8760 + it_kw * pue * (wall - ideal) * tariff,
    }
    # hot spares: s more nodes, bought, held for the run as expected and resold alike (the hall not cash: own hall)
    cost["spares"] = s * (cluster * (1 - resale(held_w / 8760)) + (cluster * sum(per_year) + hall) * held_w / 8760)
    cost["deposit_capital"] = (1 + s) * cluster * m["deposit_pct"] / 100 * per_year[0] * lead_days / 365
    if estimate:
        lost = cluster * (1 - resale(held_w / 8760)) + cluster * sum(per_year) * held_w / 8760
        cost["estimate_price"] = (1 + s) * lost * m["estimate_price_risk_pct"] / 100
    cash = {"compute": capex, "network_storage": capex * extra, "support": cost["support"],
            "energy": cost["energy"],
            "failure_rework": cluster * per_year[1] * (wall - ideal) / 8760 + it_kw * pue * (wall - ideal) * tariff,
            "spares": s * (cluster + cluster * per_year[1] * held_w / 8760)}
    return cost, cash


def spare_share(nodes: int) -> float:
    """Hot spares per node: reliability.spare_nodes_pct / 100 for a cluster of more than one node (README)."""
    return A["reliability"]["spare_nodes_pct"] / 100 if nodes > 1 else 0.0


def provider(mode: str, vendor: str) -> str:
    """Whose storage and transfer rates a quote pays: owned for bought hardware, else the class of the
    `data.provider_class` vendor its vendor starts with, gpu_cloud for any other (README)."""
    if mode == "buy":
        return "owned"
    for name, cls in A["data"]["provider_class"].items():
        if vendor == name or vendor.startswith(name + " ") or vendor.startswith(name + "("):
            return cls
    return "gpu_cloud"


def checkpoint_lines(*, mode: str, cls: str, nodes: int, gpus: int, wall: float, params: float, tokens: float,
                     accel_class: str = "datacenter", optimizer: str = "adamw",
                     per_gpu_hour: float | None = None) -> dict[str, float]:
    """storage, data_transfer, orchestration and recovery of a plan for a run of `wall` hours (README "The cost of a
    successful checkpoint"), from the assumptions: a checkpoint of (model states − gradients) × P bytes, kept
    checkpoints + the dataset (tokens × bytes per token) stored for the run's months at the class's $/TB-month; the
    dataset in at its source's egress + the ingress, the kept checkpoints out at the egress; nodes × $/node-month;
    λ·wall interruptions × (engineer hours + hardware share × own hours to replace a node) × the engineer-hour."""
    d, m, r, mem = A["data"], A["money"], A["reliability"], A["memory"]
    ckpt_tb = (mem["states_bytes_per_param"][optimizer] - mem["gradient_bytes_per_param"]) * params / 1e12
    data_tb = tokens * d["dataset_bytes_per_token"] / 1e12
    months = wall / HOURS_PER_MONTH
    kept_tb = ckpt_tb * d["checkpoints_kept"]
    lam = (r["interruptions_per_gpu_hour"][accel_class] if per_gpu_hour is None else per_gpu_hour) * gpus
    per_failure = m["engineer_hours_per_failure"] + r["hardware_failure_share"] * r["node_replacement_hours"][mode]
    return {
        "storage": (kept_tb + data_tb) * d["storage_usd_per_tb_month"][cls] * months,
        "data_transfer": data_tb * 1000 * (d["dataset_source_egress_usd_per_gb"] + d["ingress_usd_per_gb"][cls])
        + kept_tb * 1000 * d["egress_usd_per_gb"][cls],
        "orchestration": nodes * m["orchestration_usd_per_node_month"] * months,
        "recovery": lam * wall * per_failure * m["engineer_usd_per_month"] / m["engineer_hours_per_month"],
    }


def mfu_multipliers(software: str = "cuda", cls: str = "datacenter") -> "np.ndarray":
    """1 / the MFU factor in each of the default scenarios of a platform: exp(Σ σ·z), z the standard normals of the
    sources "mfu:common", "mfu:software:<stack>" and "mfu:class:<class>" (numpy's PCG64 seeded by [seed, CRC-32 of
    the source name]), each σ the catalog's spread (CUDA and the datacenter class add none)."""
    u = A["uncertainty"]

    def z(source: str) -> "np.ndarray":
        seq = np.random.SeedSequence([int(u["seed"]), zlib.crc32(source.encode())])
        return np.random.Generator(np.random.PCG64(seq)).standard_normal(int(u["scenarios"]))
    log = u["mfu_sigma"]["common"] * z("mfu:common")
    if u["mfu_sigma"]["software"][software] > 0:
        log = log + u["mfu_sigma"]["software"][software] * z(f"mfu:software:{software}")
    if u["mfu_sigma"]["accel_class"][cls] > 0:
        log = log + u["mfu_sigma"]["accel_class"][cls] * z(f"mfu:class:{cls}")
    return 1.0 / np.exp(log)


def over_runs(lines: Callable[[float, float], tuple[dict[str, float], dict[str, float]]], ideal: float,
              wall: float, software: str = "cuda", cls: str = "datacenter") -> tuple[float, float]:
    """The `throughput` line (cost, cash): the mean over the scenarios of a plan's lines at each run's hours, every
    hour of which counts (W_s = planned wall / MFU factor), less the lines at the planned (ideal, wall) hours."""
    cost0, cash0 = lines(ideal, wall)
    runs = [lines(w, w) for w in wall * mfu_multipliers(software, cls)]
    mean_cost = sum(sum(c.values()) for c, _ in runs) / len(runs)
    mean_cash = sum(sum(k.values()) for _, k in runs) / len(runs)
    return mean_cost - sum(cost0.values()), mean_cash - sum(cash0.values())


def test_bought_servers(tmp_path: Path) -> None:
    plan = solve(tmp_path, """
name: golden-buy
as_of: 2026-12-01
workload: {method: pretrain, params: 10B, tokens: 20B, seq_len: 2048, layers: 32, hidden: 4096}
site: {it_power_kw: 1000, cooling: [air, liquid], racks: 10, rack_power_kw: 40,
       electricity_usd_per_kwh: 0.10, pue: 1.25}
policy: {modes: [buy], accelerators: {include: [h100-sxm]}}
risk: {money: {delay_cost_usd_per_day: 10k}}
rules: [{name: golden, when: {quote: golden-buy, nodes: {eq: 2}}, then: require},
        {name: only-golden, when: {quote: hgx-h100-server-refurb-estimate}, then: forbid}]
""", """
quotes:
- {id: golden-buy, system: dgx-h100, mode: buy, vendor: test, price_usd: 250k, max_nodes: 4, lead_time_days: 30,
   lead_time_p90_days: 60, quoted_on: 2026-11-20, valid_until: 2027-03-31, kind: estimate, source: test}
""")
    assert plan["option"] == "dgx-h100/buy" and plan["nodes"] == 2 and plan["quotes"][0]["id"] == "golden-buy"
    assert [q["nodes"] for q in plan["quotes"]] == [2]
    ideal, wall = hand_hours(params=10e9, tokens=20e9, layers=32, hidden=4096, seq=2048, system="dgx-h100", nodes=2)
    def lines(i: float, w: float) -> tuple[dict[str, float], dict[str, float]]:
        cost, cash = owned(price=250_000, nodes=2, ideal=i, wall=w, wait_days=0, system="dgx-h100", pue=1.25,
                           tariff=0.10, estimate=True, lead_days=60)   # the p90 lead time: ordered 12-01, in 01-30
        ops = {"operations": operations("buy", 2, 16, w),
               **checkpoint_lines(mode="buy", cls="owned", nodes=2, gpus=16, wall=w, params=10e9, tokens=20e9)}
        return {**cost, **ops}, {**cash, **ops}

    cost, cash = lines(ideal, wall)
    # No deadline: a late delivery costs nothing but the days (no lateness line); the runs' spread is priced.
    cost["throughput"], cash["throughput"] = over_runs(lines, ideal, wall)
    assert cost["throughput"] > 0
    assert_lines(plan["cost_usd"], cost)
    assert_lines(plan["cash_usd"], cash)
    assert plan["cost_usd"]["total"] == pytest.approx(sum(cost.values()), abs=2)
    start = date(2026, 12, 1) + timedelta(days=math.ceil(60 + A["install_days"]["datacenter"]))  # p90 + install
    assert plan["start"] == start.isoformat()
    assert plan["finish"] == (start + timedelta(days=math.ceil(wall / 24))).isoformat()
    assert plan["training_days"] == pytest.approx(wall / 24, abs=0.01)
    q = plan["quotes"][0]
    assert (q["ordered"], q["delivered"], q["ready"]) == ("2026-12-01", "2027-01-30", start.isoformat())
    assert q["fabric"] == "site" and q["wait_days"] == 0 and plan["after_run"] == "resell"


def test_bought_servers_that_must_wait_for_the_start(tmp_path: Path) -> None:
    """The quote expires long before the start: ordered on its last day, the hardware waits 71 days, and holding it
    is charged; the delivery is then so early that it cannot slip past the start."""
    plan = solve(tmp_path, """
name: golden-wait
as_of: 2026-12-01
workload: {method: pretrain, params: 10B, tokens: 20B, seq_len: 2048, layers: 32, hidden: 4096}
schedule: {earliest_start: 2027-06-01}
site: {it_power_kw: 1000, cooling: [air, liquid], racks: 10, rack_power_kw: 40,
       electricity_usd_per_kwh: 0.10, pue: 1.25}
policy: {modes: [buy], accelerators: {include: [h100-sxm]}}
risk: {money: {delay_cost_usd_per_day: 10k}}
rules: [{name: golden, when: {quote: golden-early, nodes: {eq: 2}}, then: require},
        {name: only-golden, when: {quote: hgx-h100-server-refurb-estimate}, then: forbid}]
""", """
quotes:
- {id: golden-early, system: dgx-h100, mode: buy, vendor: test, price_usd: 250k, max_nodes: 4, lead_time_days: 30,
   lead_time_p90_days: 60, quoted_on: 2026-11-20, valid_until: 2026-12-31, kind: list, source: test}
""")
    ideal, wall = hand_hours(params=10e9, tokens=20e9, layers=32, hidden=4096, seq=2048, system="dgx-h100", nodes=2)
    # start 2027-06-01 = day 182; order by 2026-12-31 = day 30; ready 30 + 60 + 21 = day 111: 71 days of waiting
    wait = 182 - 30 - 60 - A["install_days"]["datacenter"]
    assert wait == 71
    def lines(i: float, w: float) -> tuple[dict[str, float], dict[str, float]]:
        cost, cash = owned(price=250_000, nodes=2, ideal=i, wall=w, wait_days=wait, system="dgx-h100", pue=1.25,
                           tariff=0.10, estimate=False, lead_days=60)
        ops = {"operations": operations("buy", 2, 16, w),
               **checkpoint_lines(mode="buy", cls="owned", nodes=2, gpus=16, wall=w, params=10e9, tokens=20e9)}
        return {**cost, **ops}, {**cash, **ops}

    cost, cash = lines(ideal, wall)
    cost["throughput"], cash["throughput"] = over_runs(lines, ideal, wall)
    assert_lines(plan["cost_usd"], cost)
    assert_lines(plan["cash_usd"], cash)
    q = plan["quotes"][0]
    assert (q["ordered"], q["delivered"], q["ready"], q["wait_days"]) == ("2026-12-31", "2027-03-01", "2027-03-22", 71)
    assert plan["start"] == "2027-06-01"
    assert any("waits 71 days" in w for w in plan["warnings"])


def test_cloud_commitment_outlasting_the_run(tmp_path: Path) -> None:
    plan = solve(tmp_path, """
name: golden-cloud
as_of: 2026-12-01
workload: {method: full_finetune, params: 7B, tokens: 1B, seq_len: 4096, layers: 32, hidden: 4096}
policy: {modes: [cloud], accelerators: {include: [b200]}}
rules: [{name: golden, when: {quote: golden-cloud, nodes: {eq: 1}}, then: require}]
""", """
quotes:
- {id: golden-cloud, system: dgx-b200, mode: cloud, vendor: test, usd_per_gpu_hour: 4.00, commit_months: 1,
   max_nodes: 2, lead_time_days: 7, lead_time_p90_days: 10, quoted_on: 2026-11-20, valid_until: 2027-03-31,
   kind: negotiated, source: test}
""")
    assert plan["option"] == "dgx-b200/cloud-reserved" and plan["offer"] == "cloud-reserved"
    assert plan["quotes"] == [{**plan["quotes"][0], "id": "golden-cloud", "nodes": 1}]
    q = plan["quotes"][0]
    assert (q["contract"], q["commit_months"], q["billed_months"]) == ("reserved", 1, 1)   # billed whole
    ideal, wall = hand_hours(params=7e9, tokens=1e9, layers=32, hidden=4096, seq=4096, system="dgx-b200", nodes=1)
    floor = 1 * HOURS_PER_MONTH
    assert wall < floor, "the run is shorter than the one-month commitment, which is billed whole"

    def lines(i: float, w: float) -> tuple[dict[str, float], dict[str, float]]:   # one node: no hot spare
        got = {"compute": 4.00 * 8 * max(i, floor), "failure_rework": 4.00 * 8 * (max(w, floor) - max(i, floor)),
               "operations": operations("cloud", 1, 8, w), "porting": porting("cuda", "pytorch"),
               **checkpoint_lines(mode="cloud", cls=provider("cloud", "test"), nodes=1, gpus=8, wall=w, params=7e9,
                                  tokens=1e9)}
        return got, dict(got)

    cost, cash = lines(ideal, wall)
    cost["throughput"], cash["throughput"] = over_runs(lines, ideal, wall)
    assert cost["compute"] == pytest.approx(23_360)                                 # $4 x 8 GPUs x 730 h
    assert_lines(plan["cost_usd"], cost)
    assert_lines(plan["cash_usd"], cash)                                            # no premium: cost = cash
    start = date(2026, 12, 1) + timedelta(days=10)                                  # p90 lead time, no install
    assert plan["start"] == start.isoformat()
    assert plan["finish"] == (start + timedelta(days=math.ceil(wall / 24))).isoformat()
    used = wall / HOURS_PER_MONTH
    assert any(f"commits 1 months, billed in full; the run uses {used:.1f}" in w for w in plan["warnings"])


def test_managed_contract_with_porting(tmp_path: Path) -> None:
    plan = solve(tmp_path, """
name: golden-managed
as_of: 2026-12-01
workload: {method: full_finetune, params: 7B, tokens: 2B, seq_len: 4096, layers: 32, hidden: 4096,
           framework: pytorch}
policy: {modes: [managed], accelerators: {include: [tpu7x]}}
rules: [{name: golden, when: {quote: golden-managed, nodes: {eq: 2}}, then: require}]
""", """
quotes:
- {id: golden-managed, system: tpu7x-4, mode: managed, vendor: test, usd_per_month: 20k, commit_months: 2,
   max_nodes: 8, lead_time_days: 14, quoted_on: 2026-11-20, valid_until: 2027-06-30, kind: list, source: test}
""")
    assert plan["option"] == "tpu7x-4/managed" and plan["nodes"] == 2
    assert [(q["id"], q["nodes"]) for q in plan["quotes"]] == [("golden-managed", 2)]
    ideal, wall = hand_hours(params=7e9, tokens=2e9, layers=32, hidden=4096, seq=4096, system="tpu7x-4", nodes=2)
    def lines(i: float, w: float) -> tuple[dict[str, float], dict[str, float]]:
        months_ideal, months_wall = max(i / HOURS_PER_MONTH, 2), max(w / HOURS_PER_MONTH, 2)
        got = {"compute": 20_000 * 2 * months_ideal, "failure_rework": 20_000 * 2 * (months_wall - months_ideal),
               "spares": spare_share(2) * 20_000 * 2 * months_wall,              # hot spares, contracted alike
               "porting": porting("xla", "pytorch"), "operations": operations("managed", 2, 8, w),
               **checkpoint_lines(mode="managed", cls=provider("managed", "test"), nodes=2, gpus=8, wall=w,
                                  params=7e9, tokens=2e9, accel_class="tpu")}
        return got, dict(got)

    cost, cash = lines(ideal, wall)
    cost["throughput"], cash["throughput"] = over_runs(lines, ideal, wall, "xla", "tpu")
    assert cost["porting"] == pytest.approx(16 * 25_000 * 12 / 52)                  # 16 engineer-weeks
    assert_lines(plan["cost_usd"], cost)
    assert_lines(plan["cash_usd"], cash)
    # porting PyTorch to TPU takes longer than the 14-day lead time: training starts when porting is done
    start = date(2026, 12, 1) + timedelta(days=A["porting"]["xla"]["pytorch"]["delay_days"])
    assert plan["start"] == start.isoformat()
    assert plan["finish"] == (start + timedelta(days=math.ceil(wall / 24))).isoformat()


def test_a_late_finish_priced_at_the_users_rate(tmp_path: Path) -> None:
    """A rented run of weeks with a deadline five days after its planned finish: lateness is the price of a day
    (`risk.money.delay_cost_usd_per_day`) × E[days past the deadline], the expectation over the start (the quote's
    capacity arrives ⌈min(L, cap)⌉ days after the order, L lognormal through its p50 and p90, capped at the
    `lead_time_cap_quantile`; the run starts when it arrives) and the run scenarios (d_s = ⌈W_s / 24⌉ days,
    W_s = planned wall / MFU factor) — computed here by hand, exactly, as is P(deadline)."""
    nodes, rate, p50, p90, price = 1, 5.00, 7, 14, 10_000
    ideal, wall = hand_hours(params=7e9, tokens=300e9, layers=32, hidden=4096, seq=2048, system="dgx-b200",
                             nodes=nodes)
    days = math.ceil(wall / 24)
    deadline_day = p90 + days + 5
    deadline = date(2026, 12, 1) + timedelta(days=deadline_day)
    plan_json = solve(tmp_path, f"""
name: golden-late
as_of: 2026-12-01
workload: {{method: pretrain, params: 7B, tokens: 300B, seq_len: 2048, layers: 32, hidden: 4096}}
schedule: {{deadline: {deadline}}}
policy: {{modes: [cloud], accelerators: {{include: [b200]}}}}
risk: {{money: {{delay_cost_usd_per_day: {price}}}}}
rules: [{{name: golden, when: {{quote: golden-late, nodes: {{eq: {nodes}}}}}, then: require}}]
""", f"""
quotes:
- {{id: golden-late, system: dgx-b200, mode: cloud, vendor: test, usd_per_gpu_hour: {rate}, max_nodes: 2,
   lead_time_days: {p50}, lead_time_p90_days: {p90}, quoted_on: 2026-11-20, valid_until: 2027-03-31, kind: list,
   source: test}}
""")
    plan = plan_json
    gpus = 8 * nodes
    assert plan["start"] == (date(2026, 12, 1) + timedelta(days=p90)).isoformat()    # planned at the p90 lead

    def lines(i: float, w: float) -> tuple[dict[str, float], dict[str, float]]:
        billed = A["money"]["cloud_min_billed_hours"]
        got = {"compute": rate * gpus * max(i, billed), "failure_rework": rate * gpus * (max(w, billed) - max(i, billed)),
               "operations": operations("cloud", nodes, gpus, w),
               **checkpoint_lines(mode="cloud", cls=provider("cloud", "test"), nodes=nodes, gpus=gpus, wall=w,
                                  params=7e9, tokens=300e9)}
        return got, dict(got)

    cost, cash = lines(ideal, wall)
    cost["throughput"], cash["throughput"] = over_runs(lines, ideal, wall)
    # The start law: P(S = x) for whole days x, S = ⌈min(L, cap)⌉.
    n = NormalDist()
    mu, sigma = math.log(p50), math.log(p90 / p50) / n.inv_cdf(0.9)
    cap = math.exp(mu + sigma * n.inv_cdf(A["lead_time_cap_quantile"]))
    last = math.ceil(cap)
    at_most = [n.cdf((math.log(x) - mu) / sigma) if x > 0 else 0.0 for x in range(last)] + [1.0]
    p_start = [at_most[0]] + [at_most[x] - at_most[x - 1] for x in range(1, last + 1)]
    run_days = np.maximum(1, np.ceil(wall * mfu_multipliers() / 24 - 1e-9))
    late = sum(p * float(np.maximum(0, x + run_days - deadline_day).mean()) for x, p in enumerate(p_start) if p > 0)
    on_time = sum(p * float((x + run_days <= deadline_day).mean()) for x, p in enumerate(p_start) if p > 0)
    assert 0.5 < late and 0.5 < on_time < 0.95, "the test's deadline should leave the outcome uncertain"
    cost["lateness"] = price * late
    assert_lines(plan["cost_usd"], cost)
    assert_lines(plan["cash_usd"], cash)        # lateness is a cost, never paid to anyone in the plan
    risk = plan["risk"]
    assert risk["p_deadline"] == pytest.approx(on_time, abs=1e-4)   # JSON keeps four digits
    assert risk["late_days_expected"] == pytest.approx(late, abs=1e-4)


def test_a_tier_the_run_outlasts_bills_the_hours_past_its_term_at_the_rate_after_it(tmp_path: Path) -> None:
    """A reserved tier sold for at most `max_term_months`: the run's hours within the term at the tier's price, the
    hours past it at `after_term_usd_per_gpu_hour` (the provider's rate beyond the tier), never at the tier's — in the
    planned lines and in every scenario of the run length — and the plan says so (a TERM warning naming the next
    tier)."""
    rate, after, commit, term = 5.00, 7.00, 0.25, 0.4
    ideal, wall = hand_hours(params=7e9, tokens=300e9, layers=32, hidden=4096, seq=2048, system="dgx-b200", nodes=1)
    term_h = term * HOURS_PER_MONTH
    assert ideal > term_h, "the run must outlast the tier's term"
    plan = solve(tmp_path, """
name: golden-term
as_of: 2026-12-01
workload: {method: pretrain, params: 7B, tokens: 300B, seq_len: 2048, layers: 32, hidden: 4096}
policy: {modes: [cloud], accelerators: {include: [b200]}}
rules: [{name: golden, when: {quote: golden-term, nodes: {eq: 1}}, then: require}]
""", f"""
quotes:
- {{id: golden-term, system: dgx-b200, mode: cloud, vendor: test, usd_per_gpu_hour: {rate}, contract: reserved,
   commit_months: {commit}, max_term_months: {term}, after_term_usd_per_gpu_hour: {after}, next_tier: golden-longer,
   max_nodes: 2, lead_time_days: 7, lead_time_p90_days: 10, quoted_on: 2026-11-20, valid_until: 2027-03-31,
   kind: list, source: test}}
""")
    gpus = 8
    floor = max(commit * HOURS_PER_MONTH, A["money"]["cloud_min_billed_hours"])

    def billed(h: float) -> float:
        h = max(h, floor)
        return gpus * (rate * min(h, term_h) + after * max(0.0, h - term_h))

    def lines(i: float, w: float) -> tuple[dict[str, float], dict[str, float]]:
        got = {"compute": billed(i), "failure_rework": billed(w) - billed(i),
               "operations": operations("cloud", 1, gpus, w),
               **checkpoint_lines(mode="cloud", cls=provider("cloud", "test"), nodes=1, gpus=gpus, wall=w,
                                  params=7e9, tokens=300e9)}
        return got, dict(got)

    cost, cash = lines(ideal, wall)
    cost["throughput"], cash["throughput"] = over_runs(lines, ideal, wall)
    assert_lines(plan["cost_usd"], cost)
    assert_lines(plan["cash_usd"], cash)
    beyond = wall / HOURS_PER_MONTH - term
    assert any(w.startswith(f"TERM: quote golden-term's price covers {term:.1f} months; the planned run's last "
                            f"{beyond:.1f} months are billed at ${after:,.2f}/GPU-h") and "golden-longer" in w
               for w in plan["warnings"]), plan["warnings"]
