"""Solve a problem: build the universe and model, optimise lexicographically, re-check, find runners-up.

Determinism: one worker, seed 0, a deterministic time limit, the model built in sorted order, and a
lexicographic tie-break (cost → finish → option/node rank → quote order) so equal-cost plans cannot swap.
The ortools 9.15 wrong-optimum workaround (`presolve_inclusion_work_limit = 0`, google/or-tools#5293) is
always on, and every plan goes through the independent checker.
"""

from __future__ import annotations

import gc
import math
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator

from .cpsat import cp_model, make_solver

from .assumptions import AssumptionSet, load_assumptions
from .catalog import Catalog, load_catalog
from .checker import check_plan
from .explain import exclusion_reasons, explain_infeasible
from .bounds import point_bound, sound
from .model import Built, build, cost_ceiling, money_unit, needs_ceiling, objective, statically_excluded
from .options import EstimateCache, Universe, build_universe, check_references, quote_ready_day
from .errors import InputError, PlanCheckError
from .plan import Alternative, ExcludedOption, Plan, Result, make_plan
from .problem import LoadedProblem


@dataclass
class SolveSettings:
    time_limit: float = 20.0
    workers: int = 1
    allow_expired: bool = False
    alternatives: bool = True
    extra_quotes: tuple[str, ...] = ()
    cross_check: bool = False
    hint: dict[str, Any] | None = None  # a previous plan {option, nodes, quotes: {id: nodes}} to warm-start from


def solver_for(settings: SolveSettings, *, limit: float | None = None) -> cp_model.CpSolver:
    return make_solver(limit if limit is not None else settings.time_limit, workers=settings.workers)


def primary_objective(b: Built, lp: LoadedProblem) -> Any:
    return objective(b.cost, b.finish, lp, b.universe.horizon, b.cost_hi, b.unit)


def _allocation(b: Built, solver: cp_model.CpSolver, i: int) -> dict[str, int]:
    pt = b.points[i]
    quotes = pt.option.quotes
    if len(quotes) == 1:
        return {quotes[0].id: pt.n}
    alloc = {q.id: int(solver.value(b.y[(q.id, i)])) for q in quotes}
    return {k: v for k, v in alloc.items() if v > 0}


def _ready_days(b: Built, lp: LoadedProblem, a: Any) -> dict[str, int]:
    return {q.id: quote_ready_day(q, o, a) for o in b.universe.options for q in o.quotes}


def optimise(b: Built, lp: LoadedProblem, aset: AssumptionSet, settings: SolveSettings,
             assumptions: list[Any] | None = None, *, tie_break: bool = True) -> tuple[str, Plan | None, int | None, int | None]:
    """Solve for the best plan (optionally under assumption literals). Returns (status, plan, obj, bound)."""
    m = b.model
    m.clear_hints()
    m.clear_assumptions()
    if assumptions:
        m.add_assumptions(assumptions)
    _add_hint(b, settings.hint)
    obj = primary_objective(b, lp)
    m.minimize(obj)
    solver = solver_for(settings)
    status = solver.solve(m)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        m.clear_assumptions()
        m.clear_objective()
        name = {cp_model.INFEASIBLE: "infeasible", cp_model.UNKNOWN: "unknown",
                cp_model.MODEL_INVALID: "model_invalid"}.get(status, "unknown")
        if status == cp_model.MODEL_INVALID:
            raise RuntimeError("internal error: CP-SAT model invalid: " + m.validate())
        return name, None, None, None
    best, bound = int(solver.value(obj)), int(math.ceil(solver.best_objective_bound - 1e-6))
    proven = status == cp_model.OPTIMAL or bound >= best
    if tie_break and proven:
        tie = m.new_bool_var("tie_break_phase")
        m.add(obj == best).only_enforce_if(tie)
        m.add_assumptions([tie])
        qrank = sum(k * b.x[q.id] for k, q in enumerate(sorted((q for o in b.universe.options for q in o.quotes
                                                                   if q.id in b.x), key=lambda q: q.id)))
        m.minimize(b.rank * (len(b.x) * 100_000 + 1) + qrank)
        m.clear_hints()
        for i, zi in enumerate(b.z):
            m.add_hint(zi, solver.value(zi))
        solver2 = solver_for(settings)
        status2 = solver2.solve(m)
        if status2 == cp_model.MODEL_INVALID:
            raise RuntimeError("internal error: tie-break model invalid: " + m.validate()[:300])
        if status2 in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            solver = solver2
        m.clear_hints()
    m.clear_assumptions()
    m.clear_objective()
    i = next(k for k, zi in enumerate(b.z) if solver.value(zi))
    pt = b.points[i]
    alloc = _allocation(b, solver, i)
    plan = make_plan(lp.problem, aset.values, pt, alloc, int(solver.value(b.start)), lp.as_of,
                     int(solver.value(b.cost)), b.unit, _ready_days(b, lp, aset.values))
    return ("optimal" if proven else "feasible"), plan, best, bound


