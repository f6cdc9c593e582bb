"""The total cost over the horizon (`plan.tco`), computed here by hand from the catalog numbers.

Bought hardware: held `policy.horizon_years` from its first delivery, then sold; capital, support, the hall, energy
and staff for that time, the run's own lines, less the resale at that age and the rental its work after the run
displaces (`policy.utilisation_after_run`, valued at the cheapest on-demand or reserved rate of its accelerator,
falling `tco.rental_decline_pct_per_year` a year). Rented capacity: its run's cost. The rates are read here from
the YAML with PyYAML, the rental by scanning the quote files; the plan itself (its nodes, quotes, dates and run
lines, which tests/test_golden_costs.py checks by hand) comes from the JSON of `plan solve`. Nothing else calls the
code under test.
"""

from __future__ import annotations

import json
import math
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from cli import main
from test_golden_costs import A, SYSTEMS, _number

ROOT = Path(__file__).resolve().parent.parent
CAT = ROOT / "catalogs"
DATACENTER = str(ROOT / "constraints" / "datacenter.yaml")
HOURS_PER_YEAR = 8760.0
HOURS_PER_MONTH = HOURS_PER_YEAR / 12
RUN_OWN = ("deposit_capital", "porting", "storage", "data_transfer", "orchestration", "recovery", "lateness",
           "consumer_risk", "estimate_price", "tail", "rules")


# The catalog read with PyYAML alone, as the hand-computed cost lines of tests/test_golden_costs.py read it.
QUOTES = {q["id"]: q for path in sorted((CAT / "quotes").glob("*.yaml"))
          for q in (yaml.safe_load(path.read_text()) or {}).get("quotes", [])}
PROBLEM = yaml.safe_load(Path(DATACENTER).read_text())
AS_OF = PROBLEM["as_of"]


def _solve(*sets: str) -> dict[str, Any]:
    args = ["solve", DATACENTER, "--format", "json"]
    for s in sets:
        args += ["--set", s]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _hours(d: str) -> float:
    return (date.fromisoformat(d) - AS_OF).days * 24.0


def _resale(age: float) -> float:
    """The resale curve, linear between its ages and flat after the last."""
    curve = sorted((float(k), v) for k, v in A["money"]["resale_value_by_age_years"].items())
    if age >= curve[-1][0]:
        return curve[-1][1]
    for (a0, v0), (a1, v1) in zip(curve, curve[1:], strict=False):
        if a0 <= age <= a1:
            return v0 + (v1 - v0) * (age - a0) / (a1 - a0)
    return curve[0][1]


def _cheapest_rental(accelerator: str) -> tuple[str, float]:
    """The cheapest $/GPU-hour on demand or reserved (not spot) of the accelerator, valid at as_of."""
    found = []
    for q in QUOTES.values():
        system = SYSTEMS.get(q["system"])
        if system is None or system["accelerator"] != accelerator or q["mode"] != "cloud":
            continue
        if q.get("contract") == "spot" or q.get("usd_per_gpu_hour") is None:
            continue
        if q["valid_until"] < AS_OF or q["quoted_on"] > AS_OF:
            continue
        found.append((float(_number(q["usd_per_gpu_hour"])), q["id"]))
    price, qid = min(found)
    return qid, price


def hand_tco(plan: dict[str, Any], years: float = 3.0, u: float = 0.0) -> dict[str, float]:
    """Every line of a bought plan's total cost over `years` at utilisation `u` after the run."""
    m, site = A["money"], PROBLEM["site"]
    node_kw = float(SYSTEMS[plan["system"]]["node_kw"]["value"])
    nodes, gpus = plan["nodes"], plan["gpus"]
    s = A["reliability"]["spare_nodes_pct"] / 100.0 if nodes > 1 else 0.0
    f = m["network_capex_fraction"] if nodes > 1 else 0.0
    first = min(_hours(q["delivered"]) for q in plan["quotes"])
    wall = plan["gpu_hours"] / gpus
    run_end = _hours(plan["start"]) + wall
    end = max(first + years * HOURS_PER_YEAR, run_end)
    lines = dict.fromkeys(("servers", "network", "capital", "support", "facility", "resale"), 0.0)
    for q in plan["quotes"]:
        price = float(_number(QUOTES[q["id"]]["price_usd"]))
        held = end - _hours(q["delivered"])
        servers = price * q["nodes"] * (1 + s)
        lines["servers"] += servers
        lines["network"] += f * servers
        lines["capital"] += servers * (1 + f) * m["cost_of_capital_pct_per_year"] / 100 * held / HOURS_PER_YEAR
        lines["support"] += servers * (1 + f) * m["support_pct_per_year"] / 100 * held / HOURS_PER_YEAR
        lines["facility"] += q["nodes"] * (1 + s) * node_kw * m["facility_usd_per_kw_month"] * held / HOURS_PER_MONTH
        lines["resale"] -= servers * (1 + f) * _resale(held / HOURS_PER_YEAR)
    lines["energy"] = nodes * node_kw * site["pue"] * site["electricity_usd_per_kwh"] * (wall + u * (end - run_end))
    fte = m["ops_fte"]["buy"]
    engineers = (fte["base"] if nodes > 1 else 0.0) + fte["per_1000_gpus"] * gpus / 1000
    lines["staff"] = engineers * m["engineer_usd_per_month"] * (end - first) / HOURS_PER_MONTH
    lines.update({k: plan["cost_usd"][k] for k in RUN_OWN if k in plan["cost_usd"]})
    _qid, r0 = _cheapest_rental(plan["accelerator"])
    d = A["tco"]["rental_decline_pct_per_year"] / 100
    a, b = run_end / HOURS_PER_YEAR, end / HOURS_PER_YEAR
    lines["work_after_run"] = -u * gpus * HOURS_PER_YEAR * r0 * ((1 - d) ** b - (1 - d) ** a) / math.log(1 - d)
    return lines


