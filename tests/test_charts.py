"""Charts say what they show (issue 42): amounts in the unit that fits them (a $21k problem in $k, not 0.021 $M),
a swept value with no plan is not drawn as a plan costing $0, and a chart is written (where matplotlib is
installed: the `chart` extra)."""

from __future__ import annotations

from pathlib import Path

import pytest

from solver.render.chart import money_scale, sweep_points


def test_the_money_unit_fits_the_largest_amount() -> None:
    assert money_scale([20_500.0, 18_000.0]) == (1e3, "$k")
    assert money_scale([14_410_768.0]) == (1e6, "$M")
    assert money_scale([2.1e9]) == (1e9, "$B")
    assert money_scale([70.0]) == (1.0, "$")
    assert money_scale([]) == (1.0, "$")


def test_a_value_without_a_plan_is_not_a_plan_at_zero() -> None:
    rows = [{"value": 0.5, "cost_usd": None, "option": None}, {"value": 1.0, "cost_usd": 20_500, "option": "a/b"},
            {"value": 1.5, "cost_usd": 19_000, "option": "a/b"}]
    xs, costs, none = sweep_points(rows)
    assert xs == [1.0, 1.5] and costs == [20_500.0, 19_000.0] and none == [0.5]


def test_a_sweep_chart_is_written(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from solver.render.chart import chart
    rows = [{"value": 0.5, "cost_usd": None, "option": None}, {"value": 1.0, "cost_usd": 20_500, "option": "a/b"},
            {"value": 1.5, "cost_usd": 19_000, "option": "a/b"}]
    out = tmp_path / "sweep.png"
    chart({"tokens": rows}, str(out))
    assert out.stat().st_size > 1000 and out.read_bytes()[:4] == b"\x89PNG"