def _add_hint(b: Built, hint: dict[str, Any] | None) -> None:
    """Warm start from a previous plan: a complete hint of its point and split when this model has them.
    A hint is only a starting point: CP-SAT repairs or ignores an infeasible one, and the result is proven
    as usual (cp-sat-notes.md §1.4)."""
    if not hint:
        return
    idx = next((i for i, pt in enumerate(b.points) if pt.option.id == hint.get("option")
                and pt.n == hint.get("nodes")), None)
    if idx is None:
        return
    for i, zi in enumerate(b.z):
        b.model.add_hint(zi, i == idx)
    quotes = hint.get("quotes") or {}
    seen: set[int] = set()
    for (qid, i), v in b.y.items():
        dom = b.model.proto.variables[v.index].domain
        if v.index in seen or dom[0] == dom[-1]:  # shared constants (dominated quotes) take no hint
            continue
        seen.add(v.index)
        b.model.add_hint(v, int(quotes.get(qid, 0)) if i == idx else 0)


def prepare(lp: LoadedProblem, settings: SolveSettings,
            estimates: EstimateCache | None = None) -> tuple[Catalog, AssumptionSet, Universe]:
    cat = load_catalog(list(lp.problem.catalogs) + list(settings.extra_quotes))
    aset = load_assumptions(lp.problem.risk, src=lp.source)
    check_references(lp, cat)
    universe = build_universe(lp, cat, aset.values, allow_expired=settings.allow_expired, estimates=estimates)
    return cat, aset, universe


