"""`plan explain FILE --why-not ID`: why an accelerator, system, mode, option or quote is not the plan.

Either it cannot be part of any plan — then the answer is a minimal conflict of the user's groups with the target
forced in (plus the single changes that would admit it) — or it can, but costs more: then its best plan, the
cost difference line by line, and the break-even price of its main quote (the price at which it would be chosen),
found by bisection on re-solves of that option alone.
"""

from __future__ import annotations

import difflib
from typing import Any

from .assumptions import AssumptionSet
from .catalog import Catalog, Quote
from .cost import LINE_ORDER
from .errors import InputError
from .explain import PairOracle
from .model import Built, cost_ceiling, needs_ceiling, objective
from .options import EstimateCache, Option, Universe, build_universe
from .plan import Plan
from .problem import LoadedProblem
from .relax import explain
from .solve import SolveSettings, prepare, solve_pair, solve_problem


def resolve_target(target: str, cat: Catalog, universe: Universe) -> tuple[str, list[Option], str | None]:
    """(kind, matching options, quote id if the target is a quote)."""
    t = target.strip().lower()
    opts = universe.options
    if t in cat.quotes:
        return "quote", [o for o in opts if any(q.id == t for q in o.quotes)], t
    if t in cat.accelerators:
        return "accelerator", [o for o in opts if o.accel.id == t], None
    if t in cat.systems:
        return "system", [o for o in opts if o.system.id == t], None
    if t in ("buy", "cloud", "managed"):
        return "mode", [o for o in opts if o.mode == t], None
    if "/" in t:
        return "option", [o for o in opts if o.id == t or o.pair == t], None
    names = sorted(set(cat.quotes) | set(cat.accelerators) | set(cat.systems) | {"buy", "cloud", "managed"})
    hint = difflib.get_close_matches(t, names, n=1)
    raise InputError(f"unknown id '{target}'" + (f"; did you mean '{hint[0]}'?" if hint else
                     " (an accelerator, system, quote, mode, or system/mode)"), path="--why-not")


def _forcer(options: list[Option], qid: str | None) -> Any:
    ids = {o.id for o in options}

    def forced(b: Built) -> list[Any]:
        lit = b.model.new_bool_var("why_not_target")
        if qid is not None:
            if qid in b.u:
                b.model.add(b.u[qid] >= 1).only_enforce_if(lit)
            else:
                b.model.add_bool_or([lit.Not()])
        else:
            sel = [b.sel[i] for i in ids if i in b.sel]
            if sel:
                b.model.add(sum(sel) == 1).only_enforce_if(lit)
            else:
                b.model.add_bool_or([lit.Not()])
        return [lit]
    return forced


def _line_diff(target: Plan, chosen: Plan) -> list[dict[str, Any]]:
    rows = []
    for name in LINE_ORDER:
        a, b = target.lines.cost.get(name, 0.0), chosen.lines.cost.get(name, 0.0)
        if abs(a) >= 0.5 or abs(b) >= 0.5:
            rows.append({"line": name, "target": round(a), "chosen": round(b), "delta": round(a - b)})
    return rows


def _best_forced(lp: LoadedProblem, aset: AssumptionSet, cat: Catalog, pairs: set[str], qid: str | None,
                 ids: set[str], unit: int, horizon: int, settings: SolveSettings,
                 priced: tuple[str, float] | None = None,
                 estimates: EstimateCache | None = None) -> tuple[int, Plan] | None:
    """Best plan using the target (forced quote `qid` or options `ids`); `priced` = (quote id, price) replaces
    one quote's price for the break-even search."""
    if priced is not None:
        pid, price = priced
        q = cat.quotes[pid]
        field = {"buy": "price_usd", "cloud": "usd_per_gpu_hour", "managed": "usd_per_month"}[q.mode]
        cat.quotes[pid] = q.model_copy(update={field: price})
    try:
        u = build_universe(lp, cat, aset.values, allow_expired=settings.allow_expired, only_pairs=pairs,
                           estimates=estimates)
    finally:
        if priced is not None:
            cat.quotes[priced[0]] = q
    u.horizon = horizon
    hi = cost_ceiling(lp, aset.values, u, unit) if needs_ceiling(lp) else None  # one scale for every pair
    forced = _forcer([o for o in u.options if o.id in ids], qid)
    protect = frozenset({qid}) if qid else frozenset()
    best: tuple[int, Plan] | None = None
    for pair in sorted(pairs):
        st, plan, obj, _ = solve_pair(lp, aset, u.subset(pair), unit, hi, settings, tie_break=True, forced=forced,
                                      protect=protect)
        if plan is not None and obj is not None and (best is None or obj < best[0]):
            best = (obj, plan)
    return best


def scores_no_worse(a: Plan, b: Plan, lp: LoadedProblem, horizon: int, unit: int) -> bool:
    """Plan a scores at least as well as plan b under the problem's objective. Compared on one cost ceiling that
    covers both, since the plans may come from models whose ceilings differ (a re-priced quote)."""
    hi = max(a.model_cost_units, b.model_cost_units)

    def score(p: Plan) -> int:
        return int(objective(p.model_cost_units, (p.finish - lp.as_of).days, lp, horizon, hi, unit))
    return score(a) <= score(b)


