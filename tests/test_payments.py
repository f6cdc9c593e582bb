"""Cash by quarter (`plan.cash_by_quarter`), the payments of bought quotes and the deposits' cost of capital,
computed here by hand from the catalog numbers and compared with the JSON of `plan solve`.

The conventions (README, "Cash by quarter"): a bought quote's hardware (price × nodes × (1 + network share) × (1 + hot
spares)) is paid a deposit (`money.deposit_pct`) on its order date and the balance `money.payment_terms_days` after
delivery; support and the hall monthly in arrears from delivery; rented capacity is billed at the start of each
month of its billed term (a reservation's whole term); porting and rules on the start; every other cash line monthly
in arrears over the run, the last share on the finish. A month is 730 hours. The deposit costs its capital from
order to delivery: deposit × cost of capital %/yr × days / 365 (`cost_usd.deposit_capital`). The rates are read here
from the YAML with PyYAML; the plan's cash lines, checked by hand in tests/test_golden_costs.py, come from the JSON.
"""

from __future__ import annotations

import calendar
import json
import math
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from cli import main

ROOT = Path(__file__).resolve().parent.parent
CAT = ROOT / "catalogs"
DAYS_PER_MONTH = 730 / 24


def _leaves(node: Any) -> Any:
    if isinstance(node, dict) and "value" in node and "source" in node:
        return node["value"]
    if isinstance(node, dict):
        return {k: _leaves(v) for k, v in node.items()}
    return node


A = _leaves(yaml.safe_load((CAT / "assumptions.yaml").read_text())["assumptions"])
M = A["money"]

BUY_PROBLEM = """
name: pay-buy
as_of: 2026-12-01
workload: {method: pretrain, params: 10B, tokens: 400B, seq_len: 2048, layers: 32, hidden: 4096}
site: {it_power_kw: 1000, cooling: [air, liquid], racks: 10, rack_power_kw: 40,
       electricity_usd_per_kwh: 0.10, pue: 1.25}
policy: {modes: [buy], accelerators: {include: [h100-sxm]}}
rules: [{name: golden, when: {quote: pay-buy, nodes: {eq: 2}}, then: require},
        {name: only-golden, when: {quote: hgx-h100-server-refurb-estimate}, then: forbid}]
"""
BUY_QUOTE = """
quotes:
- {id: pay-buy, system: dgx-h100, mode: buy, vendor: test, price_usd: 250k, max_nodes: 4, lead_time_days: 30,
   lead_time_p90_days: 60, quoted_on: 2026-11-20, valid_until: 2027-03-31, kind: list, source: test%s}
"""
CLOUD_PROBLEM = """
name: pay-cloud
as_of: 2026-12-01
workload: {method: full_finetune, params: 7B, tokens: 1B, seq_len: 4096, layers: 32, hidden: 4096}
policy: {modes: [cloud], accelerators: {include: [b200]}}
rules: [{name: golden, when: {quote: pay-reserved, nodes: {eq: 1}}, then: require}]
"""
CLOUD_QUOTE = """
quotes:
- {id: pay-reserved, system: dgx-b200, mode: cloud, vendor: test, usd_per_gpu_hour: 4.00, commit_months: 3,
   max_nodes: 2, lead_time_days: 7, lead_time_p90_days: 10, quoted_on: 2026-11-20, valid_until: 2027-03-31,
   kind: negotiated, source: test}
"""


def _solve(tmp: Path, problem: str, quote: str) -> tuple[str, dict[str, Any]]:
    (tmp / "q.yaml").write_text(quote)
    (tmp / "p.yaml").write_text(problem)
    r = CliRunner().invoke(main, ["solve", str(tmp / "p.yaml"), "--quotes", str(tmp / "q.yaml"), "--format", "json"])
    assert r.exit_code == 0, r.output
    return r.stdout, json.loads(r.stdout)["plan"]


def _months_later(d: date, k: int) -> date:
    y, m = divmod(d.month - 1 + k, 12)
    return date(d.year + y, m + 1, min(d.day, calendar.monthrange(d.year + y, m + 1)[1]))


