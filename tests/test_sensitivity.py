"""Sensitivity: the chosen plan's break-even price is exact (chosen at it, not one step above), and sweeps move
the plan in the expected direction (more tokens never cost less)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import yaml

from solver.catalog import load_catalog
from solver.problem import load_problem
from solver.sensitivity import break_evens, sweeps
from solver.solve import SolveSettings, solve_problem

ROOT = Path(__file__).resolve().parent.parent


import pytest


@pytest.fixture(scope="module")
def chosen() -> dict:
    lp = load_problem(ROOT / "constraints" / "finetune-70b.yaml")
    return break_evens(lp, SolveSettings(), top=1)[0]


def test_chosen_break_even_is_exact(chosen: dict) -> None:
    lp = load_problem(ROOT / "constraints" / "finetune-70b.yaml")
    assert chosen["role"] == "chosen" and chosen["break_even"] is not None
    assert chosen["break_even"] >= chosen["current"]
    q = load_catalog([]).quotes[chosen["quote"]].model_dump(mode="json", exclude_none=True)
    for price, kept in ((chosen["break_even"], True), (round(chosen["break_even"] + 0.01, 2), False)):
        q["usd_per_gpu_hour"] = price
        with tempfile.TemporaryDirectory() as d:
            f = Path(d) / "q.yaml"
            f.write_text(yaml.safe_dump({"quotes": [q]}))
            r = solve_problem(lp, SolveSettings(extra_quotes=(str(f),), alternatives=False))
        uses = r.plan.option == chosen["plan"] and any(x.id == chosen["quote"] for x in r.plan.quotes)
        assert uses == kept, (price, r.plan.option, [x.id for x in r.plan.quotes])


def test_more_tokens_never_cost_less() -> None:
    lp = load_problem(ROOT / "constraints" / "finetune-70b.yaml")
    rows = sweeps(lp, SolveSettings(), ["tokens"])["tokens"]
    costs = [r["cost_usd"] for r in rows if r["cost_usd"] is not None]
    assert len(costs) == len(rows) and costs == sorted(costs)


def test_chart_is_optional(tmp_path: Path) -> None:
    """With matplotlib the sweeps are drawn; without it, a clear input error (exit 2), never an ImportError."""
    from solver.errors import InputError
    from solver.sensitivity import chart
    rows = {"tokens": [{"value": "50%", "cost_usd": 1e6, "option": "dgx-b200/cloud"},
                       {"value": "100%", "cost_usd": 2e6, "option": "dgx-b200/cloud"}]}
    out = tmp_path / "s.svg"
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        import pytest
        with pytest.raises(InputError, match="matplotlib"):
            chart(rows, str(out))
        return
    chart(rows, str(out))
    assert out.read_text().lstrip().startswith("<?xml")


def test_price_past_break_even_flips_and_the_diff_names_the_quote(chosen: dict, tmp_path: Path) -> None:
    """Past the break-even price the plan changes and `--compare-to` names the quote; at it, nothing changes."""
    import json

    from click.testing import CliRunner

    from cli import main
    problem = str(ROOT / "constraints" / "finetune-70b.yaml")
    base = tmp_path / "base.json"
    assert CliRunner().invoke(main, ["solve", problem, "--save", str(base)]).exit_code == 0
    q = load_catalog([]).quotes[chosen["quote"]].model_dump(mode="json", exclude_none=True)
    for price, flips in ((round(chosen["break_even"] + 0.01, 2), True), (chosen["break_even"], False)):
        q["usd_per_gpu_hour"] = price
        f = tmp_path / f"q{price}.yaml"
        f.write_text(yaml.safe_dump({"quotes": [q]}))
        r = CliRunner().invoke(main, ["solve", problem, "--quotes", str(f), "--compare-to", str(base),
                                      "--format", "json"])
        d = json.loads(r.stdout)["diff"]
        assert any(chosen["quote"] in c for c in d["causes"])
        moved = d["decision_changed"] and any(c["field"] == "quotes" for c in d["changes"])
        assert moved == flips, (price, d["changes"])