class Context:
    """What every why-not question about one problem shares: catalog, assumptions, options and the plan."""

    def __init__(self, lp: LoadedProblem, settings: SolveSettings) -> None:
        self.estimates: EstimateCache = {}  # shared by every re-priced universe of this problem
        self.cat, self.aset, self.universe = prepare(lp, settings, self.estimates)
        self.main = solve_problem(lp, SolveSettings(time_limit=settings.time_limit,
                                                    allow_expired=settings.allow_expired,
                                                    extra_quotes=settings.extra_quotes, alternatives=False),
                                  prepared=(self.cat, self.aset, self.universe))


def why_not(lp: LoadedProblem, target: str, settings: SolveSettings | None = None,
            context: Context | None = None) -> dict[str, Any]:
    settings = settings or SolveSettings()
    ctx = context or Context(lp, settings)
    cat, aset, universe = ctx.cat, ctx.aset, ctx.universe
    kind, options, qid = resolve_target(target, cat, universe)
    out: dict[str, Any] = {"target": target, "kind": kind}
    if not options:
        reasons = [e.reasons[0] for e in universe.static_excluded
                   if e.option == target or e.option.startswith(target + "/") or e.option.split("/")[0] == target]
        if qid is not None:
            q: Quote = cat.quotes[qid]
            reasons = reasons or ([f"quote {qid} expired on {q.valid_until} (use --allow-expired)"]
                                  if q.expired(lp.as_of) else [])
        if kind == "accelerator":
            for e in universe.static_excluded:
                sys_acc = e.option.split("/")[0]
                if sys_acc in cat.systems and cat.systems[sys_acc].accelerator == target:
                    reasons.append(f"{e.option}: {e.reasons[0]}")
        out.update(status="excluded", reasons=reasons or ["no quote: nothing in the catalogs offers it"])
        return out
    main = ctx.main
    unit = main.unit
    ids = {o.id for o in options}
    pairs = {o.pair for o in options}
    oracle = PairOracle(lp, aset, universe, unit, pairs=sorted(p for p in universe.pairs() if p in pairs),
                        forced=_forcer(options, qid))
    if not oracle.feasible(oracle.all_groups()):
        expl = explain(lp, aset, universe, unit, oracle=oracle)
        expl["subject"] = target
        out.update(status="infeasible", explanation=expl)
        return out
    best = _best_forced(lp, aset, cat, pairs, qid, ids, unit, universe.horizon, settings, estimates=ctx.estimates)
    assert best is not None
    obj, plan = best
    chosen = main.plan
    if chosen is None or main.objective is None:
        out.update(status="feasible", plan=plan)
        return out
    chosen_uses = (qid in {q.id for q in chosen.quotes}) if qid else (chosen.option in ids)
    out.update(status="chosen" if chosen_uses else "more_expensive", plan=plan, chosen=chosen,
               delta_usd=plan.total_cost - chosen.total_cost, lines=_line_diff(plan, chosen))
    if chosen_uses:
        return out
    main_quote = max(plan.quotes, key=lambda q: (q.nodes, q.id))
    out["break_even"] = _break_even(lp, aset, cat, pairs, main_quote.id, ids, unit,
                                    universe.horizon, chosen, settings, qid, ctx.estimates)
    return out


def bisect_price(lo: float, hi: float, step: float, holds: Any) -> tuple[float, float]:
    """Largest price on the `step` grid where `holds` is true, given holds(lo) and not holds(hi): the ranking
    flips between the returned pair, which are one step apart (or as close as the grid allows)."""
    while hi - lo > step:
        mid = round((lo + hi) / 2 / step) * step
        if mid <= lo or mid >= hi:
            break
        if holds(mid):
            lo = mid
        else:
            hi = mid
    return lo, hi


def _break_even(lp: LoadedProblem, aset: AssumptionSet, cat: Catalog, pairs: set[str], quote_id: str,
                ids: set[str], unit: int, horizon: int, chosen: Plan, settings: SolveSettings,
                qid: str | None, estimates: EstimateCache) -> dict[str, Any]:
    """Highest price of `quote_id` at which the target's best plan scores at least as well as today's plan."""
    q = cat.quotes[quote_id]
    step = 0.01 if q.mode == "cloud" else 1.0

    def wins(price: float) -> bool:
        r = _best_forced(lp, aset, cat, pairs, qid, ids, unit, horizon, settings, (quote_id, price), estimates)
        return r is not None and scores_no_worse(r[1], chosen, lp, horizon, unit)

    if not wins(0.0 if q.mode != "cloud" else step):
        return {"quote": quote_id, "price": None, "current": q.price,
                "note": "does not win even at (almost) zero price: its other costs or dates lose"}
    lo, _hi = bisect_price(0.0 if q.mode != "cloud" else step, q.price, step, wins)
    return {"quote": quote_id, "price": round(lo, 2), "current": q.price, "unit": {
        "buy": "usd per node", "cloud": "usd per GPU-hour", "managed": "usd per node-month"}[q.mode],
        "note": f"at {lo:,.2f} or less the target would be chosen (resolution {step:g})"}
