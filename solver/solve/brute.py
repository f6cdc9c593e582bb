"""Exhaustive enumeration over the same options as the CP-SAT model, in plain Python.

Used by tests (the CP-SAT optimum must equal this on small problems) and by `bench/` (side-by-side timing).
It enumerates every workable point and every split of its nodes over the option's quotes, evaluates every
group directly, takes the earliest feasible start, and scores with the same integer money rules as the model
(each term rounded up to the money unit). It shares the per-point estimates with the model — the question it
answers is "did CP-SAT find the optimum over these options?", not "are the estimates right".
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Iterator

from .assumptions import Assumptions
from .cost import slip_premium
from .model import units
from .options import Option, Point, Universe, quote_ready_day
from .problem import CostObjective, LoadedProblem
from .rules import matches_attrs, matches_point, quote_ids


@dataclass(frozen=True)
class Candidate:
    objective: int
    cost_units: int
    finish: int
    option: str
    n: int
    alloc: tuple[tuple[str, int], ...]
    start: int


def _splits(n: int, quotes: list, limit: int) -> Iterator[dict[str, int]]:
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
        alloc = dict(zip((q.id for q in quotes), list(parts) + [last]))
        if all(v == 0 or v >= max(1, q.min_nodes) for q, v in zip(quotes, alloc.values())):
            yield {k: v for k, v in alloc.items() if v > 0}


def _option_allowed(o: Option, lp: LoadedProblem) -> bool:
    pol = lp.problem.policy
    if o.mode not in pol.modes or (pol.require_ecc and not o.accel.ecc.value):
        return False
    inc = {s.lower() for s in pol.accelerators.include}
    if (inc and o.accel.id not in inc) or o.accel.id in {s.lower() for s in pol.accelerators.exclude}:
        return False
    vinc = {s.lower() for s in pol.vendors.include}
    if (vinc and o.accel.vendor not in vinc) or o.accel.vendor in {s.lower() for s in pol.vendors.exclude}:
        return False
    site = lp.problem.site
    if o.mode == "buy":
        if site is None or o.system.cooling not in site.cooling:
            return False
        if float(o.system.node_kw.value) > site.rack_power_kw:
            return False
    return True


def _score(pt: Point, alloc: dict[str, int], lp: LoadedProblem, a: Assumptions, u: Universe,
           unit: int, cost_hi: int | None) -> Candidate | None:
    p = lp.problem
    o = pt.option
    quotes = {q.id: q for q in o.quotes}
    if not p.policy.allow_estimates and any(quotes[q].kind == "estimate" for q in alloc):
        return None
    if any(alloc[q] > quotes[q].max_nodes for q in alloc):
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
    cost += max((units(slip_premium(quotes[q].lead_time_days, quotes[q].lead_time_p90_days, a.money), unit)
                 for q in alloc), default=0)
    start = max([o.ready_day] + [quote_ready_day(quotes[q], o, a) for q in alloc])
    if p.schedule.earliest_start is not None:
        start = max(start, u.earliest_day)
    for rule in p.rules:
        when, then = rule.when, rule.then
        hit = matches_attrs(when, o.attrs) and matches_point(when, pt.gpus, pt.n, pt.days, pt.power_kw)
        qids = quote_ids(when)
        if qids is not None:
            hit = hit and any(q in qids for q in alloc)
        if isinstance(then, str):
            continue
        if not hit:
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
        if then.delay_days:
            d = math.ceil(then.delay_days)
            start = max([start, o.ready_day + d] + [quote_ready_day(quotes[q], o, a) + d for q in alloc])
    finish = start + pt.days
    if u.deadline_day is not None and finish > u.deadline_day:
        return None
    if p.budget.max_usd is not None:
        spent = cash if p.budget.applies_to == "cash" else cost
        if spent > math.floor(p.budget.max_usd / unit + 1e-9):
            return None
    for rule in p.rules:
        when, then = rule.when, rule.then
        if not isinstance(then, str):
            continue
        hit = matches_attrs(when, o.attrs) and matches_point(when, pt.gpus, pt.n, pt.days, pt.power_kw)
        qids = quote_ids(when)
        if qids is not None:
            hit = hit and any(q in qids for q in alloc)
        if when.cost is not None:
            hit = hit and _cost_test(when.cost, cost, unit)
        if (then == "forbid" and hit) or (then == "require" and not hit):
            return None
    obj = p.objective
    k = 2 * u.horizon + 1
    if obj == "time":
        # The objective *value* depends on the model's cost bound; compare (finish, cost) when it is not given.
        objective = finish * ((cost_hi or 10 ** 12) + 1) + cost
    elif isinstance(obj, CostObjective):
        objective = (cost + units(obj.delay_cost_usd_per_day, unit) * finish) * k + finish
    else:
        objective = cost * k + finish
    return Candidate(objective, cost, finish, o.id, pt.n, tuple(sorted(alloc.items())), start)


def _cost_test(cmp, cost_units: int, unit: int) -> bool:
    """The model's reading of a cost comparison at unit resolution (see model._cost_bound)."""
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


def best_at(pt: Point, lp: LoadedProblem, a: Assumptions, u: Universe, unit: int, *, cost_hi: int | None = None,
            allocation_limit: int = 200_000) -> Candidate | None:
    """The best plan at one point over every split of its nodes (None: no feasible plan there)."""
    o = pt.option
    site = lp.problem.site
    if not _option_allowed(o, lp) or not pt.workable or not pt.fits:
        return None
    if o.mode == "buy":
        assert site is not None
        if pt.power_kw > site.it_power_kw + 1e-9 or pt.racks_with_power is None \
                or pt.racks_with_power > site.racks or pt.racks_physical > site.racks:
            return None
    best: Candidate | None = None
    for alloc in _splits(pt.n, o.quotes, allocation_limit):
        c = _score(pt, alloc, lp, a, u, unit, cost_hi)
        if c is not None and (best is None or c.objective < best.objective):
            best = c
    return best


def brute_force(lp: LoadedProblem, a: Assumptions, u: Universe, unit: int, *, cost_hi: int | None = None,
                allocation_limit: int = 200_000) -> Candidate | None:
    """The best candidate by the model's primary objective (ties: earliest finish, then option id, then n)."""
    best: Candidate | None = None
    for o in u.options:
        for pt in o.points:
            c = best_at(pt, lp, a, u, unit, cost_hi=cost_hi, allocation_limit=allocation_limit)
            if c is not None and (best is None or (c.objective, c.option, c.n) < (best.objective, best.option, best.n)):
                best = c
    return best
