"""The cuts that make a pair's answer exact (`pipeline.solve_pair`): a plan the model found is checked against what
the model could not say itself, and a plan it charged too little, or that misses the deadline's confidence with
its quotes together, adds cuts that hold in every later model of the pair.

- Lateness (`late_cuts`): the model charges a plan of several quotes the largest of its quotes' lateness alone,
  never more than their joint figure (its start waits for the last of them); a plan charged less adds a cut at its
  point on its quotes (`LateCut`), on its subsets, and on pools of near copies (any j of a pool:
  `Outlook.pool_laws`).
- The deadline's confidence (`chance_cuts`): a plan whose quotes together miss `policy.deadline_confidence` is cut
  at its latest start that meets it, with the subsets of its quotes that bind.

The functions read a solve's context through `CutContext` (its problem, universe, screen, money unit and bounds).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any, Protocol

import numpy as np

from ..estimate.chance import ChanceCut
from ..estimate.options import Option, Point, Universe
from ..estimate.outlook import LateCut, rule_delay
from ..estimate.starts import StartLaw
from ..inputs.catalog import Quote
from ..inputs.problem import Problem
from ..model.money import units
from .plan import Plan


class CutContext(Protocol):
    """What the cuts read of a solve's context (`pipeline.Context`)."""

    problem: Problem
    universe: Universe
    screen: Any
    unit: int
    bounds: Any


def late_cuts(ctx: CutContext, plan: Plan) -> list[LateCut]:
    """[] when the model charged the plan its lateness in full; else the cut that charges it (and every plan at its
    point that uses its quotes, and maybe more) that lateness: its quotes' joint figure at its planned start, with
    its rules' delays (`Outlook.charge`)."""
    if plan.late_units is None:
        return []
    o = next(o for o in ctx.universe.options if o.id == plan.option)
    pt = next(p for p in o.points if p.n == plan.nodes)
    quotes = [ctx.problem.catalog.quotes[pq.id] for pq in plan.quotes]
    out = ctx.screen.outlook
    start = (plan.start - ctx.problem.as_of).days  # the planned start: the objective's finish term pins it there
    law = out.plan_law(o, quotes, start, rule_delay(ctx.problem, pt, plan.allocation))
    exact = units(out.charge(o, pt, law), ctx.unit)
    if exact <= plan.late_units:
        return []
    return [LateCut(o.id, pt.n, tuple(sorted(q.id for q in quotes)), exact)] + _subset_late_cuts(ctx, o, pt, quotes) \
        + _pool_late_cuts(ctx, o, pt, quotes)


POOL_MAX_QUOTES = 48
"""A pool cut names at most this many quotes: the plan's and the cheapest others at its point."""
POOL_BEYOND = 2
"""Pool cuts go up to this many quotes more than the undercharged plan used."""


def _pool_late_cuts(ctx: CutContext, o: Option, pt: Point, quotes: Sequence[Quote]) -> list[LateCut]:
    """Pool cuts (`LateCut.at_least`) for an undercharged plan of k ≥ 2 quotes, on two pools of quotes at its point
    (after a set cut, a marketplace of near copies otherwise offers the search one new set of the same size per
    solve): its quotes and those that cost no more a node than its dearest (the near copies it would swap in next:
    tight figures), and its quotes and those whose own lateness is no less than that of its earliest, cheapest
    first (`POOL_MAX_QUOTES` at most: looser figures for more sets). Each pool is cut for j = 2 … k +
    `POOL_BEYOND` (`_pool_cuts`)."""
    if len(quotes) < 2:
        return []
    out = ctx.screen.outlook
    used = {q.id for q in quotes}
    index = {q.id: i for i, q in enumerate(o.quotes)}
    delay = rule_delay(ctx.problem, pt, ())
    alone = out.alone(o, pt, delay, earliest=False)
    mask = ctx.bounds.usable(pt) if ctx.bounds.sound else np.ones(len(o.quotes), dtype=bool)
    cost = {i: pt.per_node.cost(o.quotes[i].id) for i in np.flatnonzero(mask).tolist()
            if o.quotes[i].id not in used}
    dearest = max(pt.per_node.cost(q.id) for q in quotes)
    earliest = min(float(alone[index[q.id]]) for q in quotes)
    cheap = sorted((c, i) for i, c in cost.items() if c <= dearest)
    later = sorted((c, i) for i, c in cost.items() if alone[i] >= earliest)
    room = max(0, POOL_MAX_QUOTES - len(quotes))
    pools = {tuple(sorted(q.id for q in quotes) + sorted(o.quotes[i].id for _c, i in among[:room]))
             for among in (cheap, later)}
    upto = len(quotes) + POOL_BEYOND
    return [c for ids in sorted(pools) for c in _pool_cuts(ctx, o, pt, [ctx.problem.catalog.quotes[q] for q in ids],
                                                           upto, alone, index, delay)]


