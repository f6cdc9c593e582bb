"""A plan that exists under a set of active groups, found without a solve: the cheap half of a feasibility check.

Shrinking a conflict asks, group by group, "with this one switched off, is there a plan?". Most answers are yes,
and a plan that shows it can often be written down: one point no point-local reason excludes, and quotes ready in
time that can supply its nodes — one quote alone, or every usable quote of a few fabrics — within their enforced
capacities and minimum sizes, and, with the budget active, a plan whose cost counted from above (every term
rounded up, the slip premium at its planned start, the cost of hardware waiting for it) is within the budget. The
check is sound (a yes is a plan of the model) and incomplete (a no leaves the question to CP-SAT); with a rule or a
deadline confidence active it always says no, since those couple the plan in ways it does not count.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np

from ..estimate.delivery import order_by_day, quote_slip, ready_offset, wait_days
from ..estimate.options import Point, Universe, option_quote_ready
from ..model.groups import capacity_quote
from ..model.money import floor_units
from ..solve.pipeline import Context

GROUPS = ("workload.memory", "schedule.deadline", "schedule.earliest_start", "policy.max_fabrics",
          "policy.allow_estimates", "budget.max_usd")
"""Groups `witness` checks itself, besides the point-local ones (policy, site, capacities)."""


def witness(ctx: Context, sub: Universe, active: AbstractSet[str]) -> bool:
    """Whether a plan over `sub` exists with the groups `active` enforced (see the module docstring)."""
    if any(g not in GROUPS and not _point_local(g) for g in active):
        return False
    u = ctx.universe
    spec = ctx.problem.spec
    dl = u.deadline_day if "schedule.deadline" in active else None
    fabric_limit = spec.policy.max_fabrics if "policy.max_fabrics" in active else None
    earliest = u.earliest_day if "schedule.earliest_start" in active and spec.schedule.earliest_start is not None \
        else 0
    budget = spec.budget.max_usd if "budget.max_usd" in active else None
    cash = spec.budget.applies_to == "cash"
    no_estimates = "policy.allow_estimates" in active and not spec.policy.allow_estimates
    for o in sub.options:
        # The quotes as arrays (`Screen.table`): which are usable at a point, and in what price order, over
        # thousands of quotes at a time rather than one by one (2,400 witnesses of a 10,000-quote conflict search
        # asked 6.7 million ready days).
        table = ctx.screen.table(o)
        floor = np.maximum(table.ready, max(o.ready_day, earliest))
        allowed = ~table.estimate if no_estimates else np.ones(len(o.quotes), dtype=bool)
        for pt in o.points:
            if not pt.workable or any(it <= active for it in ctx.screen.violations(pt, budget=False)):
                continue
            idx = np.flatnonzero(allowed if dl is None else allowed & (floor + pt.days <= dl))
            per = table.prices.totals(pt, cash)   # pt.per_node.total(q.id, cash), the same floats
            order = idx[np.lexsort((table.id_rank[idx], per[idx]))].tolist()   # by (price, id)
            cheap = [o.quotes[j] for j in order]
            caps = {o.quotes[j].id: o.quotes[j].max_nodes if table.cap_groups[j] in active else pt.n for j in order}
            for alloc in _allocations(cheap, caps, pt.n, fabric_limit):
                if budget is None or _affordable(ctx, pt, alloc, earliest, budget):
                    return True
    return False


def _allocations(usable: list[Any], caps: dict[str, int], n: int, fabric_limit: int | None
                 ) -> list[list[tuple[Any, int]]]:
    """Splits of n nodes to try, `usable` cheapest first: each quote alone; then the quotes of each fabric alone,
    and of the fabrics of the largest capacity (at most `fabric_limit`; every fabric without one), each set two
    ways: every quote at its minimum size and the rest filled cheapest first (`_from_minimums`), and only the
    quotes a cheapest-first fill reaches (`_reached`: with hundreds of quotes the minimums alone exceed n)."""
    out: list[list[tuple[Any, int]]] = [[(q, n)] for q in usable if q.min_nodes <= n <= caps[q.id]]
    fabrics: dict[str, list[Any]] = {}
    for q in usable:
        fabrics.setdefault(q.fabric_id, []).append(q)
    groups = sorted(fabrics.values(), key=lambda qs: (-sum(caps[q.id] for q in qs), qs[0].fabric_id))
    chosen = groups if fabric_limit is None else groups[:fabric_limit]
    rank = {q.id: k for k, q in enumerate(usable)}
    for qs in [*groups, sorted((q for g in chosen for q in g), key=lambda q: rank[q.id])]:
        out += [a for a in (_from_minimums(qs, caps, n), _reached(qs, caps, n)) if a is not None]
    return out


def _from_minimums(qs: list[Any], caps: dict[str, int], n: int) -> list[tuple[Any, int]] | None:
    """Every quote of `qs` at its minimum size, the rest filled in their order; None if that cannot make n."""
    if not sum(q.min_nodes for q in qs) <= n <= sum(caps[q.id] for q in qs):
        return None
    alloc = {q.id: q.min_nodes for q in qs}
    rest = n - sum(alloc.values())
    for q in qs:
        take = min(rest, caps[q.id] - alloc[q.id])
        alloc[q.id] += take
        rest -= take
    return [(q, alloc[q.id]) for q in qs if alloc[q.id] > 0]


def _reached(qs: list[Any], caps: dict[str, int], n: int) -> list[tuple[Any, int]] | None:
    """`qs` filled in their order, each quote the fill reaches for all it can give (at least its minimum, else
    skipped); None if they cannot make n."""
    fill, rest = [], n
    for q in qs:
        take = min(rest, caps[q.id])
        if take >= max(1, q.min_nodes):
            fill.append((q, take))
            rest -= take
        if rest == 0:
            return fill
    return None


def _affordable(ctx: Context, pt: Point, alloc: list[tuple[Any, int]], earliest: int, budget: float) -> bool:
    """The plan's cash (or cost) counted from above is within the budget: every model term is rounded up to the
    money unit, so the dollar sum plus one unit per term (at most 2n + 3 of them) bounds what the model counts."""
    problem, unit = ctx.problem, ctx.unit
    a = problem.assumptions.values
    o = pt.option
    cls = o.accel.cls
    limit, margin = floor_units(budget, unit) * unit, (2 * pt.n + 3) * unit
    cost = pt.fixed.total_cost + sum(x * pt.per_node.cost(q.id) for q, x in alloc)
    cash = pt.fixed.total_cash + sum(x * pt.per_node.cash(q.id) for q, x in alloc)
    if (cash if problem.spec.budget.applies_to == "cash" else cost) + margin > limit:
        return False   # over already: the slip premium and the waits below only add to it
    start = max([earliest, o.ready_day] + [option_quote_ready(q, o, a) for q, _x in alloc])
    if a.money.delay_cost_usd_per_day > 0:
        cost += max(quote_slip(q, cls, a, a.money, start, 0, order_by_day(q, problem.as_of)) for q, _x in alloc)
    for q, x in alloc:
        w = wait_days(q, start, ready_offset(q, cls, a), order_by_day(q, problem.as_of))
        if w > 0:
            wc, wk = pt.per_node.waited(q.id, w)
            cost, cash = cost + x * wc, cash + x * wk
    spent = cash if problem.spec.budget.applies_to == "cash" else cost
    return spent + margin <= limit


def _point_local(g: str) -> bool:
    """Groups whose effect on a point is exactly the screen's items (and capacities, which `witness` checks). The
    deadline's confidence is a policy but not point-local: it couples the start with the quotes' lateness."""
    if g == "policy.deadline_confidence":
        return False
    return g.startswith("policy.") or g.startswith("site.") or capacity_quote(g) is not None


__all__ = ["witness", "GROUPS"]
