"""The program model against an independent enumeration on small random programs.

Each program is built as plain data (`ProgramData`) with money in whole thousands and tables that are linear per
piece with integer slopes, so the model's $1k units and chords are exact and the optimum must agree to the dollar.
The enumeration tries every candidate, every start day, every number of lots and every order day, and checks each
rule day by day in its own code: precedences, deadlines, owned nodes in use against lots usable that day, a rented
quote's capacity, installed power against the limit of the day, racks, each quarter's committed cash (lot capex by
order day, rent at ceil(cash / days) per day of overlap), the budget.
"""

from __future__ import annotations

import itertools
import math
import random
from datetime import date

import pytest

from solver.estimate.program import (Candidate, LotQuote, ProgramData, Window, WorkloadData, deliverable,
                                     owned_ready_day)
from solver.solve.engine import INFEASIBLE, OPTIMAL, Limits
from solver.solve.program import optimise

T = 9
"""Days in a random program: every start, end and order lies in [0, T]."""


def _cand(wid: str, i: int, rng: random.Random, owned: bool, quote: str, accel: str, caps: dict[str, int],
          barred: bool = False) -> Candidate:
    """A candidate; a rented one never asks its quote for more than the quote offers (the estimates filter).
    `barred`: a rule (`rules.r`) rules it out."""
    days = rng.randint(1, 4)
    nodes = rng.choice([1, 2]) if owned else rng.randint(1, min(2, caps[quote]))
    cost = 1000.0 * rng.randint(1, 30)
    cash = cost + 1000.0 * rng.randint(0, 3)
    return Candidate(wid, f"sys-{accel}/{'buy' if owned else 'cloud'}", accel, f"sys-{accel}",
                     "buy" if owned else "cloud", nodes, 8, days, rng.randint(0, 2),
                     None if owned else quote, cost, cash, f"stack-{STACK[accel]}", PORTING[STACK[accel]],
                     ("rules.r",) if barred else ())


STACK = {"x": "x", "y": "y", "z": "x"}
"""Accelerators x and z share a software stack: candidates on them compete unless `same_hardware_as` pins one."""
PORTING = {"x": 2000.0, "y": 1000.0}
"""Porting a stack costs the same whichever workload needs it first (it is charged once per program)."""


def _lot_quote(rng: random.Random, horizon: int, kink: int) -> LotQuote:
    """Held cost per node: a + b·h up to the kink, then a smaller slope (concave: the non-convex encoding), or a
    larger one (convex). A concave kink past every deadline makes the model add its rows for the days before the
    last deadline (`_add_within_deadlines`)."""
    a, b = rng.randint(2, 6), rng.randint(1, 3)
    c = rng.choice([0, 1, 5])
    cost = tuple(1000.0 * (a + b * min(h, kink) + c * max(0, h - kink)) for h in range(horizon + 1))
    cash = tuple(1000.0 * (a + 1 + h) for h in range(horizon + 1))
    return LotQuote("lots-q", "sys-x", 1, 2, rng.choice([1, 2]), rng.randint(1, 3), rng.randint(1, 3),
                    rng.randint(0, 1), 10.0, 1, 1000.0 * a, cost, cash)


def random_program(seed: int, every_deadline: bool = False) -> ProgramData:
    """`every_deadline`: each workload has a deadline and a lot's concave kink lies past the last one."""
    rng = random.Random(seed)
    ruled = random.Random(10_000 + seed)
    n = rng.choice([2, 3])
    caps = {"q1": rng.choice([1, 2, 3]), "q2": 4}
    workloads = []
    for i in range(n):
        wid = f"w{i}"
        cands = []
        for j in range(rng.choice([2, 3])):
            owned = rng.random() < 0.4
            accel = "x" if owned else rng.choice(["x", "y", "z"])
            cands.append(_cand(wid, j, rng, owned, rng.choice(["q1", "q2"]), accel, caps, ruled.random() < 0.2))
        after = (f"w{i - 1}",) if i > 0 and rng.random() < 0.6 else ()
        same = "w0" if i > 0 and not after and rng.random() < 0.3 else None
        deadline = rng.randint(5, T - 1) if every_deadline else rng.randint(6, T) if rng.random() < 0.6 else None
        workloads.append(WorkloadData(wid, rng.randint(0, 2), deadline, "schedule.deadline" if deadline else None,
                                      "schedule.earliest_start", after, same, tuple(cands), len(cands)))
    deadlines = [w.deadline_day for w in workloads]
    horizon = T if None in deadlines else max(d for d in deadlines if d is not None)
    kink = rng.randint(horizon, T - 1) if every_deadline else rng.randint(2, 8)
    lots = (_lot_quote(rng, 40, kink),) if any(c.owned for w in workloads for c in w.candidates) else ()
    power = (Window("site.it_power_kw", "early", 0, 4, rng.choice([0.0, 10.0, 20.0, 20.0])),
             Window("site.power_steps[0]", "late", 4, 10 ** 6, 20.0))
    quarters = (Window("budget.per_quarter_usd.Q", "Q", 2, 6, 1000.0 * rng.randint(5, 60)),)
    budget = 1000.0 * rng.randint(20, 120) if rng.random() < 0.5 else None
    return ProgramData(tuple(workloads), lots, tuple(sorted(caps.items())), power,
                       rng.choice([None, 1, 2]), quarters, budget, True, horizon, T, date(2027, 1, 1), 6,
                       (kink,), tuple(sorted(caps.items())))


