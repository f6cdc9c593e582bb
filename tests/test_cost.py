"""Tests for solver/estimate/cost.py: depreciation and resale, buy / cloud / managed line items (with capital,
support, hall and waiting), fixed lines, the expected slip premium, Lines.

Every expected dollar figure is computed by hand from the cost.py docstring and written out as arithmetic.
Formula tests use their own MoneyA (`M`); a few read the bundled `A.money` so they survive tuning.
"""

from __future__ import annotations

import math
import random
from statistics import NormalDist

import numpy as np
import pytest

from solver.inputs.assumptions import OpsFte, load_assumptions
from solver.estimate.checkpoints import DataCost
from solver.estimate.cost import (
    HOURS_PER_MONTH,
    LINE_ORDER,
    RISK_LINES,
    Lines,
    Owning,
    buy_node_lines,
    cloud_node_lines,
    depreciation_fraction,
    expected_excess_days,
    fixed_lines,
    managed_node_lines,
    rented_per_dollar,
    resale_fraction,
    slip_premium,
    spare_fraction,
)

A = load_assumptions().values

M = A.money.model_copy(update={
    "engineer_usd_per_month": 20_000.0,
    "ops_fte": {"buy": OpsFte(base=1.0, per_1000_gpus=4.0), "cloud": OpsFte(base=0.5, per_1000_gpus=1.5),
                "managed": OpsFte(base=0.25, per_1000_gpus=0.5)},
    "depreciation_years": 4.0,
    "residual_fraction": 0.0,
    "network_capex_fraction": 0.20,
    "consumer_risk_pct": 10.0,
    "estimate_price_risk_pct": 20.0,
    "delay_cost_usd_per_day": 1_000.0,
    "ops_min_days": 7.0,
    "cloud_min_billed_hours": 2.0,
})
LIFE_H = 4 * 365 * 24          # 35,040 hours in M


def test_hours_per_month():
    assert HOURS_PER_MONTH == pytest.approx(365 * 24 / 12)


# ---------------------------------------------------------------------------------------------- depreciation


@pytest.mark.parametrize("hours, expected", [
    (0, 0.0),
    (8760, 8760 / 35040),            # one year of four: 0.25
    (17520, 0.5),
    (35040, 1.0),                    # the whole useful life
    (2 * 35040, 1.0),                # capped at 1
])
def test_depreciation_straight_line(hours, expected):
    assert depreciation_fraction(hours, M) == pytest.approx(expected, rel=1e-12)


def test_depreciation_with_bundled_life():
    life = A.money.depreciation_years * 365 * 24
    r = A.money.residual_fraction
    assert depreciation_fraction(life / 10, A.money) == pytest.approx(0.1 * (1 - r))
    assert depreciation_fraction(3 * life, A.money) == 1.0


def test_depreciation_with_residual_value():
    m = M.model_copy(update={"residual_fraction": 0.2})
    # straight line to the residual: half the life charges half of (1 − 0.2)
    assert depreciation_fraction(LIFE_H / 2, m) == pytest.approx(0.5 * (1 - 0.2))
    # the residual value is kept by the owner: holding for the whole life or longer charges 1 − 0.2
    assert depreciation_fraction(LIFE_H, m) == pytest.approx(0.8)
    assert depreciation_fraction(2 * LIFE_H, m) == pytest.approx(0.8)
    # no jump just before the end of the life (the old formula jumped from 0.8 to 1.0 there)
    assert depreciation_fraction(LIFE_H - 1, m) == pytest.approx(0.8 * (LIFE_H - 1) / LIFE_H)


# ---------------------------------------------------------------------------------------------- buy
# M's owning assumptions, written out so the hand arithmetic below reads on its own: capital 10%/yr, support 5%/yr,
# a hall at $100 per kW-month, and a resale curve 0.8 at age 0, 0.6 at one year, 0.2 at four years.

M = M.model_copy(update={"cost_of_capital_pct_per_year": 10.0, "support_pct_per_year": 5.0,
                         "facility_usd_per_kw_month": 100.0,
                         "resale_value_by_age_years": {0.0: 0.8, 1.0: 0.6, 4.0: 0.2}})
OWN = Owning(after_run="resell", facility_usd_per_kw_month=100.0, facility_is_cash=False)
BUY = dict(price=300_000.0, nodes=4, ideal_hours=1000.0, wall_hours=1200.0, install_days=21.0, wait_days=0.0,
           node_kw=10.0, pue=1.3, usd_per_kwh=0.10, money=M, owning=OWN, consumer=False, estimate=False)