def _assert_lines(tco: dict[str, Any], hand: dict[str, float]) -> None:
    hand = {k: v for k, v in hand.items() if v != 0}   # a line that is exactly 0 is absent, as in cost_usd
    assert set(tco["lines"]) == set(hand)
    for name, usd in hand.items():
        assert tco["lines"][name] == pytest.approx(usd, abs=2.0), name   # JSON rounds each line to the dollar
    assert tco["total_usd"] == pytest.approx(sum(hand.values()), abs=2.0)


@pytest.fixture(scope="module")
def owned() -> dict[str, Any]:
    """The example with the cluster kept (`after_run: reuse`): buying B200 is the plan."""
    return _solve("policy.after_run=reuse")


def test_an_owned_plans_three_year_cost_by_hand(owned: dict[str, Any]) -> None:
    plan = owned["plan"]
    assert plan["mode"] == "buy" and plan["accelerator"] == "b200"
    tco = plan["tco"]
    assert tco["horizon_years"] == 3 and tco["held_years"] == 3 and tco["utilisation_after_run"] == 0
    qid, price = _cheapest_rental("b200")
    assert tco["displaced_rental"] == {"quote": qid, "usd_per_gpu_hour": price,
                                       "decline_pct_per_year": A["tco"]["rental_decline_pct_per_year"]}
    hand = hand_tco(plan)
    _assert_lines(tco, hand)
    assert hand["work_after_run"] == 0 and hand["resale"] == pytest.approx(
        -(hand["servers"] + hand["network"]) * A["money"]["resale_value_by_age_years"][3])


def test_utilisation_after_run_credits_the_displaced_rental(owned: dict[str, Any]) -> None:
    """u = 0.5 values half the hours after the run at the falling rental (and powers them): the total moves by
    exactly that, the plan itself does not."""
    busy = _solve("policy.after_run=reuse", "policy.utilisation_after_run=0.5")
    idle_plan, busy_plan = owned["plan"], busy["plan"]
    assert (busy_plan["option"], busy_plan["quotes"]) == (idle_plan["option"], idle_plan["quotes"])
    hand = hand_tco(busy_plan, u=0.5)
    _assert_lines(busy_plan["tco"], hand)
    idle = hand_tco(idle_plan)
    assert hand["work_after_run"] < -1e6
    change = hand["work_after_run"] + (hand["energy"] - idle["energy"])
    assert busy_plan["tco"]["total_usd"] - idle_plan["tco"]["total_usd"] == pytest.approx(change, abs=4.0)


def test_a_longer_horizon_sells_older_hardware() -> None:
    data = _solve("policy.after_run=reuse", "policy.horizon_years=5")
    plan = data["plan"]
    assert plan["mode"] == "buy" and plan["tco"]["horizon_years"] == 5 and plan["tco"]["held_years"] == 5
    _assert_lines(plan["tco"], hand_tco(plan, years=5.0))


def test_rented_plans_cost_their_run_and_every_alternative_has_a_tco() -> None:
    data = _solve()
    plans = [data["plan"]] + data["alternatives"]
    assert all("tco" in p for p in plans)
    rented = [p for p in plans if p["mode"] != "buy"]
    assert rented and data["plan"]["mode"] == "cloud"
    for p in rented:
        assert p["tco"]["total_usd"] == p["cost_usd"]["total"]
        assert p["tco"]["lines"] == {k: v for k, v in p["cost_usd"].items() if k != "total"}
        assert "displaced_rental" not in p["tco"]
    bought = [p for p in plans if p["mode"] == "buy"]
    assert bought, "the example's alternatives include buying B200"
    for p in bought:
        _assert_lines(p["tco"], hand_tco(p))


def test_the_verbose_report_has_the_three_year_table(owned: dict[str, Any]) -> None:
    r = CliRunner().invoke(main, ["solve", DATACENTER, "--verbose", "--set", "policy.after_run=reuse"],
                           env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    text = r.stdout
    assert "Three-year cost (policy.horizon_years)" in text
    section = text.split("Three-year cost (policy.horizon_years)")[1].splitlines()
    row = next(line for line in section if line.startswith("CHOSEN"))
    total = owned["plan"]["tco"]["total_usd"]
    assert " buy " in row and row.rstrip().endswith(f"${total / 1e6:.2f}M"), row
    brief = CliRunner().invoke(main, ["solve", DATACENTER, "--set", "policy.after_run=reuse"],
                               env={"COLUMNS": "200"})
    assert "Three-year" not in brief.stdout, "the default view stays as it was"


@pytest.mark.parametrize("value", ["0", "11", "0.5"])
def test_horizon_out_of_range_is_one_line_exit_2(value: str) -> None:
    r = CliRunner().invoke(main, ["solve", DATACENTER, "--set", f"policy.horizon_years={value}"])
    assert r.exit_code == 2
    assert r.stdout == ""
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"error: --set policy.horizon_years={value}: expected a number")


def test_utilisation_out_of_range_is_exit_2() -> None:
    r = CliRunner().invoke(main, ["solve", DATACENTER, "--set", "policy.utilisation_after_run=1.5"])
    assert r.exit_code == 2 and "policy.utilisation_after_run" in r.stderr


def test_the_tco_is_the_same_bytes_twice(owned: dict[str, Any]) -> None:
    again = _solve("policy.after_run=reuse")
    assert json.dumps(again["plan"]["tco"], sort_keys=True) == json.dumps(owned["plan"]["tco"], sort_keys=True)
