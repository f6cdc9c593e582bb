"""Solve a problem: build the universe and model, optimise lexicographically, re-check, find runners-up.

Determinism: one worker, seed 0, a deterministic time limit, the model built in sorted order, and a
lexicographic tie-break (cost → finish → option/node rank → quote order) so equal-cost plans cannot swap.
The ortools 9.15 wrong-optimum workaround (`presolve_inclusion_work_limit = 0`, google/or-tools#5293) is
always on, and every plan goes through the independent checker.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from .assumptions import AssumptionSet, load_assumptions
from .catalog import Catalog, load_catalog
from .checker import check_plan
from .explain import exclusion_reasons, explain_infeasible
from .model import Built, build, units
from .options import Universe, build_universe, check_references, quote_ready_day
from .errors import PlanCheckError
from .plan import Alternative, ExcludedOption, Plan, Result, make_plan
from .problem import CostObjective, LoadedProblem


@dataclass
class SolveSettings:
    time_limit: float = 20.0
    workers: int = 1
    allow_expired: bool = False
    alternatives: bool = True
    extra_quotes: tuple[str, ...] = ()


def solver_for(settings: SolveSettings, *, limit: float | None = None) -> cp_model.CpSolver:
    s = cp_model.CpSolver()
    p = s.parameters
    p.num_workers = settings.workers
    p.random_seed = 0
    p.max_deterministic_time = limit if limit is not None else settings.time_limit
    p.presolve_inclusion_work_limit = 0
    return s


def primary_objective(b: Built, lp: LoadedProblem) -> Any:
    """Lexicographic primary objective as one integer expression (finish is always < the multiplier)."""
    obj = lp.problem.objective
    k_finish = 2 * b.universe.horizon + 1
    if obj == "time":
        return b.finish * (10 ** 12) + b.cost
    if isinstance(obj, CostObjective):
        per_day = units(obj.delay_cost_usd_per_day, b.unit)
        return (b.cost + per_day * b.finish) * k_finish + b.finish
    return b.cost * k_finish + b.finish


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
    proven = status == cp_model.OPTIMAL
    best, bound = int(solver.objective_value), int(solver.best_objective_bound)
    if tie_break and proven:
        tie = m.new_bool_var("tie_break_phase")
        m.add(obj == best).only_enforce_if(tie)
        m.add_assumptions([tie])
        qrank = sum(k * b.x[q.id] for k, q in enumerate(sorted((q for o in b.universe.options for q in o.quotes
                                                                   if q.id in b.x), key=lambda q: q.id)))
        m.minimize(b.rank * (len(b.x) * 100_000 + 1) + qrank)
        for i, zi in enumerate(b.z):
            m.add_hint(zi, solver.value(zi))
        solver2 = solver_for(settings)
        status2 = solver2.solve(m)
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


def prepare(lp: LoadedProblem, settings: SolveSettings) -> tuple[Catalog, AssumptionSet, Universe]:
    cat = load_catalog(list(lp.problem.catalogs) + list(settings.extra_quotes))
    aset = load_assumptions(lp.problem.risk, src=lp.source)
    check_references(lp, cat)
    universe = build_universe(lp, cat, aset.values, allow_expired=settings.allow_expired)
    return cat, aset, universe


def solve_problem(lp: LoadedProblem, settings: SolveSettings | None = None) -> Result:
    """The `plan solve` pipeline (see module docstring)."""
    settings = settings or SolveSettings()
    t0 = time.perf_counter()
    cat, aset, universe = prepare(lp, settings)
    b = build(lp, aset.values, universe)
    warnings = [f"EXPIRED QUOTE not used: {q.id} (valid until {q.valid_until}; use --allow-expired)"
                for q in universe.expired]
    if lp.as_of_defaulted:
        warnings.insert(0, f"as_of not set: planning as of today, {lp.as_of}")
    status, plan, best, bound = optimise(b, lp, aset, settings)
    alternatives: list[Alternative] = []
    excluded: list[ExcludedOption] = [ExcludedOption(e.option, e.reasons) for e in universe.static_excluded]
    for o in universe.options:
        if not any(pt.workable for pt in o.points):
            excluded.append(ExcludedOption(o.id, [
                f"unworkable: at every node count failures and restarts would take over "
                f"{aset.values.reliability.max_lost_fraction:.0%} of the time, or throughput is nil"]))
    if plan is not None:
        check_plan(lp, cat, aset.values, universe, plan)
        warnings.extend(plan.warnings)
    if settings.alternatives:
        alternatives, more = runners_up(lp, aset, cat, universe, b.unit, plan, best, status, settings)
        excluded.extend(more)
    explanation = None
    if status == "infeasible":
        explanation = explain_infeasible(lp, aset, universe, b.unit)
    excluded.sort(key=lambda e: e.option)
    return Result(status=status, plan=plan, alternatives=alternatives, excluded=excluded, objective=best,
                  bound=bound, solve_seconds=time.perf_counter() - t0, warnings=warnings,
                  problem_name=lp.problem.name, as_of=lp.as_of, as_of_defaulted=lp.as_of_defaulted, unit=b.unit,
                  explanation=explanation)


def runners_up(lp: LoadedProblem, aset: AssumptionSet, cat: Catalog, universe: Universe, unit: int,
               plan: Plan | None, best: int | None, status: str,
               settings: SolveSettings) -> tuple[list[Alternative], list[ExcludedOption]]:
    """Best plan for every other accelerator/mode pair, and a minimal reason for each pair with none.

    Each pair is solved on its own sub-model (same constraints, only that pair's options). The minimum over
    pairs must equal the global optimum: a cheap, independent cross-check of the main solve.
    """
    alternatives: list[Alternative] = []
    infeasible: list[str] = []
    pair_best: list[int] = []
    chosen = f"{plan.accelerator}/{plan.mode}" if plan else None
    for pair in universe.pairs():
        bp = build(lp, aset.values, universe.subset(pair), unit=unit)
        st, alt, obj, _ = optimise(bp, lp, aset, settings, tie_break=pair == chosen)
        if alt is None:
            if st == "infeasible":
                infeasible.append(pair)
            continue
        if obj is not None and st == "optimal":
            pair_best.append(obj)
        check_plan(lp, cat, aset.values, universe, alt)
        if pair == chosen:
            continue
        alternatives.append(Alternative(alt, alt.total_cost - plan.total_cost if plan else 0.0))
    if status == "optimal" and best is not None and pair_best and min(pair_best) != best:
        raise PlanCheckError(f"CP-SAT cross-check failed: global optimum {best} but best per-pair optimum "
                             f"{min(pair_best)} (cf. google/or-tools#5293)")
    if plan is None and status == "infeasible" and pair_best:
        raise PlanCheckError("CP-SAT cross-check failed: global model infeasible but a pair has a plan")
    alternatives.sort(key=lambda al: (al.plan.total_cost, al.plan.finish, al.plan.option))
    excluded: list[ExcludedOption] = []
    if infeasible:
        reasons = exclusion_reasons(lp, aset, universe, unit, infeasible, settings)
        excluded = [ExcludedOption(pair, reasons.get(pair, ["no feasible plan"])) for pair in infeasible]
    return alternatives, excluded


def load_and_solve(file: str, sets: list[str] | None = None, settings: SolveSettings | None = None) -> Result:
    from .problem import load_problem
    return solve_problem(load_problem(file, sets), settings)


__all__ = ["SolveSettings", "solve_problem", "load_and_solve", "prepare", "optimise"]
_ = load_assumptions
