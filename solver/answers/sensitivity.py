"""`plan sensitivity FILE`: how robust the decision is.

1. Break-even prices. For the chosen plan: the price of its main quote above which it would no longer be chosen.
   For each runner-up: the price of its main quote below which it would be chosen (`whynot._break_even`). Both by
   bisection on re-solves, at the quote's price resolution ($0.01 per GPU-hour, $1 per node or node-month).
2. Sweeps of the main uncertain inputs — tokens ±50%, MFU ±20%, every lead time +0…180 days, electricity price —
   re-solving at each value and reporting the plan it leads to.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Callable

import yaml

from .catalog import load_catalog
from .options import build_universe
from .problem import LoadedProblem, load_problem
from .model import cost_ceiling, needs_ceiling
from .plan import Plan
from .solve import SolveSettings, solve_pair, solve_problem
from .whynot import Context, bisect_price, scores_no_worse, why_not

SWEEPS: dict[str, list[float]] = {
    "tokens": [0.5, 0.75, 1.0, 1.25, 1.5],
    "mfu": [0.8, 0.9, 1.0, 1.1, 1.2],
    "lead_time_days": [0, 30, 90, 180],
    "electricity": [0.5, 1.0, 1.5, 2.0],
}


def _resolve(lp: LoadedProblem, sets: list[str], quotes: tuple[str, ...], settings: SolveSettings) -> dict[str, Any]:
    lp2 = load_problem(lp.source.file, lp.overrides + sets)
    r = solve_problem(lp2, SolveSettings(time_limit=settings.time_limit, allow_expired=settings.allow_expired,
                                         extra_quotes=settings.extra_quotes + quotes, alternatives=False))
    p = r.plan
    return {"status": r.status, "option": p.option if p else None, "nodes": p.nodes if p else None,
            "cost_usd": round(p.total_cost) if p else None, "finish": p.finish.isoformat() if p else None}


def sweeps(lp: LoadedProblem, settings: SolveSettings, which: list[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    p = lp.problem
    base_mfu = None
    for name in which or list(SWEEPS):
        rows = []
        for f in SWEEPS[name]:
            sets: list[str] = []
            quotes: tuple[str, ...] = ()
            tmp = None
            if name == "tokens":
                sets = [f"workload.tokens={p.workload.tokens * f:.6g}"]
                label = f"{f:.0%}"
            elif name == "mfu":
                from .assumptions import load_assumptions
                base_mfu = base_mfu or load_assumptions().values.compute.mfu_base
                sets = [f"risk.compute.mfu_base.{k}={v * f:.6g}" for k, v in base_mfu.items()]
                label = f"{f:.0%}"
            elif name == "lead_time_days":
                label = f"+{f:g} d"
                if f:
                    tmp = tempfile.TemporaryDirectory()
                    cat = load_catalog(list(p.catalogs) + list(settings.extra_quotes))
                    shifted = []
                    for q in cat.quotes.values():
                        d = q.model_dump(mode="json", exclude_none=True)
                        d["lead_time_days"] = q.lead_time_days + f
                        if q.lead_time_p90_days is not None:
                            d["lead_time_p90_days"] = q.lead_time_p90_days + f
                        d["lead_time_days"] = min(d["lead_time_days"], 3650)
                        shifted.append(d)
                    qf = Path(tmp.name) / "shifted.yaml"
                    qf.write_text(yaml.safe_dump({"quotes": shifted}))
                    quotes = (str(qf),)
            else:
                if p.site is None:
                    continue
                sets = [f"site.electricity_usd_per_kwh={p.site.electricity_usd_per_kwh * f:.6g}"]
                label = f"{f:.0%}"
            row = _resolve(lp, sets, quotes, settings)
            row["value"] = label
            rows.append(row)
            if tmp is not None:
                tmp.cleanup()
        out[name] = rows
    return out


def break_evens(lp: LoadedProblem, settings: SolveSettings, top: int = 3) -> list[dict[str, Any]]:
    """Break-even prices for the chosen plan and the next `top - 1` runners-up."""
    ctx = Context(lp, settings)
    full = solve_problem(lp, settings, prepared=(ctx.cat, ctx.aset, ctx.universe))
    out: list[dict[str, Any]] = []
    if full.plan is None:
        return out
    chosen = full.plan
    main_q = max(chosen.quotes, key=lambda q: (q.nodes, q.id))
    out.append({"plan": chosen.option, "role": "chosen", "cost_usd": round(chosen.total_cost), "quote": main_q.id,
                "current": main_q.price, **_chosen_break_even(lp, settings, ctx, main_q.id, full)})
    for alt in full.alternatives[: max(0, top - 1)]:
        res = why_not(lp, alt.plan.option, settings, context=ctx)
        be = res.get("break_even") or {}
        out.append({"plan": alt.plan.option, "role": "runner-up", "cost_usd": round(alt.plan.total_cost),
                    "quote": be.get("quote"), "current": be.get("current"), "break_even": be.get("price"),
                    "note": be.get("note")})
    return out


def _chosen_break_even(lp: LoadedProblem, settings: SolveSettings, ctx: Context, quote_id: str,
                       full: Any) -> dict[str, Any]:
    """The price of the chosen plan's main quote above which another plan is chosen (bisection on re-solves).

    The quote belongs to one accelerator/mode pair, so the other pairs' optima (today's runners-up) do not move
    with its price: each bisection step re-solves only the chosen pair and compares with them (`_fast_predicate`).
    The two prices the search ends on are then checked with complete re-solves; if either disagrees (the money
    unit can change with prices), the search is redone with complete re-solves throughout.
    """
    cat = ctx.cat
    q = cat.quotes[quote_id]
    step = 0.01 if q.mode == "cloud" else 1.0
    field = {"buy": "price_usd", "cloud": "usd_per_gpu_hour", "managed": "usd_per_month"}[q.mode]
    chosen_option = full.plan.option

    def repriced(price: float, only_pairs: set[str] | None) -> Any:
        cat.quotes[quote_id] = q.model_copy(update={field: price})
        try:
            return build_universe(lp, cat, ctx.aset.values, allow_expired=settings.allow_expired,
                                  estimates=ctx.estimates, only_pairs=only_pairs)
        finally:
            cat.quotes[quote_id] = q

    def uses_quote(plan: Plan | None) -> bool:
        return plan is not None and plan.option == chosen_option and any(x.id == quote_id for x in plan.quotes)

    def still_chosen(price: float) -> bool:
        universe = repriced(price, None)
        cat.quotes[quote_id] = q.model_copy(update={field: price})
        try:
            r = solve_problem(lp, SolveSettings(time_limit=settings.time_limit, extra_quotes=settings.extra_quotes,
                                                alternatives=False, allow_expired=settings.allow_expired),
                              prepared=(cat, ctx.aset, universe))
        finally:
            cat.quotes[quote_id] = q
        return uses_quote(r.plan)

    def search(holds: Callable[[float], bool]) -> tuple[float, float] | None:
        lo, hi = q.price, q.price * 2
        for _ in range(8):
            if not holds(hi):
                return bisect_price(lo, hi, step, holds)
            lo, hi = hi, hi * 2
        return None

    fast = _fast_predicate(lp, ctx, full, repriced, uses_quote, settings)
    found = search(fast) if fast is not None else None
    if found is None or not (still_chosen(found[0]) and not still_chosen(found[1])):
        found = search(still_chosen)
    if found is None:
        return {"break_even": None, "note": "stays chosen even at 256x today's price"}
    lo, hi = found
    return {"break_even": round(lo, 2), "note": f"chosen up to {lo:,.2f}; at {hi:,.2f} another plan wins"}


def _fast_predicate(lp: LoadedProblem, ctx: Context, full: Any, repriced: Callable[[float, set[str]], Any],
                    uses_quote: Callable[[Plan | None], bool],
                    settings: SolveSettings) -> Callable[[float], bool] | None:
    """"Is the re-priced quote still in the chosen plan?" from a re-solve of the chosen pair alone, against the
    other pairs' optima as solved today (which its price cannot change). None when the full result is not proven
    (then the other pairs' optima are not known exactly)."""
    if full.status != "optimal" or full.plan is None:
        return None
    pair = f"{full.plan.accelerator}/{full.plan.mode}"
    others = [(f"{al.plan.accelerator}/{al.plan.mode}", al.plan) for al in full.alternatives]
    unit = full.unit
    horizon = ctx.universe.horizon

    def ranks_first(plan: Plan) -> bool:
        for other_pair, other in others:
            if not scores_no_worse(plan, other, lp, horizon, unit):
                return False
            if scores_no_worse(other, plan, lp, horizon, unit) and other_pair < pair:
                return False  # a tie goes to the pair that sorts first, as in `solve`
        return True

    def holds(price: float) -> bool:
        u = repriced(price, {pair})
        u.horizon = horizon
        hi = cost_ceiling(lp, ctx.aset.values, u, unit) if needs_ceiling(lp) else None
        _st, plan, _obj, _ = solve_pair(lp, ctx.aset, u, unit, hi, settings, tie_break=True)
        return plan is not None and uses_quote(plan) and ranks_first(plan)
    return holds


def chart(sweep_rows: dict[str, list[dict[str, Any]]], path: str) -> None:
    """PNG or SVG of plan cost against each swept input (needs the optional matplotlib extra)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        from .errors import InputError
        raise InputError("charts need matplotlib: pip install 'plan[chart]'", path="--chart") from None
    names = [n for n, rows in sweep_rows.items() if rows]
    fig, axes = plt.subplots(1, max(1, len(names)), figsize=(4 * max(1, len(names)), 3.2), squeeze=False)
    for ax, name in zip(axes[0], names):
        rows = sweep_rows[name]
        xs = [r["value"] for r in rows]
        ys = [(r["cost_usd"] or 0) / 1e6 for r in rows]
        ax.plot(xs, ys, marker="o")
        for x, y, r in zip(xs, ys, rows):
            ax.annotate((r["option"] or "none").split("/")[0], (x, y), fontsize=6, rotation=30)
        ax.set_title(name)
        ax.set_ylabel("cost ($M)")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


__all__ = ["sweeps", "break_evens", "chart"]
