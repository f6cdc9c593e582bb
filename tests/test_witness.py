"""The proofs explanations take without a solve are sound, checked against CP-SAT on random many-quote problems.

- A point-local reason (`Screen.violations`, including the cheapest fill per fabric under one fabric per job) is a
  set of groups that, all enforced, exclude the point: the model with the point forced and those groups assumed
  must be infeasible.
- A witness (`answers/witness.py`) says a plan exists under a set of active groups: the pair's model with exactly
  those groups assumed must have a plan.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.answers.conflicts import PairOracle
from solver.answers.witness import witness
from solver.model.builder import build
from solver.solve.engine import FEASIBLE, INFEASIBLE, OPTIMAL
from solver.solve.pipeline import SolveSettings, prepare

from test_reduce import _load, cases

EXAMPLES = int(os.environ.get("PLAN_PROPERTY_EXAMPLES", "20"))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                       HealthCheck.function_scoped_fixture])
@given(cases(), st.randoms(use_true_random=False))
def test_point_reasons_and_witnesses_agree_with_cpsat(tmp_path: Path, case: tuple[dict[str, Any], list[Any]],
                                                      rnd: Any) -> None:
    _reasons_and_witnesses_agree(*case, tmp_path, rnd)


@settings(max_examples=max(5, EXAMPLES // 2), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(cases(), st.sampled_from([-10, -30, -60]), st.sampled_from([{"mode": "cloud"}, {"nodes": {"ge": 4}}]),
       st.sampled_from(["cash", "cost"]), st.sampled_from([0.3, 0.6, 0.9]), st.randoms(use_true_random=False))
def test_budget_reasons_under_a_discount_agree_with_cpsat(tmp_path: Path, case: tuple[dict[str, Any], list[Any]],
                                                          pct: int, when: dict[str, Any], applies_to: str,
                                                          at: float, rnd: Any) -> None:
    """A discount (a negative `add_pct`) lowers a plan's cost below its lines: the budget reasons then hold the lines
    to budget / kept (cost) or to the budget (cash, which no percentage changes), and each must still be a proof.
    The budget is set among the points' cheapest lines, and the points checked first are those whose lines are
    over it but within budget / kept: the discount may bring them under it."""
    problem, quotes = case
    problem = {**problem, "rules": [*problem["rules"], {"name": "discount", "when": when, "then": {"add_pct": pct}}]}
    problem.pop("budget", None)
    cash = applies_to == "cash"

    def lines(pt: Any) -> float:
        return (pt.fixed.total_cash if cash else pt.fixed.total_cost) + pt.n * pt.per_node.extreme(cash, min)

    free = prepare(_load(problem, quotes, tmp_path), SolveSettings(alternatives=False))
    costs = sorted(lines(pt) for o in free.universe.options for pt in o.points if pt.workable)
    if not costs:
        return
    limit = costs[int(at * (len(costs) - 1))]
    problem["budget"] = {"max_usd": limit, "applies_to": applies_to}
    p = _load(problem, quotes, tmp_path)
    ctx = prepare(p, SolveSettings(alternatives=False))
    kept = 1 + pct / 100
    for pair in ctx.universe.pairs():
        sub = ctx.universe.subset(pair)
        b = build(p, sub, ctx.screen, ctx.unit, guard="assume")
        pts = [pt for o in sub.options for pt in o.points if pt.workable]
        band = [pt for pt in pts if limit < lines(pt) <= limit / kept]
        _each_reason_excludes(ctx, b, pair, rnd.sample(band, min(4, len(band))) + rnd.sample(pts, min(2, len(pts))))


def _each_reason_excludes(ctx: Any, b: Any, pair: str, pts: list[Any]) -> None:
    """Each point-local reason of each of `pts`, assumed with the point forced, leaves the pair's model `b` no plan."""
    for pt in pts:
        i = next(k for k, q in enumerate(b.points) if q.key == pt.key)
        for item in ctx.screen.violations(pt):
            b.model.clear_objective()
            b.model.clear_assumptions()
            b.model.add_assumptions([b.z[i]] + [b.lits[g] for g in item if g in b.lits])
            status = ctx.engine.solve(b.model, label="item", presolve=False).status
            b.model.clear_assumptions()
            assert status == INFEASIBLE, (pair, pt.n, sorted(item))


