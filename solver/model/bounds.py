"""Lower bounds on the objective of every point, so that most points never reach CP-SAT.

Why: a big catalog gives an option dozens of quotes, and the model splits a point's nodes over them
(`y[q,p]`, quotes × node counts integer variables). Nearly all node counts are far from optimal, and a
cheap bound proves it. `solve/grow.py` solves a model over the points with the smallest bounds, then keeps
adding every point whose bound does not exceed the best plan found, until none is left out: the result is
the optimum over all points (branch and bound, with CP-SAT solving the leaves and the model kept small).

The bound of a point relaxes only what can only raise the objective:
- cost ≥ fixed + the cheapest fill of n nodes from the quotes that could be used (each filled up to its
  capacity, cheapest per node first: the exact optimum of the split's LP relaxation, which drops min_nodes)
  + the plan's lateness charge, which is at least that of each quote it uses alone, planned on its own floor
  (`Outlook.alone`: the start is the latest of independent arrivals, and a later planned start only orders bought
  hardware later; waiting hardware only adds): the least over lateness levels s of (s + the cheapest fill from the
  quotes whose charge alone is at most s) — a dear fill from quotes that are sure to arrive against a cheap one that
  may be late (`_cost_by_premium`) — + the surcharges of
  the enforced rules that match the point whatever its quotes and cost (add_usd, and a positive add_pct on each
  cost term, rounded as the model rounds them); rules that name quotes or test the cost are left out. Discounts
  (a negative add_pct, any rule's) are taken off the result: each adds its percentage of the plan's cost lines,
  so a plan's cost is at least `kept` = 1 + Σ negative add_pct / 100 times its undiscounted cost, which is at least
  the bound above — the cost bound is kept × that (rounded down), and a limit L on the cost admits an undiscounted
  bound up to L / kept. (The model rounds each discount term up, toward zero, so it takes off no more than that.)
  With discounts of 100 % or more in all, nothing is left to bound by, and the bounds are off (`sound`).
- finish ≥ the planned start + days, and the planned start is at least the option's ready day and the earliest
  start, each pushed back by the delays of those rules (they add up), and the first ready day by which the quotes
  ready then can hold n nodes within the budget and a caller's cost cap (`_earliest_start`): with a marketplace
  catalog the first quote to arrive seldom holds a whole cluster, and under a cap the cheap quotes may be late.
A quote is usable when it is allowed (estimates policy), could supply the point (min_nodes ≤ n), with a deadline,
arrives in time for the point to finish by it, and with `policy.deadline_confidence`, a plan using it alone and
started on its ready day meets the confidence (the model holds start ≤ F*(point, quote) for every used quote, and
F* can only fall as more quotes join: `estimate/chance.py`). Costs are in the model's integer money units, each
per-node term rounded up exactly as the model rounds it, and the objective is `model.objective`, which is
monotone in cost and finish — so the bound never exceeds the model's value of any plan at that point.
A point with no possible plan (too little usable capacity, over the budget even at the bound) gets None.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from ..estimate.options import Option, Point, PriceKey
from ..inputs.rules import adjustments, delay_days, rule_group
from ..inputs.spec import Adjust
from .arrays import distinct
from .groups import capacity_group
from .money import floor_units, kept_share, units
from .objective import objective
from .screening import Screen


class Bounds:
    """Per-point lower bounds for one screen (problem and universe) at one money unit; per-option quote data is
    kept here, computed once."""

    def __init__(self, screen: Screen, unit: int) -> None:
        self.screen = screen
        self.problem = screen.problem
        self.unit = unit
        self.kept = kept_share(self.problem)
        """The least share of a plan's cost lines the rules' discounts can leave (1 without one): the cost bounds are
        those of the undiscounted lines, times this share (see module docstring)."""
        self.sound = self.kept > 0
        self._options: dict[str, _Quotes] = {}
        self._usable: dict[tuple[str, int], int] = {}
        self._lower: dict[tuple[tuple[str, int], int | None], tuple[int, int, int] | None] = {}
        self._templates: dict[tuple[tuple[str, int], bool], tuple[np.ndarray, np.ndarray]] = {}
        self._lates: dict[tuple[tuple[str, int], int, bool], np.ndarray] = {}

    def weight(self, pt: Point, active: Collection[str] | None = None) -> int:
        """How many quotes a model with the `active` groups enforced (None: all) may split the point's nodes over:
        the size the point adds to a model. With every group enforced, its usable quotes as `point_lower` counted
        them (all of the option's before that); with some, those `usable` under them. Rented capacity on one fabric
        per job counts one: each of its quotes is a plan alone, and the presolve keeps only the few on the front of
        cost, cash and readiness (`reduce.py`, R1). Without that limit (an explanation's drop of it) the point
        splits over its usable quotes of every fabric: at 100,000 quotes over a thousand of them."""
        if pt.option.mode != "buy" and self.problem.spec.policy.max_fabrics == 1 and \
                (active is None or "policy.max_fabrics" in active):
            return 1
        if active is not None:
            return int(np.count_nonzero(self.usable(pt, active)))
        got = self._usable.get(pt.key)
        return got if got is not None else len(pt.option.quotes)

    def point_lower(self, pt: Point, active: Collection[str] | None = None,
                    cost_cap: int | None = None) -> tuple[int, int, int] | None:
        """Lower bounds (cost, cash, finish day) for any plan at this point with the `active` groups enforced
        (None: all of them) and a cost of at most `cost_cap` units, or None if no plan exists there. A group not
        enforced is simply not used, which only lowers the bounds (see module docstring). With every group
        enforced the answer is kept: the solve, its tie-break and the frontier ask for the same points again."""
        if active is None:
            key = (pt.key, cost_cap)
            if key not in self._lower:
                self._lower[key] = self._point_lower(pt, None, cost_cap)
            return self._lower[key]
        return self._point_lower(pt, active, cost_cap)

    def point_floor(self, pt: Point) -> tuple[int, int, int]:
        """Floors under `point_lower(pt, active)` for any `active` and cap (cost, cash, finish day), from the point's
        fixed lines and its option's cheapest per-node price and first ready day alone — no quote is looked at, so
        it costs the same at any number of quotes, where a point bound of a rented option prices every quote
        (measured: bench/README.md, "Timings that used to live in docstrings (moved 2026-12-07)"). A caller ranks
        pairs by it and bounds only those whose floor the best plan so far does not already beat
        (`PairOracle.minimize`).

        Why each holds: every term `point_lower` adds is nonnegative (lateness, add_pct > 0, add_usd ≥ 0, the
        discounts taken off as `kept` × the lines), a fill of n nodes costs at least n × the cheapest per-node total
        (`PerNode.extreme`, the floats the model's units are rounded up from), and no plan starts before the option
        is ready or before its first quote can be (`Screen.facts`), rule delays only adding days. The money floors are
        rounded down and less one unit, below any rounding up of the same dollars."""
        unit = self.unit
        cost = math.floor((pt.fixed.total_cost + pt.n * pt.per_node.extreme(False, min)) * self.kept / unit) - 1
        cash = math.floor((pt.fixed.total_cash + pt.n * pt.per_node.extreme(True, min)) / unit) - 1
        return cost, cash, self.screen.facts(pt.option).first_ready + pt.days

    def _point_lower(self, pt: Point, active: Collection[str] | None,
                     cost_cap: int | None) -> tuple[int, int, int] | None:
        spec = self.problem.spec
        unit = self.unit

        def on(gid: str) -> bool:
            return active is None or gid in active

        o = pt.option
        n = pt.n
        adds = self._adds(pt, active)
        pcts = [t.add_pct for t in adds if t.add_pct and t.add_pct > 0]  # discounts: `kept`, on the result
        arr = self._arrays(o)
        delay = sum(delay_days(t) for t in adds)
        ready, mask = self._usable_at(pt, active, delay)
        idx = np.flatnonzero(mask)
        if active is None:
            self._usable[pt.key] = len(idx)
        if len(idx) == 0:
            return None
        budget = spec.budget
        limit = floor_units(budget.max_usd, unit) if budget.max_usd is not None and on("budget.max_usd") else None
        usd = sum(units(t.add_usd, unit) for t in adds if t.add_usd)
        cost_limit = self._undiscounted(min(x for x in (cost_cap, limit if budget.applies_to == "cost" else None,
                                                        _NO_LIMIT) if x is not None))
        cash_limit = limit if limit is not None and budget.applies_to == "cash" else _NO_LIMIT
        late = self._late(pt, active, delay)
        if len(o.quotes) == 1:
            q = o.quotes[0]
            if n > q.max_nodes and on(capacity_group(q.id)):
                return None
            whole = pt.fixed.total_cost + n * pt.per_node.cost(q.id)
            cost = units(whole + float(late[0]), unit) + sum(units(whole * pct / 100.0, unit) for pct in pcts) + usd
            cash = units(pt.fixed.total_cash + n * pt.per_node.cash(q.id), unit) + usd
            if cost > cost_limit or cash > cash_limit:
                return None
            return self._discounted(cost), cash, int(ready[0]) + pt.days
        capped = arr.cap if active is None else \
            np.where(np.fromiter(map(active.__contains__, arr.cap_groups), dtype=bool, count=len(arr.ids)), arr.cap, n)
        late_u = _units(late, unit)
        found = [f for f in (self._whole_bound(pt, arr, idx, capped, pcts, usd, late, (cost_limit, cash_limit),
                                               ready),
                             self._shared_bound(pt, arr, idx, capped, pcts, usd, late_u, (cost_limit, cash_limit),
                                                ready)) if f is not None]
        if not found:
            return None
        return (self._discounted(min(f[0] for f in found)), min(f[1] for f in found), min(f[2] for f in found))

    def _whole_bound(self, pt: Point, arr: "_Quotes", idx: np.ndarray, capped: np.ndarray, pcts: Sequence[float],
                     usd: int, late: np.ndarray, limits: tuple[int, int],
                     ready: np.ndarray) -> tuple[int, int, int] | None:
        """The least (cost, cash, finish) of the plans at this point that take all n nodes from one of the quotes
        `idx`: the model charges each its lines and its lateness (`late`, dollars) rounded up once
        (`builder.plan_units`), plus the rules' surcharges (a percentage rounded once too). Every other plan splits its nodes, and is charged per
        node (`_shared_bound`)."""
        unit, n = self.unit, pt.n
        idx = idx[capped[idx] >= n]
        if len(idx) == 0:
            return None
        whole = pt.fixed.total_cost + n * self._per_node_usd(pt, arr, idx, False)
        cost = _units(whole + late[idx], unit) + usd
        for pct in pcts:
            cost = cost + _units(whole * pct / 100.0, unit)
        cash = _units(pt.fixed.total_cash + n * self._per_node_usd(pt, arr, idx, True), unit) + usd
        ok = (cost <= limits[0]) & (cash <= limits[1])
        if not ok.any():
            return None
        return int(cost[ok].min()), int(cash[ok].min()), int(ready[idx][ok].min()) + pt.days

    def _shared_bound(self, pt: Point, arr: "_Quotes", idx: np.ndarray, capped: np.ndarray, pcts: Sequence[float],
                      usd: int, late: np.ndarray, limits: tuple[int, int],
                      ready: np.ndarray) -> tuple[int, int, int] | None:
        """The bound of the plans at this point that split its nodes over the quotes `idx`, charged per node (a fill
        from one quote is among them: a valid, looser bound of a whole plan too)."""
        unit, n = self.unit, pt.n
        cost_limit, cash_limit = limits
        o = pt.option
        fixed_cost = units(pt.fixed.total_cost, unit) + sum(units(pt.fixed.total_cost * pct / 100.0, unit)
                                                             for pct in pcts) + usd
        fixed_cash = units(pt.fixed.total_cash, unit) + usd
        if usd >= 0 and _over_at_any_price(pt, unit, fixed_cost, fixed_cash, (cost_limit, cash_limit)):
            return None
        if len(o.quotes) < REFINE_FROM:
            return self._plain(pt, self._arrays(o), idx, np.minimum(capped[idx], n), pcts, (fixed_cost, fixed_cash),
                               (cost_limit, cash_limit), int(ready[idx].min()), late)
        split = _Split(np.minimum(capped[idx], n), self._per_node(pt, arr, idx, False, pcts),
                       self._per_node(pt, arr, idx, True, ()), n)
        slips = late[idx]
        least = _cost_by_premium(split, slips, fixed_cost, fixed_cash, cost_limit, cash_limit)
        if least is None:
            return None
        cash_fill = split.fill(None, True)
        if cash_fill is None:
            return None
        start = _earliest_start(split, ready[idx], slips, fixed_cost, fixed_cash, cost_limit, cash_limit)
        if start is None:
            return None
        return least, fixed_cash + int(cash_fill), start + pt.days

    def _undiscounted(self, limit: int) -> int:
        """The most a plan's undiscounted cost (what the bounds compute) can be when its cost is within `limit`:
        kept × undiscounted ≤ cost ≤ limit (see module docstring); one unit over, against float rounding."""
        if self.kept >= 1 or limit >= _NO_LIMIT:
            return limit
        return math.floor(limit / self.kept) + 1

    def _discounted(self, cost: int) -> int:
        """A cost bound with the rules' discounts taken off: kept × the undiscounted bound, rounded down, one less."""
        return cost if self.kept >= 1 else math.floor(cost * self.kept) - 1

    def _usable_at(self, pt: Point, active: Collection[str] | None, delay: int) -> tuple[np.ndarray, np.ndarray]:
        """(each quote's ready day at this point, which quotes a plan here can use): allowed by the estimates
        policy, able to supply the point (min_nodes ≤ n) and, with a deadline, ready in time for the point to finish
        by it — with the groups `active` (None: all) enforced and the rules' delays `delay`."""
        spec, u, o = self.problem.spec, self.screen.universe, pt.option

        def on(gid: str) -> bool:
            return active is None or gid in active

        earliest = u.earliest_day if spec.schedule.earliest_start is not None and on("schedule.earliest_start") else 0
        base = max(o.ready_day + delay, earliest)
        arr = self._arrays(o)
        ready = np.maximum(base, arr.ready + delay)
        mask = arr.least <= pt.n
        if not (spec.policy.allow_estimates or not on("policy.allow_estimates")):
            mask &= ~arr.est
        if on("schedule.deadline") and u.deadline_day is not None:
            mask &= ready + pt.days <= u.deadline_day
        chance = self.screen.chance
        if chance is not None and on("policy.deadline_confidence") and pt.time is not None and mask.any():
            rows = np.flatnonzero(mask)
            mask[rows] = chance.meets_alone(o, pt, ready, rows, earliest=on("schedule.earliest_start"))
        return ready, mask

    def usable(self, pt: Point, active: Collection[str] | None = None) -> np.ndarray:
        """Which of the option's quotes any plan at this point can use with the groups `active` enforced (None: all
        of them; `_usable_at`): a quote outside it has no feasible plan here, so a model solved with those groups
        enforced need not give it a variable."""
        return self._usable_at(pt, active, sum(delay_days(t) for t in self._adds(pt, active)))[1]

    def _adds(self, pt: Point, active: Collection[str] | None) -> list[Adjust]:
        """The adjustments of the enforced rules that apply at the point whatever its quotes and cost (rules that
        name quotes or test the cost are left out: they can only add)."""
        o = pt.option
        return [then for rule, then in adjustments(self.problem.spec.rules, o.attrs, pt.gpus, pt.n, pt.days,
                                                   pt.power_kw)
                if (active is None or rule_group(rule.name) in active)
                and rule.when.quote is None and rule.when.cost is None]

    def _plain(self, pt: Point, arr: "_Quotes", idx: np.ndarray, caps: np.ndarray, pcts: Sequence[float],
               fixed: tuple[int, int], limits: tuple[int, int], first: int,
               late: np.ndarray) -> tuple[int, int, int] | None:
        """The bound of an option with few quotes, in plain Python (numpy's per-call cost dominates there): the
        cheapest fills of cost and cash, the least premium, the first ready day — what `_cost_by_premium` and
        `_earliest_start` refine, and never above them."""
        unit = self.unit
        ids = [arr.ids[i] for i in idx.tolist()]
        held = caps.tolist()
        costs = [units(c, unit) + sum(units(c * pct / 100.0, unit) for pct in pcts)
                 for c in (pt.per_node.cost(q) for q in ids)]
        cashes = [units(pt.per_node.cash(q), unit) for q in ids]
        fills = []
        for per in (costs, cashes):
            rest, total = pt.n, 0
            for price, cap in sorted(zip(per, held, strict=True)):
                take = min(rest, cap)
                total += take * price
                rest -= take
                if rest == 0:
                    break
            if rest > 0:
                return None
            fills.append(total)
        cost = fixed[0] + fills[0] + int(late[idx].min())
        cash = fixed[1] + fills[1]
        if cost > limits[0] or cash > limits[1]:
            return None
        return cost, cash, first + pt.days

    def _late(self, pt: Point, active: Collection[str] | None, delay: int) -> np.ndarray:
        """Each quote's lateness charge alone at this point (dollars): what a plan using it is charged at least
        (`Outlook.alone`), with the rules' delays `delay` and the earliest start if it is enforced. Kept per point
        with every group enforced."""
        earliest = active is None or "schedule.earliest_start" in active
        key = (pt.key, delay, earliest)
        got = self._lates.get(key)
        if got is None:
            got = self.screen.outlook.alone(pt.option, pt, delay, earliest=earliest)
            if active is None:
                self._lates[key] = got
        return got

    def _arrays(self, o: Option) -> "_Quotes":
        """Per option, once: each quote's ready day, estimate flag, capacity, least order and price key, as arrays
        (ids, ready days, capacities and prices from the screen's table of the option)."""
        got = self._options.get(o.id)
        if got is None:
            qs = o.quotes
            table = self.screen.table(o)  # asked for a point's option: it has points, hence prices
            got = _Quotes(
                ids=table.ids, cap_groups=table.cap_groups, ready=table.ready,
                est=np.array([q.kind == "estimate" for q in qs], dtype=bool),
                cap=table.cap,
                least=np.array([max(1, q.min_nodes) for q in qs], dtype=np.int64),
                price=table.prices.prices, keys=table.prices.keys, key_of=table.prices.key_of)
            self._options[o.id] = got
        return got

    def _per_node_usd(self, pt: Point, arr: "_Quotes", idx: np.ndarray, cash: bool) -> np.ndarray:
        """Per-node cost (or cash) in dollars of the quotes `idx` at this point: t0 + price × t1 of the quote's
        price key (the floats of `PerNode.cost`)."""
        got = self._templates.get((pt.key, cash))
        if got is None:
            totals = [pt.per_node.key_totals(k, cash) for k in arr.keys]
            got = self._templates[(pt.key, cash)] = (np.array([t[0] for t in totals]), np.array([t[1] for t in totals]))
        keys = arr.key_of[idx]
        return got[0][keys] + arr.price[idx] * got[1][keys]

    def _per_node(self, pt: Point, arr: "_Quotes", idx: np.ndarray, cash: bool, pcts: Sequence[float]) -> np.ndarray:
        """Per-node cost (or cash) in units of the quotes `idx` at this point, each % surcharge rounded up per node
        as the model rounds it."""
        dollars = self._per_node_usd(pt, arr, idx, cash)
        out = _units(dollars, self.unit)
        for pct in pcts:
            out = out + _units(dollars * pct / 100.0, self.unit)
        return out

    def point_bound(self, pt: Point, cost_hi: int | None, cost_cap: int | None = None) -> int | None:
        """A lower bound on the model objective of any plan at this point with every group enforced, or None — also
        when no plan there can cost at most `cost_cap` units (a cap the caller enforces in the model)."""
        low = self.point_lower(pt, cost_cap=cost_cap)
        if low is None:
            return None
        cost, _cash, finish = low
        return int(objective(cost, finish, self.problem, self.screen.universe.horizon, cost_hi, self.unit))


_NO_LIMIT = 2 ** 62
"""A limit no plan reaches (no cap, no budget)."""
REFINE_FROM = 16
"""Options with at least this many quotes get the refined bounds (`_cost_by_premium`, `_earliest_start`); fewer
quotes seldom trade premium against price enough to matter, and a plain fill is several times cheaper there."""
VECTOR_CELLS = 20_000
"""Up to this many (ready day × quote) cells the earliest start is tested at every ready day in one array
operation; beyond, by bisection over the days (a few fills, not a days × quotes matrix)."""
PREMIUM_LEVELS = 32
"""Most lateness levels a point's cost bound is evaluated at (`_cost_by_premium`): exact up to this many distinct
charges among its usable quotes, a coarser but still valid bound beyond."""


@dataclass(frozen=True)
class _Quotes:
    """An option's quotes as arrays (`Bounds._arrays`), in the option's order."""

    ids: list[str]
    cap_groups: list[str]
    ready: np.ndarray
    est: np.ndarray
    cap: np.ndarray
    least: np.ndarray
    price: np.ndarray
    keys: list[PriceKey]
    key_of: np.ndarray


class _Split:
    """The split relaxation at one point: n nodes over some usable quotes, each up to its capacity, min_nodes
    dropped. Its optimum fills the cheapest per-node first (the LP optimum of the split), for cost and for cash
    separately — the two orders may differ, and each fill is a lower bound on its own quantity."""

    def __init__(self, cap: np.ndarray, cost: np.ndarray, cash: np.ndarray, n: int) -> None:
        self.n = n
        self.cap = cap
        self.per = (cost, cash)
        """Each quote's per-node cost and cash (units)."""
        self._views: dict[bool, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def _view(self, cash: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        got = self._views.get(cash)
        if got is None:
            per = self.per[1 if cash else 0]
            order = np.argsort(per, kind="stable")
            got = self._views[cash] = (order, per[order], self.cap[order])
        return got

    def fills(self, masks: np.ndarray, cash: bool) -> np.ndarray:
        """For each row of `masks` (quotes allowed, in the quotes' order): the cheapest fill of n nodes from the
        allowed quotes, in units; _NO_LIMIT where they cannot hold n."""
        order, per, cap = self._view(cash)
        taken = np.where(masks[:, order], cap[None, :], 0)
        held = np.cumsum(taken, axis=1)
        spent = np.cumsum(taken * per[None, :], axis=1)
        full = held[:, -1] >= self.n
        k = np.argmax(held >= self.n, axis=1)
        rows = np.arange(len(masks))
        before_held = np.where(k > 0, held[rows, k - 1], 0)
        before_spent = np.where(k > 0, spent[rows, k - 1], 0)
        total = before_spent + (self.n - before_held) * per[k]
        return np.where(full, total, _NO_LIMIT)

    def fill(self, allowed: np.ndarray | None, cash: bool) -> int | None:
        """One fill (`fills`) from the allowed quotes (None: all), or None where they cannot hold n: the same sums on
        one row, the quote that completes n found by bisection on the running capacity (it never falls)."""
        order, per, cap = self._view(cash)
        taken = cap if allowed is None else np.where(allowed[order], cap, 0)
        held = np.cumsum(taken)
        if held[-1] < self.n:
            return None
        k = int(np.searchsorted(held, self.n))
        before = int(held[k - 1]) if k else 0
        return int(taken[:k] @ per[:k]) + (self.n - before) * int(per[k])


def _over_at_any_price(pt: Point, unit: int, fixed_cost: int, fixed_cash: int, limits: tuple[int, int]) -> bool:
    """Whether n nodes at the option's cheapest per-node price (over all its quotes, usable or not) already exceed a
    limit: then so does every fill, and the point has no plan. The model prices each node of a split point at its
    quote's per-node units, each at least the cheapest's (`PerNode.extreme`), so fixed + n × that is a lower bound
    of the fills below; computed in a few operations, before the fills (most points a cost cap rules out go here)."""
    if limits[0] < _NO_LIMIT and fixed_cost + pt.n * units(pt.per_node.extreme(False, min), unit) > limits[0]:
        return True
    return limits[1] < _NO_LIMIT and fixed_cash + pt.n * units(pt.per_node.extreme(True, min), unit) > limits[1]


def _cost_by_premium(split: _Split, slips: np.ndarray, fixed_cost: int, fixed_cash: int, cost_limit: int,
                     cash_limit: int) -> int | None:
    """The least cost of a plan at the point, counting its lateness with the quotes that lateness allows.

    A plan charged s for lateness uses only quotes whose charge alone is at most s (the plan's charge is at least
    each of its quotes' alone). So for s in [g_i, g_i+1) between two evaluated levels, cost ≥ fixed + fill(quotes
    charged < g_i+1) + g_i, and its cash ≥ fixed + their cash fill; levels over a limit are out. The bound is the
    least over levels — never below the cheapest fill plus the least charge, which is what it refines."""
    levels = distinct(slips)
    if len(levels) > PREMIUM_LEVELS:
        levels = distinct(levels[np.linspace(0, len(levels) - 1, PREMIUM_LEVELS).round().astype(np.int64)])
    uppers = np.append(levels[1:], np.iinfo(np.int64).max)
    masks = slips[None, :] < uppers[:, None]
    fills = split.fills(masks, False)
    ok = fills < _NO_LIMIT
    cost = fixed_cost + np.where(ok, fills, 0) + levels
    ok &= cost <= cost_limit
    if cash_limit < _NO_LIMIT and ok.any() and fixed_cash + split.n * int(split.per[1].max()) > cash_limit:
        cash = split.fills(masks, True)
        ok &= (cash < _NO_LIMIT) & (fixed_cash + np.where(cash < _NO_LIMIT, cash, 0) <= cash_limit)
    return int(cost[ok].min()) if ok.any() else None


def _earliest_start(split: _Split, ready: np.ndarray, slips: np.ndarray, fixed_cost: int, fixed_cash: int,
                    cost_limit: int, cash_limit: int) -> int | None:
    """The earliest planned start a plan at the point can have: the first ready day by which the quotes ready can
    hold n nodes within the cost and cash limits (cheapest fills, the least premium among them). A plan's planned
    start F is no earlier than each of its quotes' ready days, so it uses only quotes ready by F; the conditions
    only loosen as F grows, so the first such day is found by bisection. None if no day works. Without limits only
    capacity counts: the first day the ready quotes hold n — also when even the dearest fill (n nodes at the dearest
    usable quote's price, its premium the largest) is within them, as with a budget far above the plan."""
    cost_per, cash_per = split.per
    if fixed_cost + split.n * int(cost_per.max()) + int(slips.max()) <= cost_limit and \
            fixed_cash + split.n * int(cash_per.max()) <= cash_limit:
        cost_limit = cash_limit = _NO_LIMIT
    if cost_limit >= _NO_LIMIT and cash_limit >= _NO_LIMIT:
        order = np.argsort(ready, kind="stable")
        held = np.cumsum(split.cap[order])
        if held[-1] < split.n:
            return None
        return int(ready[order][np.argmax(held >= split.n)])
    days = distinct(ready)
    if len(days) * len(ready) <= VECTOR_CELLS:
        allowed = ready[None, :] <= days[:, None]
        cost = split.fills(allowed, False)
        least = np.where(allowed.any(axis=1),
                         np.where(allowed, slips[None, :], np.iinfo(np.int64).max).min(axis=1), 0)
        ok = (cost < _NO_LIMIT) & (fixed_cost + np.where(cost < _NO_LIMIT, cost, 0) + least <= cost_limit)
        if cash_limit < _NO_LIMIT:
            cash = split.fills(allowed, True)
            ok &= (cash < _NO_LIMIT) & (fixed_cash + np.where(cash < _NO_LIMIT, cash, 0) <= cash_limit)
        return int(days[np.argmax(ok)]) if ok.any() else None

    def works(j: int) -> bool:
        allowed = ready <= days[j]
        cost = split.fill(allowed, False)
        if cost is None or fixed_cost + cost + int(slips[allowed].min()) > cost_limit:
            return False
        if cash_limit >= _NO_LIMIT:
            return True
        cash = split.fill(allowed, True)
        return cash is not None and fixed_cash + cash <= cash_limit

    if not works(len(days) - 1):
        return None
    return int(days[bisect_left(range(len(days)), True, key=works)])


def _units(dollars: np.ndarray, unit: int) -> np.ndarray:
    """`money.units` over an array (the same rounding: up, with the same tolerance)."""
    return np.ceil(dollars / unit - 1e-9).astype(np.int64)


__all__ = ["Bounds"]
