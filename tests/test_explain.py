"""Explanations: minimal conflicts, exact relaxations, alternatives, why-not — checked against fresh re-solves.

Every claim an explanation makes is re-verified independently of the explanation's own models: the conflict is
re-checked with a new oracle (infeasible with exactly those groups, feasible without any one of them), and each
relaxation by re-loading the problem with the suggested value (feasible) and one unit short of it (infeasible).
"""

from __future__ import annotations

import math
import tempfile
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

from cli import main
from solver.catalog import load_catalog
from solver.explain import PairOracle
from solver.model import money_unit
from solver.problem import load_problem
from solver.render import result_dict, to_json
from solver.solve import SolveSettings, prepare, solve_problem
from solver.whynot import why_not

ROOT = Path(__file__).resolve().parent.parent
INF = ROOT / "tests" / "infeasible"

# Conflicts known by construction (see each file's header comment); "superset" cases must contain the set.
EXPECTED: dict[str, tuple[set[str], bool]] = {
    "deadline_only.yaml": ({"schedule.deadline"}, True),
    "power_and_modes.yaml": ({"site.it_power_kw", "policy.modes"}, True),
    "rule_forbids_only_option.yaml": ({"rules.no-5090", "policy.accelerators"}, True),
    "ecc_with_consumer_cards.yaml": ({"policy.require_ecc", "policy.accelerators"}, True),
    "budget_and_deadline.yaml": ({"budget.max_usd", "schedule.deadline"}, False),
}


def _path(name: str) -> Path:
    return INF / name if (INF / name).exists() else ROOT / "constraints" / name


def _oracle(file: Path, sets: list[str] | None = None, quotes: tuple[str, ...] = ()) -> PairOracle:
    lp = load_problem(file, sets or [])
    _cat, aset, u = prepare(lp, SolveSettings(extra_quotes=quotes))
    return PairOracle(lp, aset, u, money_unit(lp, u))


def _feasible(file: Path, sets: list[str] | None = None, quotes: tuple[str, ...] = ()) -> bool:
    o = _oracle(file, sets, quotes)
    return o.feasible(o.all_groups())


@pytest.fixture(scope="module")
def explanations() -> dict[str, Any]:
    out = {}
    for name in list(EXPECTED) + ["infeasible-budget.yaml"]:
        r = solve_problem(load_problem(_path(name)))
        assert r.status == "infeasible", name
        out[name] = r
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_conflict_matches_construction(name: str, explanations: dict[str, Any]) -> None:
    conflict = set(explanations[name].explanation["conflict"])
    want, exact = EXPECTED[name]
    assert (conflict == want) if exact else want <= conflict, conflict


def test_budget_example_conflict_is_the_budget(explanations: dict[str, Any]) -> None:
    assert explanations["infeasible-budget.yaml"].explanation["conflict"] == ["budget.max_usd"]


@pytest.mark.parametrize("name", sorted(EXPECTED) + ["infeasible-budget.yaml"])
def test_conflict_is_infeasible_and_minimal(name: str, explanations: dict[str, Any]) -> None:
    conflict = explanations[name].explanation["conflict"]
    o = _oracle(_path(name))
    assert not o.feasible(conflict), "the conflict alone must be infeasible"
    for g in conflict:
        rest = [h for h in conflict if h != g]
        assert o.feasible(rest), f"dropping {g} must make the rest feasible"


def test_conflict_lines_point_at_the_yaml(explanations: dict[str, Any]) -> None:
    detail = explanations["power_and_modes.yaml"].explanation["conflict_detail"]
    text = (INF / "power_and_modes.yaml").read_text().splitlines()
    for d in detail:
        file, line = d["where"].rsplit(":", 1)
        key = d["group"].split(".")[-1]
        assert key in text[int(line) - 1], (d, text[int(line) - 1])


def _short(r: dict[str, Any], lp_unit: int) -> Any:
    """One unit short of a relaxation's suggested value (the side that must stay infeasible)."""
    to, unit = r["to"], r["unit"]
    if unit == "day":
        d = date.fromisoformat(to)
        return (d + timedelta(days=1) if r["group"] == "schedule.earliest_start" else d - timedelta(days=1)).isoformat()
    # Never below the original value (which is infeasible by definition), e.g. 0.5 kW -> 1 kW: short is 0.5.
    return max(r["from"], to - (lp_unit if unit == "usd" else 1))


def _set_value(r: dict[str, Any], value: Any, tmp: Path) -> tuple[list[str], tuple[str, ...]]:
    g = r["group"]
    if g.startswith("quotes."):
        qid = g[len("quotes."):-len(".max_nodes")]
        q = load_catalog([]).quotes[qid].model_dump(mode="json", exclude_none=True)
        q["max_nodes"] = int(value)
        f = tmp / f"{qid}-{value}.yaml"
        f.write_text(yaml.safe_dump({"quotes": [q]}))
        return [], (str(f),)
    return [f"{g}={value}"], ()


@pytest.mark.parametrize("name", sorted(EXPECTED) + ["infeasible-budget.yaml"])
def test_relaxations_are_exact(name: str, explanations: dict[str, Any], tmp_path: Path) -> None:
    r = explanations[name]
    for rel in r.explanation["relaxations"]:
        sets, quotes = _set_value(rel, rel["to"], tmp_path)
        assert _feasible(_path(name), sets, quotes), f"{rel['group']} at {rel['to']} must be feasible"
        sets, quotes = _set_value(rel, _short(rel, r.unit), tmp_path)
        assert not _feasible(_path(name), sets, quotes), f"{rel['group']} one unit short must stay infeasible"


