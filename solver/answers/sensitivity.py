"""`plan sensitivity FILE`: how robust the decision is.

1. Break-even prices. For the chosen plan: the price of its main quote above which it would no longer be chosen.
   For each runner-up: the price of its main quote below which it would be chosen (`whynot.WhyNot.break_even`).
   Both by bisection on re-solves, at the quote's price resolution ($0.01 per GPU-hour, $1 per node or month).
2. Sweeps of the main uncertain inputs — tokens ±50%, achieved MFU ±20%, every lead time +0…180 days,
   electricity price — re-solving at each value and reporting the plan it leads to.

Every variant is a what-if of the validated problem (`Problem.with_changes` / `with_quote` / `with_catalog`), so
it keeps the user's catalogs, `--quotes`, `--set` and `risk:` overrides: the MFU sweep scales the MFU the problem
actually uses, not the bundled default.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from .. import collect
from ..inputs.catalog import MAX_LEAD_DAYS, PRICE_FIELDS, PRICE_UNITS, price_text
from ..inputs.overrides import Change
from ..inputs.problem import PortableProblem, Problem, portable
from ..solve.best import best_only
from ..solve.pipeline import SolveSettings, prepare, solve_pair
from ..solve.plan import Plan, Result
from .executors import Executor, Local, Started
from .whynot import BREAK_EVEN_DOUBLINGS, WhyNot, bisect_price, price_step, scores_no_worse

log = logging.getLogger(__name__)
SWEEPS: Mapping[str, tuple[float, ...]] = MappingProxyType({
    "tokens": (0.5, 0.75, 1.0, 1.25, 1.5),
    "mfu": (0.8, 0.9, 1.0, 1.1, 1.2),
    "lead_time_days": (0, 30, 90, 180),
    "electricity": (0.5, 1.0, 1.5, 2.0),
})
"""The values each sweep tries: factors of today's value, or days added to every lead time."""


def variant(problem: Problem, name: str, f: float) -> tuple[str, Problem] | None:
    """(label, the problem with one input swept to `f`), or None when the input does not apply (no site)."""
    spec = problem.spec
    origin = f"sweep {name}"
    if name == "tokens":
        return f"{f:.0%}", problem.with_changes([Change(("workload", "tokens"), spec.workload.tokens * f, origin)])
    if name == "mfu":
        mfu = problem.assumptions.values.compute.mfu_base
        return f"{f:.0%}", problem.with_changes([Change(("risk", "compute", "mfu_base", k), min(1.0, v * f), origin)
                                                 for k, v in sorted(mfu.items())])
    if name == "lead_time_days":
        return f"+{f:g} d", problem.with_catalog(_shifted(problem, f))
    if spec.site is None:
        return None
    return f"{f:.0%}", problem.with_changes([Change(("site", "electricity_usd_per_kwh"),
                                                    spec.site.electricity_usd_per_kwh * f, origin)])


def _shifted(problem: Problem, days: float) -> Any:
    """The problem's catalog (as read from its files) with `days` added to every lead time (p50 and p90)."""
    cat = problem.files_catalog or problem.catalog
    if not days:
        return cat
    quotes = {qid: q.model_copy(update={
        "lead_time_days": min(q.lead_time_days + days, MAX_LEAD_DAYS),
        "lead_time_p90_days": None if q.lead_time_p90_days is None else
        min(q.lead_time_p90_days + days, MAX_LEAD_DAYS)})
        for qid, q in cat.quotes.items()}
    return cat.with_quotes(quotes)


@dataclass(frozen=True)
class SweepValue:
    """One value of one sensitivity sweep as plain data (a unit for any executor, `executors.py`)."""

    problem: PortableProblem
    name: str
    factor: float
    time_limit: float
    allow_expired: bool


