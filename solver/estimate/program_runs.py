"""A program run's cost at a wall time other than its plan's: what `plan risk PROGRAM` prices each scenario's run at
(`answers/program_risk.py`) and what the bake-off decision prices a plan at another achieved MFU
(`answers/program_decision.py`) — one pricing path for both, the single run's cost formulas at given hours.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..inputs.problem import Problem
from .options import Option, Point, Universe, build_universe, node_cost_at, plan_fixed_cost_at
from .program import Candidate
from .scenarios import CostCurve, wall_kinks


def pair_of(c: Candidate) -> str:
    """The accelerator/offer pair a candidate was priced from (`options.build_universe`'s `only_pairs`)."""
    return f"{c.accelerator}/{c.option.partition('/')[2]}"


def point_of(problem: Problem, c: Candidate, universes: dict[tuple[str, str], Universe] | None = None
             ) -> tuple[Option, Point]:
    """The option and point a candidate was priced from (its workload's universe over its one pair; `universes`
    keeps the universes built, by (workload, pair), for a caller that asks for many candidates)."""
    key = (c.workload, pair_of(c))
    universe = universes.get(key) if universes is not None else None
    if universe is None:
        universe = build_universe(problem, only_pairs={key[1]})
        if universes is not None:
            universes[key] = universe
    for o in universe.options:
        if o.id == c.option:
            for pt in o.points:
                if pt.n == c.nodes and pt.time is not None:
                    return o, pt
    raise LookupError(f"{c.label} of {c.workload} is not a point of its problem")


def lines_at(problem: Problem, c: Candidate, o: Option, pt: Point, wall: np.ndarray, factor: np.ndarray | None
             ) -> Any:
    """A run's cost lines (without porting, which the program pays once) at `wall` hours, one figure per entry;
    `factor`: an estimated quote's price factor per entry (None: its price as quoted, without the premium)."""
    a = problem.assumptions.values
    porting = o.porting.weeks * a.money.engineer_usd_per_month * 12.0 / 52.0
    lo, hi = float(wall.min()), float(wall.max())
    total = CostCurve.of(lambda h: plan_fixed_cost_at(o, problem, c.nodes, h) - porting, lo, hi,
                         wall_kinks(a.money, 0.0, 0.0))(wall)
    if c.quote is None:
        site = problem.spec.site
        assert site is not None
        return total + pt.power_kw * site.pue * site.electricity_usd_per_kwh * wall
    q = problem.catalog.quotes[c.quote]
    grid = sorted({lo, hi, *(k for k in wall_kinks(a.money, q.commit_months, 0.0, q.term_hours) if lo < k < hi)})
    pairs = [node_cost_at(o, q, problem, c.nodes, h, 0) for h in grid]
    c0 = CostCurve(np.array(grid), np.array([p[0] for p in pairs]))(wall)
    c1 = CostCurve(np.array(grid), np.array([p[1] for p in pairs]))(wall)
    price = q.price * (factor if factor is not None and q.kind == "estimate" else 1.0)
    return total + c.nodes * (c0 + price * c1)


__all__ = ["pair_of", "point_of", "lines_at"]