HELD_I, HELD_W = 21 * 24 + 1000, 21 * 24 + 1200     # hours held: install, then the run (ideal / with failures)
EXTRA = 0.20                                         # the network (> 1 node), as a fraction of the server price
HW = 300_000 * (1 + EXTRA)                           # the cluster's hardware for one node: $360,000
ENERGY_H = 10 * 1.3 * 0.10                           # kW x PUE x $/kWh = $1.30 per hour


def _resale(hours: float) -> float:
    """M's curve by hand: 0.8 - 0.2 per year in the first year."""
    years = hours / 8760
    assert years <= 1
    return 0.8 - 0.2 * years


@pytest.mark.parametrize("years, expected", [(0, 0.8), (0.5, 0.7), (1, 0.6), (2.5, 0.4), (4, 0.2), (9, 0.2)])
def test_resale_curve_is_linear_between_ages_and_flat_after(years, expected):
    assert resale_fraction(years, M) == pytest.approx(expected)


def test_buy_lines_resell_multi_node():
    lines = buy_node_lines(**BUY)
    assert lines.cost["compute"] == 300_000                                   # bought in full ...
    assert lines.cost["network_storage"] == pytest.approx(300_000 * EXTRA)
    assert lines.cost["resale_credit"] == pytest.approx(-HW * _resale(HELD_I))  # ... and sold after the run
    assert lines.cost["capital"] == pytest.approx(HW * 0.10 * HELD_I / 8760)
    assert lines.cost["support"] == pytest.approx(HW * 0.05 * HELD_I / 8760)
    assert lines.cost["facility"] == pytest.approx(10 * 100 * HELD_I / 730)
    assert lines.cost["energy"] == pytest.approx(ENERGY_H * 1000)
    # 200 hours of failures: the hardware is older when sold, and capital, support, hall and power run longer
    assert lines.cost["failure_rework"] == pytest.approx(
        HW * (_resale(HELD_I) - _resale(HELD_W)) + HW * 0.15 * 200 / 8760 + 10 * 100 * 200 / 730 + ENERGY_H * 200)
    assert "consumer_risk" not in lines.cost and "estimate_price" not in lines.cost
    # cash: the whole capex, support, energy; not the resale (it comes back later), capital or the own hall
    assert lines.cash["compute"] == 300_000
    assert lines.cash["network_storage"] == pytest.approx(300_000 * EXTRA)
    assert lines.cash["resale_credit"] == 0.0 and lines.cash["capital"] == 0.0 and lines.cash["facility"] == 0.0
    assert lines.cash["support"] == pytest.approx(HW * 0.05 * HELD_I / 8760)
    assert lines.cash["failure_rework"] == pytest.approx(HW * 0.05 * 200 / 8760 + ENERGY_H * 200)
    assert lines.total_cash == pytest.approx(HW + HW * 0.05 * HELD_W / 8760 + ENERGY_H * 1200)


def test_buy_lines_reuse_is_straight_line_depreciation_of_the_time_held():
    lines = buy_node_lines(**{**BUY, "owning": Owning("reuse", 100.0, False)})
    base, full = HELD_I / 35040, HELD_W / 35040          # M: four-year life, no residual
    assert lines.cost["compute"] == pytest.approx(300_000 * base)
    assert lines.cost["network_storage"] == pytest.approx(300_000 * EXTRA * base)
    assert "resale_credit" not in lines.cost
    assert lines.cost["failure_rework"] == pytest.approx(
        HW * (full - base) + HW * 0.15 * 200 / 8760 + 10 * 100 * 200 / 730 + ENERGY_H * 200)
    assert lines.cash["compute"] == 300_000


def test_buy_lines_idle_writes_the_hardware_off():
    lines = buy_node_lines(**{**BUY, "owning": Owning("idle", 100.0, False)})
    assert lines.cost["compute"] == 300_000 and lines.cost["network_storage"] == pytest.approx(300_000 * EXTRA)
    assert "resale_credit" not in lines.cost
    # written off in full either way, so failures only add the time-proportional lines
    assert lines.cost["failure_rework"] == pytest.approx(HW * 0.15 * 200 / 8760 + 10 * 100 * 200 / 730
                                                         + ENERGY_H * 200)


