"""Hard inputs: mutated problem files never crash `plan` (exit 0/1/2/3, no traceback), and extreme but legal
problems solve with the independent checker agreeing (no overflow, no rounding surprises)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli import main
from solver.inputs.problem import load_problem
from solver.solve.pipeline import SolveSettings, solve_problem

ROOT = Path(__file__).resolve().parent.parent
BASE = yaml.safe_load((ROOT / "constraints" / "lora-small.yaml").read_text())

VALUES = st.one_of(st.none(), st.booleans(), st.integers(-10 ** 30, 10 ** 30),
                   st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
                   st.sampled_from(["70B", "$5k", "2027-02-30", "1e400", "-1", "0", "cloud", "[1, 2]", "{a: 1}"]),
                   st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2))


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, prefix + (i,))
    return out


def _mutate(data: Any, path: tuple, op: str, value: Any, key: str) -> Any:
    import copy
    data = copy.deepcopy(data)
    parent = data
    for p in path[:-1]:
        parent = parent[p]
    last = path[-1]
    if op == "set":
        parent[last] = value
    elif op == "delete" and isinstance(parent, dict):
        del parent[last]
    elif op == "rename" and isinstance(parent, dict):
        parent[key or "x"] = parent.pop(last)
    elif op == "wrap":
        parent[last] = [parent[last]]
    return data


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_problem_files_never_crash(tmp_path_factory: Any, data: Any) -> None:
    paths = _paths(BASE)
    path = data.draw(st.sampled_from(paths))
    op = data.draw(st.sampled_from(["set", "delete", "rename", "wrap"]))
    mutated = _mutate(BASE, path, op, data.draw(VALUES), data.draw(st.text(max_size=8)))
    text = yaml.safe_dump(mutated, sort_keys=False, allow_unicode=True)
    if data.draw(st.booleans()):
        cut = data.draw(st.integers(0, len(text)))
        junk = data.draw(st.sampled_from(["", ":", "- ", "{", "\t", "&a [*a]", "!!python/none"]))
        text = text[:cut] + junk + text[cut:]
    f = tmp_path_factory.mktemp("fuzz") / "p.yaml"
    f.write_text(text, encoding="utf-8")
    res = CliRunner().invoke(main, ["solve", str(f), "--time-limit", "5"])
    assert res.exit_code in (0, 1, 2, 3), (res.exit_code, res.output, res.exception)
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)


def _problem(tmp: Path, body: dict[str, Any], quotes: list[dict[str, Any]] | None = None):
    if quotes:
        (tmp / "q.yaml").write_text(yaml.safe_dump({"quotes": quotes}))
        body = {**body, "catalogs": ["q.yaml"]}
    f = tmp / "p.yaml"
    f.write_text(yaml.safe_dump(body, sort_keys=False))
    return load_problem(f)


def test_one_gpu_for_a_100m_model_with_a_1k_budget(tmp_path: Path) -> None:
    lp = _problem(tmp_path, {"name": "tiny", "as_of": "2026-12-01",
                             "workload": {"method": "pretrain", "params": "100M", "tokens": "2B", "seq_len": 1024},
                             "schedule": {"deadline": "2027-03-01"}, "budget": {"max_usd": "1k"},
                             "policy": {"modes": ["cloud"]}})
    r = solve_problem(lp, SolveSettings(alternatives=False))
    assert r.status == "optimal" and r.plan is not None  # the checker ran inside solve_problem
    assert r.unit == 1 and r.plan.total_cash <= 1000
    assert r.plan.gpus <= 8


def test_a_2t_model_on_about_100k_gpus_with_a_10b_budget(tmp_path: Path) -> None:
    """Integers stay far from overflow at the top end: 16,384 nodes of 8 GPUs, ten-figure budgets."""
    quotes = [{"id": "mega-b200", "system": "dgx-b200", "mode": "buy", "vendor": "test", "price_usd": "400k",
               "max_nodes": 16384, "lead_time_days": 90, "quoted_on": "2026-11-01", "valid_until": "2027-06-30",
               "kind": "negotiated", "source": "test"}]
    lp = _problem(tmp_path, {
        "name": "2t", "as_of": "2026-12-01",
        "workload": {"method": "pretrain", "params": "2T", "tokens": "40T", "seq_len": 8192, "recompute": "auto"},
        "schedule": {"earliest_start": "2027-03-01", "deadline": "2027-12-01"},
        "site": {"it_power_kw": 1_000_000, "cooling": ["air", "liquid"], "racks": 100_000, "rack_power_kw": 60,
                 "electricity_usd_per_kwh": 0.06, "pue": 1.2},
        "budget": {"max_usd": "10B"},
        "policy": {"modes": ["buy"], "accelerators": {"include": ["b200"]}},
        "risk": {"node_grid": {"max_nodes": 16384, "step_until_max": 256}}}, quotes)
    r = solve_problem(lp, SolveSettings(alternatives=False))
    assert r.status == "optimal", r.status
    assert r.plan is not None and 50_000 <= r.plan.gpus <= 131_072, r.plan.gpus
    assert r.plan.total_cash <= 10e9
    # The model's integer cost (in $1k) bounds the exact dollars from above, within one unit per cost term.
    assert r.plan.model_cost_units * r.unit >= r.plan.total_cost
    assert r.plan.model_cost_units * r.unit - r.plan.total_cost < 1000 * (r.plan.nodes + 20)


def test_budget_at_exact_resolution_boundary(tmp_path: Path) -> None:
    """The model rounds each cost term up to the money unit. For a plan of one quote the cash is one term: a budget
    of the exact cash rounded up to the unit keeps the plan; a dollar below the exact cash excludes it."""
    base = yaml.safe_load((ROOT / "constraints" / "lora-small.yaml").read_text())
    f = tmp_path / "p.yaml"
    f.write_text(yaml.safe_dump(base))
    r = solve_problem(load_problem(f), SolveSettings(alternatives=False))
    assert len(r.plan.quotes) == 1, "one quote: the cash is a single model term"
    at = math.ceil(r.plan.total_cash / r.unit) * r.unit
    kept = solve_problem(load_problem(f, [f"budget.max_usd={at}"]), SolveSettings(alternatives=False))
    assert kept.plan is not None and kept.plan.decision() == r.plan.decision()
    below = math.floor(r.plan.total_cash) - 1
    tight = solve_problem(load_problem(f, [f"budget.max_usd={max(1, below)}"]), SolveSettings(alternatives=False))
    assert tight.plan is None or (tight.plan.total_cash <= below and tight.plan.decision() != r.plan.decision())
