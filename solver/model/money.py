"""Money in the CP-SAT model: integer, in a coarse unit, always rounded against the plan.

Why integer and coarse: CP-SAT is an integer solver, and ortools 9.15 has an open wrong-optimum bug whose one
reading blames an int accumulator overflowing when an enforced constraint's coefficients sum past 2^31 — exactly
a budget over one-hot option literals in dollars (google/or-tools#5293). So money is counted in $1,000 — or in
$1 when the problem's realistic plans cost under $1M, where $1k would erase the answer. Every cost term is
rounded **up** to the unit, so the model never accepts a plan whose exact cost exceeds a budget; reports show
exact dollars recomputed by the independent checker.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..errors import InputError
from ..estimate.options import Universe

if TYPE_CHECKING:
    from ..inputs.problem import Problem

COARSE_UNIT = 1000
"""Dollars per money unit for problems of $1M and more."""
FINE_UNIT = 1
"""Dollars per money unit below $1M."""
COARSE_FROM_USD = 1e6
"""Scale from which the coarse unit is used: a $1k error on $1M is 0.1%."""
MAX_UNITS = 10 ** 15
"""Largest amount, in units, a single term may have: sums of such terms stay far inside CP-SAT's int64."""


def money_unit(universe: Universe) -> int:
    """$1k when the problem's scale is $1M or more, $1 below.

    The scale is what realistic plans cost: the cheapest option at its smallest node count that fits in memory and
    can meet the deadline (per option, the smallest such cluster is the one closest to its cheapest plan, and
    pricing one point per option instead of every point keeps this off the critical path). Not the budget — a $500k
    budget on a $10M problem is still a $1k-resolution problem — and not the cheapest point overall, which for a big
    model is some absurd one-card, ten-year run. The unit sets only the model's resolution, never which plans exist.
    """
    dl = universe.deadline_day
    realistic, workable = [], []
    for o in universe.options:
        points = [pt for pt in o.points if pt.workable]
        if points:
            workable.append(points[0])
        fit = next((pt for pt in points if pt.fits and (dl is None or max(o.ready_day, universe.earliest_day)
                                                       + pt.days <= dl)), None)
        if fit is not None:
            realistic.append(fit)
    costs = [pt.fixed.total_cost + pt.n * pt.per_node.extreme(False, min) for pt in (realistic or workable)]
    return COARSE_UNIT if min(costs, default=COARSE_FROM_USD) >= COARSE_FROM_USD else FINE_UNIT


def units(dollars: float, unit: int) -> int:
    """Round up to the money unit (conservative: the model never under-counts a cost).

    Amounts beyond `MAX_UNITS` cannot be planned with exactly (sums of such terms would overflow int64): they are
    bad input — absurd prices or assumptions — not a model to build.
    """
    v = dollars / unit
    if not math.isfinite(v) or abs(v) > MAX_UNITS:
        raise InputError(f"a cost of ${dollars:.3g} is too large to plan with; check prices, rates and risk "
                         "overrides for absurd values")
    return int(math.ceil(v - 1e-9))


def floor_units(dollars: float, unit: int) -> int:
    """A limit in money units: the largest whole number of units not above `dollars` (a budget is never exceeded)."""
    return int(math.floor(dollars / unit + 1e-9))


def kept_share(problem: "Problem") -> float:
    """1 + the sum of every rule's negative `add_pct` / 100: the least share of its cost lines a plan can be left with
    when every discount applies to it at once (each rule adds its percentage of the lines once, whatever else
    applies; `model/rule_constraints.py`, `_add_pct`). Rules that name quotes or test the cost count too. At most 0 (two
    discounts of 50 %), no share is left to bound by: the point bounds and the screen's budget reasons on cost are
    then off."""
    return 1.0 + sum(min(0.0, r.then.add_pct or 0.0) for r in problem.spec.rules if not isinstance(r.then, str)) / 100