def _monthly(amount: float, first: date, months: float, advance: bool, last: date) -> list[tuple[date, float]]:
    """`amount` over `months` 730-hour months from `first`: a full month's share per month, the last month its
    fraction; in advance on the month's first day, in arrears on the next month's (the last on `last`)."""
    n = max(1, math.ceil(months - 1e-9))
    if n == 1:
        return [(first if advance else last, amount)]
    out = []
    for k in range(n):
        share = amount * min(1.0, months - k) / months
        when = _months_later(first, k) if advance else (last if k == n - 1 else min(_months_later(first, k + 1), last))
        out.append((when, share))
    return out


def _quarter(d: date) -> str:
    return f"{d.year}-Q{(d.month - 1) // 3 + 1}"


def _by_quarter(paid: list[tuple[date, float, bool]]) -> dict[str, tuple[float, float]]:
    out: dict[str, tuple[float, float]] = {}
    for d, usd, hardware in paid:
        total, hw = out.get(_quarter(d), (0.0, 0.0))
        out[_quarter(d)] = (total + usd, hw + (usd if hardware else 0.0))
    return out


def _day(s: str) -> date:
    return date.fromisoformat(s)


def _hardware(price: float, nodes: int, plan_nodes: int) -> float:
    """Servers, their network share and the hot spares bought with them, from the catalog's assumptions."""
    f = M["network_capex_fraction"] if plan_nodes > 1 else 0.0
    s = A["reliability"]["spare_nodes_pct"] / 100 if plan_nodes > 1 else 0.0
    return price * nodes * (1 + f) * (1 + s)


def test_a_bought_plan_pays_a_deposit_at_order_and_the_balance_after_delivery(tmp_path: Path) -> None:
    _out, plan = _solve(tmp_path, BUY_PROBLEM, BUY_QUOTE % "")
    assert plan["nodes"] == 2 and [q["id"] for q in plan["quotes"]] == ["pay-buy"]
    q = plan["quotes"][0]
    # ordered on the planning date, delivered at the p90 lead time (60 days), ready after installation
    assert (q["ordered"], q["delivered"]) == ("2026-12-01", "2027-01-30")
    hardware = _hardware(250_000, 2, 2)
    deposit = hardware * M["deposit_pct"] / 100
    assert M["deposit_pct"] == 25 and M["payment_terms_days"] == 30
    assert q["deposit_usd"] == pytest.approx(deposit, abs=1)
    assert q["balance_usd"] == pytest.approx(hardware - deposit, abs=1)
    assert q["balance_due"] == (date(2027, 1, 30) + timedelta(days=30)).isoformat() == "2027-03-01"

    # every payment placed by hand: deposit and balance; the hardware lines beyond the price (the spares' support)
    # and support monthly in arrears from delivery to the finish; porting on the start; the rest over the run
    cash = {k: v for k, v in plan["cash_usd"].items() if k != "total"}
    start, finish, delivered = _day(plan["start"]), _day(plan["finish"]), _day(q["delivered"])
    paid = [(date(2026, 12, 1), deposit, True), (date(2027, 3, 1), hardware - deposit, True)]
    held = (finish - delivered).days / DAYS_PER_MONTH
    extra = cash.pop("compute") + cash.pop("network_storage") + cash.pop("spares") - hardware
    for amount in (extra, cash.pop("support")):
        paid += [(d, x, False) for d, x in _monthly(amount, delivered, held, False, finish)]
    paid += [(start, cash.pop("porting", 0.0), False)]
    for amount in cash.values():
        paid += [(d, x, False) for d, x in _monthly(amount, start, plan["training_days"] * 24 / 730, False, finish)]
    want = _by_quarter(paid)
    got = {x["quarter"]: (x["usd"], x["hardware_usd"]) for x in plan["cash_by_quarter"]}
    assert set(got) == set(want) and got["2026-Q4"][1] == pytest.approx(deposit, abs=1)
    for label, (usd, hw) in want.items():
        assert got[label][0] == pytest.approx(usd, abs=len(plan["cash_usd"])), label   # lines rounded to $1 each
        assert got[label][1] == pytest.approx(hw, abs=1), label
    assert sum(x["usd"] for x in plan["cash_by_quarter"]) == pytest.approx(plan["cash_usd"]["total"], abs=3)