def test_every_single_group_drop_alternative_is_feasible(explanations: dict[str, Any]) -> None:
    for name, r in explanations.items():
        if not r.explanation["alternatives"]:
            continue
        o = _oracle(_path(name))
        groups = o.all_groups()
        for alt in r.explanation["alternatives"]:
            assert o.feasible([g for g in groups if g not in alt["drop"]]), (name, alt["drop"])


def test_explanations_are_deterministic() -> None:
    a = to_json(result_dict(solve_problem(load_problem(INF / "budget_and_deadline.yaml"))))
    b = to_json(result_dict(solve_problem(load_problem(INF / "budget_and_deadline.yaml"))))
    assert a == b


def test_cli_infeasible_exit_1_with_relaxation() -> None:
    res = CliRunner().invoke(main, ["solve", str(INF / "deadline_only.yaml")])
    assert res.exit_code == 1
    assert "schedule.deadline" in res.stdout and "->" in res.stdout


def test_explain_with_set_what_if() -> None:
    res = CliRunner().invoke(main, ["explain", str(INF / "deadline_only.yaml"), "--set", "schedule.deadline=2027-03-01"])
    assert res.exit_code == 0, res.stdout
    assert "CHOSEN" in res.stdout


# ------------------------------------------------------------------------------------------------- why-not


@pytest.fixture(scope="module")
def why_nots() -> dict[str, dict[str, Any]]:
    from solver.whynot import Context
    lp = load_problem(ROOT / "constraints" / "finetune-70b.yaml")
    ctx = Context(lp, SolveSettings())
    return {a: why_not(lp, a, context=ctx) for a in sorted(load_catalog([]).accelerators)}


def test_why_not_answers_for_every_accelerator(why_nots: dict[str, dict[str, Any]]) -> None:
    for acc, out in why_nots.items():
        assert out["status"] in ("excluded", "infeasible", "more_expensive", "chosen"), acc
        if out["status"] == "excluded":
            assert out["reasons"], acc
        elif out["status"] == "infeasible":
            assert out["explanation"]["conflict"], acc
        elif out["status"] == "more_expensive":
            assert out["delta_usd"] >= -1e-6, acc
            assert out["plan"].accelerator == acc
    assert why_nots["rubin"]["status"] == "excluded" and "no quote" in why_nots["rubin"]["reasons"][0]
    assert sum(o["status"] == "chosen" for o in why_nots.values()) == 1


def test_why_not_line_diff_adds_up(why_nots: dict[str, dict[str, Any]]) -> None:
    for acc, out in why_nots.items():
        if out["status"] != "more_expensive":
            continue
        total = sum(r["delta"] for r in out["lines"])
        assert math.isclose(total, out["delta_usd"], abs_tol=len(out["lines"]) + 1), acc


def test_break_even_price_flips_the_ranking() -> None:
    """At the break-even price the target's best plan scores at least as well as today's plan; a step above it,
    it does not (re-solved with the quote's price replaced through a user quote file)."""
    lp = load_problem(ROOT / "constraints" / "finetune-70b.yaml")
    out = why_not(lp, "h200")
    be = out["break_even"]
    assert be["price"] is not None and be["price"] < be["current"]
    q = load_catalog([]).quotes[be["quote"]].model_dump(mode="json", exclude_none=True)
    with tempfile.TemporaryDirectory() as d:
        for price, should_win in ((be["price"], True), (round(be["price"] + 0.01, 2), False)):
            q["usd_per_gpu_hour"] = price
            f = Path(d) / f"q{price}.yaml"
            f.write_text(yaml.safe_dump({"quotes": [q]}))
            r = solve_problem(lp, SolveSettings(extra_quotes=(str(f),), alternatives=False))
            assert (r.plan.accelerator == "h200") == should_win, (price, r.plan.option, r.plan.total_cost)


# ------------------------------------------------------------------------------------------- property test

from test_optimality import _load, extra_quotes, problems  # noqa: E402


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(problems(), extra_quotes())
def test_random_conflicts_are_infeasible_and_minimal(problem: dict[str, Any], quotes: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        lp = _load(problem, quotes, Path(d))
        _cat, aset, u = prepare(lp, SolveSettings())
        unit = money_unit(lp, u)
        o = PairOracle(lp, aset, u, unit)
        groups = o.all_groups()
        if o.feasible(groups):
            return
        from solver.relax import explain
        conflict = explain(lp, aset, u, unit)["conflict"]
        fresh = PairOracle(lp, aset, u, unit)
        assert not fresh.feasible(conflict)
        for g in conflict:
            assert fresh.feasible([h for h in conflict if h != g]), (conflict, g)


def test_combined_relaxation_restores_feasibility(tmp_path: Path) -> None:
    """feasRelax: applying every change of the cheapest combined relaxation at once gives a feasible problem."""
    from solver.relax import combined_relaxation
    file = INF / "budget_and_deadline.yaml"
    lp = load_problem(file)
    _cat, aset, u = prepare(lp, SolveSettings())
    comb = combined_relaxation(lp, aset, u, money_unit(lp, u), pairs=["h100-sxm/cloud"])
    assert comb is not None and comb["changes"]
    sets: list[str] = []
    quotes: list[str] = []
    for c in comb["changes"]:
        s, q = _set_value(c, c["to"], tmp_path)
        sets += s
        quotes += list(q)
    assert _feasible(file, sets, tuple(quotes))