def test_buy_lines_single_node_has_no_network_share():
    lines = buy_node_lines(**{**BUY, "nodes": 1, "owning": Owning("reuse", 100.0, False)})
    assert lines.cost["network_storage"] == 0.0 and lines.cash["network_storage"] == 0.0  # storage: its own line
    assert lines.cost["compute"] == pytest.approx(300_000 * HELD_I / 35040)
    assert lines.cost["capital"] == pytest.approx(300_000 * 0.10 * HELD_I / 8760)


def test_buy_cash_is_the_same_whatever_happens_after_the_run():
    totals = {after: buy_node_lines(**{**BUY, "owning": Owning(after, 100.0, False)}) for after in
              ("resell", "reuse", "idle")}
    assert totals["resell"].total_cash == pytest.approx(totals["reuse"].total_cash)
    assert totals["idle"].total_cash == pytest.approx(totals["reuse"].total_cash)
    # a year-old cluster sells at 60-80%: reuse (4-year straight line) < resell < idle
    assert totals["reuse"].total_cost < totals["resell"].total_cost < totals["idle"].total_cost


def test_buy_lines_colocation_rent_is_cash():
    lines = buy_node_lines(**{**BUY, "owning": Owning("resell", 184.0, True)})
    assert lines.cost["facility"] == pytest.approx(10 * 184 * HELD_I / 730)
    assert lines.cash["facility"] == pytest.approx(lines.cost["facility"])


def test_waiting_hardware_is_held_longer():
    """A quote that had to be ordered early: 30 more days of capital, support, hall and lost value."""
    plain = buy_node_lines(**BUY)
    waited = buy_node_lines(**{**BUY, "wait_days": 30})
    extra_h = 30 * 24
    assert waited.cost["capital"] - plain.cost["capital"] == pytest.approx(HW * 0.10 * extra_h / 8760)
    assert waited.cost["support"] - plain.cost["support"] == pytest.approx(HW * 0.05 * extra_h / 8760)
    assert waited.cost["facility"] - plain.cost["facility"] == pytest.approx(10 * 100 * extra_h / 730)
    assert waited.cost["resale_credit"] == pytest.approx(-HW * _resale(HELD_I + extra_h))
    assert waited.cost["energy"] == plain.cost["energy"]      # idle hardware is not charged power
    assert waited.total_cash - plain.total_cash == pytest.approx(HW * 0.05 * extra_h / 8760)


def test_buy_lines_risk_premiums_are_not_cash():
    lines = buy_node_lines(**{**BUY, "consumer": True, "estimate": True})
    loss = 1 - _resale(HELD_W)                             # share of the price lost by the end of the run
    assert lines.cost["consumer_risk"] == pytest.approx(300_000 * loss * 10 / 100)
    driven = HW * loss + HW * 0.15 * HELD_W / 8760         # the price-driven cost: lost value, capital, support
    assert lines.cost["estimate_price"] == pytest.approx(driven * 20 / 100)
    assert "consumer_risk" not in lines.cash and "estimate_price" not in lines.cash
    plain = buy_node_lines(**BUY)
    assert lines.total_cash == pytest.approx(plain.total_cash)


def test_buy_lines_energy_with_bundled_node_figures():
    # a DGX H100 at 10.2 kW, PUE 1.2, $0.08/kWh for 720 ideal hours
    lines = buy_node_lines(**{**BUY, "node_kw": 10.2, "pue": 1.2, "usd_per_kwh": 0.08, "ideal_hours": 720.0,
                              "wall_hours": 720.0, "money": A.money})
    assert lines.cost["energy"] == pytest.approx(10.2 * 1.2 * 0.08 * 720)
    assert lines.cost["failure_rework"] == pytest.approx(0.0)


# ---------------------------------------------------------------------------------------------- cloud


def test_cloud_lines_pay_as_you_go():
    lines = cloud_node_lines(usd_per_gpu_hour=2.5, per_node=8, ideal_hours=100.0, wall_hours=120.0,
                             commit_months=0, money=M, estimate=False)
    assert lines.cost["compute"] == pytest.approx(2.5 * 8 * 100)           # $2,000
    assert lines.cost["failure_rework"] == pytest.approx(2.5 * 8 * 20)     # $400
    assert lines.cash == lines.cost