def _lot_options(lq: LotQuote) -> list[tuple[int, ...]]:
    """Order days of the bought lots: none, one, or two (unordered: lots are identical)."""
    days = range(0, lq.last_order_day + 1)
    out: list[tuple[int, ...]] = [()]
    for k in range(1, lq.lots + 1):
        if k * lq.lot_nodes <= lq.max_nodes:
            out += list(itertools.combinations_with_replacement(days, k))
    return out


def _feasible(d: ProgramData, picks: tuple[Candidate, ...], starts: tuple[int, ...], orders: tuple[int, ...]
              ) -> bool:
    ends = [s + c.days for s, c in zip(starts, picks, strict=True)]
    ids = [w.id for w in d.workloads]
    for w, c, s, e in zip(d.workloads, picks, starts, ends, strict=True):
        if s < max(w.earliest_day, c.ready_day) or (w.deadline_day is not None and e > w.deadline_day):
            return False
        if any(s < ends[ids.index(a)] for a in w.after):
            return False
        if w.same_hardware_as and c.accelerator != picks[ids.index(w.same_hardware_as)].accelerator:
            return False
    lq = d.lots[0] if d.lots else None
    for day in range(0, max(ends) + 1):
        running = [c for c, s, e in zip(picks, starts, ends, strict=True) if s <= day < e]
        owned = sum(c.nodes for c in running if c.owned)
        usable = sum(lq.lot_nodes for o in orders if o + lq.lead_days + lq.install_days <= day) if lq else 0
        if owned > usable:
            return False
        for q, cap in d.rented_capacity:
            if sum(c.nodes for c in running if c.quote == q) > cap:
                return False
        kw = sum(lq.node_kw * lq.lot_nodes for o in orders if o + lq.lead_days <= day) if lq else 0.0
        limit = next(w.limit for w in d.power if w.first <= day < w.end)
        if kw > limit:
            return False
    if lq is not None and d.racks is not None and len(orders) * lq.racks_per_lot > d.racks:
        return False
    return True


def _money(d: ProgramData, picks: tuple[Candidate, ...], starts: tuple[int, ...], orders: tuple[int, ...]
           ) -> tuple[float, float, float]:
    """(cost, cash, spend in the quarter) of a plan."""
    end = max(s + c.days for s, c in zip(starts, picks, strict=True))
    lq = d.lots[0] if d.lots else None
    held = [end - (o + lq.lead_days) for o in orders] if lq else []
    if any(h < 0 for h in held):
        return math.inf, math.inf, math.inf
    stacks = {c.porting_key: c.porting_usd for c in picks}
    cost = sum(c.cost_usd for c in picks) + sum(stacks.values()) + \
        sum(lq.held_cost_usd[h] * lq.lot_nodes for h in held if lq)
    cash = sum(c.cash_usd for c in picks) + sum(stacks.values()) + \
        sum(lq.held_cash_usd[h] * lq.lot_nodes for h in held if lq)
    q = d.quarters[0]
    spend = sum(lq.capex_usd_per_node * lq.lot_nodes for o in orders if q.first <= o < q.end) if lq else 0.0
    for c, s in zip(picks, starts, strict=True):
        if not c.owned:
            per_day = math.ceil(c.cash_usd / c.days - 1e-9)
            spend += per_day * max(0, min(s + c.days, q.end) - max(s, q.first))
    return cost, cash, spend


def brute(d: ProgramData) -> float | None:
    """The least program cost by enumeration, or None when no plan exists."""
    best = least(d)
    return None if best is None else best[-1]


def least(d: ProgramData) -> tuple[float, ...] | None:
    """The least objective by enumeration — (cost,), (program end, cost) for the time objective, or (cost +
    per-day × end,) for a delay cost — or None when no plan exists."""
    kind, per_day = d.objective
    best: tuple[float, ...] | None = None
    lot_opts = _lot_options(d.lots[0]) if d.lots else [()]
    for picks in itertools.product(*([c for c in w.candidates if not c.barred_by] for w in d.workloads)):
        for starts in itertools.product(*(range(0, T + 1 - c.days) for c in picks)):
            end = max(s + c.days for s, c in zip(starts, picks, strict=True))
            for orders in lot_opts:
                cost, cash, spend = _money(d, picks, starts, orders)
                key = (end, cost) if kind == "time" else (cost + per_day * end,) if kind == "delay" else (cost,)
                if (best is not None and key >= best) or cost == math.inf:
                    continue
                if spend > d.quarters[0].limit or (d.budget_usd is not None and cash > d.budget_usd):
                    continue
                if _feasible(d, picks, starts, orders):
                    best = key
    return best


