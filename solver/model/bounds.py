"""Lower bounds on the objective of every point, so that most points never reach CP-SAT.

Why: a big catalog gives an option dozens of quotes, and the model splits a point's nodes over them
(`y[q,p]`, quotes × node counts integer variables). Nearly all node counts are far from optimal, and a
cheap bound proves it. `solve/grow.py` solves a model over the points with the smallest bounds, then keeps
adding every point whose bound does not exceed the best plan found, until none is left out: the result is
the optimum over all points (branch and bound, with CP-SAT solving the leaves and the model kept small).

The bound of a point relaxes only what can only raise the objective:
- cost ≥ fixed + the cheapest fill of n nodes from the quotes that could be used (each filled up to its
  capacity, cheapest per node first: the exact optimum of the split's LP relaxation, which drops min_nodes)
  + the smallest delivery-slip premium among those quotes at the end of the calendar (premiums only fall as the
  planned start moves later; waiting hardware only adds) + the surcharges of the enforced rules that match the
  point whatever its quotes and cost (add_usd, and add_pct on each cost term, rounded as the model rounds them);
  rules that name quotes or test the cost are left out. A negative add_pct can lower a cost, so with one the
  bounds are switched off (`sound`).
- finish ≥ max(option ready, earliest start, the earliest usable quote's ready day), each ready day pushed back by
  the delays of those rules (they add up), + days.
A quote is usable when it is allowed (estimates policy), could supply the point (min_nodes ≤ n) and, with a
deadline, arrives in time for the point to finish by it. Costs are in the model's integer money units, each
per-node term rounded up exactly as the model rounds it, and the objective is `model.objective`, which is
monotone in cost and finish — so the bound never exceeds the model's value of any plan at that point.
A point with no possible plan (too little usable capacity, over the budget even at the bound) gets None.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Collection
from typing import Any

from ..estimate.options import Option, Point, PriceKey, option_quote_ready
from ..inputs.catalog import Quote
from ..inputs.rules import adjustments, delay_days
from .groups import capacity_group, rule_group
from .money import floor_units, units
from .objective import objective
from .screening import Screen, costs_can_fall
from .timing import slip_units, timing


class Bounds:
    """Per-point lower bounds for one screen (problem and universe) at one money unit; per-option quote data is
    kept here, computed once."""

    def __init__(self, screen: Screen, unit: int) -> None:
        self.screen = screen
        self.problem = screen.problem
        self.unit = unit
        self.sound = not costs_can_fall(self.problem)
        self._options: dict[str, tuple[list[tuple[Quote, int, int, bool]], dict[PriceKey, list[Quote]]]] = {}

    def point_lower(self, pt: Point, active: Collection[str] | None = None) -> tuple[int, int, int] | None:
        """Lower bounds (cost, cash, finish day) for any plan at this point with the `active` groups enforced
        (None: all of them), or None if no plan exists there. A group not enforced is simply not used, which
        only lowers the bounds (see module docstring)."""
        spec = self.problem.spec
        u = self.screen.universe
        unit = self.unit

        def on(gid: str) -> bool:
            return active is None or gid in active

        o = pt.option
        n = pt.n
        adds = [then for rule, then in adjustments(spec.rules, o.attrs, pt.gpus, n, pt.days, pt.power_kw)
                if on(rule_group(rule.name)) and rule.when.quote is None and rule.when.cost is None]
        pcts = [t.add_pct for t in adds if t.add_pct]
        delay = sum(delay_days(t) for t in adds)
        earliest = u.earliest_day if spec.schedule.earliest_start is not None and on("schedule.earliest_start") else 0
        base = max(o.ready_day + delay, earliest)
        dl = u.deadline_day if on("schedule.deadline") else None
        allow_est = spec.policy.allow_estimates or not on("policy.allow_estimates")
        entries, by_key = self._option_data(o)
        usable: set[str] = set()
        slip: int | None = None
        first: int | None = None
        for q, rd, slip_q, est in entries:
            if (est and not allow_est) or max(1, q.min_nodes) > n:
                continue
            ready = max(base, rd + delay)
            if dl is not None and ready + pt.days > dl:
                continue
            usable.add(q.id)
            slip = slip_q if slip is None else min(slip, slip_q)
            first = ready if first is None else min(first, ready)
        if slip is None or first is None:
            return None
        finish = first + pt.days
        if len(o.quotes) == 1:
            q = o.quotes[0]
            if n > q.max_nodes and on(capacity_group(q.id)):
                return None
            whole = pt.fixed.total_cost + n * pt.per_node.cost(q.id)
            cost = units(whole, unit) + sum(units(whole * pct / 100.0, unit) for pct in pcts)
            cash = units(pt.fixed.total_cash + n * pt.per_node.cash(q.id), unit)
        else:
            fills = []
            for cash_view in (False, True):
                extra = () if cash_view else tuple(pcts)  # % surcharges add to cost only, term by term as the model
                fixed = pt.fixed.total_cash if cash_view else pt.fixed.total_cost
                got = _cheapest_fill(pt, by_key, usable, cash_view, extra, unit, n,
                                     lambda qid: on(capacity_group(qid)))
                if got is None:
                    return None
                fills.append(units(fixed, unit) + sum(units(pt.fixed.total_cost * pct / 100.0, unit)
                                                      for pct in extra) + got)
            cost, cash = fills
        usd = sum(units(t.add_usd, unit) for t in adds if t.add_usd)
        cost += slip + usd
        cash += usd
        budget = spec.budget
        if budget.max_usd is not None and on("budget.max_usd"):
            if (cash if budget.applies_to == "cash" else cost) > floor_units(budget.max_usd, unit):
                return None
        return cost, cash, finish

    def _option_data(self, o: Option) -> tuple[list[tuple[Quote, int, int, bool]], dict[PriceKey, list[Quote]]]:
        """Per option, once: each quote's ready day, slip premium at the end of the calendar (units) and estimate
        flag, and the quotes of each price key in order of price (within a key a quote's per-node total is
        t0 + price × t1)."""
        got = self._options.get(o.id)
        if got is None:
            a = self.problem.assumptions.values
            end = self.screen.universe.horizon
            entries = [(q, option_quote_ready(q, o, a), slip_units(self.problem, timing(self.problem, o, q), end, 0,
                                                                   self.unit), q.kind == "estimate")
                       for q in o.quotes]
            by_key: dict[PriceKey, list[Quote]] = {}
            for q in sorted(o.quotes, key=lambda q: (q.price, q.id)):
                by_key.setdefault((q.commit_months, q.kind == "estimate"), []).append(q)
            got = (entries, by_key)
            self._options[o.id] = got
        return got

    def point_bound(self, pt: Point, cost_hi: int | None, cost_cap: int | None = None) -> int | None:
        """A lower bound on the model objective of any plan at this point with every group enforced, or None — also
        when no plan there can cost at most `cost_cap` units (a cap the caller enforces in the model)."""
        low = self.point_lower(pt)
        if low is None:
            return None
        cost, _cash, finish = low
        if cost_cap is not None and cost > cost_cap:
            return None
        return int(objective(cost, finish, self.problem, self.screen.universe.horizon, cost_hi, self.unit))


def _cheapest_fill(pt: Point, by_key: dict[PriceKey, list[Quote]], usable: set[str], cash: bool,
                   pcts: tuple[float, ...], unit: int, n: int, capped: Callable[[str], bool]) -> int | None:
    """Σ per-node cost (units, + % surcharges) of the n cheapest nodes from the usable quotes, each up to its
    capacity when that capacity is enforced: the LP optimum of the split. Quotes are merged across price keys in
    order of cost, pricing only the ones the fill reaches. None if the usable capacity is short of n."""
    heap: list[tuple[int, str, int, Any, float, float]] = []

    def per_node(q: Quote, t0: float, t1: float) -> int:
        c = t0 + q.price * t1
        return units(c, unit) + sum(units(c * pct / 100.0, unit) for pct in pcts)

    for k, (key, qs) in enumerate(sorted(by_key.items())):
        t0, t1 = pt.per_node.key_totals(key, cash)
        ordered = qs if t1 >= 0 else list(reversed(qs))  # cheapest first within the key
        it = (q for q in ordered if q.id in usable)
        q = next(it, None)
        if q is not None:
            heapq.heappush(heap, (per_node(q, t0, t1), q.id, k, (q, it), t0, t1))
    total, rest = 0, n
    while heap and rest > 0:
        per, _qid, k, (q, it), t0, t1 = heapq.heappop(heap)
        take = min(rest, q.max_nodes if capped(q.id) else rest)
        total += take * per
        rest -= take
        nxt = next(it, None)
        if nxt is not None:
            heapq.heappush(heap, (per_node(nxt, t0, t1), nxt.id, k, (nxt, it), t0, t1))
    return total if rest == 0 else None


__all__ = ["Bounds"]
