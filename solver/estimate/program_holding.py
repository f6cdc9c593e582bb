"""What holding a bought program lot costs: per node, by days held after delivery (`estimate/program.py`'s lots).

The single run's formulas (`cost.py`), with `policy.after_run`'s meaning, as tables over the program's calendar so
that the model reads a lot's cost and cash at the days it is actually held.
"""

from __future__ import annotations

from ..inputs.catalog import Quote, System
from ..inputs.problem import Problem
from .cost import HOURS_PER_YEAR, charged_share, credited_share
from .options import owning


def held_tables(q: Quote, system: System, problem: Problem, horizon: int) -> tuple[tuple[float, ...],
                                                                                      tuple[float, ...], float]:
    """Per-node (cost, cash) of holding a bought node h days after delivery, h = 0..horizon, and its capex."""
    a = problem.assumptions.values
    money, own = a.money, owning(problem)
    price = q.price
    hw = 1.0 + money.network_capex_fraction   # servers and network (no spares in a program's lots yet)
    node_kw = float(system.node_kw.value)
    capital_h = hw * price * money.cost_of_capital_pct_per_year / 100.0 / HOURS_PER_YEAR
    support_h = hw * price * money.support_pct_per_year / 100.0 / HOURS_PER_YEAR
    facility_h = node_kw * own.facility_usd_per_kw_month / 730.0
    paid = 1.0 if own.facility_is_cash else 0.0
    consumer = problem.catalog.accelerators[system.accelerator].cls == "consumer"
    cost, cash = [], []
    for h in range(horizon + 1):
        hours = h * 24.0
        loss = charged_share(hours, own.after_run, money) - credited_share(hours, own.after_run, money)
        c = hw * price * loss + (capital_h + support_h + facility_h) * hours
        if consumer:
            c += loss * price * money.consumer_risk_pct / 100.0
        if q.kind == "estimate":
            c += (hw * price * loss + (capital_h + support_h) * hours) * money.estimate_price_risk_pct / 100.0
        cost.append(c)
        cash.append(hw * price + (support_h + facility_h * paid) * hours)
    return tuple(cost), tuple(cash), hw * price


__all__ = ["held_tables"]
