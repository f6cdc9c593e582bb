"""Ways out of infeasibility: the minimal conflict, exact single-limit relaxations, what dropping a policy would
allow, the cheapest combined relaxation, and alternative correction sets — each with the plan it leads to.

- Exact relaxation of a numeric group g (budget, deadline, earliest start, power, racks, rack power, quote
  capacity): with every other group enforced and g dropped, minimise the quantity g limits (cash, finish day,
  IT watts, racks, the quote's nodes; maximise the start for earliest_start). The optimum is the smallest limit
  that restores feasibility: at it the problem is feasible, one unit short it is not (units: $1k or $1, 1 day,
  1 kW, 1 rack, 1 node). Rack power changes the points themselves, so it is found by search over the values
  where racks-per-node changes, re-building the problem each time.
- Combined relaxation (Gurobi feasRelax / CPLEX FeasOpt pattern, cp-sat-notes.md §1.3 stage 4): every numeric
  limit gets a slack; minimise the total relative change (Σ slack/limit), then cost.
- Alternatives: minimal correction sets among the conflict's groups — single groups whose removal alone gives a
  plan, then pairs when no single one does (MARCO's MCS idea, bounded).
"""

from __future__ import annotations

import math
from datetime import timedelta
from itertools import combinations
from typing import Any, Callable

from .assumptions import AssumptionSet
from .cpsat import cp_model
from .explain import GROUP_TEXT, PairOracle, covering_reason, deletion_filter, optimisation_solver
from .model import Built
from .options import Universe, quote_ready_day
from .plan import make_plan
from .problem import LoadedProblem, load_problem
from .units import usd

NUMERIC = ("budget.max_usd", "schedule.deadline", "schedule.earliest_start", "site.it_power_kw", "site.racks",
           "site.rack_power_kw")


def _is_numeric(g: str) -> bool:
    return g in NUMERIC or (g.startswith("quotes.") and g.endswith(".max_nodes"))


def _plan_summary(b: Built, solver: Any, lp: LoadedProblem, aset: AssumptionSet) -> dict[str, Any]:
    i = next(k for k, zi in enumerate(b.z) if solver.value(zi))
    pt = b.points[i]
    quotes = pt.option.quotes
    alloc = ({quotes[0].id: pt.n} if len(quotes) == 1 else
             {q.id: int(solver.value(b.y[(q.id, i)])) for q in quotes if solver.value(b.y[(q.id, i)]) > 0})
    ready = {q.id: quote_ready_day(q, o, aset.values) for o in b.universe.options for q in o.quotes}
    plan = make_plan(lp.problem, aset.values, pt, alloc, int(solver.value(b.start)), lp.as_of,
                     int(solver.value(b.cost)), b.unit, ready)
    return {"option": plan.option, "accelerator": plan.accelerator, "mode": plan.mode, "nodes": plan.nodes,
            "gpus": plan.gpus, "finish": plan.finish.isoformat(), "cost_usd": round(plan.total_cost),
            "cash_usd": round(plan.total_cash), "quotes": {q.id: q.nodes for q in plan.quotes}}


def _cost_quantity(lp: LoadedProblem) -> Callable[[Built], Any]:
    return lambda b: b.cost


def _numeric_relaxation(oracle: PairOracle, lp: LoadedProblem, aset: AssumptionSet, g: str,
                        groups: list[str]) -> dict[str, Any] | None:
    p = lp.problem
    active = [h for h in groups if h != g]
    as_of = lp.as_of
    if g == "budget.max_usd":
        q = (lambda b: b.cash) if p.budget.applies_to == "cash" else (lambda b: b.cost)
        r = oracle.minimize(active, q, lower=p.budget.applies_to)
        if r is None:
            return None
        to: Any = r[0] * oracle.unit
        out = {"group": g, "from": p.budget.max_usd, "to": to, "unit": "usd",
               "text": f"raise budget.max_usd from {usd(p.budget.max_usd)} to {usd(to)}"}  # type: ignore[arg-type]
    elif g == "schedule.deadline":
        r = oracle.minimize(active, lambda b: b.finish)
        if r is None:
            return None
        to = as_of + timedelta(days=r[0])
        out = {"group": g, "from": p.schedule.deadline.isoformat(), "to": to.isoformat(), "unit": "day",  # type: ignore[union-attr]
               "text": f"move schedule.deadline from {p.schedule.deadline} to {to}"}
    elif g == "schedule.earliest_start":
        r = oracle.minimize(active, lambda b: -b.start)
        if r is None:
            return None
        to = as_of + timedelta(days=-r[0])
        out = {"group": g, "from": p.schedule.earliest_start.isoformat(), "to": to.isoformat(), "unit": "day",  # type: ignore[union-attr]
               "text": f"move schedule.earliest_start from {p.schedule.earliest_start} to {to}"}
    elif g == "site.it_power_kw":
        r = oracle.minimize(active, lambda b: b.power_w)
        if r is None:
            return None
        to = math.ceil(r[0] / 1000 - 1e-9)
        out = {"group": g, "from": p.site.it_power_kw, "to": to, "unit": "kW",  # type: ignore[union-attr]
               "text": f"raise site.it_power_kw from {p.site.it_power_kw:,.0f} to {to:,}"}  # type: ignore[union-attr]
    elif g == "site.racks":
        r = oracle.minimize(active, lambda b: b.racks)
        if r is None:
            return None
        to = r[0]
        out = {"group": g, "from": p.site.racks, "to": to, "unit": "rack",  # type: ignore[union-attr]
               "text": f"raise site.racks from {p.site.racks} to {to}"}  # type: ignore[union-attr]
    elif g == "site.rack_power_kw":
        return _rack_power_relaxation(oracle, lp, aset)
    else:
        qid = g[len("quotes."):-len(".max_nodes")]
        r = oracle.minimize(active, lambda b: b.x[qid] if qid in b.x else 0)
        if r is None:
            return None
        quote = oracle.universe.quote(qid)
        to = r[0]
        out = {"group": g, "from": quote.max_nodes, "to": to, "unit": "node",
               "text": f"get {to} nodes from quote {qid} (it offers {quote.max_nodes})"}
    bound = r[0] if g != "site.it_power_kw" else int(out["to"]) * 1000
    cheapest = oracle.minimize(active, lambda b: b.cost, cap=(QUANTITY[_kind(g)](lp, g), bound), lower="cost")
    _v, _pair, b, solver = cheapest if cheapest is not None else r
    out["plan"] = _plan_summary(b, solver, lp, aset)
    return out