def solve_value(unit: SweepValue) -> dict[str, Any] | None:
    """The plan one swept value leads to (None when the input does not apply), from the unit's data alone: `value`
    its label (`80%`, `+30 d`), `swept` the number (the factor, or the days added to every lead time)."""
    got = variant(unit.problem.problem(), unit.name, unit.factor)
    if got is None:
        return None
    label, varied = got
    log.info("sweep %s: %s", unit.name, label)
    settings = SolveSettings(time_limit=unit.time_limit, workers=1, processes=1, allow_expired=unit.allow_expired,
                             alternatives=False)
    r = best_only(varied, settings)  # only the winner is shown: pairs that cannot win are not searched
    p = r.plan
    return {"value": label, "swept": unit.factor, "status": r.status, "option": p.option if p else None,
            "nodes": p.nodes if p else None, "cost_usd": round(p.total_cost) if p else None,
            "finish": p.finish.isoformat() if p else None}


def start_sweeps(problem: Problem, settings: SolveSettings, which: list[str] | None = None,
                 executor: Executor | None = None) -> Started[dict[str, list[dict[str, Any]]]]:
    """The sweeps' re-solves handed to `executor` (default: this process), returning at once: `results()` gives
    what `sweeps` returns. `plan sensitivity` computes its break-even prices while a pool runs these."""
    names = which or list(SWEEPS)
    data = portable(problem)
    work = [SweepValue(data, name, f, settings.time_limit, settings.allow_expired)
            for name in names for f in SWEEPS[name]]

    def by_sweep(rows: list[dict[str, Any] | None]) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        for unit, row in zip(work, rows, strict=True):
            if row is not None:
                out[unit.name].append(row)
        return out

    return (executor or Local()).start(solve_value, work).then(by_sweep)


@collect.paused()
def sweeps(problem: Problem, settings: SolveSettings, which: list[str] | None = None,
           executor: Executor | None = None) -> dict[str, list[dict[str, Any]]]:
    """One re-solve per swept value (see module docstring), on `executor` (default: this process)."""
    with start_sweeps(problem, settings, which, executor) as started:
        return started.results()


@collect.paused()
def ranking(problem: Problem, settings: SolveSettings) -> WhyNot:
    """The problem solved with its runners-up: what the break-even prices are searched against (`wn.main`)."""
    return WhyNot(problem, replace(settings, alternatives=False))


@collect.paused()
def break_evens(problem: Problem, settings: SolveSettings, top: int = 3) -> list[dict[str, Any]]:
    """Break-even prices for the chosen plan and the next `top - 1` runners-up (empty when there is no plan)."""
    return break_evens_of(ranking(problem, settings), top)


@collect.paused()
def break_evens_of(wn: WhyNot, top: int = 3) -> list[dict[str, Any]]:
    """`break_evens` of a problem already ranked (`ranking`)."""
    full = wn.main
    if full.plan is None:
        return []
    chosen = full.plan
    main_q = max(chosen.quotes, key=lambda q: (q.nodes, q.id))
    quotes = wn.problem.catalog.quotes
    out: list[dict[str, Any]] = [{"plan": chosen.option, "role": "chosen", "cost_usd": round(chosen.total_cost),
                                  "quote": main_q.id, "current": main_q.price,
                                  "unit": PRICE_UNITS[quotes[main_q.id].mode],
                                  **_chosen_break_even(wn, main_q.id, full)}]
    for alt in full.alternatives[: max(0, top - 1)]:
        res = wn.ask(alt.plan.option)
        be = res.get("break_even") or {}
        qid = be.get("quote")
        out.append({"plan": alt.plan.option, "role": "runner-up", "cost_usd": round(alt.plan.total_cost),
                    "quote": qid, "current": be.get("current"),
                    "unit": PRICE_UNITS[quotes[qid].mode] if qid in quotes else None, "break_even": be.get("price"),
                    "note": be.get("note")})
    return out