@pytest.mark.parametrize("objective", [("time", 0.0), ("delay", 3000.0)])
@pytest.mark.parametrize("seed", range(213, 245))
def test_time_and_delay_objectives_agree_with_enumeration(seed: int, objective: tuple[str, float]) -> None:
    """The program's end first (then cost), or cost plus $3k per day of the program's end: the same optimum as
    the enumeration."""
    from dataclasses import replace

    assert_optimum_is_enumerated(replace(random_program(seed), objective=objective))


def assert_optimum_is_enumerated(d: ProgramData) -> None:
    """CP-SAT's optimum is the enumeration's, to the dollar in the plan (and in the model's $1k units, when cost is
    the objective)."""
    expected = least(d)
    out, _engine = optimise(d, Limits(time_limit=30))
    if expected is None:
        assert out.status == INFEASIBLE
        return
    assert out.status == OPTIMAL and out.plan is not None
    kind, per_day = d.objective
    plan = out.plan
    got = (plan.end_day, plan.cost_usd) if kind == "time" else \
        (plan.cost_usd + per_day * plan.end_day,) if kind == "delay" else (plan.cost_usd,)
    assert got == pytest.approx(expected, abs=1e-6)
    if kind == "cost":
        assert plan.model_cost_units * 1000 == pytest.approx(expected[0], abs=1e-6)


@pytest.mark.parametrize("seed", range(30))
def test_model_agrees_with_enumeration(seed: int) -> None:
    assert_optimum_is_enumerated(random_program(seed))


def test_owned_ready_day_counts_the_soonest_lots_first() -> None:
    """Hand calculation: quote A delivers 2 lots of 8 nodes usable on day 60 + 10, quote B one lot of 8 on day
    30 + 5; the first 8 nodes are usable on day 35, 16 or 24 on day 70, 25 never; another system has none."""
    def lq(name: str, lots: int, lead: int, install: int) -> LotQuote:
        return LotQuote(name, "sys-x", 8, lots, 64, 100, lead, install, 10.0, 1, 1000.0, (0.0,), (0.0,))

    lots = [lq("A", 2, 60, 10), lq("B", 1, 30, 5)]
    assert [owned_ready_day(lots, "sys-x", n) for n in (1, 8, 9, 16, 24, 25)] == [35, 35, 70, 70, 70, None]
    assert owned_ready_day(lots, "sys-y", 1) is None


@pytest.mark.parametrize("seed", range(45, 60))
def test_owned_ready_days_keep_the_optimum(seed: int) -> None:
    """Raising each owned candidate's ready day to the day its lots can first be usable (`deliverable`) is a
    fact, not a cut: the enumeration's optimum, which places lots and runs day by day, is unchanged."""
    from dataclasses import replace

    d = random_program(seed)
    raised = replace(d, workloads=tuple(replace(w, candidates=deliverable(w, d.lots, None)) for w in d.workloads))
    assert brute(raised) == brute(d)
    out, _e = optimise(raised, Limits(time_limit=30))
    assert (out.plan.cost_usd if out.plan else None) == brute(d)


@pytest.mark.parametrize("seed", range(100, 115))
def test_rows_within_the_last_deadline_keep_the_optimum(seed: int) -> None:
    """Programs where every workload has a deadline and the held-days cost is linear up to past the last one: the
    model adds that piece as an LP row enforced by the deadline groups (`_add_within_deadlines`), which must not
    change the optimum."""
    assert_optimum_is_enumerated(random_program(seed, every_deadline=True))


def test_random_programs_cover_both_outcomes_and_lots() -> None:
    """The property test above is not vacuous: some programs are infeasible, some buy lots, some rent."""
    outcomes = []
    for seed in range(30):
        d = random_program(seed)
        out, _e = optimise(d, Limits(time_limit=30))
        outcomes.append((out.status, bool(out.plan and out.plan.purchases),
                         bool(out.plan and any(not r.candidate.owned for r in out.plan.runs))))
    assert any(s == INFEASIBLE for s, _, _ in outcomes)
    assert any(bought for _, bought, _ in outcomes)
    assert any(rented for _, _, rented in outcomes)


@pytest.mark.parametrize("seed", range(30, 45))
def test_dominance_reduction_keeps_the_optimum(seed: int) -> None:
    """`reduce_candidates` (and dropping the capacity rows of quotes no plan can fill) changes no optimum: checked
    by enumerating the program with and without it."""
    from dataclasses import replace

    from solver.estimate.program import free_quotes, reduce_candidates
    d = random_program(seed)
    workloads = reduce_candidates(d.workloads, dict(d.rented_capacity))
    free = free_quotes(workloads, dict(d.rented_capacity))
    reduced = replace(d, workloads=tuple(workloads),
                      rented_capacity=tuple((q, n) for q, n in d.rented_capacity if q not in free))
    assert brute(reduced) == brute(d)
    out, _e = optimise(reduced, Limits(time_limit=30))
    assert (out.plan.cost_usd if out.plan else None) == brute(d)