def _kind(g: str) -> str:
    return "quote" if g.startswith("quotes.") else g


QUANTITY: dict[str, Callable[[LoadedProblem, str], Callable[[Built], Any]]] = {
    "budget.max_usd": lambda lp, g: (lambda b: b.cash) if lp.problem.budget.applies_to == "cash" else (lambda b: b.cost),
    "schedule.deadline": lambda lp, g: (lambda b: b.finish),
    "schedule.earliest_start": lambda lp, g: (lambda b: -b.start),
    "site.it_power_kw": lambda lp, g: (lambda b: b.power_w),
    "site.racks": lambda lp, g: (lambda b: b.racks),
    "quote": lambda lp, g: (lambda b: b.x[g[len("quotes."):-len(".max_nodes")]]
                            if g[len("quotes."):-len(".max_nodes")] in b.x else 0),
}
"""What each numeric group limits, as a model expression (the relaxation minimises it, then caps it)."""


def _rack_power_relaxation(oracle: PairOracle, lp: LoadedProblem, aset: AssumptionSet) -> dict[str, Any] | None:
    """The smallest whole kW per rack that gives a plan: feasibility only changes where a rack starts to hold
    one more node (k × node kW), so search those values, re-building the problem at each."""
    site = lp.problem.site
    assert site is not None
    cands = sorted({math.ceil(float(o.system.node_kw.value) * k - 1e-9)
                    for o in oracle.universe.options if o.mode == "buy"
                    for k in range(1, int(o.system.nodes_per_rack.value) + 1)
                    if float(o.system.node_kw.value) * k > site.rack_power_kw})
    from .solve import SolveSettings, prepare

    def feasible(v: int) -> bool:
        lp2 = load_problem(lp.source.file, lp.overrides + [f"site.rack_power_kw={v}"])
        _cat, aset2, u2 = prepare(lp2, SolveSettings())
        o2 = PairOracle(lp2, aset2, u2, oracle.unit)
        return o2.feasible(o2.all_groups())

    lo, hi = 0, len(cands) - 1
    if not cands or not feasible(cands[hi]):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if feasible(cands[mid]):
            hi = mid
        else:
            lo = mid + 1
    to = cands[lo]
    return {"group": "site.rack_power_kw", "from": site.rack_power_kw, "to": to, "unit": "kW",
            "text": f"raise site.rack_power_kw from {site.rack_power_kw:g} to {to}"}


def _drop(oracle: PairOracle, lp: LoadedProblem, aset: AssumptionSet, drop: list[str],
          groups: list[str]) -> dict[str, Any] | None:
    r = oracle.minimize([h for h in groups if h not in drop], lambda b: b.cost, lower="cost")
    if r is None:
        return None
    return {"drop": drop, "plan": _plan_summary(r[2], r[3], lp, aset)}


def _weights(lp: LoadedProblem, universe: Universe, unit: int) -> dict[str, int]:
    """Integer weights so Σ weight × slack is the total relative change (in millionths of each limit)."""
    p = lp.problem
    w: dict[str, int] = {}
    if p.budget.max_usd is not None:
        w["budget.max_usd"] = max(1, round(1e6 * unit / p.budget.max_usd))
    if universe.deadline_day is not None:
        span = max(1, universe.deadline_day - universe.earliest_day)
        w["schedule.deadline"] = max(1, round(1e6 / span))
        w["schedule.earliest_start"] = max(1, round(1e6 / span))
    if p.site is not None:
        w["site.it_power_kw"] = max(1, round(1e6 / (p.site.it_power_kw * 1000)))
        w["site.racks"] = max(1, round(1e6 / p.site.racks))
    for o in universe.options:
        for q in o.quotes:
            w[f"quotes.{q.id}.max_nodes"] = max(1, round(1e6 / q.max_nodes))
    return w