def _reasons_and_witnesses_agree(problem: dict[str, Any], quotes: list[Any], tmp_path: Path, rnd: Any) -> None:
    """Each point-local reason of sampled points, assumed with the point forced, leaves the pair's model no plan;
    a witness under random groups is a pair with a plan."""
    p = _load(problem, quotes, tmp_path)
    ctx = prepare(p, SolveSettings(alternatives=False))
    for pair in ctx.universe.pairs():
        sub = ctx.universe.subset(pair)
        b = build(p, sub, ctx.screen, ctx.unit, guard="assume")
        pts = [pt for o in sub.options for pt in o.points if pt.workable]
        _each_reason_excludes(ctx, b, pair, rnd.sample(pts, min(4, len(pts))))
        groups = sorted(b.lits)
        for _ in range(4):
            active = {g for g in groups if rnd.random() < 0.6}
            if witness(ctx, sub, active):
                assert _has_plan(ctx, b, active), (pair, sorted(active))


def _has_plan(ctx: Any, b: Any, active: set[str]) -> bool:
    """CP-SAT, not the oracle (which asks the witness first): the pair's model with the `active` groups' literals
    fixed on, the others free, has a plan."""
    m = b.model.clone()
    m.clear_objective()
    m.clear_assumptions()
    m.add_bool_and([b.lits[g] for g in sorted(active) if g in b.lits])
    return ctx.engine.solve(m, label="has-plan").status in (FEASIBLE, OPTIMAL)


def _least_spend(ctx: Any, b: Any, i: int, qid: str, cash: bool, on: tuple[str, ...] = ()) -> int | None:
    """CP-SAT: the least cash (or cost), in money units, the model counts for point `i` with all its nodes from
    quote `qid`, the groups `on` enforced and the others free; None where the model has no such plan (the quote is
    not modelled there)."""
    pt = b.points[i]
    m = b.model.clone()
    m.clear_assumptions()
    m.add(b.z[i] == 1)
    m.add_bool_and([b.lits[g] for g in on])
    if len(pt.option.quotes) > 1:
        if (qid, i) not in b.y:
            return None
        m.add(b.y[(qid, i)] == pt.n)
    m.minimize(b.cash if cash else b.cost)
    out = ctx.engine.solve(m, label="least-spend")
    return int(out.solver.objective_value) if out.status == OPTIMAL else None


def test_one_fabric_each_over_budget_or_short_excludes_the_point(tmp_path: Path) -> None:
    """Fabric A is cheap but holds 8 nodes, fabric B holds 16 but dearer. At 16 nodes the mixed fill would fit a
    budget set between the two, but one job runs on one fabric: A is short, B alone is over budget. The point's
    reasons must say so (the budget, the fabric limit, A's capacity), and CP-SAT must agree."""
    from test_reduce import BASE, _rented

    quotes = [_rented(0, 3.0, 8, fabric="a"), _rented(1, 4.0, 16, fabric="b")]
    probe = _load(BASE, quotes, tmp_path)
    ctx0 = prepare(probe, SolveSettings(alternatives=False))
    pt0 = next(pt for pt in ctx0.universe.options[0].points if pt.n == 16)
    mixed = pt0.fixed.total_cash + 8 * pt0.per_node.cash("rq-00") + 8 * pt0.per_node.cash("rq-01")
    alone_b = pt0.fixed.total_cash + 16 * pt0.per_node.cash("rq-01")
    assert mixed < alone_b
    p = _load({**BASE, "budget": {"max_usd": (mixed + alone_b) / 2}}, quotes, tmp_path)
    ctx = prepare(p, SolveSettings(alternatives=False))
    (o,) = ctx.universe.options
    pt = next(q for q in o.points if q.n == 16)
    items = ctx.screen.violations(pt)
    fabric_items = [it for it in items if {"budget.max_usd", "policy.max_fabrics"} <= it]
    assert fabric_items and "quotes.rq-00.max_nodes" in fabric_items[0], items
    b = build(p, ctx.universe, ctx.screen, ctx.unit, guard="assume")
    i = next(k for k, q in enumerate(b.points) if q.key == pt.key)
    b.model.add_assumptions([b.z[i]] + [b.lits[g] for g in fabric_items[0] if g in b.lits])
    assert ctx.engine.solve(b.model, label="item", presolve=False).status == INFEASIBLE
    b.model.clear_assumptions()
    rest = [g for g in fabric_items[0] if g in b.lits and g != "policy.max_fabrics"]
    b.model.add_assumptions([b.z[i]] + [b.lits[g] for g in rest])
    assert ctx.engine.solve(b.model, label="mixed", presolve=False).status in (FEASIBLE, OPTIMAL), \
        "without the fabric limit the mixed fill fits the budget"


