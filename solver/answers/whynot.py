"""`plan explain FILE --why-not ID`: why an accelerator, system, mode, option or quote is not the plan.

Either it cannot be part of any plan — then the answer is a minimal conflict of the user's groups with the target
forced in (plus the single changes that would admit it) — or it can, but costs more: then its best plan, the
cost difference line by line, and the break-even price of its main quote (the price at which it would be chosen),
found by bisection on re-solves of that option alone. Each re-priced solve is a what-if of the validated problem
(`Problem.with_quote`): nothing is re-read and no catalog object changes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from .. import collect
from ..errors import InputError
from ..estimate.cost import LINE_ORDER
from ..estimate.options import OFFERS, EstimateCache, Option, Universe
from ..inputs.catalog import PRICE_FIELDS, PRICE_UNITS, Catalog, price_text
from ..inputs.names import did_you_mean
from ..inputs.problem import Problem
from ..model.builder import Built
from ..model.objective import objective
from ..solve.pipeline import Context, Forcing, SolveSettings, prepare, solve_pair, solve_problem
from ..solve.plan import Plan, Result
from .conflicts import PairOracle
from .relax import explain

log = logging.getLogger(__name__)
MODES = ("buy", "cloud", "managed")
BREAK_EVEN_DOUBLINGS = 8
"""How far above today's price the chosen plan's break-even search looks (2^8 = 256×) before saying it stays."""


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
    if t in MODES or t in OFFERS:
        return "mode", [o for o in opts if o.mode == t or o.offer == t], None
    if "/" in t:
        return "option", [o for o in opts if t in (o.id, o.pair, f"{o.system.id}/{o.mode}",
                                                   f"{o.accel.id}/{o.mode}")], None
    names = set(cat.quotes) | set(cat.accelerators) | set(cat.systems) | set(MODES) | set(OFFERS)
    hint = did_you_mean(t, names)
    raise InputError(f"unknown id '{target}'" + (hint or " (an accelerator, system, quote, mode, or system/mode)"),
                     origin="--why-not")


def forcing(options: list[Option], qid: str | None) -> Forcing:
    """Constraints that make a model use the target: the quote (`qid`) or one of the options."""
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


def line_diff(target: Plan, chosen: Plan) -> list[dict[str, Any]]:
    rows = []
    for name in LINE_ORDER:
        a, b = target.lines.cost.get(name, 0.0), chosen.lines.cost.get(name, 0.0)
        if abs(a) >= 0.5 or abs(b) >= 0.5:
            rows.append({"line": name, "target": round(a), "chosen": round(b), "delta": round(a - b)})
    return rows


def ranks_first(a: Plan, b: Plan, problem: Problem, horizon: int, unit: int) -> bool:
    """Plan a would be chosen over plan b: a better score, or an equal one and a pair that sorts first (the solve
    ranks equal plans of different pairs by pair name)."""
    if not scores_no_worse(a, b, problem, horizon, unit):
        return False
    return not scores_no_worse(b, a, problem, horizon, unit) or a.pair <= b.pair


def scores_no_worse(a: Plan, b: Plan, problem: Problem, horizon: int, unit: int) -> bool:
    """Plan a scores at least as well as plan b under the problem's objective, compared on one cost ceiling that
    covers both (the plans may come from models whose ceilings differ: a re-priced quote)."""
    hi = max(a.model_cost_units, b.model_cost_units)

    def score(p: Plan) -> int:
        return int(objective(p.model_cost_units, (p.finish - problem.as_of).days, problem, horizon, hi, unit))
    return score(a) <= score(b)


@dataclass
class Target:
    """A why-not question resolved against the problem: the options it names and the quote it forces, if any."""

    name: str
    kind: str
    options: list[Option]
    quote: str | None

    @property
    def pairs(self) -> set[str]:
        return {o.pair for o in self.options}

    @property
    def ids(self) -> set[str]:
        return {o.id for o in self.options}


class WhyNot:
    """What every why-not question about one problem shares: the prepared problem, its solved plan, and the memory
    and time estimates that every re-priced variant reuses."""

    def __init__(self, problem: Problem, settings: SolveSettings, ctx: Context | None = None,
                 main: Result | None = None) -> None:
        self.estimates: EstimateCache = {}
        self.ctx = ctx or prepare(problem, settings, estimates=self.estimates)
        self.problem = problem
        self.settings = settings
        self.main = main or solve_problem(problem, settings, self.ctx)

    def best_forced(self, t: Target, repriced: tuple[str, float] | None = None, *, tie_break: bool = True,
                    cost_cap: int | None = None) -> tuple[int, Plan] | None:
        """Best plan that uses the target; `repriced` = (quote id, price) replaces one quote's price (a what-if).
        Without `tie_break`, one of the best plans: enough where only its score counts (the objective is one-to-one
        in cost and finish, `model/objective.py`, so every best plan scores the same). `cost_cap` (units): only
        plans that cost at most that much (None if there is none), which the bounds make a much smaller search."""
        problem = self.problem
        if repriced is not None:
            qid, price = repriced
            problem = problem.with_quote(qid, {PRICE_FIELDS[problem.catalog.quotes[qid].mode]: price},
                                         origin="break-even search")
        ctx = prepare(problem, self.settings, estimates=self.estimates, only_pairs=t.pairs, unit=self.ctx.unit,
                      engine=self.ctx.engine, horizon_floor=self.ctx.universe.horizon,
                      only_quotes=fabric_mates(problem, t))
        hi = ctx.cost_hi()
        forced = forcing([o for o in ctx.universe.options if o.id in t.ids], t.quote)
        protect = frozenset({t.quote}) if t.quote else frozenset()
        best: tuple[int, Plan] | None = None
        for pair in sorted(t.pairs):
            out = solve_pair(ctx, ctx.universe.subset(pair), hi, tie_break=tie_break, forced=forced, protect=protect,
                             cost_cap=cost_cap)
            if out.plan is not None and out.objective is not None and (best is None or out.objective < best[0]):
                best = (out.objective, out.plan)
        return best

    @collect.paused()
    def ask(self, target: str) -> dict[str, Any]:
        ctx = self.ctx
        kind, options, qid = resolve_target(target, self.problem.catalog, ctx.universe)
        out: dict[str, Any] = {"target": target, "kind": kind}
        if not options:
            out.update(status="excluded", reasons=self._static_reasons(target, kind, qid))
            return out
        t = Target(target, kind, options, qid)
        # The best plan with the target decides feasibility too; only without one is the explanation's model built
        # (over every point and quote of the target's pairs: with a marketplace catalog, the dearest step).
        best = self.best_forced(t)
        if best is None:
            oracle = PairOracle(ctx, pairs=sorted(p for p in ctx.universe.pairs() if p in t.pairs),
                                forced=forcing(options, qid), protect=frozenset({qid}) if qid else frozenset(),
                                forced_options=frozenset(o.id for o in options) if qid is None else None)
            if oracle.status(oracle.all_groups()) != "feasible":
                expl = explain(ctx, oracle=oracle)
                expl["subject"] = target
                out.update(status="infeasible", explanation=expl)
                return out
            out.update(status="unknown")  # a plan exists, but the search for the best one hit a time limit
            return out
        _obj, plan = best
        chosen = self.main.plan
        if chosen is None or self.main.objective is None:
            out.update(status="feasible", plan=plan)
            return out
        chosen_uses = (qid in {q.id for q in chosen.quotes}) if qid else (chosen.option in t.ids)
        out.update(status="chosen" if chosen_uses else "more_expensive", plan=plan, chosen=chosen,
                   delta_usd=plan.total_cost - chosen.total_cost, lines=line_diff(plan, chosen))
        if not chosen_uses:
            main_quote = max(plan.quotes, key=lambda q: (q.nodes, q.id))
            out["break_even"] = self.break_even(t, main_quote.id, chosen)
        return out

    def _static_reasons(self, target: str, kind: str, qid: str | None) -> list[str]:
        u, cat = self.ctx.universe, self.problem.catalog
        reasons = [e.reason for e in u.static_excluded
                   if target in (e.option, e.accelerator) or e.option.startswith(target + "/")]
        if qid is not None and not reasons:
            q = cat.quotes[qid]
            if q.expired(self.problem.as_of):
                reasons.append(f"quote {qid} expired on {q.valid_until} (use --allow-expired)")
            elif q.not_yet_quoted(self.problem.as_of):
                reasons.append(f"quote {qid} is dated {q.quoted_on}, after as_of {self.problem.as_of}")
        if kind == "accelerator":
            reasons += [f"{e.option}: {e.reason}" for e in u.static_excluded
                        if e.system is not None and e.accelerator == target]
        return reasons or ["no quote: nothing in the catalogs offers it"]

    def break_even(self, t: Target, quote_id: str, chosen: Plan) -> dict[str, Any]:
        """Highest price of `quote_id` at which the target's best plan scores at least as well as today's plan."""
        q = self.problem.catalog.quotes[quote_id]
        step = price_step(q.mode)
        horizon, unit = self.ctx.universe.horizon, self.ctx.unit

        cap = winning_cap(self.problem, chosen)

        def wins(price: float) -> bool:
            log.info("break-even search: %s at %.2f", quote_id, price)
            r = self.best_forced(t, (quote_id, price), tie_break=False, cost_cap=cap)
            return r is not None and ranks_first(r[1], chosen, self.problem, horizon, unit)

        floor = step if q.mode == "cloud" else 0.0
        if not wins(floor):
            return {"quote": quote_id, "price": None, "current": q.price,
                    "note": "does not win even at (almost) zero price: its other costs or dates lose"}
        lo, _hi = bisect_price(floor, q.price, step, wins)
        return {"quote": quote_id, "price": round(lo, 2), "current": q.price, "unit": PRICE_UNITS[q.mode],
                "note": f"at {price_text(lo, q.mode)} or less the target would be chosen (resolution "
                        f"{price_text(step, q.mode)})"}


def fabric_mates(problem: Problem, t: Target) -> frozenset[str] | None:
    """The quotes a plan forced to use the target quote can use at all, or None for every quote: one job runs on
    at most `policy.max_fabrics` fabrics, so with one fabric a plan that uses quote q uses only quotes on q's
    fabric — every bought node shares the site's, but a rented cluster is usually alone on its own. A forced search
    over a marketplace pair then reads a handful of quotes, not thousands, and finds the same plans."""
    if t.quote is None or problem.spec.policy.max_fabrics != 1:
        return None
    cat = problem.catalog
    fabric = cat.quotes[t.quote].fabric_id
    accels = {p.partition("/")[0] for p in t.pairs}
    systems = sorted(sid for sid, s in cat.systems.items() if s.accelerator in accels)
    return frozenset(qid for sid in systems for qid in cat.quote_ids_by_system.get(sid, ())
                     if cat.quotes[qid].fabric_id == fabric)


def winning_cap(problem: Problem, chosen: Plan) -> int | None:
    """The most (model units) a plan may cost and still rank first against `chosen` (`ranks_first`): its cost
    under `objective: cost`, where cost comes first; None under the others, where a faster plan may cost more. A
    search capped there finds a plan exactly when the uncapped one finds a winner, and the same best plan then."""
    return chosen.model_cost_units if problem.spec.objective == "cost" else None


def price_step(mode: str) -> float:
    """The resolution of a break-even price: a cent per GPU-hour, a dollar per node or node-month."""
    return 0.01 if mode == "cloud" else 1.0


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


def why_not(problem: Problem, target: str, settings: SolveSettings | None = None,
            context: WhyNot | None = None) -> dict[str, Any]:
    return (context or WhyNot(problem, settings or SolveSettings())).ask(target)
