"""A pair's status under some groups (`PairOracle.pair_status`) when no closed form decides it.

With a discount rule (a negative add_pct) the bounds are off, so neither the point bounds nor the least budgeted
quantity can show a budget out of reach; CP-SAT must. Under assumptions its LP leaves the budget out (a half-reified
limit), and the search ran into its time limit on a 1,186-variable model: the minimal conflict of this problem took
140 s and came out unproven and not minimal (the policy's fabric limit with the budget; it is the budget alone, found
in 3.7 s now). Decided on a copy with the literals fixed, each check takes milliseconds.
"""

from __future__ import annotations

import time
from pathlib import Path

from solver.answers.conflicts import PairOracle
from solver.inputs.problem import load_problem
from solver.solve.engine import INFEASIBLE
from solver.solve.pipeline import SolveSettings, prepare

FINETUNE = Path(__file__).resolve().parent.parent / "constraints" / "finetune-70b.yaml"
SETS = ["budget.max_usd=500", "rules=[{name: discount, when: {mode: cloud}, then: {add_pct: -5}}]"]
SETTINGS = SolveSettings(processes=1, time_limit=2.0)
"""A short limit, so that a check the search cannot decide shows as `unknown` in seconds rather than minutes."""


def test_a_budget_out_of_reach_is_decided_without_the_bounds() -> None:
    ctx = prepare(load_problem(FINETUNE, SETS), SETTINGS)
    assert not ctx.bounds.sound
    oracle = PairOracle(ctx)
    pair = "mi300x/cloud-reserved"
    start = time.perf_counter()
    assert oracle.pair_status(pair, ["budget.max_usd"]) == INFEASIBLE
    assert oracle.undecided == 0
    assert time.perf_counter() - start < 60, "decided by a search, not by the time limit"
    # The reference: the least cost of the pair with no group enforced, far above $500.
    b = oracle.model(pair)
    m = b.model
    m.clear_assumptions()
    m.add_assumptions(oracle.forced[pair])
    m.minimize(b.cost)
    out = ctx.engine.solve(m, label="least-cost")
    m.clear_assumptions()
    m.clear_objective()
    assert out.has_solution and out.bound() * ctx.unit > 500