def _fill(ranked: list[tuple[float, str, int]], n: int, fixed: float, limit: float) -> tuple[str, set[str]]:
    """The cheapest fill of n nodes written as a loop over quotes ranked by per-node price (price, id, capacity):
    ("budget", the capacities filled before the first quote at which even that fill exceeds `limit`), ("capacity",
    all of them) when they cannot hold n, ("ok", ∅) otherwise."""
    rest, spend = n, fixed
    for k, (per, _qid, cap) in enumerate(ranked):
        if spend + rest * per > limit:
            return "budget", {f"quotes.{r[1]}.max_nodes" for r in ranked[:k]}
        take = min(rest, cap)
        spend += take * per
        rest -= take
        if rest == 0:
            return "ok", set()
    return "capacity", {f"quotes.{r[1]}.max_nodes" for r in ranked}


def _reference_budget_reasons(screen: Any, pt: Any, fixed: float, cash: bool, limit: float) -> list[frozenset[str]]:
    """The capacitated budget reasons written out quote by quote (what `Screen._capacitated_budget` computes over
    arrays): per schedule variant, the quotes in time, the cheapest fill, then the cheapest fill within each fabric."""
    from solver.estimate.options import option_quote_ready

    o, u, p = pt.option, screen.universe, screen.problem
    a = p.assumptions.values
    variants: list[tuple[frozenset[str], int | None]] = [(frozenset(), None)]
    if u.deadline_day is not None:
        variants.append((frozenset({"schedule.deadline"}), 0))
        if p.spec.schedule.earliest_start is not None:
            variants.append((frozenset({"schedule.deadline", "schedule.earliest_start"}), u.earliest_day))
    out: list[frozenset[str]] = []
    for base, earliest in variants:
        usable = [q for q in o.quotes if earliest is None or
                  max(o.ready_day, option_quote_ready(q, o, a), earliest) + pt.days <= u.deadline_day]
        ranked = sorted((pt.per_node.total(q.id, cash), q.id, q.max_nodes) for q in usable)
        if not ranked:
            out += [frozenset(base)] if base else []
            continue
        why, caps = _fill(ranked, pt.n, fixed, limit)
        if why == "budget":
            out.append(frozenset(base | {"budget.max_usd"} | caps))
        elif why == "capacity" and base:
            out.append(frozenset(base | caps))
        elif why == "ok" and p.spec.policy.max_fabrics == 1:
            fabric = {q.id: q.fabric_id for q in usable}
            if len(set(fabric.values())) < 2:
                continue
            items = set(base) | {"policy.max_fabrics"}
            for f in sorted(set(fabric.values())):
                why_f, caps_f = _fill([r for r in ranked if fabric[r[1]] == f], pt.n, fixed, limit)
                if why_f == "ok":
                    break
                items |= caps_f | ({"budget.max_usd"} if why_f == "budget" else set())
            else:
                out.append(frozenset(items))
    return out


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                       HealthCheck.function_scoped_fixture])
@given(cases(), st.sampled_from([0.3, 0.6, 1.0, 1.5]))
def test_capacitated_budget_reasons_are_the_quote_by_quote_ones(tmp_path: Path, case: tuple[dict[str, Any], list[Any]],
                                                                 scale: float) -> None:
    """The budget reasons over a point's quotes, computed over arrays (one sort, one comparison per fabric where
    each rented quote is alone on its own; by capacities alone where no fill can exceed the budget), are exactly
    those of the quote-by-quote reasoning, at budgets from well below each point's cheapest fill to above its
    dearest."""
    problem, quotes = case
    p = _load(problem, quotes, tmp_path)
    ctx = prepare(p, SolveSettings(alternatives=False))
    screen = ctx.screen
    cash = p.spec.budget.applies_to == "cash"
    compared = 0
    for o in ctx.universe.options:
        if len(o.quotes) < 2:
            continue
        for pt in [pt for pt in o.points if pt.workable][::3]:
            fixed = pt.fixed.total_cash if cash else pt.fixed.total_cost
            dearest = fixed + pt.n * max(pt.per_node.total(q.id, cash) for q in o.quotes)
            # The first limit from well below to above the cheapest fill; the others at the dearest fill and just
            # above it, where no fill can exceed the budget and the reasons come from capacities alone.
            for limit in ((fixed + pt.n * pt.per_node.extreme(cash, min)) * (1 + scale), dearest, dearest * 1.001):
                got = screen._capacitated_budget(pt, fixed, cash, limit)
                assert got == _reference_budget_reasons(screen, pt, fixed, cash, limit), (o.id, pt.n, limit)
            compared += 1
    assert compared > 0 or not any(len(o.quotes) > 1 for o in ctx.universe.options)