def combined_relaxation(lp: LoadedProblem, aset: AssumptionSet, universe: Universe, unit: int,
                        pairs: list[str] | None = None) -> dict[str, Any] | None:
    """Cheapest joint change of numeric limits (min Σ relative slack, then min cost), by pair."""
    el = PairOracle(lp, aset, universe, unit, pairs=pairs, elastic=True)
    weights = _weights(lp, universe, unit)
    best: tuple[int, int, str, Built, Any] | None = None
    for pair in el.items:
        b = el.model(pair)
        if not b.slacks:
            continue
        m = b.model
        m.clear_assumptions()
        m.add_assumptions(list(b.lits.values()))
        total = sum(weights.get(g, 1) * s for g, s in b.slacks.items())
        m.minimize(total)
        solver = optimisation_solver()
        st = solver.solve(m)
        if st not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            m.clear_assumptions()
            m.clear_objective()
            continue
        tv = int(solver.value(total))
        cap = m.new_bool_var("phase2")
        m.add(total <= tv).only_enforce_if(cap)
        m.add_assumptions([cap])
        m.minimize(b.cost)
        solver2 = optimisation_solver()
        if solver2.solve(m) in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            solver = solver2
        m.clear_assumptions()
        m.clear_objective()
        cv = int(solver.value(b.cost))
        if best is None or (tv, cv, pair) < (best[0], best[1], best[2]):
            best = (tv, cv, pair, b, solver)
    if best is None:
        return None
    _tv, _cv, _pair, b, solver = best
    p = lp.problem
    changes = []
    for g, s in sorted(b.slacks.items()):
        v = int(solver.value(s))
        if v <= 0:
            continue
        sched = p.schedule
        if g == "budget.max_usd":
            changes.append({"group": g, "from": p.budget.max_usd, "to": p.budget.max_usd + v * unit, "unit": "usd"})  # type: ignore[operator]
        elif g == "schedule.deadline":
            assert sched.deadline is not None
            changes.append({"group": g, "from": sched.deadline.isoformat(),
                            "to": (sched.deadline + timedelta(days=v)).isoformat(), "unit": "day"})
        elif g == "schedule.earliest_start":
            assert sched.earliest_start is not None
            changes.append({"group": g, "from": sched.earliest_start.isoformat(),
                            "to": (sched.earliest_start - timedelta(days=v)).isoformat(), "unit": "day"})
        elif g == "site.it_power_kw":
            changes.append({"group": g, "from": p.site.it_power_kw, "to": math.ceil(p.site.it_power_kw + v / 1000),  # type: ignore[union-attr]
                            "unit": "kW"})
        elif g == "site.racks":
            changes.append({"group": g, "from": p.site.racks, "to": p.site.racks + v, "unit": "rack"})  # type: ignore[union-attr]
        else:
            qid = g[len("quotes."):-len(".max_nodes")]
            q = universe.quote(qid)
            changes.append({"group": g, "from": q.max_nodes, "to": q.max_nodes + v, "unit": "node"})
    return {"changes": changes, "plan": _plan_summary(b, solver, lp, aset)}


def explain(lp: LoadedProblem, aset: AssumptionSet, universe: Universe, unit: int, *,
            max_alternatives: int = 5, oracle: PairOracle | None = None) -> dict[str, Any]:
    """The full explanation of an infeasible problem (or of a forced option, with a forcing oracle)."""
    oracle = oracle or PairOracle(lp, aset, universe, unit)
    groups = oracle.all_groups()
    if oracle.feasible(groups):
        return {"conflict": [], "conflict_detail": [], "relaxations": [], "alternatives": [], "combined": None,
                "note": "feasible when re-checked"}
    cover = covering_reason(lp, aset, universe, unit) if oracle.forced_fn is None else None
    conflict = deletion_filter(oracle.feasible, groups, cover)
    detail = [{"group": g, "text": oracle.groups[g].text if g in oracle.groups else GROUP_TEXT.get(g, g),
               "where": universe.where(lp, g)} for g in conflict]
    relaxations = []
    alternatives = []
    for g in conflict:
        if _is_numeric(g):
            r = _numeric_relaxation(oracle, lp, aset, g, groups)
            if r is not None:
                relaxations.append(r)
                alternatives.append({"drop": [g], "relax": {k: r[k] for k in ("from", "to", "unit")},
                                     "plan": r.get("plan")})
        else:
            d = _drop(oracle, lp, aset, [g], groups)
            if d is not None:
                alternatives.append(d)
    if not alternatives:
        for a, b in combinations(conflict, 2):
            d = _drop(oracle, lp, aset, [a, b], groups)
            if d is not None:
                alternatives.append(d)
            if len(alternatives) >= max_alternatives:
                break
    combined = None
    if not relaxations and oracle.forced_fn is None:
        combined = combined_relaxation(lp, aset, universe, unit)
    return {"conflict": conflict, "conflict_detail": detail, "relaxations": relaxations,
            "alternatives": alternatives[:max_alternatives], "combined": combined}