def test_cloud_lines_commitment_floor():
    # 1-month commitment = 730 h billed even if the run takes 100 h: no rework on top
    lines = cloud_node_lines(usd_per_gpu_hour=2.5, per_node=8, ideal_hours=100.0, wall_hours=120.0,
                             commit_months=1, money=M, estimate=False)
    assert lines.cost["compute"] == pytest.approx(2.5 * 8 * 730)
    assert lines.cost["failure_rework"] == pytest.approx(0.0)


def test_cloud_lines_commitment_straddled():
    # ideal 700 h under the 730 h floor, wall 800 h above it
    lines = cloud_node_lines(usd_per_gpu_hour=2.0, per_node=8, ideal_hours=700.0, wall_hours=800.0,
                             commit_months=1, money=M, estimate=False)
    assert lines.cost["compute"] == pytest.approx(2.0 * 8 * 730)
    assert lines.cost["failure_rework"] == pytest.approx(2.0 * 8 * (800 - 730))


def test_cloud_lines_minimum_billed_hours():
    # a 15-minute job is billed for cloud_min_billed_hours (2 h in M)
    lines = cloud_node_lines(usd_per_gpu_hour=2.0, per_node=8, ideal_hours=0.25, wall_hours=0.3,
                             commit_months=0, money=M, estimate=False)
    assert lines.cost["compute"] == pytest.approx(2.0 * 8 * 2)
    assert lines.cost["failure_rework"] == pytest.approx(0.0)
    bundled = cloud_node_lines(usd_per_gpu_hour=2.0, per_node=8, ideal_hours=0.25, wall_hours=0.3,
                               commit_months=0, money=A.money, estimate=False)
    assert bundled.cost["compute"] == pytest.approx(2.0 * 8 * max(0.25, A.money.cloud_min_billed_hours))


def test_cloud_estimate_price_premium_is_not_cash():
    lines = cloud_node_lines(usd_per_gpu_hour=2.5, per_node=8, ideal_hours=100.0, wall_hours=120.0,
                             commit_months=0, money=M, estimate=True)
    assert lines.cost["estimate_price"] == pytest.approx(2.5 * 8 * 120 * 20 / 100)
    assert "estimate_price" not in lines.cash
    assert lines.total_cash == pytest.approx(2.5 * 8 * 120)


# ---------------------------------------------------------------------------------------------- managed


def test_managed_lines_by_the_month():
    lines = managed_node_lines(usd_per_month=100_000.0, ideal_hours=2 * 730.0, wall_hours=3 * 730.0,
                               commit_months=0, money=M, estimate=False)
    assert lines.cost["compute"] == pytest.approx(100_000 * 2)
    assert lines.cost["failure_rework"] == pytest.approx(100_000 * (3 - 2))


def test_managed_lines_commitment_minimum():
    lines = managed_node_lines(usd_per_month=100_000.0, ideal_hours=2 * 730.0, wall_hours=3 * 730.0,
                               commit_months=6, money=M, estimate=False)
    assert lines.cost["compute"] == pytest.approx(100_000 * 6)
    assert lines.cost["failure_rework"] == pytest.approx(0.0)
    mid = managed_node_lines(usd_per_month=100_000.0, ideal_hours=2 * 730.0, wall_hours=3 * 730.0,
                             commit_months=2.5, money=M, estimate=True)
    assert mid.cost["compute"] == pytest.approx(100_000 * 2.5)
    assert mid.cost["failure_rework"] == pytest.approx(100_000 * (3 - 2.5))
    assert mid.cost["estimate_price"] == pytest.approx(100_000 * 3 * 20 / 100)
    assert mid.total_cash == pytest.approx(100_000 * 3)


# ---------------------------------------------------------------------------------------------- fixed lines


def test_fixed_lines_porting():
    lines = fixed_lines(mode="buy", gpus=512, nodes=64, wall_hours=2000.0, porting_weeks=8, money=M)
    assert lines.cost["porting"] == pytest.approx(8 * 20_000 * 12 / 52)   # weeks × monthly cost × 12/52


def test_fixed_lines_operations_multi_node():
    lines = fixed_lines(mode="buy", gpus=512, nodes=64, wall_hours=2000.0, porting_weeks=0, money=M)
    engineers = 1.0 + 4.0 * 512 / 1000
    assert lines.cost["operations"] == pytest.approx(engineers * 20_000 * 2000 / 730)
    assert lines.cost["porting"] == 0.0
    assert lines.cash == lines.cost


