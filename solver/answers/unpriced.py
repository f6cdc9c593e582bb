"""Hardware without a price yet (`kind: unpriced`): the highest price at which it would become the plan.

"Should we wait for Rubin?" has no answer without a price, but it has a threshold: the break-even price — per node
for a purchase or a managed contract, per GPU-hour for the cloud — at which the best plan using the quote scores
as well as today's chosen plan. Below it, waiting for that hardware wins; above it, it does not.

The price enters every line of a plan affinely (cost.py), so a plan's cost is A + price·B and its break-even is
(today's cost − A)/B. The search runs on the model, which sees everything (budget, splits with other quotes,
rounding, rules): from a price at which the best plan forced to use the quote wins, the next price is that plan's
own break-even — Newton steps on a concave function, a few forced solves (`_newton`) — and the answer must win at
the price and lose one step above it (`price_step`). If no
price can win because the hardware cannot be used at all (a rack too hot for the site, a deadline before its
delivery), the answer is the minimal conflict that rules it out.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from datetime import timedelta
from typing import Any

from ..estimate.options import Option, offer_of, option_quote_ready
from ..inputs.catalog import PRICE_FIELDS, PRICE_UNITS, Quote, price_text
from ..inputs.problem import Problem
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
    if _too_late(wn, options, q):
        out.update(price=None, reasons=["schedule.deadline"], proven=True,
                   note="cannot be part of any plan at any price")
        return out
    chosen = result.plan
    horizon, unit = wn.ctx.universe.horizon, wn.ctx.unit
    cap = winning_cap(base, chosen) if chosen is not None else None

    def best(price: float) -> Plan | None:
        """The best plan forced to use the quote at `price`, if it wins (ranks first against the chosen plan)."""
        log.info("unpriced break-even: %s at %.2f", q.id, price)
        assert chosen is not None
        r = wn.best_forced(t, (q.id, price), tie_break=False, cost_cap=cap)
        return r[1] if r is not None and ranks_first(r[1], chosen, base, horizon, unit) else None

    only = dataclasses.replace(sub.universe.subset(pair), options=tuple(options))

    def cannot() -> dict[str, Any] | None:
        """The answer when no plan can use the quote at any price (a minimal conflict that says why), else None."""
        found = why_excluded(sub, only, q.id, forcing(options, q.id), frozenset({q.id}))
        if found.groups or not found.proven:
            out.update(price=None, reasons=list(found.groups), proven=found.proven,
                       note="cannot be part of any plan at any price")
            return out
        return None

    # A reason that covers every point (no forced solve needed) answers at once; otherwise a plan that wins at
    # (almost) no price proves the quote usable, and only without one is it asked why not.
    if not any(pt.workable for o in options for pt in o.points) or covering_reason(sub, only) is not None:
        if (answer := cannot()) is not None:
            return answer
    winner = best(step) if chosen is not None else None
    if winner is None:
        oracle = PairOracle(sub, pairs=[pair], forced=forcing(options, q.id), protect=frozenset({q.id}))
        if oracle.status(oracle.all_groups()) != "feasible" and (answer := cannot()) is not None:
            return answer
        if chosen is None:
            out.update(price=None, note="nothing else satisfies the problem: it would be the plan at any price the "
                                        "budget allows")
        else:
            out.update(price=None, note="does not win even at (almost) zero price: its dates or other costs lose")
        return out
    found = _newton(best, winner, step, chosen, lambda plan: _slope(wn.ctx, plan, q))
    if found is None:
        out.update(price=None, note="wins at any price searched: other costs do not compete")
        return out
    lo, hi = found
    out.update(price=round(lo, 2), note=f"at {price_text(lo, q.mode)} or less it would be the plan; "
                                        f"at {price_text(hi, q.mode)} it is not")
    return out


MAX_NEWTON = 12
"""Newton steps before the search falls back to bisection (each is one forced solve; two or three usually do)."""


def _newton(best: Any, winner: Plan, step: float, chosen: Plan, slope: Any) -> tuple[float, float] | None:
    """(lo, hi): the largest winning price on the step grid and the next step, which loses; None when the quote
    wins at every price searched.

    The best forced plan's cost is the least of affine functions of the price (one per plan): concave and rising.
    From a winning price p with best plan P (cost C at p, s dollars per dollar of price), P's own break-even
    p + (chosen cost − C)/s is never beyond the root (a concave function lies under its tangents), so the steps
    rise monotonically and stop at the break-even of the plan that is best there — a few solves, where a bisection
    from a cent takes a dozen. Ties and the model's rounding are settled on the grid at the end: the price must
    win, one step above must not; where the step lands on a loser first, a bisection between the last winner and
    it finds the flip."""
    lo, plan = step, winner
    for _ in range(MAX_NEWTON):
        s = slope(plan)
        if s <= 0:
            return None
        nxt = math.floor((lo + (chosen.total_cost - plan.total_cost) / s) / step + 1e-9) * step
        if nxt <= lo:
            nxt = lo + step          # the tangent's root is here: the next step up decides
        got = best(nxt)
        if got is None:
            return bisect_price(lo, nxt, step, lambda p: best(p) is not None)
        lo, plan = nxt, got
        if lo > MAX_PRICE_STEPS * step:
            return None
    hi = lo * 2
    doublings = 0
    while best(hi) is not None:
        lo, hi = hi, hi * 2
        doublings += 1
        if doublings > MAX_DOUBLINGS:
            return None
    return bisect_price(lo, hi, step, lambda p: best(p) is not None)


MAX_PRICE_STEPS = 10 ** 9
"""A price this many steps up (ten million dollars per GPU-hour, a trillion per node) wins at any price."""


def _slope(ctx: Context, plan: Plan, q: Quote) -> float:
    """Dollars of the plan's cost per dollar of the quote's price: its nodes on the quote × the per-dollar total of
    the quote's price key at the plan's point (rules' percentages left out: the grid check settles them)."""
    nodes = plan.allocation.get(q.id, 0)
    for o in ctx.universe.options:
        if o.id == plan.option:
            for pt in o.points:
                if pt.n == plan.nodes and pt.time is not None:
                    return nodes * pt.per_node.key_totals(pt.per_node.price_key(q.id)[1], False)[1]
    return 0.0


def _too_late(wn: WhyNot, options: list[Option], q: Quote) -> bool:
    """No plan with the quote can finish by the deadline: a run starts no earlier than the quote's capacity is ready
    (its p90 lead time and installation) and lasts at least its option's shortest workable point — the deadline on
    its own is then the minimal reason, found without a conflict search (which, on a marketplace pair of hundreds
    of quotes, is many solves to say the same; measured: bench/README.md, "Timings that used to live in docstrings
    (moved 2026-12-07)")."""
    deadline = wn.ctx.universe.deadline_day
    if deadline is None:
        return False
    a = wn.problem.assumptions.values
    finishes = [max(o.ready_day, option_quote_ready(q, o, a)) + min(pt.days for pt in o.points if pt.workable)
                for o in options if any(pt.workable for pt in o.points)]
    return bool(finishes) and min(finishes) > deadline


def _ready(wn: WhyNot, options: list[Option], q: Quote) -> str:
    """The earliest the hardware could start a run: delivered, installed, the software ported."""
    a = wn.problem.assumptions.values
    days = [max(o.ready_day, option_quote_ready(q, o, a)) for o in options]
    return (wn.problem.as_of + timedelta(days=min(days))).isoformat() if days else ""


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
