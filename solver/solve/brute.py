"""Exhaustive enumeration over the same options as the CP-SAT model, in plain Python.

Used by tests (the CP-SAT optimum must equal this on small problems) and by `bench/` (side-by-side timing).
It enumerates every workable point and every split of its nodes over the option's quotes, evaluates every
group directly (one fabric per job included), takes the earliest feasible start, prices delivery slip and waiting
hardware at that start, and scores with the same integer money rules as the model (each term rounded up to the
money unit). It shares the per-point estimates with the model — the question it
answers is "did CP-SAT find the optimum over these options?", not "are the estimates right".
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..estimate.chance import ChanceModel, chance_model
from ..estimate.delivery import order_by_day, ready_offset
from ..estimate.options import Option, Point, Universe, option_quote_ready
from ..inputs.catalog import Quote
from ..inputs.problem import Problem
from ..inputs.rules import delay_days, matches_attrs, matches_point, names_quote, policy_breaches
from ..inputs.spec import Comparison, CostObjective
from ..model.money import floor_units, units
from ..model.objective import finish_weight
from ..model.screening import preemptible_forbidden
from ..model.timing import slip_units, timing, wait_of, wait_units


@dataclass(frozen=True)
class Candidate:
    objective: int
    cost_units: int
    finish: int
    option: str
    n: int
    alloc: tuple[tuple[str, int], ...]
    start: int


def _splits(n: int, quotes: Sequence[Quote], limit: int) -> Iterator[dict[str, int]]:
    if len(quotes) == 1:
        yield {quotes[0].id: n}
        return
    count = 0
    for parts in itertools.product(range(n + 1), repeat=len(quotes) - 1):
        last = n - sum(parts)
        if last < 0:
            continue
        count += 1
        if count > limit:
            raise RuntimeError("too many allocations for brute force")
        alloc = dict(zip((q.id for q in quotes), list(parts) + [last], strict=True))
        if all(v == 0 or v >= max(1, q.min_nodes) for q, v in zip(quotes, alloc.values(), strict=True)):
            yield {k: v for k, v in alloc.items() if v > 0}


def _option_allowed(o: Option, problem: Problem) -> bool:
    if policy_breaches(problem.spec, o.attrs, ()):
        return False
    site = problem.spec.site
    if o.mode == "buy":
        if site is None or float(o.system.node_kw.value) > site.rack_power_kw:
            return False
    return True


def _score(pt: Point, alloc: dict[str, int], problem: Problem, u: Universe, unit: int,
           cost_hi: int | None, chance: ChanceModel | None = None) -> Candidate | None:
    spec = problem.spec
    a = problem.assumptions.values
    o = pt.option
    quotes = {q.id: q for q in o.quotes}
    if not spec.policy.allow_estimates and any(quotes[q].kind == "estimate" for q in alloc):
        return None
    if any(alloc[q] > quotes[q].max_nodes for q in alloc):
        return None
    if len({quotes[q].fabric_id for q in alloc}) > spec.policy.max_fabrics:
        return None
    if len(o.quotes) == 1:
        q = o.quotes[0]
        if pt.n < q.min_nodes:
            return None
        cost = units(pt.fixed.total_cost + pt.n * pt.per_node.cost(q.id), unit)
        cash = units(pt.fixed.total_cash + pt.n * pt.per_node.cash(q.id), unit)
    else:
        cost = units(pt.fixed.total_cost, unit) + sum(k * units(pt.per_node.cost(q), unit) for q, k in alloc.items())
        cash = units(pt.fixed.total_cash, unit) + sum(k * units(pt.per_node.cash(q), unit) for q, k in alloc.items())
    delay = 0
    for rule in spec.rules:
        when, then = rule.when, rule.then
        if isinstance(then, str) or not (matches_attrs(when, o.attrs) and
                                         matches_point(when, pt.gpus, pt.n, pt.days, pt.power_kw)
                                         and names_quote(rule, alloc)):
            continue
        if then.add_usd:
            cost += units(then.add_usd, unit)
            cash += units(then.add_usd, unit)
        if then.add_pct:
            if len(o.quotes) == 1:
                q = o.quotes[0]
                cost += units((pt.fixed.total_cost + pt.n * pt.per_node.cost(q.id)) * then.add_pct / 100, unit)
            else:
                cost += units(pt.fixed.total_cost * then.add_pct / 100, unit) + sum(
                    k * units(pt.per_node.cost(q) * then.add_pct / 100, unit) for q, k in alloc.items())
        delay += delay_days(then)
    start = max([o.ready_day] + [option_quote_ready(quotes[q], o, a) for q in alloc]) + delay
    if spec.schedule.earliest_start is not None:
        start = max(start, u.earliest_day)
    timings = {qid: timing(problem, o, quotes[qid]) for qid in alloc}
    if a.money.delay_cost_usd_per_day > 0:
        cost += max(slip_units(problem, timings[qid], start, delay, unit) for qid in alloc)
    for qid, k in alloc.items():
        w = wait_of(timings[qid], start)
        if w > 0:
            wc, wk = wait_units(pt, timings[qid], w, unit, len(o.quotes) == 1)
            mult = 1 if len(o.quotes) == 1 else k
            cost += wc * mult
            cash += wk * mult
    finish = start + pt.days
    if u.deadline_day is not None and finish > u.deadline_day:
        return None
    if chance is not None and not _meets_confidence(chance, pt, alloc, quotes, start, delay, problem):
        return None
    if spec.budget.max_usd is not None:
        spent = cash if spec.budget.applies_to == "cash" else cost
        if spent > floor_units(spec.budget.max_usd, unit):
            return None
    if not _hard_rules_hold(pt, alloc, problem, cost, unit):
        return None
    obj = spec.objective
    k = finish_weight(u.horizon)
    if obj == "time":
        # The objective *value* depends on the model's cost bound; compare (finish, cost) when it is not given.
        objective = finish * ((cost_hi or 10 ** 12) + 1) + cost
    elif isinstance(obj, CostObjective):
        objective = (cost + units(obj.delay_cost_usd_per_day, unit) * finish) * k + finish
    else:
        objective = cost * k + finish
    return Candidate(objective, cost, finish, o.id, pt.n, tuple(sorted(alloc.items())), start)


def _hard_rules_hold(pt: Point, alloc: dict[str, int], problem: Problem, cost: int, unit: int) -> bool:
    """No forbid rule matches the plan and every require rule does (cost conditions at the model's resolution)."""
    o = pt.option
    for rule in problem.spec.rules:
        when, then = rule.when, rule.then
        if not isinstance(then, str):
            continue
        hit = matches_attrs(when, o.attrs) and matches_point(when, pt.gpus, pt.n, pt.days, pt.power_kw) \
            and names_quote(rule, alloc)
        if when.cost is not None:
            hit = hit and _cost_test(when.cost, cost, unit)
        if (then == "forbid" and hit) or (then == "require" and not hit):
            return False
    return True


def _meets_confidence(chance: ChanceModel, pt: Point, alloc: dict[str, int], quotes: dict[str, Quote], start: int,
                      delay: int, problem: Problem) -> bool:
    """The plan, ordered as the model orders (rented capacity once the rules' delays are over, bought hardware just
    in time or on the quote's last valid day), finishes by the deadline in enough scenarios, its quotes jointly."""
    a = problem.assumptions.values
    orders = []
    for qid in alloc:
        q = quotes[qid]
        if q.mode != "buy":
            orders.append((q, delay))
            continue
        ob = order_by_day(q, problem.as_of)
        jit = start - ready_offset(q, pt.option.accel.cls, a)
        orders.append((q, jit if ob is None else min(ob, jit)))
    return chance.joint_meets(pt.option, pt, start, orders) >= chance.needed


def _cost_test(cmp: Comparison, cost_units: int, unit: int) -> bool:
    """The model's reading of a cost comparison at unit resolution (see `_cost_bound` in model/builder.py)."""
    for op in ("gt", "ge", "lt", "le", "eq"):
        v = getattr(cmp, op)
        if v is None:
            continue
        lo, hi = math.floor(v / unit + 1e-9), math.ceil(v / unit - 1e-9)
        ok = {"gt": cost_units >= lo + 1, "ge": cost_units >= hi, "lt": cost_units <= hi - 1,
              "le": cost_units <= lo, "eq": cost_units == hi}[op]
        if not ok:
            return False
    return True


def best_at(pt: Point, problem: Problem, u: Universe, unit: int, *, cost_hi: int | None = None,
            allocation_limit: int = 200_000, chance: ChanceModel | None = None) -> Candidate | None:
    """The best plan at one point over every split of its nodes (None: no feasible plan there)."""
    o = pt.option
    site = problem.spec.site
    if not _option_allowed(o, problem) or not pt.workable or not pt.fits or preemptible_forbidden(problem.spec, pt):
        return None
    if o.mode == "buy":
        assert site is not None
        if pt.power_kw > site.it_power_kw + 1e-9 or pt.racks_with_power is None \
                or pt.racks_with_power > site.racks or pt.racks_physical > site.racks:
            return None
    best: Candidate | None = None
    for alloc in _splits(pt.n, o.quotes, allocation_limit):
        c = _score(pt, alloc, problem, u, unit, cost_hi, chance)
        if c is not None and (best is None or c.objective < best.objective):
            best = c
    return best


def brute_force(problem: Problem, u: Universe, unit: int, *, cost_hi: int | None = None,
                allocation_limit: int = 200_000) -> Candidate | None:
    """The best candidate by the model's primary objective (ties: earliest finish, then option id, then n)."""
    best: Candidate | None = None
    chance = chance_model(problem, u.deadline_day)
    for o in u.options:
        for pt in o.points:
            c = best_at(pt, problem, u, unit, cost_hi=cost_hi, allocation_limit=allocation_limit, chance=chance)
            if c is not None and (best is None or (c.objective, c.option, c.n) < (best.objective, best.option, best.n)):
                best = c
    return best