@pytest.mark.parametrize("mode, base, per_k", [("buy", 1.0, 4.0), ("cloud", 0.5, 1.5), ("managed", 0.25, 0.5)])
def test_fixed_lines_operations_by_mode(mode, base, per_k):
    lines = fixed_lines(mode=mode, gpus=1024, nodes=128, wall_hours=1460.0, porting_weeks=0, money=M)
    assert lines.cost["operations"] == pytest.approx((base + per_k * 1024 / 1000) * 20_000 * 1460 / 730)


def test_fixed_lines_single_node_has_no_base_and_a_minimum_duration():
    # one box: no base engineer; a 10-hour run is still watched for ops_min_days = 7 days
    lines = fixed_lines(mode="buy", gpus=8, nodes=1, wall_hours=10.0, porting_weeks=0, money=M)
    assert lines.cost["operations"] == pytest.approx(4.0 * 8 / 1000 * 20_000 * (7 * 24) / 730)


def test_fixed_lines_with_bundled_money():
    m = A.money
    fte = m.ops_fte["cloud"]
    hours = max(100.0, m.ops_min_days * 24)
    lines = fixed_lines(mode="cloud", gpus=64, nodes=8, wall_hours=100.0, porting_weeks=2, money=m)
    assert lines.cost["operations"] == pytest.approx(
        (fte.base + fte.per_1000_gpus * 64 / 1000) * m.engineer_usd_per_month * hours / 730)
    assert lines.cost["porting"] == pytest.approx(2 * m.engineer_usd_per_month * 12 / 52)


# ---------------------------------------------------------------------------------------------- checkpoint lines


def test_spares_are_a_multi_node_plans_share_of_a_node():
    assert spare_fraction(1, 5.0) == 0.0 and spare_fraction(2, 5.0) == pytest.approx(0.05)
    assert spare_fraction(72, 0.0) == 0.0


def test_bought_spares_are_held_like_the_nodes_for_the_run_as_expected():
    """s × (hardware × its loss of value by the end of the run + capital and support + hall, for install + run with
    failures); cash s × (the hardware + its support); premiums on the spares too."""
    plain = buy_node_lines(**BUY)
    lines = buy_node_lines(**{**BUY, "spares": 0.05, "estimate": True})
    loss = 1 - _resale(HELD_W)
    assert lines.cost["spares"] == pytest.approx(0.05 * (HW * loss + HW * 0.15 * HELD_W / 8760
                                                          + 10 * 100 * HELD_W / 730))
    assert lines.cash["spares"] == pytest.approx(0.05 * (HW + HW * 0.05 * HELD_W / 8760))
    assert lines.cost["estimate_price"] == pytest.approx(1.05 * (HW * loss + HW * 0.15 * HELD_W / 8760) * 20 / 100)
    for name in ("compute", "network_storage", "capital", "energy", "failure_rework"):
        assert lines.cost[name] == pytest.approx(plain.cost[name])


def test_rented_spares_and_a_nodes_share_of_storage_and_transfers():
    data = DataCost(storage_usd_per_hour=0.5, transfer_usd=30.0)
    lines = cloud_node_lines(usd_per_gpu_hour=2.5, per_node=8, ideal_hours=100.0, wall_hours=120.0,
                             commit_months=0, money=M, estimate=True, spares=0.05, data=data)
    assert lines.cost["spares"] == pytest.approx(0.05 * 2.5 * 8 * 120)       # billed for the run as expected
    assert lines.cost["storage"] == pytest.approx(0.5 * 120) and lines.cost["data_transfer"] == 30.0
    assert lines.cost["estimate_price"] == pytest.approx(1.05 * 2.5 * 8 * 120 * 20 / 100)
    assert lines.total_cash == pytest.approx(1.05 * 2.5 * 8 * 120 + 0.5 * 120 + 30)
    managed = managed_node_lines(usd_per_month=100_000.0, ideal_hours=2 * 730.0, wall_hours=3 * 730.0,
                                 commit_months=0, money=M, estimate=False, spares=0.05, data=data)
    assert managed.cost["spares"] == pytest.approx(0.05 * 100_000 * 3)


