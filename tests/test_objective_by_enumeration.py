"""The objective, checked by enumeration and an independent scenario walk.

On small random problems the chosen plan's risk-adjusted completion cost — the expected cost over the scenarios, the
price of every day past the deadline, the CVaR weight — is the least over every candidate plan: every workable point
of every option, every split of its nodes over its quotes, at the earliest start the plan's rules and quotes allow.
Each candidate's cost is recomputed by the independent checker (`solve/checker.py`: its own ledger of cost lines, its
own run scenarios from the uncertainty model's draws, its own start law by `math.erfc`), not by the model's
templates, interpolation masses or lateness curves. The model minimises costs rounded up to its money unit per term,
so the chosen plan may exceed the exact minimum by that rounding and no more.

A hand-built case shows the price of lateness deciding: two rented offers, the cheaper one slow to arrive; with late
days free the cheaper wins, at $200k a day the quicker one — and each choice is the cheaper of the two by the
checker's own figures.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.estimate.chance import chance_model
from solver.estimate.outlook import Outlook
from solver.model.decode import Decision
from solver.solve import brute
from solver.solve.checker import _time as checker_time
from solver.solve.checker import expected_lines, violations
from solver.solve.pipeline import SolveSettings, prepare, solve_problem
from solver.solve.plan import Plan, make_plan

from test_optimality import EXAMPLES, _load, extra_quotes, problems

SCENARIOS = 400
"""Scenarios of the random problems: the checker walks each candidate's, so fewer keep the test quick."""


def _exact(problem: Any, universe: Any, plan: Plan) -> float:
    """The plan's risk-adjusted completion cost by the checker's own ledger, time estimate and scenario walk."""
    system = problem.catalog.systems[plan.system]
    accel = problem.catalog.accelerators[system.accelerator]
    t = checker_time(problem, universe, plan, accel, system)
    return sum(expected_lines(problem, plan, t, accel, system)[0].values())


def _candidates(problem: Any, ctx: Any) -> list[Plan]:
    """Every feasible plan (brute force's enumeration: points, splits, earliest start), as plans."""
    u, unit = ctx.universe, ctx.unit
    outlook = Outlook.of(problem)
    chance = chance_model(problem) if problem.spec.policy.deadline_confidence is not None else None
    out = []
    for o in u.options:
        for pt in o.points:
            if brute.best_at(pt, problem, u, unit, chance=chance, outlook=outlook) is None:
                continue     # no feasible split here (every check of the point itself is in best_at)
            for alloc in brute._splits(pt.n, o.quotes, 200_000):
                c = brute._score(pt, alloc, problem, u, unit, None, outlook, chance)
                if c is None:
                    continue
                d = Decision(o.id, pt.n, c.alloc, c.start, c.cost_units, planned_day=c.start)
                out.append(make_plan(problem, u, d, unit, outlook))
    return out


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), extra_quotes(), st.sampled_from([0, 20_000, 200_000]), st.sampled_from([0.0, 0.0, 0.5]))
def test_the_chosen_plan_is_the_cheapest_candidate_by_an_independent_walk(
        problem: dict[str, Any], quotes: list[dict[str, Any]], late: int, weight: float) -> None:
    problem = {**problem, "objective": {"late_usd_per_day": late, "cvar_weight": weight},
               "risk": {**problem.get("risk", {}), "uncertainty": {"scenarios": SCENARIOS}}}
    with tempfile.TemporaryDirectory() as d:
        p = _load(problem, quotes, Path(d))
        ctx = prepare(p, SolveSettings(alternatives=False))
        result = solve_problem(p, ctx.settings, ctx)
        candidates = _candidates(p, ctx)
        if not candidates:
            assert result.plan is None
            return
        assert result.plan is not None and result.status == "optimal"
        exact = {(c.option, c.nodes, tuple(sorted(c.allocation.items()))): _exact(p, ctx.universe, c) for c in candidates}
        chosen = (result.plan.option, result.plan.nodes, tuple(sorted(result.plan.allocation.items())))
        assert chosen in exact, "the chosen plan is one of the candidates"
        assert _exact(p, ctx.universe, result.plan) == pytest.approx(exact[chosen], rel=1e-9, abs=1e-6)
        # Rounding: each of the model's money terms is rounded up to the unit (a split per node, rules per term).
        slack = ctx.unit * (result.plan.nodes + 4 + 2 * len(p.spec.rules))
        assert exact[chosen] <= min(exact.values()) + slack, (result.plan.option, min(exact, key=exact.get))
        assert not [v for v in violations(p, ctx.universe, result.plan) if "deadline_confidence" not in v]


LATE_CASE = """
name: lateness-decides
as_of: 2026-12-01
workload: {{method: pretrain, params: 7B, tokens: 300B, seq_len: 2048, layers: 32, hidden: 4096}}
schedule: {{deadline: 2027-02-15}}
policy: {{modes: [cloud], accelerators: {{include: [b200]}}}}
objective: {{late_usd_per_day: {late}}}
rules: [{{name: two, when: {{nodes: {{eq: 2}}}}, then: require}}]
"""
LATE_QUOTES = """
quotes:
- {id: slow-cheap, system: dgx-b200, mode: cloud, vendor: Slow, usd_per_gpu_hour: 3.00, max_nodes: 2,
   lead_time_days: 20, lead_time_p90_days: 45, quoted_on: 2026-11-20, valid_until: 2027-06-30, kind: list,
   source: test, fabric: slow}
- {id: quick-dear, system: dgx-b200, mode: cloud, vendor: Quick, usd_per_gpu_hour: 3.40, max_nodes: 2,
   lead_time_days: 2, lead_time_p90_days: 4, quoted_on: 2026-11-20, valid_until: 2027-06-30, kind: list,
   source: test, fabric: quick}
"""


def _late_case(tmp: Path, late: int) -> Any:
    import dataclasses
    from types import MappingProxyType
    from solver.inputs.problem import load_problem
    (tmp / "q.yaml").write_text(LATE_QUOTES)
    (tmp / "p.yaml").write_text(LATE_CASE.format(late=late) + "catalogs: [q.yaml]\n")
    loaded = load_problem(tmp / "p.yaml")
    cat = loaded.files_catalog
    keep = {k: v for k, v in cat.quotes.items() if k in ("slow-cheap", "quick-dear")}
    return loaded.with_catalog(dataclasses.replace(cat, quotes=MappingProxyType(keep)))


def test_the_price_of_a_late_day_flips_the_choice(tmp_path: Path) -> None:
    """Late days free: the cheaper, slower offer; at $200k a day: the quicker one. Each time the chosen plan is the
    cheaper of the two by the checker's own figures, and the loser's lateness is what makes the difference."""
    picked = {}
    for late in (0, 200_000):
        p = _late_case(tmp_path, late)
        ctx = prepare(p, SolveSettings(alternatives=False))
        result = solve_problem(p, ctx.settings, ctx)
        assert result.plan is not None
        plans = _candidates(p, ctx)
        by_quote = {next(iter(c.allocation)): _exact(p, ctx.universe, c) for c in plans if len(c.allocation) == 1}
        assert set(by_quote) == {"slow-cheap", "quick-dear"}
        chosen = next(iter(result.plan.allocation))
        assert by_quote[chosen] == min(by_quote.values())
        picked[late] = chosen
    assert picked == {0: "slow-cheap", 200_000: "quick-dear"}
