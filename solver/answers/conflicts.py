"""Why an option cannot work: a minimal set of the user's constraint groups that rules it out.

Pipeline (`../shared/reference/cp-sat-notes.md` §1.1, §1.3): a feasibility-only model (no objective, one
worker, presolve off — google/or-tools#5141) with every group literal as an assumption and the option
forced; read `sufficient_assumptions_for_infeasibility`, map indices through our own table (dropping any
index that is not ours), re-verify the core by solving with only those groups, then shrink by deletion so
that every group left is necessary. The solver's core is a hint, never trusted on its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from .cpsat import cp_model, make_solver

from .assumptions import AssumptionSet
from .bounds import point_lower, sound
from .model import Built, build, point_violations
from .options import Point, Universe
from .problem import LoadedProblem


def feasibility_solver(limit: float = 10.0) -> cp_model.CpSolver:
    """For assumption cores: one worker, no presolve (google/or-tools#5141), no objective."""
    return make_solver(limit, presolve=False)


def _status(b: Built, active: list[str], forced: list[Any]) -> Any:
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


class PairOracle:
    """The whole problem under any set of active groups, by decomposition over accelerator/mode pairs.

    A plan uses exactly one option, so the problem is feasible iff some pair's sub-model is. Each pair first
    gets the exact Python cover test (no solve), then a small CP-SAT solve. `forced(b)` adds literals that
    must hold in every pair's model (why-not: "this accelerator / quote is used"); `pairs` restricts the pairs.
    """

    def __init__(self, lp: LoadedProblem, aset: AssumptionSet, universe: Universe, unit: int, *,
                 pairs: list[str] | None = None, forced: Callable[[Built], list[Any]] | None = None,
                 elastic: bool = False) -> None:
        self.lp, self.aset, self.universe, self.unit = lp, aset, universe, unit
        self.forced_fn = forced
        self.elastic = elastic
        self.items: dict[str, list[list[frozenset[str]]]] = {}
        self.models: dict[str, Built] = {}
        self.forced: dict[str, list[Any]] = {}
        self.groups: dict[str, Any] = {}
        self.memo: dict[tuple[str, frozenset[str]], bool] = {}
        self._all: list[str] | None = None
        for pair in (pairs if pairs is not None else universe.pairs()):
            sub = universe.subset(pair)
            self.items[pair] = [point_violations(pt, lp, aset.values, sub, unit)
                                for o in sub.options for pt in o.points if pt.workable]

    def model(self, pair: str) -> Built:
        if pair not in self.models:
            b = build(self.lp, self.aset.values, self.universe.subset(pair), guard="assume", unit=self.unit,
                      elastic=self.elastic)
            self.models[pair] = b
            self.forced[pair] = self.forced_fn(b) if self.forced_fn else []
            for g, grp in b.groups.items():
                self.groups.setdefault(g, grp)
        return self.models[pair]

    def all_groups(self) -> list[str]:
        """Every group of the pairs' models. Which groups a model has depends on its options, not on their node
        counts, so a skeleton model with one point per option gives them without building every pair."""
        if self._all is None:
            opts = [dataclasses.replace(o, points=[next(pt for pt in o.points if pt.workable)])
                    for o in self.universe.options if o.pair in self.items and any(pt.workable for pt in o.points)]
            skeleton = dataclasses.replace(self.universe, options=opts)
            b = build(self.lp, self.aset.values, skeleton, guard="assume", unit=self.unit)
            for g, grp in b.groups.items():
                self.groups.setdefault(g, grp)
            self._all = sorted(b.groups, key=_rank)
        return self._all

    def _covered(self, pair: str, active: set[str]) -> bool:
        """Exact Python proof that this pair is infeasible under `active` (only without forcing)."""
        its = self.items[pair]
        return self.forced_fn is None and bool(its) and all(any(it <= active for it in v) for v in its)

    def _pruned(self, pair: str, b: Built, act: set[str]) -> list[Any]:
        """Assumptions z=0 for the points a point-local violation already excludes under `act` (exact), so the
        solver searches only what is left."""
        out = []
        for i, pt in enumerate(b.points):
            if pt.violations is not None and any(it <= act for it in pt.violations):
                out.append(b.z[i].Not())
        return out

    def feasible(self, active: list[str]) -> bool:
        act = set(active)
        for pair in self.items:
            if self._covered(pair, act):
                continue
            b = self.model(pair)
            key = (pair, frozenset(act & set(b.lits)))
            if key in self.memo:
                if self.memo[key]:
                    return True
                continue
            m = b.model
            m.clear_assumptions()
            m.add_assumptions([b.lits[g] for g in active if g in b.lits] + self.forced[pair]
                              + self._pruned(pair, b, act))
            st = optimisation_solver().solve(m)
            m.clear_assumptions()
            self.memo[key] = st != cp_model.INFEASIBLE
            if st != cp_model.INFEASIBLE:
                return True
        return False

    def minimize(self, active: list[str], quantity: Callable[[Built], Any],
                 cap: tuple[Callable[[Built], Any], int] | None = None,
                 lower: str | None = None) -> tuple[int, str, Built, Any] | None:
        """min over pairs of `quantity(b)` with `active` groups enforced: (value, pair, model, solver).
        `cap` = (expression, bound) adds `expression <= bound` (a relaxed limit) for this solve only.
        `lower` = "cost" or "cash" says the quantity is the model's cost or cash, for which `bounds.point_lower`
        gives per-point lower bounds: then each pair is solved over the few points that could still be optimal
        (`_minimize_bounded`) rather than over all of them."""
        act = set(active)
        best: tuple[int, str, Built, Any] | None = None
        bounded = lower is not None and self.forced_fn is None and not self.elastic and sound(self.lp)
        pairs = [pair for pair in self.items if not self._covered(pair, act)]
        cands: dict[str, list[tuple[int, int, Point]]] = {}
        if bounded:
            # Pairs in order of their best bound; a pair whose best bound exceeds the minimum so far cannot win.
            cands = {pair: self._bounded_candidates(pair, act, 0 if lower == "cost" else 1) for pair in pairs}
            pairs = sorted((p for p in pairs if cands[p]), key=lambda p: (cands[p][0][0], p))
        for pair in pairs:
            if bounded:
                if best is not None and cands[pair][0][0] > best[0]:
                    continue
                got = self._minimize_bounded(pair, cands[pair], act, quantity, cap)
                if got is None:
                    continue
                if got != "unbounded":
                    v, b, solver = got
                    if best is None or (v, pair) < (best[0], best[1]):
                        best = (v, pair, b, solver)
                    continue
            b = self.model(pair)
            st, v, solver = _minimize_in(b, [b.lits[g] for g in active if g in b.lits] + self.forced[pair]
                                         + self._pruned(pair, b, act), quantity, cap)
            b.model.clear_assumptions()
            b.model.clear_objective()
            if st in (cp_model.OPTIMAL, cp_model.FEASIBLE) and (best is None or (v, pair) < (best[0], best[1])):
                best = (v, pair, b, solver)
        return best

    def _bounded_candidates(self, pair: str, act: set[str], which: int) -> list[tuple[int, int, Point]]:
        """The pair's points that `act` does not already exclude, with their lower bound on cost (which=0) or
        cash (1), sorted by it."""
        a = self.aset.values
        sub = self.universe.subset(pair)
        cands = []
        for k, pt in enumerate(pt for o in sub.options for pt in o.points if pt.workable):
            if pt.violations is not None and any(it <= act for it in pt.violations):
                continue
            low = point_lower(pt, self.lp, a, sub, self.unit, act)
            if low is not None:
                cands.append((low[which], k, pt))
        cands.sort(key=lambda t: (t[0], t[1]))
        return cands

    def _minimize_bounded(self, pair: str, cands: list[tuple[int, int, Point]], act: set[str],
                          quantity: Callable[[Built], Any], cap: tuple[Callable[[Built], Any], int] | None) -> Any:
        """One pair's minimum over a growing set of its points, in order of their lower bound on the quantity:
        solve over the cheapest points, add every point whose bound is at most that minimum, repeat until none
        is left out (the same argument as `solve.solve_pair`). Returns (value, model, solver), None when the
        pair has no plan, or "unbounded" to fall back to the full model (a solve not proven optimal)."""
        a = self.aset.values
        sub = self.universe.subset(pair)
        size = 32
        keep = {(pt.option.id, pt.n) for _, _, pt in cands[:size]}
        while True:
            b = build(self.lp, a, sub, guard="assume", unit=self.unit, keep=keep)
            st, v, solver = _minimize_in(b, [b.lits[g] for g in act if g in b.lits], quantity, cap)
            if st == cp_model.OPTIMAL:
                need = {(pt.option.id, pt.n) for lb, _, pt in cands if lb <= v}
                if need <= keep:
                    return v, b, solver
                keep |= need
            elif st == cp_model.INFEASIBLE and len(keep) < len(cands):
                size *= 4
                keep = {(pt.option.id, pt.n) for _, _, pt in cands[:size]}
            elif st == cp_model.INFEASIBLE:
                return None
            else:
                return "unbounded"


def _minimize_in(b: Built, assumptions: list[Any], quantity: Callable[[Built], Any],
                 cap: tuple[Callable[[Built], Any], int] | None) -> tuple[Any, int, Any]:
    """Minimise `quantity(b)` under `assumptions` (and `cap` = (expression, bound), for this solve only):
    (status, value or 0, solver)."""
    m = b.model
    m.clear_assumptions()
    m.add_assumptions(assumptions)
    if cap is not None:
        lit = m.new_bool_var("cap")
        m.add(cap[0](b) <= cap[1]).only_enforce_if(lit)
        m.add_assumptions([lit])
    expr = quantity(b)
    m.minimize(expr)
    solver = optimisation_solver()
    st = solver.solve(m)
    value = int(solver.value(expr)) if st in (cp_model.OPTIMAL, cp_model.FEASIBLE) else 0
    return st, value, solver


def optimisation_solver(limit: float = 10.0) -> cp_model.CpSolver:
    return make_solver(limit)


def deletion_filter(feasible: Callable[[list[str]], bool], groups: list[str], seed: list[str] | None) -> list[str]:
    """Shrink an infeasible set of groups to a minimal one: drop each group whose removal stays infeasible.

    Minimal because feasibility is monotone (fewer groups, more plans): a group kept was needed when tested,
    and the final set is a subset of the set it was tested in.
    """
    core = seed if seed is not None and not feasible(seed) else list(groups)
    i = len(core) - 1
    while i >= 0:
        trial = core[:i] + core[i + 1:]
        if not feasible(trial):
            core = trial
        i -= 1
    return core


def explain_infeasible(lp: LoadedProblem, aset: AssumptionSet, universe: Universe, unit: int) -> dict[str, Any]:
    """A minimal conflict for the whole problem, plus the ways out (see `relax.explain`)."""
    from .relax import explain
    return explain(lp, aset, universe, unit)