def test_rented_per_dollar_matches_the_lines_with_spares_and_data():
    data = DataCost(storage_usd_per_hour=0.5, transfer_usd=30.0)
    hours = np.array([50.0, 900.0])
    c0, c1, k0, k1 = rented_per_dollar(mode="cloud", hours=hours, per_node=8, commit_months=1, money=M,
                                       estimate=False, spares=0.05, data=data)
    for i, h in enumerate(hours.tolist()):
        at = cloud_node_lines(usd_per_gpu_hour=3.0, per_node=8, ideal_hours=h, wall_hours=h, commit_months=1,
                              money=M, estimate=False, spares=0.05, data=data)
        assert c0[i] + 3.0 * c1[i] == pytest.approx(at.total_cost)
        assert k0[i] + 3.0 * k1[i] == pytest.approx(at.total_cash)


def test_fixed_lines_orchestration_recovery_and_owned_data():
    """orchestration = nodes × $/node-month × months; recovery = λ·hours × (engineer hours + hardware share × own
    hours to replace a node) × engineer-month / its hours; bought hardware's storage and transfers per plan."""
    r = A.reliability
    m = M.model_copy(update={"engineer_hours_per_month": 160.0, "engineer_hours_per_failure": 2.0,
                             "orchestration_usd_per_node_month": 30.0})
    lines = fixed_lines(mode="buy", gpus=512, nodes=64, wall_hours=1460.0, porting_weeks=0, money=m, reliability=r,
                        failures_per_hour=0.01, data=DataCost(storage_usd_per_hour=2.0, transfer_usd=500.0))
    assert lines.cost["orchestration"] == pytest.approx(64 * 30 * 2)
    assert lines.cost["recovery"] == pytest.approx(0.01 * 1460 * (2.0 + r.hardware_failure_share
                                                                  * r.node_replacement_hours["buy"]) * 20_000 / 160)
    assert lines.cost["storage"] == pytest.approx(2.0 * 1460) and lines.cost["data_transfer"] == 500.0
    assert lines.cash == lines.cost


# ---------------------------------------------------------------------------------------------- slip premium


def _closed_form(p50: float, p90: float, b: float) -> float:
    """E[max(0, L - b)] for L lognormal through p50 and p90, written out independently: the partial expectation of
    a lognormal, E[L; L > b] - b P(L > b), with sigma from the 90th percentile of the standard normal."""
    z = NormalDist().inv_cdf(0.9)
    mu, sigma = math.log(p50), math.log(p90 / p50) / z
    n = NormalDist()
    tail_mean = math.exp(mu + sigma ** 2 / 2) * n.cdf((mu + sigma ** 2 - math.log(b)) / sigma)
    return tail_mean - b * n.cdf((mu - math.log(b)) / sigma)