def test_the_deposit_is_charged_its_cost_of_capital_from_order_to_delivery(tmp_path: Path) -> None:
    _out, plan = _solve(tmp_path, BUY_PROBLEM, BUY_QUOTE % "")
    deposit = _hardware(250_000, 2, 2) * M["deposit_pct"] / 100
    days = (_day(plan["quotes"][0]["delivered"]) - _day(plan["quotes"][0]["ordered"])).days
    assert days == 60                                                        # the quote's p90 lead time
    want = deposit * M["cost_of_capital_pct_per_year"] / 100 * days / 365
    assert want == pytest.approx(250_000 * 2 * 1.25 * 1.05 * 0.25 * 0.10 * 60 / 365)   # $2,697
    assert plan["cost_usd"]["deposit_capital"] == pytest.approx(want, abs=1)
    assert plan["cash_usd"].get("deposit_capital", 0) == 0                # cost only: no money leaves for it


def test_a_quote_with_its_own_terms(tmp_path: Path) -> None:
    """No deposit and net 45 on the quote: no deposit line, nothing paid at order, the balance 45 days after
    delivery."""
    _out, plan = _solve(tmp_path, BUY_PROBLEM, BUY_QUOTE % ", deposit_pct: 0, payment_terms_days: 45")
    q = plan["quotes"][0]
    assert q["deposit_usd"] == 0 and q["balance_usd"] == pytest.approx(_hardware(250_000, 2, 2), abs=1)
    assert q["balance_due"] == (_day(q["delivered"]) + timedelta(days=45)).isoformat()
    assert "deposit_capital" not in plan["cost_usd"]
    assert plan["cash_by_quarter"][0]["quarter"] == "2027-Q1"              # nothing paid in 2026


def test_terms_are_overridable_like_every_assumption(tmp_path: Path) -> None:
    (tmp_path / "q.yaml").write_text(BUY_QUOTE % "")
    (tmp_path / "p.yaml").write_text(BUY_PROBLEM)
    r = CliRunner().invoke(main, ["solve", str(tmp_path / "p.yaml"), "--quotes", str(tmp_path / "q.yaml"),
                                  "--format", "json", "--set", "risk.money.deposit_pct=50"])
    assert r.exit_code == 0, r.output
    plan = json.loads(r.stdout)["plan"]
    deposit = _hardware(250_000, 2, 2) * 0.5
    assert plan["quotes"][0]["deposit_usd"] == pytest.approx(deposit, abs=1)
    assert plan["cost_usd"]["deposit_capital"] == pytest.approx(deposit * 0.10 * 60 / 365, abs=1)


def test_a_reserved_cloud_plan_bills_monthly_over_its_whole_term(tmp_path: Path) -> None:
    _out, plan = _solve(tmp_path, CLOUD_PROBLEM, CLOUD_QUOTE)
    q = plan["quotes"][0]
    assert q["contract"] == "reserved" and q["billed_months"] == 3 and plan["training_days"] * 24 < 730
    start, finish = _day(plan["start"]), _day(plan["finish"])
    assert start == date(2026, 12, 11)                                       # the p90 lead time, 10 days
    cash = {k: v for k, v in plan["cash_usd"].items() if k != "total"}
    compute = cash.pop("compute")
    assert compute == pytest.approx(4.00 * 8 * 3 * 730, abs=1)               # three months billed, one used
    # three equal bills, on 2026-12-11, 2027-01-11 and 2027-02-11, though the run ends within the first month
    paid = [(d, compute / 3, False) for d in (date(2026, 12, 11), date(2027, 1, 11), date(2027, 2, 11))]
    paid += [(start, cash.pop("porting", 0.0), False)]
    paid += [(finish, amount, False) for amount in cash.values()]             # a run shorter than a month: one bill
    want = _by_quarter(paid)
    got = {x["quarter"]: x["usd"] for x in plan["cash_by_quarter"]}
    assert set(got) == {"2026-Q4", "2027-Q1"}
    for label, (usd, _hw) in want.items():
        assert got[label] == pytest.approx(usd, abs=len(plan["cash_usd"])), label
    assert got["2027-Q1"] >= 2 * compute / 3 - 1
    assert all(x["hardware_usd"] == 0 for x in plan["cash_by_quarter"])
    assert sum(got.values()) == pytest.approx(plan["cash_usd"]["total"], abs=2)