@settings(max_examples=max(5, EXAMPLES // 2), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(cases(), st.sampled_from(["schedule.deadline", "budget.max_usd"]), st.sampled_from([0, 1, 30]))
def test_a_capped_minimum_skips_only_points_that_cannot_meet_the_cap(
        tmp_path: Path, case: tuple[dict[str, Any], list[Any]], relaxed: str, slack: int) -> None:
    """A relaxation's cheapest plan is searched only among points whose bound on the capped quantity (the relaxed
    finish or budget) is within the cap (`PairOracle.minimize(cap_on=)`): the minimum cost is the one found over
    every point."""
    problem, quotes = case
    p = _load(problem, quotes, tmp_path)
    ctx = prepare(p, SolveSettings(alternatives=False))
    oracle = PairOracle(ctx)
    groups = sorted(oracle.all_groups())
    if relaxed not in groups:
        return
    active = [g for g in groups if g != relaxed]
    kind = "finish" if relaxed == "schedule.deadline" else p.spec.budget.applies_to

    def quantity(b: Any) -> Any:
        return {"finish": b.finish, "cash": b.cash, "cost": b.cost}[kind]

    least = oracle.minimize(active, quantity, lower=kind)
    if least is None:
        return
    cap = (quantity, least.value + slack)
    pruned = oracle.minimize(active, lambda b: b.cost, cap=cap, lower="cost", cap_on=kind)
    full = oracle.minimize(active, lambda b: b.cost, cap=cap, lower="cost")
    assert (pruned is None) == (full is None)
    if pruned is not None and full is not None:
        assert pruned.value == full.value and pruned.complete == full.complete, (relaxed, slack)


@settings(max_examples=max(5, EXAMPLES // 2), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(cases())
def test_the_skeleton_lists_the_groups_of_every_pair_model(tmp_path: Path,
                                                         case: tuple[dict[str, Any], list[Any]]) -> None:
    """`PairOracle.all_groups` reads the groups off a skeleton of one point per option with no quote modelled; the
    conflict search and every relaxation delete from that list, so it must be exactly the union of the groups of
    the pairs' full models (every point, every quote, the presolve on)."""
    problem, quotes = case
    p = _load(problem, quotes, tmp_path)
    ctx = prepare(p, SolveSettings(alternatives=False))
    oracle = PairOracle(ctx)
    union = {g for pair in oracle.items for g in oracle.model(pair).groups}
    assert sorted(oracle.all_groups()) == sorted(union)


def test_the_array_fill_is_the_listed_fill() -> None:
    """`screening._fill_sorted` (cumulative sums over arrays) gives the loop's answer (`_fill` here) and relies on
    the same capacities, on random quotes sorted cheapest first, with budgets at, around and far from the fills."""
    import random

    import numpy as np

    from solver.model.screening import _fill_sorted
    rnd = random.Random(3)
    for _ in range(2000):
        m = rnd.randint(0, 8)
        per = sorted(rnd.choice([0.1, 0.3, 1.0 / 3, 7.0, 1e6 / 7]) * rnd.randint(1, 5) for _ in range(m))
        cap = [rnd.randint(1, 6) for _ in range(m)]
        n, fixed = rnd.randint(1, 20), rnd.choice([0.0, 0.1, 123.456])
        ranked = [(p, f"q{k}", c) for k, (p, c) in enumerate(zip(per, cap, strict=True))]
        exact = fixed + sum(min(c, max(0, n - sum(cap[:k]))) * p
                            for k, (p, c) in enumerate(zip(per, cap, strict=True)))
        for limit in (exact, exact * (1 - 1e-12), exact + 1e-9, fixed, 1e18, rnd.uniform(0, 2 * exact + 1)):
            why, caps = _fill(ranked, n, fixed, limit)
            why_a, k = _fill_sorted(np.array(per, dtype=float), np.array(cap, dtype=np.int64), n, fixed, limit)
            assert (why_a, {f"quotes.q{j}.max_nodes" for j in range(k)}) == (why, caps), (per, cap, n, fixed, limit)


@settings(max_examples=max(4, EXAMPLES // 4), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(cases(), st.sampled_from([None, "0.01M", "1M"]))
def test_a_pair_beyond_slack_has_no_elastic_plan(tmp_path: Path, case: tuple[dict[str, Any], list[Any]],
                                                 budget: str | None) -> None:
    """`relax.beyond_slack` skips a pair's elastic model in the combined relaxation: that model, every group assumed
    and every numeric limit given its slack, must have no plan."""
    from solver.answers.relax import beyond_slack
    problem, quotes = case
    if budget is not None:
        problem = {**problem, "budget": {"max_usd": budget}}
    p = _load(problem, quotes, tmp_path)
    ctx = prepare(p, SolveSettings(alternatives=False))
    oracle = PairOracle(ctx, elastic=True)
    for pair, items in oracle.items.items():
        if not beyond_slack(items):
            continue
        b = oracle.model(pair)
        b.model.clear_assumptions()
        b.model.add_assumptions(list(b.lits.values()))
        assert not ctx.engine.solve(b.model, label="beyond-slack").has_solution, pair
        b.model.clear_assumptions()


def test_fabric_fills_where_fabrics_are_shared_are_the_quote_by_quote_ones() -> None:
    """With one fabric per job, a point whose cheapest fill fits the budget overall is still excluded when no single
    fabric's fill does (`Screen._per_fabric`). The property test above draws rented quotes alone on their fabrics,
    where a comparison per quote decides; here several quotes share fabrics, so each fabric's fill is summed: the
    reasons must be the loop's (`_fill` here) fabric by fabric, in fabric-name order."""
    import random

    import numpy as np

    from solver.model.prices import PriceTable
    from solver.model.screening import QuoteTable, Screen
    rnd = random.Random(11)
    shared = 0
    for _ in range(3000):
        m = rnd.randint(2, 9)
        ids = [f"q{k}" for k in range(m)]
        fabric_of = [f"f{rnd.randrange(rnd.randint(1, m - 1))}" for _ in range(m)]
        fabrics = sorted(set(fabric_of))
        per = np.array([rnd.choice([0.5, 1.0, 1 / 3, 7.0]) * rnd.randint(1, 4) for _ in range(m)])
        cap = np.array([rnd.randint(1, 6) for _ in range(m)], dtype=np.int64)
        table = QuoteTable(ids, np.arange(m), np.zeros(m, dtype=np.int64), cap,
                           np.array([fabrics.index(f) for f in fabric_of]), fabrics,
                           PriceTable(per, [], np.zeros(m, dtype=np.int64)),
                           [f"quotes.{q}.max_nodes" for q in ids], len(fabrics) == m, np.zeros(m, dtype=bool))
        order = np.lexsort((np.arange(m), per))
        n, fixed = rnd.randint(1, 15), rnd.choice([0.0, 1.5])
        base = frozenset(rnd.choice([(), ("schedule.deadline",)]))
        ranked = [(float(per[j]), ids[j], int(cap[j])) for j in order]
        for limit in (fixed + n * per.min(), fixed + 2 * n * per.min(), 1e18, fixed):
            got = Screen._per_fabric(table, order, per[order], n, fixed, limit, base)
            want: list[frozenset[str]] = []
            if len(fabrics) >= 2:
                items = set(base) | {"policy.max_fabrics"}
                for f in fabrics:
                    why, caps = _fill([r for r in ranked if fabric_of[ids.index(r[1])] == f], n, fixed, limit)
                    if why == "ok":
                        break
                    items |= caps | ({"budget.max_usd"} if why == "budget" else set())
                else:
                    want = [frozenset(items)]
            assert got == want, (fabric_of, per.tolist(), cap.tolist(), n, fixed, limit)
            shared += bool(want) and len(fabrics) < m
    assert shared > 0


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                       HealthCheck.function_scoped_fixture])
@given(cases(), st.sampled_from(["cash", "cost"]), st.randoms(use_true_random=False))
def test_a_written_down_plan_is_never_counted_below_the_model(tmp_path: Path, case: tuple[dict[str, Any], list[Any]],
                                                              applies_to: str, rnd: Any) -> None:
    """The witness's budget check counts each term rounded up as the model does: for one quote supplying a whole
    point, at a budget one money unit below the least the model can count for that plan (CP-SAT), it must say
    the plan is not affordable. With an earliest start, bought hardware ready before it waits (and costs), and
    the delay cost prices its slip, so the start's terms are checked too."""
    from solver.answers.witness import _affordable
    problem, quotes = case
    problem = {**problem, "rules": [], "budget": {"max_usd": 1e12, "applies_to": applies_to}}
    problem["policy"] = {k: v for k, v in problem["policy"].items() if k != "deadline_confidence"}
    p = _load(problem, quotes, tmp_path)
    ctx = prepare(p, SolveSettings(alternatives=False))
    on = ("schedule.earliest_start",) if "earliest_start" in problem["schedule"] else ()
    earliest = ctx.universe.earliest_day if on else 0
    for pair in ctx.universe.pairs():
        b = build(p, ctx.universe.subset(pair), ctx.screen, ctx.unit, guard="assume", reduce=False)
        for i in rnd.sample(range(len(b.points)), min(3, len(b.points))):
            pt = b.points[i]
            for q in rnd.sample(list(pt.option.quotes), min(2, len(pt.option.quotes))):
                if q.min_nodes > pt.n:
                    continue
                least = _least_spend(ctx, b, i, q.id, applies_to == "cash", on)
                if least is None:
                    continue
                assert not _affordable(ctx, pt, [(q, pt.n)], earliest, (least - 1) * ctx.unit), \
                    (pair, pt.n, q.id, least)


def test_a_rented_plan_is_counted_as_the_model_counts_it(tmp_path: Path) -> None:
    """Rented capacity never waits (and cash has no lateness): the model's least cash for one quote supplying the
    point is its fixed and per-node lines rounded up once (a plan on one quote is charged as a whole), and the
    witness counts exactly that — a plan at that budget is affordable, one unit below it is not. The count used to
    add a unit per node instead, and turned away plans up to 2n units under the budget."""
    from solver.answers.witness import _affordable
    from solver.model.money import units
    from test_reduce import BASE, _rented

    quotes = [_rented(0, 3.1, 64), _rented(1, 3.37, 64, fabric="b")]
    p = _load({**BASE, "budget": {"max_usd": 1e12, "applies_to": "cash"}}, quotes, tmp_path)
    ctx = prepare(p, SolveSettings(alternatives=False))
    (o,) = ctx.universe.options
    b = build(p, ctx.universe, ctx.screen, ctx.unit, guard="assume", reduce=False)
    checked = 0
    for i, pt in enumerate(b.points):
        for q in o.quotes:
            least = _least_spend(ctx, b, i, q.id, True)
            if least is None:
                continue
            by_hand = units(pt.fixed.total_cash + pt.n * pt.per_node.cash(q.id), ctx.unit)
            assert least == by_hand, (pt.n, q.id)
            assert _affordable(ctx, pt, [(q, pt.n)], 0, least * ctx.unit), (pt.n, q.id)
            assert not _affordable(ctx, pt, [(q, pt.n)], 0, (least - 1) * ctx.unit), (pt.n, q.id)
            checked += 1
    assert checked >= 4


WAITING_QUOTE = {"id": "rq-00", "system": "dgx-b200", "mode": "buy", "vendor": "v", "min_nodes": 1, "max_nodes": 8,
                 "lead_time_days": 0, "quoted_on": "2026-11-01", "valid_until": "2027-01-20", "kind": "list",
                 "source": "test", "price_usd": 300_000}
"""A bought quote that must be ordered by 2027-01-20: a run that cannot start before 2027-04-15 has it wait 64 days."""
SITE = {"it_power_kw": 400, "cooling": ["air", "liquid"], "racks": 20, "rack_power_kw": 60,
        "electricity_usd_per_kwh": 0.1, "pue": 1.3}


def test_bought_hardware_that_waits_is_counted_no_lower_than_the_model(tmp_path: Path) -> None:
    """A bought quote that must be ordered by 2027-01-20 for a run that cannot start before 2027-04-15 waits 64
    days, and the wait costs: the witness's count of a plan from that quote is never below the model's least
    (one unit under it, the plan is not affordable). The random problems above rarely make hardware wait."""
    from solver.answers.witness import _affordable
    from solver.estimate.delivery import order_by_day, ready_offset, wait_days
    from test_reduce import BASE

    for applies_to in ("cash", "cost"):
        problem = {**BASE, "policy": {"modes": ["buy"]}, "site": SITE, "schedule": {"earliest_start": "2027-04-15"},
                   "budget": {"max_usd": 1e12, "applies_to": applies_to}}
        p = _load(problem, [WAITING_QUOTE], tmp_path)
        ctx = prepare(p, SolveSettings(alternatives=False))
        (o,) = ctx.universe.options
        (q,) = o.quotes
        start = ctx.universe.earliest_day
        assert wait_days(q, start, ready_offset(q, o.accel.cls, p.assumptions.values), order_by_day(q, p.as_of)) > 0
        b = build(p, ctx.universe, ctx.screen, ctx.unit, guard="assume", reduce=False)
        for i, pt in enumerate(b.points[:4]):
            least = _least_spend(ctx, b, i, q.id, applies_to == "cash", ("schedule.earliest_start",))
            assert least is not None
            assert not _affordable(ctx, pt, [(q, pt.n)], start, (least - 1) * ctx.unit), (applies_to, pt.n, least)


@pytest.mark.parametrize("lead", [0, 60, 100])
def test_hardware_that_waits_is_charged_its_wait_once(tmp_path: Path, lead: int) -> None:
    """A bought quote that must be ordered by 2027-01-20 for a run that cannot start before 2027-04-15 waits 64 days.
    A second, dearer quote of the same option arriving `lead` days after its order puts another candidate start
    between that order-by date and the start. The plan's cost in the model must be the exhaustive enumeration's
    (`brute.py`, which charges the wait at the plan's start once) and its exact cost plus rounding: the model once
    charged the wait at every candidate start the plan was past ($342,018 and $372,176 for leads of 60 and 100 days,
    against $334,475)."""
    from solver.model.objective import universe_ceiling
    from solver.solve.brute import brute_force
    from solver.solve.pipeline import solve_problem
    from test_reduce import BASE

    dearer = {**WAITING_QUOTE, "id": "rq-01", "valid_until": "2027-12-20", "price_usd": 900_000,
              "lead_time_days": lead}
    p = _load({**BASE, "policy": {"modes": ["buy"]}, "site": SITE, "schedule": {"earliest_start": "2027-04-15"}},
              [WAITING_QUOTE, dearer], tmp_path)
    result = solve_problem(p, SolveSettings(alternatives=False))
    plan = result.plan
    assert plan is not None and [(q.id, q.wait_days) for q in plan.quotes] == [("rq-00", 64)]
    ctx = prepare(p, SolveSettings(alternatives=False))
    best = brute_force(p, ctx.universe, ctx.unit, cost_hi=universe_ceiling(p, ctx.universe, ctx.unit, ctx.screen.outlook))
    assert best is not None and plan.model_cost_units == best.cost_units
    # Rounding up adds less than a unit per cost term and node; the wait counted twice added thousands.
    assert 0 <= plan.model_cost_units * plan.unit - plan.total_cost < 20 * plan.unit


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                       HealthCheck.function_scoped_fixture])
@given(cases(), st.randoms(use_true_random=False))
def test_capacities_named_needed_leave_a_plan_when_lifted(tmp_path: Path, case: tuple[dict[str, Any], list[Any]],
                                                          rnd: Any) -> None:
    """`PairOracle.needed` names the capacity groups of a set whose removal alone leaves a plan, by a plan written
    down from one quote: CP-SAT must find a plan in the model of a pair holding that quote, with the set's other
    groups fixed on. (The conflict search keeps every group so named; a wrong one would be a conflict that is not
    minimal.)"""
    from solver.model.groups import capacity_quote
    p = _load(*case, tmp_path)
    ctx = prepare(p, SolveSettings(alternatives=False))
    oracle = PairOracle(ctx)
    groups = oracle.all_groups()
    active = {g for g in groups if capacity_quote(g) is not None or rnd.random() < 0.8}
    named = oracle.needed(sorted(active))
    for g in sorted(named):
        qid = capacity_quote(g)
        pairs = [pair for pair in ctx.universe.pairs()
                 if any(q.id == qid for o in ctx.universe.subset(pair).options for q in o.quotes)]
        assert any(_has_plan(ctx, build(p, ctx.universe.subset(pair), ctx.screen, ctx.unit, guard="assume"),
                             active - {g}) for pair in pairs), (g, sorted(active))


def test_capacities_short_of_a_deadline_are_named_needed(tmp_path: Path) -> None:
    """Two rented quotes of 3 nodes each, and a deadline only 8 nodes or more can meet: infeasible, and lifting
    either capacity leaves the 8-node plan from that quote alone. `needed` names both (CP-SAT agrees that each
    lift leaves a plan), and the explanation's conflict is the deadline with both capacities."""
    from datetime import timedelta

    from solver.answers.report import solve_and_explain
    from test_reduce import BASE, _rented

    quotes = [_rented(0, 3.0, 3), _rented(1, 3.5, 3, fabric="b")]
    free = prepare(_load(BASE, quotes, tmp_path), SolveSettings(alternatives=False))
    (o,) = free.universe.options
    days = {pt.n: pt.days for pt in o.points if pt.workable}
    assert 8 in days and max(days[n] for n in days if n <= 6) > days[8]
    ready = max(o.ready_day, free.universe.earliest_day)
    deadline = free.universe.as_of + timedelta(days=ready + days[8])
    p = _load({**BASE, "schedule": {"deadline": deadline.isoformat()}}, quotes, tmp_path)
    ctx = prepare(p, SolveSettings(alternatives=False))
    oracle = PairOracle(ctx)
    groups = oracle.all_groups()
    caps = {"quotes.rq-00.max_nodes", "quotes.rq-01.max_nodes"}
    assert oracle.needed(groups) == caps
    b = build(p, ctx.universe, ctx.screen, ctx.unit, guard="assume")
    assert not _has_plan(ctx, b, set(groups))
    for g in caps:
        assert _has_plan(ctx, b, set(groups) - {g}), g
    _ctx, r = solve_and_explain(p, SolveSettings(alternatives=False))
    assert set(r.explanation["conflict"]) == caps | {"schedule.deadline"}, r.explanation["conflict"]
