"""Hardware without a price yet (`kind: unpriced`): the highest price at which it would become the plan.

"Should we wait for Rubin?" has no answer without a price, but it has a threshold: the break-even price — per node
for a purchase or a managed contract, per GPU-hour for the cloud — at which the best plan using the quote scores
as well as today's chosen plan. Below it, waiting for that hardware wins; above it, it does not.

The price enters every line of a plan affinely (cost.py), so for each node count the plan's cost is A + price·B
and the break-even of that node count is (today's cost − A)/B: the largest over the node counts the quote can
supply alone is the closed-form guess. It is then proven on the model, which sees everything the guess ignores
(budget, splits with other quotes, rounding, rules): the best plan forced to use the quote must win at the price
and lose one step above it (`price_step`); when it does not, a bisection on forced solves finds the flip. If no
price can win because the hardware cannot be used at all (a rack too hot for the site, a deadline before its
delivery), the answer is the minimal conflict that rules it out.
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import timedelta
from typing import Any

from ..estimate.options import Option, offer_of, option_quote_ready
from ..inputs.catalog import PRICE_FIELDS, PRICE_UNITS, Quote
from ..inputs.problem import Problem
from ..solve.brute import best_at
from ..solve.pipeline import Context, SolveSettings, prepare
from ..solve.plan import Plan, Result
from .conflicts import PairOracle, covering_reason, why_excluded
from .whynot import Target, WhyNot, bisect_price, forcing, ranks_first, winning_cap

log = logging.getLogger(__name__)

STEP = {"buy": 1000.0, "managed": 1000.0, "cloud": 0.01}
"""Resolution of an unpriced quote's break-even: $1k per node (or node-month), a cent per GPU-hour."""
MAX_DOUBLINGS = 12
"""How far above the guess the search looks (2^12 ×) before it says the hardware wins at any price."""


def priced(problem: Problem, q: Quote, price: float) -> Problem:
    """The problem with the unpriced quote offered at `price` (as a firm offer: no estimate premium)."""
    return problem.with_quote(q.id, {PRICE_FIELDS[q.mode]: price, "kind": "negotiated"},
                              origin=f"break-even of {q.id}")


def break_even(problem: Problem, settings: SolveSettings, ctx: Context, result: Result,
               q: Quote) -> dict[str, Any]:
    step = STEP[q.mode]
    out: dict[str, Any] = {"quote": q.id, "system": q.system, "mode": q.mode, "unit": PRICE_UNITS[q.mode]}
    base = priced(problem, q, step)
    cat = base.catalog
    pair = f"{cat.systems[q.system].accelerator}/{offer_of(q)}"
    sub = prepare(base, settings, estimates=ctx.estimates, only_pairs={pair}, unit=ctx.unit, engine=ctx.engine,
                  horizon_floor=ctx.universe.horizon)
    wn = WhyNot(base, settings, ctx=sub, main=result)
    options = [o for o in sub.universe.options if any(x.id == q.id for x in o.quotes)]
    out["ready"] = _ready(wn, options, q)
    t = Target(q.id, "quote", options, q.id)
    if not options:
        out.update(price=None, reasons=[], note="cannot be part of any plan at any price")
        return out
    only = dataclasses.replace(sub.universe.subset(pair), options=tuple(options))
    oracle = PairOracle(sub, pairs=[pair], forced=forcing(options, q.id), protect=frozenset({q.id}))
    if not any(pt.workable for o in options for pt in o.points) or \
            (covering_reason(sub, only) is not None or oracle.status(oracle.all_groups()) != "feasible"):
        found = why_excluded(sub, only, q.id, forcing(options, q.id), frozenset({q.id}))
        if found.groups or not found.proven:
            out.update(price=None, reasons=list(found.groups), proven=found.proven,
                       note="cannot be part of any plan at any price")
            return out
    chosen = result.plan
    if chosen is None:
        out.update(price=None, note="nothing else satisfies the problem: it would be the plan at any price the "
                                    "budget allows")
        return out
    horizon, unit = wn.ctx.universe.horizon, wn.ctx.unit

    cap = winning_cap(base, chosen)

    def wins(price: float) -> bool:
        log.info("unpriced break-even: %s at %.2f", q.id, price)
        r = wn.best_forced(t, (q.id, price), tie_break=False, cost_cap=cap)
        return r is not None and ranks_first(r[1], chosen, base, horizon, unit)

    if not wins(step):
        out.update(price=None, note="does not win even at (almost) zero price: its dates or other costs lose")
        return out
    guess = max(step, _guess(wn, options, q, chosen, step))
    if wins(guess):
        lo, hi = guess, guess + step
        doublings = 0
        while wins(hi):
            lo, hi = hi, hi * 2
            doublings += 1
            if doublings > MAX_DOUBLINGS:
                out.update(price=None, note="wins at any price searched: other costs do not compete")
                return out
        lo, hi = bisect_price(lo, hi, step, wins)
    else:
        lo, hi = bisect_price(step, guess, step, wins)
    out.update(price=round(lo, 2), note=f"at {lo:,.2f} or less ({PRICE_UNITS[q.mode]}) it would be the plan; "
                                        f"at {hi:,.2f} it is not")
    return out


def _ready(wn: WhyNot, options: list[Option], q: Quote) -> str:
    """The earliest the hardware could start a run: delivered, installed, the software ported."""
    a = wn.problem.assumptions.values
    days = [max(o.ready_day, option_quote_ready(q, o, a)) for o in options]
    return (wn.problem.as_of + timedelta(days=min(days))).isoformat() if days else ""


def _guess(wn: WhyNot, options: list[Option], q: Quote, chosen: Plan, step: float) -> float:
    """The closed-form break-even over the node counts the quote supplies alone (see module docstring), on the
    price grid; 0 when none is feasible."""
    problem, ctx = wn.problem, wn.ctx
    best = 0.0
    for o in options:
        for pt in o.points:
            if not pt.workable or q.id not in pt.per_node or not (q.min_nodes <= pt.n <= q.max_nodes):
                continue
            if best_at(pt, problem, ctx.universe, ctx.unit) is None and len(o.quotes) == 1:
                continue
            key_cost = pt.per_node.cost(q.id)
            _t0, t1 = pt.per_node.key_totals((q.commit_months, False), False)
            slope = pt.n * t1
            if slope <= 0:
                continue
            fixed = pt.fixed.total_cost + pt.n * key_cost - slope * step
            p = (chosen.total_cost - fixed) / slope
            best = max(best, p)
    return max(0.0, (best // step) * step)


def ask(problem: Problem, target: str, settings: SolveSettings) -> dict[str, Any]:
    """`--why-not` for any target: an unpriced quote (or hardware whose only quotes are unpriced) gets its
    break-even price; anything else the why-not answer."""
    t = target.strip().lower()
    cat = problem.catalog
    wn = WhyNot(problem, settings)
    unpriced = [q for q in wn.ctx.universe.unpriced
                if t in (q.id, q.system, cat.systems[q.system].accelerator)]
    has_price = any(t in (o.accel.id, o.system.id) for o in wn.ctx.universe.options)
    if not unpriced or (t not in cat.quotes and has_price):
        return wn.ask(target)
    results = [break_even(problem, settings, wn.ctx, wn.main, q) for q in unpriced]
    return {"target": target, "kind": "unpriced", "status": "unpriced", "break_even": results[0],
            "break_evens": results}


__all__ = ["break_even", "priced", "ask", "STEP"]
