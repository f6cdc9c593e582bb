"""A plan that exists under a set of active groups, found without a solve: the cheap half of a feasibility check.

Shrinking a conflict asks, group by group, "with this one switched off, is there a plan?". Most answers are yes,
and a plan that shows it can often be written down: one point no point-local reason excludes, and quotes ready in
time that can supply its nodes — one quote alone, or every usable quote of a few fabrics — within their enforced
capacities and minimum sizes, and, with the budget active, a plan whose cost counted from above (every term
rounded up, the lateness of its quotes together, the cost of hardware waiting for it) is within the budget. The
check is sound (a yes is a plan of the model) and incomplete (a no leaves the question to CP-SAT); with a rule or a
deadline confidence active it always says no, since those couple the plan in ways it does not count.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..estimate.delivery import order_by_day, ready_offset, wait_days
from ..estimate.options import Point, Universe, option_quote_ready
from ..model.builder import plan_units
from ..model.groups import capacity_quote
from ..model.money import floor_units, units
from ..solve.pipeline import Context

GROUPS = ("workload.memory", "schedule.deadline", "schedule.earliest_start", "policy.max_fabrics",
          "policy.allow_estimates", "budget.max_usd")
"""Groups `witness` checks itself, besides the point-local ones (policy, site, capacities)."""


@dataclass(frozen=True)
class GroupLimits:
    """What the active groups enforce that `witness` checks itself (None or 0: not enforced)."""

    deadline: int | None
    fabrics: int | None
    earliest: int
    budget: float | None
    no_estimates: bool


def limits_of(ctx: Context, active: AbstractSet[str]) -> GroupLimits | None:
    """The limits of `active`; None when a group couples the plan in ways a written-down plan does not count (a
    rule, the deadline's confidence)."""
    if any(g not in GROUPS and not _point_local(g) for g in active):
        return None
    u, spec = ctx.universe, ctx.problem.spec
    return GroupLimits(u.deadline_day if "schedule.deadline" in active else None,
                   spec.policy.max_fabrics if "policy.max_fabrics" in active else None,
                   u.earliest_day if "schedule.earliest_start" in active and spec.schedule.earliest_start is not None
                   else 0,
                   spec.budget.max_usd if "budget.max_usd" in active else None,
                   "policy.allow_estimates" in active and not spec.policy.allow_estimates)


def witness(ctx: Context, sub: Universe, active: AbstractSet[str]) -> bool:
    """Whether a plan over `sub` exists with the groups `active` enforced (see the module docstring)."""
    lim = limits_of(ctx, active)
    if lim is None:
        return False
    cash = ctx.problem.spec.budget.applies_to == "cash"
    for o in sub.options:
        # The quotes as arrays (`Screen.table`): which are usable at a point, and in what price order, over
        # thousands of quotes at a time rather than one by one (2,400 witnesses of a 10,000-quote conflict search
        # asked 6.7 million ready days).
        table = ctx.screen.table(o)
        floor = np.maximum(table.ready, max(o.ready_day, lim.earliest))
        allowed = ~table.estimate if lim.no_estimates else np.ones(len(o.quotes), dtype=bool)
        for pt in o.points:
            if not pt.workable or any(it <= active for it in ctx.screen.violations(pt, budget=False)):
                continue
            idx = np.flatnonzero(allowed if lim.deadline is None else allowed & (floor + pt.days <= lim.deadline))
            per = table.prices.totals(pt, cash)   # pt.per_node.total(q.id, cash), the same floats
            order = idx[np.lexsort((table.id_rank[idx], per[idx]))].tolist()   # by (price, id)
            cheap = [o.quotes[j] for j in order]
            caps = {o.quotes[j].id: o.quotes[j].max_nodes if table.cap_groups[j] in active else pt.n for j in order}
            for alloc in _allocations(cheap, caps, pt.n, lim.fabrics):
                if lim.budget is None or _affordable(ctx, pt, alloc, lim.earliest, lim.budget):
                    return True
    return False


def witness_alone(ctx: Context, pt: Point, j: int, active: AbstractSet[str], lim: GroupLimits) -> bool:
    """Whether the point's n nodes all from its option's quote `j` are a plan under `active` with that quote's
    capacity lifted (`lim`: `limits_of(active)`, which a capacity does not change): the first split `witness`
    tries, asked of one quote. A conflict's capacity group is needed when lifting it alone leaves a plan, and the
    plan it leaves is most often this one, the quote supplying the whole cluster: at 100,000 quotes this shows
    7,871 of an infeasible deadline's 7,875 capacities needed in half a second (`PairOracle.needed`)."""
    o = pt.option
    q = o.quotes[j]
    table = ctx.screen.table(o)
    lifted = table.cap_groups[j]
    if not pt.workable or not q.min_nodes <= pt.n or (lim.no_estimates and table.estimate[j]):
        return False
    if lim.deadline is not None and max(int(table.ready[j]), o.ready_day, lim.earliest) + pt.days > lim.deadline:
        return False
    if any(lifted not in it and it <= active for it in ctx.screen.violations(pt, budget=False)):
        return False
    return lim.budget is None or _affordable(ctx, pt, [(q, pt.n)], lim.earliest, lim.budget)


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
    """The plan's cash (or cost) as the model counts it, from above, is within the budget in money units.

    Each model term is rounded up to the unit (`money.units`), and so is each term here, the same way or more:
    a plan that takes all its nodes from one quote, its lines once (`builder.plan_units`, as the model charges it);
    a split, the point's fixed lines once and each quote's per-node lines per node, the lateness of the plan's quotes together at its planned start (the
    model charges no more: the largest of their alone figures, or the cut of this very set), and each waiting
    quote's per-node wait cost per node. Rounding the dollar sum and
    adding one unit per node instead over-counted by up to 2n units: $6.4M at 3,200 nodes and a $1k unit, which
    left plans $5M under a $150M budget to a 30-second minimisation (a deadline at 100,000 quotes)."""
    problem, unit = ctx.problem, ctx.unit
    a = problem.assumptions.values
    o = pt.option
    cls = o.accel.cls
    cash = problem.spec.budget.applies_to == "cash"
    limit = floor_units(budget, unit)
    if len(alloc) == 1:   # all n nodes from one quote: the model rounds the plan's lines up once
        spent = plan_units(pt, alloc[0][0].id, unit)[1 if cash else 0]
    else:
        spent = units(pt.fixed.total_cash if cash else pt.fixed.total_cost, unit) + sum(
            x * units(pt.per_node.cash(q.id) if cash else pt.per_node.cost(q.id), unit) for q, x in alloc)
    if spent > limit:
        return False   # over already: the slip premium and the waits below only add to it
    start = max([earliest, o.ready_day] + [option_quote_ready(q, o, a) for q, _x in alloc])
    if not cash:   # the lateness of the quotes together: what the model charges them at most (`Outlook.charge`)
        out = ctx.screen.outlook   # planned from the earliest start, as the model charges a quote alone
        spent += units(out.charge(o, pt, out.plan_law(o, [q for q, _x in alloc], max(start, out.earliest), 0)),
                       unit)
    for q, x in alloc:
        w = wait_days(q, start, ready_offset(q, cls, a), order_by_day(q, problem.as_of))
        if w > 0:
            wc, wk = pt.per_node.waited(q.id, w)
            spent += x * units(wk if cash else wc, unit)
    return spent <= limit


def _point_local(g: str) -> bool:
    """Groups whose effect on a point is exactly the screen's items (and capacities, which `witness` checks). The
    deadline's confidence is a policy but not point-local: it couples the start with the quotes' lateness."""
    if g == "policy.deadline_confidence":
        return False
    return g.startswith("policy.") or g.startswith("site.") or capacity_quote(g) is not None


__all__ = ["witness", "witness_alone", "limits_of", "GroupLimits", "GROUPS"]