@contextmanager
def collections_paused() -> Iterator[None]:
    """No cyclic garbage collection while solving.

    Building the universe allocates hundreds of thousands of small long-lived objects (points, cost lines);
    each automatic full collection re-scans all of them, which cost 40% of the universe build with a 1,000-quote
    catalog (bench/README.md). The solve makes little cyclic garbage, so collection waits until it is done.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


Prepared = tuple[Catalog, AssumptionSet, Universe]


def solve_problem(lp: LoadedProblem, settings: SolveSettings | None = None,
                  prepared: Prepared | None = None) -> Result:
    """`plan solve` (see `_solve_problem`); input errors found while modelling name the problem file.
    `prepared`: the output of `prepare(lp, settings)` when the caller already has it (why-not, sensitivity)."""
    try:
        with collections_paused():
            return _solve_problem(lp, settings, prepared)
    except InputError as exc:
        if exc.file is None:
            raise InputError(exc.message, file=lp.source.file, path=exc.path) from None
        raise


def _solve_problem(lp: LoadedProblem, settings: SolveSettings | None = None,
                   prepared: Prepared | None = None) -> Result:
    """The `plan solve` pipeline.

    A plan uses exactly one option, so the model decomposes exactly by accelerator/mode pair: each pair's
    sub-model (same groups, only that pair's options) is solved to proven optimality, the best pair is the plan
    and the others are the runners-up. This is far faster than one model over every option (the one-hot over
    thousands of points has a weak relaxation) and gives the candidate table for free. With
    `settings.cross_check` the full model is solved too and must agree (used by the tests).
    """
    settings = settings or SolveSettings()
    t0 = time.perf_counter()
    cat, aset, universe = prepared or prepare(lp, settings)
    unit = money_unit(lp, universe)
    warnings: list[str] = []
    if lp.as_of_defaulted:
        warnings.append(f"as_of not set: planning as of today, {lp.as_of}")
    if universe.expired:
        warnings.append(f"{len(universe.expired)} expired quote(s) not used (use --allow-expired): " + ", ".join(
            f"{q.id} (valid until {q.valid_until})" for q in universe.expired))
    excluded: list[ExcludedOption] = [ExcludedOption(e.option, e.reasons) for e in universe.static_excluded]
    for o in universe.options:
        if not any(pt.workable for pt in o.points):
            excluded.append(ExcludedOption(o.id, [
                f"unworkable at every size: >{aset.values.reliability.max_lost_fraction:.0%} of time lost to "
                f"failures, or >{aset.values.max_training_days:,.0f} days of training"]))

    solved: list[tuple[int, str, Plan]] = []
    infeasible: list[str] = []
    unproven: list[tuple[str, int | None]] = []
    cost_hi = cost_ceiling(lp, aset.values, universe, unit) if needs_ceiling(lp) else None
    for pair in universe.pairs():
        st, plan, obj, bound = solve_pair(lp, aset, universe.subset(pair), unit, cost_hi, settings,
                                          tie_break=False)
        if plan is None:
            if st == "infeasible":
                infeasible.append(pair)
            else:
                unproven.append((pair, None))
            continue
        check_plan(lp, cat, aset.values, universe, plan)
        assert obj is not None
        solved.append((obj, pair, plan))
        if st != "optimal":
            unproven.append((pair, bound))
    solved.sort(key=lambda t: (t[0], t[1]))
    if solved and not unproven:
        # Only the winner needs the canonical tie-break (option/size rank, then quote order) among equal plans.
        pair = solved[0][1]
        st, plan, obj, _ = solve_pair(lp, aset, universe.subset(pair), unit, cost_hi, settings, tie_break=True)
        if plan is not None and obj == solved[0][0]:
            check_plan(lp, cat, aset.values, universe, plan)
            solved[0] = (obj, pair, plan)
    best_plan = solved[0][2] if solved else None
    best = solved[0][0] if solved else None
    if solved:
        status = "optimal" if not unproven else "feasible"
    else:
        status = "infeasible" if not unproven else "unknown"
    bound = best
    if unproven:
        bounds = [b for _, b in unproven if b is not None]
        bound = min([best] + bounds) if best is not None and len(bounds) == len(unproven) else None
        warnings.append("time limit reached before optimality was proven for: " + ", ".join(p for p, _ in unproven))
    if settings.cross_check:
        _cross_check(lp, aset, universe, unit, settings, status, best)
    alternatives = [Alternative(plan, plan.total_cost - best_plan.total_cost)  # type: ignore[union-attr]
                    for _, _, plan in solved[1:]]
    alternatives.sort(key=lambda al: (al.plan.total_cost, al.plan.finish, al.plan.option))
    if best_plan is not None:
        warnings.extend(best_plan.warnings)
    if infeasible and settings.alternatives:
        reasons = exclusion_reasons(lp, aset, universe, unit, infeasible, settings)
        excluded += [ExcludedOption(pair, reasons.get(pair, ["no feasible plan"])) for pair in infeasible]
    explanation = explain_infeasible(lp, aset, universe, unit) if status == "infeasible" else None
    excluded.sort(key=lambda e: e.option)
    return Result(status=status, plan=best_plan, alternatives=alternatives, excluded=excluded, objective=best,
                  bound=bound, solve_seconds=time.perf_counter() - t0, warnings=warnings,
                  problem_name=lp.problem.name, as_of=lp.as_of, as_of_defaulted=lp.as_of_defaulted, unit=unit,
                  explanation=explanation)


INITIAL_POINTS = 32


Forcing = Callable[[Built], list[Any]]
"""Adds constraints to a built model and returns the literals that must hold (why-not: "the target is used")."""


def solve_pair(lp: LoadedProblem, aset: AssumptionSet, universe: Universe, unit: int, cost_hi: int | None,
               settings: SolveSettings, *, tie_break: bool, forced: Forcing | None = None,
               protect: frozenset[str] = frozenset()) -> tuple[str, Plan | None, int | None, int | None]:
    """Optimise over `universe` (one pair), modelling only the points whose bound could still win.

    Points are taken in order of their lower bound (`bounds.point_bound`). A model over the cheapest few is
    solved to proven optimality; then every point whose bound is at most that optimum joins, and the model is
    solved again (warm-started from the plan so far) until no point is left out that could match or beat it.
    Points whose bound exceeds the proven optimum of a model containing all others cannot do better, and none
    can tie, so the optimum and the option/size tie-break are those of the full model. (Among quotes tied on
    cost, `dominated_quotes` may drop a different one than over all points — still optimal and deterministic.)
    If the kept points have no feasible plan, four times as many are kept, up to all of them; an unproven result
    falls back to the full model. `forced` constraints only restrict plans, so the bounds stay valid under them.
    """
    a = aset.values
    pts = [pt for o in universe.options for pt in o.points if pt.workable
           and not statically_excluded(pt, lp, a, universe, unit)]

    def run(b: Built, s: SolveSettings, tb: bool) -> tuple[str, Plan | None, int | None, int | None]:
        return optimise(b, lp, aset, s, forced(b) if forced else None, tie_break=tb)

    def full() -> tuple[str, Plan | None, int | None, int | None]:
        return run(build(lp, a, universe, unit=unit, cost_hi=cost_hi, protect=protect), settings, tie_break)

    if not pts:  # every point has a point-local proof that it cannot be chosen (`point_violations`)
        return "infeasible", None, None, None
    if not sound(lp) or len(pts) <= INITIAL_POINTS:
        return full()
    bounded = [(lb, k, pt) for k, pt in enumerate(pts)
               if (lb := point_bound(pt, lp, a, universe, unit, cost_hi)) is not None]
    if not bounded:
        return full()
    bounded.sort(key=lambda t: (t[0], t[1]))
    size = INITIAL_POINTS
    keep = {(pt.option.id, pt.n) for _, _, pt in bounded[:size]}
    hint = settings.hint
    while True:
        b = build(lp, a, universe, unit=unit, cost_hi=cost_hi, keep=keep, protect=protect)
        st, plan, obj, bound = run(b, replace(settings, hint=hint), False)
        if st == "optimal" and obj is not None and plan is not None:
            need = {(pt.option.id, pt.n) for lb, _, pt in bounded if lb <= obj}
            if need <= keep:
                break
            keep |= need
            hint = {"option": plan.option, "nodes": plan.nodes, "quotes": {q.id: q.nodes for q in plan.quotes}}
        elif st == "infeasible" and len(keep) < len(bounded):
            size *= 4
            keep = {(pt.option.id, pt.n) for _, _, pt in bounded[:size]}
        elif st == "infeasible":
            return st, None, None, None
        else:
            return full()
    if tie_break:
        return run(b, replace(settings, hint=hint), True)
    return st, plan, obj, bound


def _cross_check(lp: LoadedProblem, aset: AssumptionSet, universe: Universe, unit: int, settings: SolveSettings,
                 status: str, best: int | None) -> None:
    """Solve the undecomposed model and require the same optimum (guards decomposition and CP-SAT alike)."""
    b = build(lp, aset.values, universe, unit=unit)
    st, _plan, obj, _ = optimise(b, lp, aset, settings, tie_break=False)
    if st in ("optimal", "infeasible") and status in ("optimal", "infeasible") and (st, obj) != (status, best):
        raise PlanCheckError(f"cross-check failed: full model {st} {obj}, per-pair {status} {best} "
                             "(cf. google/or-tools#5293)")


def load_and_solve(file: str, sets: list[str] | None = None, settings: SolveSettings | None = None) -> Result:
    from .problem import load_problem
    return solve_problem(load_problem(file, sets), settings)


__all__ = ["SolveSettings", "solve_problem", "load_and_solve", "prepare", "optimise"]