def _pool_cuts(ctx: CutContext, o: Option, pt: Point, pool: Sequence[Quote], upto: int, alone: np.ndarray,
               index: dict[str, int], delay: int) -> list[LateCut]:
    """For j = 2 … `upto`: a plan using any j of `pool` is charged at least the figure of `Outlook.pool_laws` at the
    pool's j-th earliest own start (a plan using j of them starts no earlier), with the delays of the rules that
    apply to every plan at the point. A cut no stronger than the pool's smallest alone figure (which the model
    charges anyway) is left out."""
    out = ctx.screen.outlook
    floor = min(units(float(alone[index[q.id]]), ctx.unit) for q in pool)
    starts = sorted(out.alone_start(o, q, delay, earliest=False) for q in pool)
    ids = tuple(sorted(q.id for q in pool))
    cuts = []
    laws: dict[int, list[StartLaw]] = {}    # per planned start: every j's law at once
    for j in range(2, min(len(pool), upto) + 1):
        start = starts[j - 1]
        if start not in laws:
            laws[start] = out.pool_laws(o, pool, start, delay)
        law = laws[start][j - 1]
        charged = units(out.charge(o, pt, law), ctx.unit)
        if charged > floor:
            cuts.append(LateCut(o.id, pt.n, ids, charged, at_least=j))
    return cuts


LATE_SUBSETS_MAX_QUOTES = 12
"""A plan charged less than its lateness, with at most this many quotes, also cuts its subsets of two quotes and
of all but one that the model undercharges (k(k+1)/2 − 1 start laws at most)."""


def _subset_late_cuts(ctx: CutContext, o: Option, pt: Point, quotes: Sequence[Quote]) -> list[LateCut]:
    """Cuts on subsets of an undercharged plan's quotes, each at the subset's own floor: the latest of its quotes'
    planned starts alone (`Outlook.alone_start`), where its lateness is least — a plan using the subset (and maybe
    more) starts no earlier, and bought hardware ordered for a later start arrives later too — with the delays of
    the rules the subset brings (the earliest start left out: a cut stays valid in an explanation that drops it).
    The next plan the search finds after a cut is most often the same point with one
    quote swapped for a near copy (a marketplace of clones): it keeps all but one of the quotes, or two of them,
    and so meets one of these cuts instead of needing a re-solve of its own."""
    k = len(quotes)
    if k < 3 or k > LATE_SUBSETS_MAX_QUOTES:
        return []
    out = ctx.screen.outlook
    index = {q.id: i for i, q in enumerate(o.quotes)}
    subsets = {tuple(sorted(c)) for c in combinations(range(k), 2)} | \
        {tuple(i for i in range(k) if i != j) for j in range(k)}
    cuts = []
    for sub in sorted(subsets):
        chosen = [quotes[i] for i in sub]
        ids = [q.id for q in chosen]
        delay = rule_delay(ctx.problem, pt, ids)
        alone = out.alone(o, pt, delay, earliest=False)
        charged = max(units(float(alone[index[q]]), ctx.unit) for q in ids)
        start = max(out.alone_start(o, q, delay, earliest=False) for q in chosen)
        exact = units(out.charge(o, pt, out.plan_law(o, chosen, start, delay)), ctx.unit)
        if exact > charged:
            cuts.append(LateCut(o.id, pt.n, tuple(sorted(ids)), exact))
    return cuts


SUBSET_CUTS_MAX_QUOTES = 10
"""A failing plan with at most this many quotes also cuts each subset of them that binds (2^n − n − 2 order
statistics); beyond, only the plan's own set is cut."""


def chance_cuts(ctx: CutContext, plan: Plan) -> list[ChanceCut]:
    """[] when the plan meets the deadline's confidence (or there is none); else the cut that excludes it, then
    the cuts of the subsets of its quotes that are stricter than their quotes' own constraints.

    The next plan the search finds after one cut is most often the same point on a subset of the same quotes (the
    cheapest ones), so cutting every binding subset at once saves a re-solve per subset. Subset cuts are exact
    for bought quotes and quotes rented from day 0 (`ChanceModel.latest_start`); others get only the plan's own."""
    chance = ctx.screen.chance
    if chance is None:
        return []
    o = next(o for o in ctx.universe.options if o.id == plan.option)
    pt = next(p for p in o.points if p.n == plan.nodes)
    as_of = ctx.problem.as_of
    quotes = [ctx.problem.catalog.quotes[pq.id] for pq in plan.quotes]
    orders = [(q, (pq.ordered - as_of).days if pq.ordered else 0) for q, pq in zip(quotes, plan.quotes, strict=True)]
    start = (plan.start - as_of).days
    delay = rule_delay(ctx.problem, pt, plan.allocation)
    if chance.meets(chance.joint_share(o, pt, start, orders, delay)):
        return []
    rented = {q.id: day for q, day in orders if q.mode != "buy"}
    found = [ChanceCut(o.id, pt.n, tuple(q.id for q in quotes),
                       chance.joint_latest(o, pt, quotes, rented, start, delay))]
    exact = [q for q in quotes if rented.get(q.id, 0) == 0]
    if len(exact) > SUBSET_CUTS_MAX_QUOTES:
        return found
    alone = {q.id: chance.latest_start(o, pt, (q,)) for q in exact}
    for k in range(2, len(exact) + (len(exact) < len(quotes))):
        for subset in combinations(exact, k):
            latest = chance.latest_start(o, pt, subset)
            singles = [alone[q.id] for q in subset]
            loosest = None if any(f is None for f in singles) else min(f for f in singles if f is not None)
            if loosest is None:
                continue
            if latest is None or latest < loosest:
                found.append(ChanceCut(o.id, pt.n, tuple(q.id for q in subset), latest))
    return found


__all__ = ["late_cuts", "chance_cuts", "CutContext"]