@pytest.mark.parametrize("p50, p90, b", [(84, 210, 210), (84, 210, 150), (7, 30, 34), (30, 45, 45), (60, 120, 400)])
def test_expected_excess_matches_the_closed_form(p50, p90, b):
    assert expected_excess_days(p50, p90, b) == pytest.approx(_closed_form(p50, p90, b), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("p50, p90, b", [(84, 210, 210), (7, 30, 34), (60, 120, 90)])
def test_expected_excess_matches_a_simulation(p50, p90, b):
    """400,000 lognormal draws through p50/p90: the mean excess is within 4 standard errors of the formula."""
    rng = random.Random(20261201)
    sigma = math.log(p90 / p50) / NormalDist().inv_cdf(0.9)
    draws = [max(0.0, math.exp(math.log(p50) + sigma * rng.gauss(0, 1)) - b) for _ in range(400_000)]
    mean = sum(draws) / len(draws)
    se = math.sqrt(sum((d - mean) ** 2 for d in draws) / (len(draws) - 1) / len(draws))
    assert abs(mean - expected_excess_days(p50, p90, b)) <= 4 * se


def test_expected_excess_properties():
    assert expected_excess_days(30, None, 10) == 20            # no spread: the lead time is certain
    assert expected_excess_days(30, 30, 45) == 0.0
    assert expected_excess_days(30, 60, 0) == pytest.approx(30 * math.exp((math.log(2) / 1.2815515655) ** 2 / 2))
    later = [expected_excess_days(84, 210, b) for b in (100, 150, 210, 300, 600, 2000)]
    assert later == sorted(later, reverse=True)               # a later start leaves less to slip
    assert later[-1] > 0                                       # an uncapped lognormal never quite reaches 0


@pytest.mark.parametrize("p50, p90, b", [(84, 210, 210), (7, 30, 34), (60, 120, 90)])
def test_capped_excess_matches_its_closed_form_and_a_simulation(p50, p90, b):
    """Capped at the 99th percentile c: E[(min(L, c) - b)+] = E[(L - b)+] - E[(L - c)+], and a simulation of
    min(L, c) agrees within 4 standard errors."""
    sigma = math.log(p90 / p50) / NormalDist().inv_cdf(0.9)
    cap = p50 * math.exp(sigma * NormalDist().inv_cdf(0.99))
    want = _closed_form(p50, p90, b) - _closed_form(p50, p90, cap)
    assert expected_excess_days(p50, p90, b, 0.99) == pytest.approx(want, rel=1e-9)
    rng = random.Random(7)
    draws = [max(0.0, min(cap, math.exp(math.log(p50) + sigma * rng.gauss(0, 1))) - b) for _ in range(400_000)]
    mean = sum(draws) / len(draws)
    se = math.sqrt(sum((d - mean) ** 2 for d in draws) / (len(draws) - 1) / len(draws))
    assert abs(mean - want) <= 4 * se


def test_capacity_ready_beyond_the_cap_never_slips():
    """Ordered more than the cap before the start: the premium is exactly zero."""
    cap = 84 * math.exp(math.log(210 / 84) / NormalDist().inv_cdf(0.9) * NormalDist().inv_cdf(0.99))
    assert expected_excess_days(84, 210, cap + 0.01, 0.99) == 0.0
    assert expected_excess_days(84, 210, cap - 5, 0.99) > 0.0
    assert slip_premium(7, 30, 182, M.model_copy(update={"delay_cost_usd_per_day": 50_000.0}), 0.99) == 0.0


def test_slip_premium_is_delay_cost_times_expected_days():
    m = M.model_copy(update={"delay_cost_usd_per_day": 50_000.0})
    assert slip_premium(84, 210, 210, m) == pytest.approx(50_000 * _closed_form(84, 210, 210))
    assert slip_premium(84, 210, 210, M.model_copy(update={"delay_cost_usd_per_day": 0.0})) == 0.0
    assert slip_premium(30, None, 45, m) == 0.0


# ---------------------------------------------------------------------------------------------- Lines


def test_lines_add_accumulates_and_separates_cash():
    lines = Lines()
    lines.add("compute", 100.0, cash=1000.0)
    lines.add("compute", 50.0)
    lines.add("energy", 7.0)
    assert lines.cost == {"compute": 150.0, "energy": 7.0}
    assert lines.cash == {"compute": 1000.0 + 50.0, "energy": 7.0}
    assert lines.total_cost == 150.0 + 7.0
    assert lines.total_cash == 1050.0 + 7.0


@pytest.mark.parametrize("name", RISK_LINES)
def test_risk_lines_are_never_cash(name):
    lines = Lines()
    lines.add(name, 500.0, cash=500.0)    # even an explicit cash amount is ignored for a risk line
    assert lines.cost == {name: 500.0}
    assert lines.cash == {}
    assert lines.total_cash == 0.0


def test_risk_line_names():
    """Risk lines are what the run is expected to cost beyond its plan without being paid to anyone in the plan's
    cash; the expected extra hours of a slow run (`throughput`) are paid, so they are not one."""
    assert set(RISK_LINES) == {"lateness", "consumer_risk", "estimate_price", "tail"}
    assert set(RISK_LINES) <= set(LINE_ORDER)
    assert "throughput" in LINE_ORDER and "throughput" not in RISK_LINES


def test_lines_scaled_and_merged():
    a = Lines()
    a.add("compute", 10.0, cash=100.0)
    a.add("consumer_risk", 2.0)
    b = Lines()
    b.add("compute", 1.0)
    b.add("energy", 3.0)
    s = a.scaled(4)
    assert s.cost == {"compute": 40.0, "consumer_risk": 8.0}
    assert s.cash == {"compute": 400.0}
    m = a.merged(b)
    assert m.cost == {"compute": 11.0, "consumer_risk": 2.0, "energy": 3.0}
    assert m.cash == {"compute": 101.0, "energy": 3.0}
    assert a.cost == {"compute": 10.0, "consumer_risk": 2.0}   # merged() leaves its inputs alone