def _chosen_break_even(wn: WhyNot, quote_id: str, full: Result) -> dict[str, Any]:
    """The price of the chosen plan's main quote above which another plan is chosen (bisection on re-solves).

    The quote belongs to one accelerator/mode pair, so the other pairs' optima (today's runners-up) do not move with
    its price: each bisection step re-solves only the chosen pair and compares with them (`fast`). The two prices
    the search ends on are then checked with complete re-solves; if either disagrees (the money unit can change
    with prices), the search is redone with complete re-solves throughout.
    """
    problem, settings = wn.problem, wn.settings
    q = problem.catalog.quotes[quote_id]
    step = price_step(q.mode)
    assert full.plan is not None
    chosen_option = full.plan.option

    def repriced(price: float) -> Problem:
        return problem.with_quote(quote_id, {PRICE_FIELDS[q.mode]: price}, origin="break-even search")

    def uses_quote(plan: Plan | None) -> bool:
        return plan is not None and plan.option == chosen_option and any(x.id == quote_id for x in plan.quotes)

    def still_chosen(price: float) -> bool:
        log.info("break-even search: %s at %.2f (complete re-solve)", quote_id, price)
        varied = repriced(price)
        # The winner alone, as `solve_problem` would choose it (the same plan, byte for byte), without solving the
        # pairs that cannot win.
        return uses_quote(best_only(varied, settings, prepare(varied, settings, estimates=wn.estimates,
                                                              engine=wn.ctx.engine)).plan)

    def search(holds: Callable[[float], bool]) -> tuple[float, float] | None:
        lo, hi = q.price, q.price * 2
        for _ in range(BREAK_EVEN_DOUBLINGS):
            if not holds(hi):
                return bisect_price(lo, hi, step, holds)
            lo, hi = hi, hi * 2
        return None

    fast = _fast_predicate(wn, full, repriced, uses_quote)
    found = search(fast) if fast is not None else None
    if found is None or not (still_chosen(found[0]) and not still_chosen(found[1])):
        found = search(still_chosen)
    if found is None:
        return {"break_even": None, "note": f"stays chosen even at {2 ** BREAK_EVEN_DOUBLINGS}x today's price"}
    lo, hi = found
    return {"break_even": round(lo, 2), "note": f"chosen up to {price_text(lo, q.mode)}; at {price_text(hi, q.mode)} "
                                                f"another plan wins"}


def _fast_predicate(wn: WhyNot, full: Result, repriced: Callable[[float], Problem],
                    uses_quote: Callable[[Plan | None], bool]) -> Callable[[float], bool] | None:
    """"Is the re-priced quote still in the chosen plan?" from a re-solve of the chosen pair alone, against the other
    pairs' optima as solved today (which its price cannot change). None when the full result is not proven (then
    the other pairs' optima are not known exactly)."""
    if full.status != "optimal" or full.plan is None:
        return None
    pair = full.plan.pair
    others = [(al.plan.pair, al.plan) for al in full.alternatives]
    unit, horizon = full.unit, wn.ctx.universe.horizon
    problem = wn.problem

    def ranks_first(plan: Plan) -> bool:
        for other_pair, other in others:
            if not scores_no_worse(plan, other, problem, horizon, unit):
                return False
            if scores_no_worse(other, plan, problem, horizon, unit) and other_pair < pair:
                return False  # a tie goes to the pair that sorts first, as in `solve_problem`
        return True

    def holds(price: float) -> bool:
        log.info("break-even search: %s at %.2f", pair, price)
        ctx = prepare(repriced(price), wn.settings, estimates=wn.estimates, only_pairs={pair}, unit=unit,
                      engine=wn.ctx.engine, horizon_floor=wn.ctx.universe.horizon)
        out = solve_pair(ctx, ctx.universe, ctx.cost_hi(), tie_break=True)
        return out.plan is not None and uses_quote(out.plan) and ranks_first(out.plan)
    return holds


__all__ = ["sweeps", "start_sweeps", "ranking", "break_evens", "break_evens_of", "SWEEPS", "variant"]
