"""`policy.deadline_confidence` in a program: CP-SAT with its up-front bounds and lazy cuts against an independent
enumeration, on small random programs with scenario tables made by hand; and on the catalog, the boundary of a
chance-constrained deadline, the independent checker, and `plan risk` agreeing with the plan.

The enumeration (`tests/test_program_model.py`'s, every candidate, start day and lot order) checks each plan's
chance with its own walk over the scenarios, written here from the timing rule's statement (module docstring of
`estimate/program_chance.py`), not from its code: runs in the order they start; a run starts on the latest of its
planned day, its own readiness, each lot of its system usable by its planned day (no earlier than its planned
delivery, else order + that scenario's lead, then installation), the finish of the workloads it follows and of
the runs that ended by its start on the same quote or system; it lasts its scenario's days.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from dataclasses import dataclass, replace
from datetime import date

import numpy as np
import pytest

from solver.answers.program import solve_program
from solver.answers.program_risk import program_risk
from solver.estimate.program import Candidate, ProgramData, program_data
from solver.estimate.program_chance import ProgramChance, identity
from solver.inputs.program import load_program
from solver.render.program import program_dict, render_program
from solver.solve.engine import INFEASIBLE, OPTIMAL, Limits
from solver.solve.program import optimise
from solver.solve.program_check import program_violations

from test_program_model import T, _feasible, _lot_options, _money, random_program

N = 20
"""Scenarios in a hand-made table."""
CONFIDENCE = 0.8
"""16 of the 20 scenarios must meet each deadline."""


@dataclass
class TableScenarios:
    """Scenario days drawn by the test: per candidate its days (its planned days or up to two more) and its own
    readiness (day 0 up to three days past its planned ready day); per bought quote its lead (one day early up to
    two late)."""

    n: int
    table: dict[tuple[str, tuple[str, int, str | None, int, int]], tuple[np.ndarray, np.ndarray]]
    leads: dict[str, np.ndarray]

    def days(self, c: Candidate) -> np.ndarray:
        return self.table[c.workload, identity(c)][0]

    def ready(self, c: Candidate) -> np.ndarray:
        return self.table[c.workload, identity(c)][1]

    def lead(self, quote: str) -> np.ndarray:
        return self.leads[quote]


def with_chance(d: ProgramData, seed: int) -> tuple[ProgramData, TableScenarios]:
    rng = np.random.default_rng(seed)
    table = {}
    for w in d.workloads:
        for c in w.candidates:
            days = c.days + rng.choice([0, 0, 0, 1, 2], size=N)
            ready = rng.integers(0, c.ready_day + 4, size=N)
            table[w.id, identity(c)] = (days, ready)
    leads = {lq.quote: np.maximum(0, lq.lead_days + rng.choice([-1, 0, 0, 1, 2], size=N)) for lq in d.lots}
    sc = TableScenarios(N, table, leads)
    return replace(d, chance=ProgramChance(CONFIDENCE, sc)), sc


def chance_holds(d: ProgramData, sc: TableScenarios, picks: tuple[Candidate, ...], starts: tuple[int, ...],
                 orders: tuple[int, ...]) -> bool:
    """Every workload with a deadline meets it in at least ⌈c·N⌉ scenarios (module docstring's walk)."""
    need = math.ceil(CONFIDENCE * N - 1e-9)
    lq = d.lots[0] if d.lots else None
    ends = [s + c.days for s, c in zip(starts, picks, strict=True)]
    order = sorted(range(len(picks)), key=lambda i: (starts[i], ends[i], d.workloads[i].id))
    met = [0] * len(picks)
    for s in range(N):
        finish: dict[int, int] = {}
        for i in order:
            w, c, f = d.workloads[i], picks[i], starts[i]
            t = max(f, int(sc.ready(c)[s]))
            if c.owned and lq is not None:
                for o in orders:
                    if o + lq.lead_days + lq.install_days <= f:
                        t = max(t, max(o + lq.lead_days, o + int(sc.lead(lq.quote)[s])) + lq.install_days)
            for j in finish:
                same = picks[j].quote == c.quote and (c.quote is not None or picks[j].system == c.system)
                if d.workloads[j].id in w.after or (same and ends[j] <= f):
                    t = max(t, finish[j])
            finish[i] = t + int(sc.days(c)[s])
        for i, w in enumerate(d.workloads):
            if w.deadline_day is None or finish[i] <= w.deadline_day:
                met[i] += 1
    return all(m >= need for m in met)


def least_with_chance(d: ProgramData, sc: TableScenarios) -> float | None:
    """The least program cost by enumeration with the chance constraint (None: no plan)."""
    best: float | None = None
    for picks in itertools.product(*([c for c in w.candidates if not c.barred_by] for w in d.workloads)):
        for starts in itertools.product(*(range(0, T + 1 - c.days) for c in picks)):
            for orders in (_lot_options(d.lots[0]) if d.lots else [()]):
                cost, cash, spend = _money(d, picks, starts, orders)
                if cost == math.inf or (best is not None and cost >= best):
                    continue
                if spend > d.quarters[0].limit or (d.budget_usd is not None and cash > d.budget_usd):
                    continue
                if _feasible(d, picks, starts, orders) and chance_holds(d, sc, picks, starts, orders):
                    best = cost
    return best


@functools.cache
def _outcome(seed: int) -> tuple[float | None, float | None, str, float | None]:
    """(the enumeration's optimum with the chance, CP-SAT's, CP-SAT's status, the optimum without the chance);
    kept, as the test that the property is not vacuous reads the same programs."""
    base = random_program(seed, every_deadline=True)
    d, sc = with_chance(base, seed)
    expected = least_with_chance(d, sc)
    out, _engine = optimise(d, Limits(time_limit=30))
    if out.plan is not None:
        plan = out.plan
        picks = tuple(r.candidate for r in plan.runs)
        starts = tuple(r.start_day for r in plan.runs)
        orders = tuple(sorted(p.order_day for p in plan.purchases))
        assert chance_holds(d, sc, picks, starts, orders), "CP-SAT's plan misses a deadline at the confidence"
    plain, _e = optimise(base, Limits(time_limit=30))
    return (expected, out.plan.cost_usd if out.plan else None, out.status,
            plain.plan.cost_usd if plain.plan else None)


SEEDS = range(300, 330)


@pytest.mark.parametrize("seed", SEEDS)
def test_chance_optimum_agrees_with_enumeration(seed: int) -> None:
    expected, got, status, _plain = _outcome(seed)
    if expected is None:
        assert status == INFEASIBLE
    else:
        assert status == OPTIMAL and got == pytest.approx(expected, abs=1e-6)


def test_the_confidence_binds_on_some_random_programs() -> None:
    """The property test is not vacuous: on some programs the confidence raises the optimum or leaves no plan,
    and on some it changes nothing."""
    outcomes = [_outcome(seed) for seed in SEEDS[:20]]
    assert any(e is not None and p is not None and e > p + 1e-6 for e, _g, _s, p in outcomes)
    assert any(e is None and p is not None for e, _g, _s, p in outcomes)
    assert any(e is not None and e == p for e, _g, _s, p in outcomes)


def test_random_tables_have_spread() -> None:
    """The tables are random per candidate (a dominance that ignored them could drop the only safe run)."""
    d, sc = with_chance(random_program(301, every_deadline=True), 301)
    c = d.workloads[0].candidates[0]
    assert len(set(sc.days(c).tolist())) > 1


TODAY = date(2026, 12, 1)
SMALL = "tests/programs/small.yaml"
BOUGHT = ["policy.modes=[buy]", "schedule.deadline=2028-01-31", "budget.max_usd=100M",
          "policy.deadline_confidence=0.9"]
"""The small program buying its H100 nodes: at 90% the pretraining can be due 2028-01-24 at the earliest (found
by the explanation's search, and checked here one day either side)."""


def test_the_boundary_of_a_chance_constrained_deadline() -> None:
    """Due 2028-01-24 the program exists, passes the checker, and `plan risk` gives every workload at least 90%
    (the same shares the plan reports); the output names them, the same bytes twice; due a day earlier, none."""
    late = load_program(SMALL, BOUGHT + ["workloads.pre.schedule.deadline=2028-01-24"], today=TODAY)
    rep = solve_program(late, Limits(time_limit=30))
    assert rep.outcome.status == OPTIMAL and rep.outcome.plan is not None
    assert program_violations(late, rep.outcome.plan) == []
    risk = program_risk(late, rep)
    assert risk is not None
    shares = dict(rep.chances)
    for w in risk.workloads:
        assert w.p_deadline is not None and w.p_deadline >= 0.9
        assert shares[w.id] == pytest.approx(w.p_deadline)
    body = program_dict(rep)["program"]["deadline_confidence"]
    assert body["confidence"] == 0.9 and body["scenarios"] == 10_000
    assert {m["workload"]: m["share"] for m in body["met"]} == {w: round(p, 4) for w, p in shares.items()}
    assert "Deadline confidence 90%" in render_program(rep)
    again = solve_program(load_program(SMALL, BOUGHT + ["workloads.pre.schedule.deadline=2028-01-24"], today=TODAY),
                          Limits(time_limit=30))
    assert json.dumps(program_dict(again), sort_keys=True) == json.dumps(program_dict(rep), sort_keys=True)
    early = load_program(SMALL, BOUGHT + ["workloads.pre.schedule.deadline=2028-01-23"], today=TODAY)
    out, _engine = optimise(program_data(early), Limits(time_limit=30))
    assert out.status == INFEASIBLE


def test_the_checker_refuses_a_plan_that_misses_at_the_confidence() -> None:
    """The plan chosen without a confidence meets the pretraining's deadline in fewer than 90% of the scenarios
    (`plan risk` says so); the checker, asked about the same plan under 0.9, names it."""
    sets = [s for s in BOUGHT if "confidence" not in s] + ["workloads.pre.schedule.deadline=2028-01-24"]
    plain = load_program(SMALL, sets, today=TODAY)
    rep = solve_program(plain, Limits(time_limit=30))
    assert rep.outcome.plan is not None and "deadline_confidence" not in program_dict(rep)["program"]
    risk = program_risk(plain, rep)
    assert risk is not None and min(w.p_deadline or 1.0 for w in risk.workloads) < 0.9
    strict = load_program(SMALL, sets + ["policy.deadline_confidence=0.9"], today=TODAY)
    bad = program_violations(strict, rep.outcome.plan)
    assert any("meets its deadline" in b and "deadline_confidence" in b for b in bad), bad


def test_out_of_rounds_is_unknown_never_a_plan_that_misses(monkeypatch: pytest.MonkeyPatch) -> None:
    """The boundary program needs two cuts; allowed one round of them, the answer is `unknown` with no plan, and
    the output says why (not the time limit)."""
    import solver.solve.program as solving

    monkeypatch.setattr(solving, "MAX_CHANCE_ROUNDS", 1)
    pp = load_program(SMALL, BOUGHT + ["workloads.pre.schedule.deadline=2028-01-24"], today=TODAY)
    out, _engine = optimise(program_data(pp), Limits(time_limit=30))
    assert out.status == "unknown" and out.plan is None
    rep = solve_program(pp, Limits(time_limit=30))
    assert rep.outcome.plan is None and "missed a deadline at policy.deadline_confidence" in render_program(rep)
