"""Tests for solver/cost.py: depreciation, buy / cloud / managed line items, fixed lines, slip premium, Lines.

Every expected dollar figure is computed by hand from the cost.py docstring and written out as arithmetic.
Formula tests use their own MoneyA (`M`); a few read the bundled `A.money` so they survive tuning.
"""

from __future__ import annotations

import pytest

from solver.inputs.assumptions import OpsFte, load_assumptions
from solver.estimate.cost import (
    HOURS_PER_MONTH,
    LINE_ORDER,
    RISK_LINES,
    Lines,
    buy_node_lines,
    cloud_node_lines,
    depreciation_fraction,
    fixed_lines,
    managed_node_lines,
    slip_premium,
)

A = load_assumptions().values

M = A.money.model_copy(update={
    "engineer_usd_per_month": 20_000.0,
    "ops_fte": {"buy": OpsFte(base=1.0, per_1000_gpus=4.0), "cloud": OpsFte(base=0.5, per_1000_gpus=1.5),
                "managed": OpsFte(base=0.25, per_1000_gpus=0.5)},
    "depreciation_years": 4.0,
    "residual_fraction": 0.0,
    "network_capex_fraction": 0.20,
    "storage_capex_fraction": 0.05,
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


BUY = dict(price=300_000.0, nodes=4, ideal_hours=1000.0, wall_hours=1200.0, install_days=21.0, node_kw=10.0,
           pue=1.3, usd_per_kwh=0.10, money=M, accounting="depreciation", consumer=False, estimate=False)


def test_buy_lines_depreciation_multi_node():
    lines = buy_node_lines(**BUY)
    base = (21 * 24 + 1000) / 35040           # install days count towards the holding period
    full = (21 * 24 + 1200) / 35040
    extra = 0.20 + 0.05                       # network (> 1 node) + storage
    energy_h = 10 * 1.3 * 0.10                # kW × PUE × $/kWh = $1.30 per hour
    assert lines.cost["compute"] == pytest.approx(300_000 * base)
    assert lines.cost["network_storage"] == pytest.approx(300_000 * extra * base)
    assert lines.cost["energy"] == pytest.approx(energy_h * 1000)                        # $1,300
    assert lines.cost["failure_rework"] == pytest.approx(300_000 * (1 + extra) * (full - base)
                                                         + energy_h * (1200 - 1000))
    assert "consumer_risk" not in lines.cost and "estimate_price" not in lines.cost
    # cash: the whole capex (servers + network/storage), energy, and only the energy part of the rework
    assert lines.cash["compute"] == 300_000
    assert lines.cash["network_storage"] == pytest.approx(300_000 * extra)
    assert lines.cash["energy"] == pytest.approx(energy_h * 1000)
    assert lines.cash["failure_rework"] == pytest.approx(energy_h * 200)
    assert lines.total_cash == pytest.approx(300_000 * 1.25 + energy_h * 1200)


def test_buy_lines_single_node_has_no_network_share():
    lines = buy_node_lines(**{**BUY, "nodes": 1})
    base = (21 * 24 + 1000) / 35040
    full = (21 * 24 + 1200) / 35040
    assert lines.cost["network_storage"] == pytest.approx(300_000 * 0.05 * base)     # storage only
    assert lines.cash["network_storage"] == pytest.approx(300_000 * 0.05)
    assert lines.cost["failure_rework"] == pytest.approx(300_000 * 1.05 * (full - base) + 1.3 * 200)


def test_buy_lines_full_capex():
    lines = buy_node_lines(**{**BUY, "accounting": "full_capex"})
    assert lines.cost["compute"] == 300_000
    assert lines.cost["network_storage"] == pytest.approx(300_000 * 0.25)
    # the hardware is charged in full either way, so failures only add energy
    assert lines.cost["failure_rework"] == pytest.approx(10 * 1.3 * 0.10 * 200)


def test_buy_cash_is_full_capex_whatever_the_accounting():
    dep = buy_node_lines(**BUY)
    cap = buy_node_lines(**{**BUY, "accounting": "full_capex"})
    assert dep.total_cash == pytest.approx(cap.total_cash)
    assert dep.total_cost < cap.total_cost


def test_buy_lines_depreciation_capped_past_useful_life():
    lines = buy_node_lines(**{**BUY, "ideal_hours": 40_000.0, "wall_hours": 50_000.0})
    assert lines.cost["compute"] == pytest.approx(300_000)
    assert lines.cost["failure_rework"] == pytest.approx(10 * 1.3 * 0.10 * 10_000)   # energy only


def test_buy_lines_risk_premiums_are_not_cash():
    lines = buy_node_lines(**{**BUY, "consumer": True, "estimate": True})
    full = (21 * 24 + 1200) / 35040
    assert lines.cost["consumer_risk"] == pytest.approx(300_000 * full * 10 / 100)
    assert lines.cost["estimate_price"] == pytest.approx(300_000 * full * 1.25 * 20 / 100)
    assert "consumer_risk" not in lines.cash and "estimate_price" not in lines.cash
    plain = buy_node_lines(**BUY)
    assert lines.total_cash == pytest.approx(plain.total_cash)
    assert lines.total_cost == pytest.approx(plain.total_cost + 300_000 * full * (0.10 + 1.25 * 0.20))


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


# ---------------------------------------------------------------------------------------------- slip premium


def test_slip_premium():
    assert slip_premium(30, 75, M) == pytest.approx((75 - 30) * 1_000)
    assert slip_premium(30, None, M) == 0.0
    assert slip_premium(30, 30, M) == 0.0
    assert slip_premium(30, 20, M) == 0.0        # never negative
    m = M.model_copy(update={"delay_cost_usd_per_day": 50_000.0})
    assert slip_premium(60, 120, m) == pytest.approx(60 * 50_000)
    assert slip_premium(60, 120, A.money) == pytest.approx(60 * A.money.delay_cost_usd_per_day)


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
    assert set(RISK_LINES) == {"delivery_slip", "consumer_risk", "estimate_price"}
    assert set(RISK_LINES) <= set(LINE_ORDER)


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