def test_the_bundled_example_pays_in_its_quarters_and_adds_up(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["solve", str(ROOT / "constraints" / "datacenter.yaml"), "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    for p in [d["plan"]] + d["alternatives"]:
        quarters = p["cash_by_quarter"]
        assert quarters and all(x["quarter"][4:6] == "-Q" for x in quarters)
        assert sum(x["usd"] for x in quarters) == pytest.approx(p["cash_usd"]["total"], abs=len(quarters))
        labels = [x["quarter"] for x in quarters]
        assert labels == sorted(labels)
        if p["offer"] == "buy":
            assert sum(x["hardware_usd"] for x in quarters) == pytest.approx(
                sum(q["deposit_usd"] + q["balance_usd"] for q in p["quotes"]), abs=len(quarters) + 2)
            assert p["cost_usd"]["deposit_capital"] == pytest.approx(sum(
                q["deposit_usd"] * M["cost_of_capital_pct_per_year"] / 100
                * (_day(q["delivered"]) - _day(q["ordered"])).days / 365 for q in p["quotes"]), abs=len(p["quotes"]))
        else:
            assert "deposit_capital" not in p["cost_usd"]


def test_the_same_inputs_give_the_same_payments(tmp_path: Path) -> None:
    first, _ = _solve(tmp_path, BUY_PROBLEM, BUY_QUOTE % "")
    second, _ = _solve(tmp_path, BUY_PROBLEM, BUY_QUOTE % "")
    assert first == second


def test_the_checker_recomputes_deposits_and_the_quarters(tmp_path: Path) -> None:
    import dataclasses

    from solver.inputs.problem import load_problem
    from solver.solve.checker import violations
    from solver.solve.pipeline import SolveSettings, prepare, solve_problem

    (tmp_path / "q.yaml").write_text(BUY_QUOTE % "")
    (tmp_path / "p.yaml").write_text(BUY_PROBLEM)
    problem = load_problem(str(tmp_path / "p.yaml"), quotes=[str(tmp_path / "q.yaml")])
    ctx = prepare(problem)
    plan = solve_problem(problem, SolveSettings(alternatives=False), ctx).plan
    assert plan is not None and violations(problem, ctx.universe, plan) == []
    q = plan.quotes[0]
    short = dataclasses.replace(plan, quotes=(dataclasses.replace(q, deposit_usd=q.deposit_usd / 2),))
    assert any("deposit" in v for v in violations(problem, ctx.universe, short))
    lost = dataclasses.replace(plan, payments=plan.payments[1:])
    assert any("cash by quarter" in v for v in violations(problem, ctx.universe, lost))
    cheap = dataclasses.replace(plan, lines=dataclasses.replace(plan.lines, cost={**plan.lines.cost,
                                                                                  "deposit_capital": 0.0}))
    assert any("deposit_capital" in v for v in violations(problem, ctx.universe, cheap))


def test_a_program_reports_its_payments_beside_what_its_caps_limit() -> None:
    """A program's quarters carry what it commits (`spend_usd`, what `budget.per_quarter_usd` caps) and what it pays
    (`paid_usd`): rent billed at the start of each month of a rented run, here a run from 2027-01-04 to 2027-06-08
    on demand; the payments add up to the program's cash."""
    r = CliRunner().invoke(main, ["solve", str(ROOT / "tests" / "programs" / "small.yaml"), "--format", "json"])
    assert r.exit_code == 0, r.output
    prog = json.loads(r.stdout)["program"]
    assert "budget.per_quarter_usd" in prog["quarters_note"] and "paid_usd" in prog["quarters_note"]
    assert sum(q["paid_usd"] for q in prog["quarters"]) == pytest.approx(prog["cash_usd"], abs=len(prog["quarters"]))
    assert sum(q["spend_usd"] for q in prog["quarters"]) == pytest.approx(prog["cash_usd"], rel=0.01)
    pre = next(w for w in prog["workloads"] if w["id"] == "pre")
    if not pre["owned"]:
        start, finish = _day(pre["start"]), _day(pre["finish"])
        months = (finish - start).days / DAYS_PER_MONTH
        bills = _monthly(pre["cash_usd"], start, months, True, finish)
        paid_q1 = sum(x for d, x in bills if _quarter(d) == "2027-Q1")
        other = sum(w["cash_usd"] for w in prog["workloads"] if w["id"] != "pre")
        q1 = next(q for q in prog["quarters"] if q["quarter"] == "2027-Q1")
        assert q1["paid_usd"] == pytest.approx(paid_q1, abs=other + 2)
