"""Why an option cannot work: a minimal set of the user's constraint groups that rules it out.

Pipeline (`../shared/reference/cp-sat-notes.md` §1.1, §1.3): a feasibility-only model (no objective, one
worker, presolve off — google/or-tools#5141) with every group literal as an assumption and the option
forced; read `sufficient_assumptions_for_infeasibility`, map indices through our own table (dropping any
index that is not ours), re-verify the core by solving with only those groups, then shrink by deletion so
that every group left is necessary. The solver's core is a hint, never trusted on its own.
"""

from __future__ import annotations

from typing import Any

from ortools.sat.python import cp_model

from .assumptions import AssumptionSet
from .model import Built, build, point_violations
from .options import Universe
from .problem import LoadedProblem


def feasibility_solver(limit: float = 10.0) -> cp_model.CpSolver:
    s = cp_model.CpSolver()
    p = s.parameters
    p.num_workers = 1
    p.random_seed = 0
    p.max_deterministic_time = limit
    p.cp_model_presolve = False
    p.keep_all_feasible_solutions_in_presolve = True
    p.presolve_inclusion_work_limit = 0
    return s


def _status(b: Built, active: list[str], forced: list[Any]) -> int:
    m = b.model
    m.clear_assumptions()
    m.add_assumptions([b.lits[g] for g in active] + forced)
    st = feasibility_solver().solve(m)
    m.clear_assumptions()
    return st


def minimal_conflict(b: Built, forced: list[Any], order: list[str] | None = None) -> list[str] | None:
    """A subset-minimal list of group ids that is infeasible together with `forced`; None if feasible."""
    groups = order or sorted(b.lits)
    m = b.model
    m.clear_objective()
    m.clear_assumptions()
    m.add_assumptions([b.lits[g] for g in groups] + forced)
    solver = feasibility_solver()
    st = solver.solve(m)
    if st != cp_model.INFEASIBLE:
        m.clear_assumptions()
        return None
    index = {b.lits[g].index: g for g in groups}
    core = [index[i] for i in solver.sufficient_assumptions_for_infeasibility() if i in index]
    m.clear_assumptions()
    core = [g for g in groups if g in core]
    if not core or _status(b, core, forced) != cp_model.INFEASIBLE:
        core = list(groups)
    i = 0
    while i < len(core):
        trial = core[:i] + core[i + 1:]
        if _status(b, trial, forced) == cp_model.INFEASIBLE:
            core = trial
        else:
            i += 1
    return core


PRIORITY = ("workload.memory", "policy.modes", "policy.require_ecc", "policy.accelerators", "policy.vendors",
            "policy.allow_estimates", "site.cooling", "site.rack_power_kw", "site.it_power_kw", "site.racks",
            "schedule.deadline", "budget.max_usd")
GROUP_TEXT = {"workload.memory": "does not fit in memory at any node count", "policy.modes": "mode not allowed",
              "policy.require_ecc": "no ECC memory", "policy.accelerators": "excluded by the accelerator list",
              "policy.vendors": "excluded by the vendor list", "policy.allow_estimates": "only estimated prices",
              "site.cooling": "site cannot cool it", "site.rack_power_kw": "a node draws more than a rack supplies",
              "site.it_power_kw": "needs more IT power than the site has", "site.racks": "needs more racks",
              "schedule.deadline": "cannot finish by the deadline", "budget.max_usd": "over budget at any size"}


def _rank(g: str) -> tuple[int, str]:
    return (PRIORITY.index(g) if g in PRIORITY else len(PRIORITY), g)


def covering_reason(lp: LoadedProblem, aset: AssumptionSet, sub: Universe, unit: int) -> list[str] | None:
    """Stage 0 (Python pre-check): a small set of groups whose point-local violations cover every point.

    Each violation item is exact (see `point_violations`), so a cover proves infeasibility without a solve;
    it is shrunk by deletion to be minimal among such proofs. None when some point has no local violation
    (the reason is then non-local: allocation, start dates, rules — left to CP-SAT).
    """
    items: list[list[frozenset[str]]] = []
    for o in sub.options:
        for pt in o.points:
            if pt.workable:
                v = point_violations(pt, lp, aset.values, sub, unit)
                if not v:
                    return None
                items.append(v)
    if not items:
        return None

    def covers(s: set[str]) -> bool:
        return all(any(it <= s for it in its) for its in items)

    chosen: set[str] = set()
    for its in items:
        if not any(it <= chosen for it in its):
            chosen |= min(its, key=lambda it: (len(it - chosen), min(_rank(g) for g in it)))
    for g in sorted(chosen, key=_rank, reverse=True):
        if covers(chosen - {g}):
            chosen.discard(g)
    return sorted(chosen, key=_rank)


def describe(b: Built, lp: LoadedProblem, gid: str) -> str:
    g = b.groups[gid]
    return f"{gid} ({g.text}; {b.universe.where(lp, gid)})"


def exclusion_reasons(lp: LoadedProblem, aset: AssumptionSet, universe: Universe, unit: int, pairs: list[str],
                      settings: Any) -> dict[str, list[str]]:
    """For each accelerator/mode pair with no feasible plan: the minimal conflict of groups that excludes it."""
    out: dict[str, list[str]] = {}
    for pair in pairs:
        cover = covering_reason(lp, aset, universe.subset(pair), unit)
        if cover is not None:
            out[pair] = [f"{g} ({GROUP_TEXT.get(g, 'capacity of this quote')}; {universe.where(lp, g)})"
                         for g in cover]
            continue
        b = build(lp, aset.values, universe.subset(pair), guard="assume", unit=unit)
        ids = [o.id for o in b.universe.options if o.id in b.sel]
        if not ids:
            out[pair] = ["no workable configuration"]
            continue
        lit = b.model.new_bool_var(f"force[{pair}]")
        b.model.add(sum(b.sel[i] for i in ids) == 1).only_enforce_if(lit)
        core = minimal_conflict(b, [lit])
        if core is None:
            out[pair] = ["feasible when checked alone (solver limit reached in the optimisation)"]
        elif not core:
            out[pair] = ["no configuration at all (physics: nothing fits the model's own limits)"]
        else:
            out[pair] = [describe(b, lp, g) for g in core]
    return out
