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


def test_chosen_break_even_is_exact() -> None:
    lp = load_problem(ROOT / "constraints" / "finetune-70b.yaml")
    chosen = break_evens(lp, SolveSettings(), top=1)[0]
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
