"""Lower bounds on the objective of every point, so that most points never reach CP-SAT.

Why: a big catalog gives an option dozens of quotes, and the model splits a point's nodes over them
(`y[q,p]`, quotes × node counts integer variables). Nearly all node counts are far from optimal, and a
cheap bound proves it. `solve.py` solves a model over the points with the smallest bounds, then keeps
adding every point whose bound does not exceed the best plan found, until none is left out: the result is
the optimum over all points (branch and bound, with CP-SAT solving the leaves; cp-sat-notes.md §1.4 on
keeping the model small).

The bound of a point relaxes only what can only raise the objective:
- cost ≥ fixed + the cheapest fill of n nodes from the quotes that could be used (each filled up to its
  capacity, cheapest per node first: the exact optimum of the split's LP relaxation, which drops min_nodes)
  + the smallest delivery-slip premium among those quotes + the surcharges of the enforced rules that match the
  point whatever its quotes and cost (add_usd, and add_pct on each cost term, rounded as the model rounds them);
  rules that name quotes or test the cost are left out. A negative add_pct can lower a cost, so with one the
  bounds are switched off (`sound`).
- finish ≥ max(option ready, earliest start, the earliest usable quote's ready day), each ready day pushed back by
  the longest delay of those rules, + days.
A quote is usable when it is allowed (estimates policy), could supply the point (min_nodes ≤ n) and, with a
deadline, arrives in time for the point to finish by it. Costs are in the model's integer money units, each
per-node term rounded up exactly as the model rounds it, and the objective is `model.objective`, which is
monotone in cost and finish — so the bound never exceeds the model's value of any plan at that point.
A point with no possible plan (too little usable capacity, over the budget even at the bound) gets None.
"""

from __future__ import annotations

import math
from typing import Collection

from .assumptions import Assumptions
from .cost import slip_premium
from .model import objective, units
from .options import Point, Universe, quote_ready_day
from .problem import LoadedProblem
from .rules import matches_attrs, matches_point


def sound(lp: LoadedProblem) -> bool:
    """Bounds are valid unless a rule can lower a cost (add_pct < 0; add_usd is never negative)."""
    return not any(not isinstance(r.then, str) and (r.then.add_pct or 0) < 0 for r in lp.problem.rules)


def point_lower(pt: Point, lp: LoadedProblem, a: Assumptions, universe: Universe, unit: int,
                active: Collection[str] | None = None) -> tuple[int, int, int] | None:
    """Lower bounds (cost, cash, finish day) for any plan at this point with the `active` groups enforced
    (None: all of them), or None if no plan exists there. A group not enforced is simply not used, which
    only lowers the bounds (see module docstring)."""
    p = lp.problem

    def on(gid: str) -> bool:
        return active is None or gid in active

    o = pt.option
    n = pt.n
    adds = [r.then for r in p.rules if not isinstance(r.then, str) and on(f"rules.{r.name}")
            and r.when.quote is None and r.when.cost is None and matches_attrs(r.when, o.attrs)
            and matches_point(r.when, pt.gpus, n, pt.days, pt.power_kw)]
    pcts = [t.add_pct for t in adds if t.add_pct]
    delay = max([math.ceil(t.delay_days) for t in adds if t.delay_days] + [0])
    earliest = universe.earliest_day if p.schedule.earliest_start is not None and on("schedule.earliest_start") else 0
    base = max(o.ready_day + delay, earliest)
    dl = universe.deadline_day if on("schedule.deadline") else None
    usable = []
    for q in o.quotes:
        if q.kind == "estimate" and not p.policy.allow_estimates and on("policy.allow_estimates"):
            continue
        if max(1, q.min_nodes) > n:
            continue
        ready = max(base, quote_ready_day(q, o, a) + delay)
        if dl is not None and ready + pt.days > dl:
            continue
        usable.append((q, ready))
    if not usable:
        return None
    slip = min(units(slip_premium(q.lead_time_days, q.lead_time_p90_days, a.money), unit) for q, _ in usable)
    finish = min(r for _, r in usable) + pt.days
    if len(o.quotes) == 1:
        q = o.quotes[0]
        if n > q.max_nodes and on(f"quotes.{q.id}.max_nodes"):
            return None
        whole = pt.fixed.total_cost + n * pt.per_node.cost(q.id)
        cost = units(whole, unit) + sum(units(whole * pct / 100.0, unit) for pct in pcts)
        cash = units(pt.fixed.total_cash + n * pt.per_node.cash(q.id), unit)
    else:
        fills = []
        for cash_view in (False, True):
            rest = n
            total = units(pt.fixed.total_cash if cash_view else pt.fixed.total_cost, unit)
            extra = [] if cash_view else pcts  # surcharges in % add to cost only, term by term as the model does
            total += sum(units(pt.fixed.total_cost * pct / 100.0, unit) for pct in extra)

            def per_node(qid: str) -> int:
                c = pt.per_node.total(qid, cash_view)
                return units(c, unit) + sum(units(c * pct / 100.0, unit) for pct in extra)

            for per, _qid, cap in sorted((per_node(q.id), q.id,
                                          q.max_nodes if on(f"quotes.{q.id}.max_nodes") else n) for q, _ in usable):
                take = min(rest, cap)
                total += take * per
                rest -= take
                if rest == 0:
                    break
            if rest > 0:
                return None
            fills.append(total)
        cost, cash = fills
    usd = sum(units(t.add_usd, unit) for t in adds if t.add_usd)
    cost += slip + usd
    cash += usd
    if p.budget.max_usd is not None and on("budget.max_usd"):
        limit = int(math.floor(p.budget.max_usd / unit + 1e-9))
        if (cash if p.budget.applies_to == "cash" else cost) > limit:
            return None
    return cost, cash, finish


def point_bound(pt: Point, lp: LoadedProblem, a: Assumptions, universe: Universe, unit: int,
                cost_hi: int | None) -> int | None:
    """A lower bound on the model objective of any plan at this point with every group enforced, or None."""
    low = point_lower(pt, lp, a, universe, unit)
    if low is None:
        return None
    cost, _cash, finish = low
    return int(objective(cost, finish, lp, universe.horizon, cost_hi, unit))


__all__ = ["sound", "point_bound", "point_lower"]
