"""`program.decision`: what a gated workload's bake-offs are worth (issue 40, part 2).

A workload with `decide_after: [bakeoff-…]` is bought or committed once the named bake-offs — the same scaled-down
model on each candidate platform — have run. They cost their own runs and a wait (nothing is ordered before they
finish); in return the platform, and the plan on it, are chosen knowing each platform's achieved efficiency up to
what a scaled-down model cannot tell (`uncertainty.bakeoff_residual_sigma`). This answer prices both sides with the
two-stage decision of `estimate/program_decision.py`:

- **the platforms**: every platform a bake-off runs on and the gated workload's platform in the chosen plan, each
  with the prior of `plan risk`'s MFU factor (platforms on one software stack share its part);
- **the plans** (the actions): for each platform, the program is solved with the gated workload (and the workloads
  `same_hardware_as` it) held to that platform at five levels of its MFU factor θ — the prior's −2σ … +2σ — once
  for the program as given (decide after the bake-offs) and once without them (decide now: the bake-offs dropped
  with every `after` and `decide_after` link to them; a gate another workload also needs stays, its link alone
  dropped). No scenario is solved: CP-SAT runs ten times per platform (five more for each bake-off that finishes
  last, below), side by side on forked processes;
- **a plan's cost at any true θ**: its gated runs take their planned wall hours ÷ θ (the planned hours are c·ideal
  work plus expected interruptions, both proportional to 1/θ: `scenarios.run_parts`), priced by the single run's
  cost formulas at those hours (`estimate/program_runs.lines_at`: rent by the hour, a reservation's term and
  minimums, owned energy and operations, the estimated-price premium kept); a later end moves the runs that wait
  for it (`after`, `decide_after`, the same owned nodes), holds every bought lot longer (its held-days table), and
  pays the price of a late day (`objective.late_usd_per_day`, else `risk.money.delay_cost_usd_per_day`) for every
  day past each deadline, pro rata (the program plans whole days; a run that takes 92.3 days is 0.3 days later than
  92, not a whole day). Everything else in the plan — orders, quotes, node counts, starts — stays as planned.
  The cost is tabulated on 37 points of ln θ (±4.5σ) and interpolated linearly between them. This is accurate
  because every cost line is linear in the run's hours between a few kinks (`CostCurve`) and the hours are linear
  in 1/θ: within a step of 0.25σ (about 6% of θ) the only curvature is 1/θ's own, under 0.1% of a run's cost.
  tests/test_bakeoff_value.py checks it against direct solves of the program re-estimated at factors between grid
  points (`workload.measured_mfu`): within 0.05%, and within the day the program rounds up when the run is late;
- the plans at the five levels are solved with each candidate's days and cost at that level by the same path, which
  is what re-estimating the problem there gives (the test compares them too): the levels are where node count,
  quote and mode may change, the grid is where a chosen plan is then paid.

`value_usd` = E[cost deciding now] − E[cost deciding after] (negative: the bake-offs are not worth their cost and
delay). It is `information_usd` (deciding after against deciding now, both within the program with its bake-offs:
≥ 0 up to sampling error, at most `perfect_information_usd`) less `gate_usd` (what the bake-offs and the wait add
to the best plan decided now). A bake-off's own value is what the decision after the others alone loses against
the decision after all of them: without a bake-off that finishes last, the program is solved again at every level
(the gated workload may be decided sooner); without one that does not, the plans are the same less its own run and
its stack's porting when no other run uses that stack.

Not modelled: the gated run's size is chosen among the five levels' plans, not re-optimised for each posterior; a
plan is priced at its expected run length (the scenarios' interruptions, delivery and porting slips are `plan
risk`'s); platforms that no bake-off measures and the chosen plan does not use are left out; the decision is for
the first gated workload of the file; chance constraints (`policy.deadline_confidence`) are not applied to the
levels' plans, which meet each deadline at their own level.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ..estimate.options import Universe
from ..estimate.program import Candidate, ProgramData, WorkloadData, run_money
from ..estimate.program_decision import (BakeoffSignal, DecisionAction, DecisionPlatform, TwoStage, decide_after,
                                         decide_now, paired, platform_prior, shares, two_stage)
from ..estimate.program_runs import lines_at, point_of
from ..estimate.scenarios import late_price
from ..estimate.uncertainty import Draws
from ..inputs.assumptions import BakeoffResidual
from ..inputs.program import ProgramProblem
from ..solve.engine import FEASIBLE, INFEASIBLE, OPTIMAL, Limits
from ..solve.forked import available_cpus, fork_map
from ..solve.program import ProgramPlan, optimise

log = logging.getLogger(__name__)

GRID_Z = np.linspace(-4.5, 4.5, 37)
"""Where a plan's cost is tabulated: ln θ = σ·z of its platform's prior, steps of 0.25σ."""
LEVEL_Z = (-2.0, -1.0, 0.0, 1.0, 2.0)
"""The MFU levels (in prior σ) at which each platform's plans are made: points of `GRID_Z`."""
MAX_BAKEOFF_VALUES = 6
"""Bake-offs up to which each one's own value is computed (one that finishes last costs five more solves per
platform; more bake-offs than this are reported together only)."""


@dataclass(frozen=True)
class BakeoffWorth:
    """What the decision loses without one bake-off (its own run and wait saved, its signal lost)."""

    id: str
    accelerator: str
    value_usd: float
    standard_error_usd: float


@dataclass(frozen=True)
class ProgramDecision:
    """See module docstring; money in dollars, expectations over `scenarios` draws."""

    workload: str
    bakeoffs: tuple[tuple[str, str], ...]
    """(bake-off id, the accelerator it runs on)."""
    platforms: tuple[str, ...]
    value_usd: float
    standard_error_usd: float
    now_usd: float
    after_usd: float
    information_usd: float
    information_error_usd: float
    gate_usd: float
    perfect_information_usd: float
    now_choice: str
    now_platform: str
    shares: tuple[tuple[str, float], ...]
    residual: BakeoffResidual
    scenarios: int
    seed: int
    late_usd_per_day: float
    actions: int
    per_bakeoff: tuple[BakeoffWorth, ...] = ()


def _key(c: Candidate) -> tuple[str, str, str | None, int]:
    return (c.workload, c.option, c.quote, c.nodes)


@dataclass
class _Tables:
    """Each affected candidate's days, cost and cash over its platform's grid (computed once, read by the levels
    and by every plan's response)."""

    pp: ProgramProblem
    grid: dict[str, np.ndarray]
    """Per accelerator, ln θ at `GRID_Z`."""
    original: dict[tuple[str, str, str | None, int], Candidate]
    universes: dict[tuple[str, str], Universe] = field(default_factory=dict)
    cache: dict[tuple[str, str, str | None, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = \
        field(default_factory=dict)

    def table(self, c: Candidate) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        k = _key(c)
        got = self.cache.get(k)
        if got is None:
            c = self.original[k]
            problem = self.pp.problem_of(c.workload)
            o, pt = point_of(problem, c, self.universes)
            assert pt.time is not None
            wall = pt.time.wall_hours / np.exp(self.grid[c.accelerator])
            extra = c.cost_usd - run_money(problem, pt, c.quote)[0]
            mean_price = np.full(len(wall), 1.0 + problem.assumptions.values.money.estimate_price_risk_pct / 100.0)
            cost = np.asarray(lines_at(problem, c, o, pt, wall, mean_price), dtype=float) + extra
            cash = cost * (c.cash_usd / c.cost_usd) if c.cost_usd > 0 else np.full(len(wall), c.cash_usd)
            got = self.cache[k] = (wall / 24.0, cost, cash)
        return got

    def at_level(self, c: Candidate, j: int) -> Candidate:
        days, cost, cash = self.table(c)
        return replace(c, days=max(1, math.ceil(float(days[j]) - 1e-9)), cost_usd=float(cost[j]),
                       cash_usd=float(cash[j]))


@dataclass(frozen=True)
class _Setting:
    """What every solve and response of one decision reads."""

    pp: ProgramProblem
    data: ProgramData
    gated: str
    affected: frozenset[str]
    """The gated workload and the workloads `same_hardware_as` it (they run on its platform)."""
    late_usd: float
    tables: _Tables
    limits: Limits


def _affected(data: ProgramData, gated: str) -> frozenset[str]:
    out = {gated}
    grew = True
    while grew:
        more = {w.id for w in data.workloads if w.same_hardware_as in out} - out
        out |= more
        grew = bool(more)
    return frozenset(out)


def droppable(data: ProgramData, gated: str) -> list[str]:
    """The gated workload's gates no other workload needs (by `after`, `decide_after` or `same_hardware_as`):
    without the decision they would not be run."""
    gates = next(w for w in data.workloads if w.id == gated).decide_after
    used = {a for w in data.workloads if w.id != gated
            for a in (*w.after, *w.decide_after, *([w.same_hardware_as] if w.same_hardware_as else []))}
    return [g for g in gates if g not in used]


def without(data: ProgramData, dropped: Sequence[str], ungate: str | None = None) -> ProgramData:
    """The program with the `dropped` workloads left out (and every link to them), `ungate`'s decision gates
    removed, and no chance constraints (the levels' plans meet each deadline at their own level)."""
    gone = set(dropped)
    out: list[WorkloadData] = []
    for w in data.workloads:
        if w.id in gone:
            continue
        gates = () if w.id == ungate else tuple(a for a in w.decide_after if a not in gone)
        out.append(replace(w, after=tuple(a for a in w.after if a not in gone), decide_after=gates))
    return replace(data, workloads=tuple(out), chance=None)


def _restricted(s: _Setting, data: ProgramData, accelerator: str, j: int) -> ProgramData | None:
    """`data` with the affected workloads held to one platform at level j of its grid; None when one of them has
    no candidate there."""
    out = []
    for w in data.workloads:
        if w.id in s.affected:
            cands = tuple(s.tables.at_level(c, j) for c in w.candidates if c.accelerator == accelerator)
            if not cands:
                return None
            w = replace(w, candidates=cands)
        out.append(w)
    return replace(data, workloads=tuple(out))


def _solve(s: _Setting, data: ProgramData | None) -> ProgramPlan | None:
    return _solved(s, data)[0]


def _solved(s: _Setting, data: ProgramData | None) -> tuple[ProgramPlan | None, bool]:
    """(the plan, whether the time limit or `--max-seconds` stopped the search)."""
    if data is None:
        return None, False
    outcome, engine = optimise(data, s.limits)
    plan = outcome.plan if outcome.status in (OPTIMAL, FEASIBLE) else None
    return plan, engine.out_of_time or outcome.status not in (OPTIMAL, FEASIBLE, INFEASIBLE)


def response(s: _Setting, data: ProgramData, plan: ProgramPlan, accelerator: str) -> np.ndarray:
    """The plan's program cost at every grid point of its platform's θ (see module docstring)."""
    n = len(s.tables.grid[accelerator])
    by_id = {w.id: w for w in data.workloads}
    ends: dict[str, np.ndarray] = {}
    owned_last: dict[str, str] = {}
    cost = np.zeros(n)
    for r in sorted(plan.runs, key=lambda r: (r.start_day, r.end_day, r.workload)):
        c = r.candidate
        if r.workload in s.affected:
            days, run_cost, _cash = s.tables.table(c)
        else:
            days, run_cost = np.full(n, float(r.end_day - r.start_day)), np.full(n, c.cost_usd)
        start = np.full(n, float(r.start_day))
        w = by_id[r.workload]
        for a in (*w.after, *w.decide_after, *([owned_last[c.system]] if c.owned and c.system in owned_last else [])):
            start = np.maximum(start, ends[a])
        ends[r.workload] = start + days
        if c.owned:
            owned_last[c.system] = r.workload
        cost = cost + run_cost
    end = np.max(np.stack(list(ends.values())), axis=0)
    for p in plan.purchases:
        table = np.asarray(p.quote.held_cost_usd)
        held = np.clip(end - p.delivered_day, 0.0, len(table) - 1.0)
        cost = cost + p.quote.lot_nodes * np.interp(held, np.arange(len(table)), table)
    cost = cost + sum(v for _, v in plan.porting)
    for w in data.workloads:
        if w.deadline_day is not None:
            cost = cost + s.late_usd * np.maximum(0.0, ends[w.id] - w.deadline_day)
    return cost


def _label(plan: ProgramPlan, gated: str, theta: float) -> str:
    c = plan.run(gated).candidate
    return f"{c.accelerator}: {c.option} x{c.nodes} ({c.quote or 'owned'}), sized for {theta:.2f}x the modelled MFU"


def _signature(s: _Setting, plan: ProgramPlan) -> tuple[object, ...]:
    runs = tuple(sorted((r.workload, _key(r.candidate), r.start_day) for r in plan.runs if r.workload in s.affected))
    lots = tuple(sorted((p.quote.quote, p.order_day) for p in plan.purchases))
    return runs, lots


LEVEL_INDEX = tuple(int(np.argmin(np.abs(GRID_Z - z))) for z in LEVEL_Z)


def solve_levels(s: _Setting, variants: Sequence[ProgramData], platforms: Sequence[DecisionPlatform]
                 ) -> list[list[tuple[DecisionAction, ProgramPlan]]] | None:
    """Per variant of the program, its distinct plans on every platform at every level, as actions (with the plan
    each prices); None when a limit stopped a search (a decision over the plans found so far could mislead). The
    solves are independent, so they run side by side on forked processes (`solve.forked.fork_map`: the same
    answers, in the same order, as one after the other); every candidate's table is made first, here, for the
    children to share."""
    for w in s.data.workloads:
        if w.id in s.affected:
            for c in w.candidates:
                if c.accelerator in s.tables.grid:
                    s.tables.table(c)
    tasks = [(v, i, j) for v in range(len(variants)) for i in range(len(platforms)) for j in LEVEL_INDEX]

    def one(task: tuple[int, int, int]) -> tuple[ProgramPlan | None, bool]:
        v, i, j = task
        return _solved(s, _restricted(s, variants[v], platforms[i].accelerator, j))

    answers = fork_map(one, tasks, min(available_cpus(), len(tasks)))
    if any(stopped for _, stopped in answers):
        log.info("bake-off decision: a level's search was stopped by a limit; no decision")
        return None
    plans = [plan for plan, _ in answers]
    out: list[list[tuple[DecisionAction, ProgramPlan]]] = [[] for _ in variants]
    seen: set[tuple[object, ...]] = set()
    for (v, i, j), plan in zip(tasks, plans, strict=True):
        if plan is None:
            continue
        sig = (v, i, _signature(s, plan))
        if sig in seen:
            continue
        seen.add(sig)
        accel = platforms[i].accelerator
        grid = s.tables.grid[accel]
        out[v].append((DecisionAction(i, _label(plan, s.gated, math.exp(grid[j])), grid,
                                      response(s, variants[v], plan, accel)), plan))
    return out


def _platforms(s: _Setting, plan: ProgramPlan, gates: Sequence[str]) -> list[DecisionPlatform]:
    """The candidate platforms (see module docstring), in name order, with their priors."""
    runs = {r.workload: r.candidate.accelerator for r in plan.runs}
    names = {runs[g] for g in gates if g in runs} | {runs[s.gated]}
    problem = s.pp.problem_of(s.gated)
    cat, a = problem.catalog, problem.assumptions.values
    measured = problem.spec.workload.measured_mfu or {}
    return [platform_prior(a, acc, cat.accelerators[acc].software, cat.accelerators[acc].cls, acc in measured)
            for acc in sorted(names)]


def _setting(pp: ProgramProblem, data: ProgramData, gated: str, limits: Limits) -> _Setting:
    affected = _affected(data, gated)
    original = {_key(c): c for w in data.workloads if w.id in affected for c in w.candidates}
    tables = _Tables(pp, {}, original)
    return _Setting(pp, data, gated, affected, late_price(pp.problem_of(gated)), tables, limits)


def saved(plan: ProgramPlan, gate: str) -> float:
    """What a plan no longer pays without a gate that does not finish last: its run, and its stack's porting when
    no other run of the plan uses that stack."""
    c = plan.run(gate).candidate
    shared = any(r.candidate.porting_key == c.porting_key for r in plan.runs if r.workload != gate)
    return c.cost_usd + (0.0 if shared else dict(plan.porting).get(c.porting_key, 0.0))


def critical(plan: ProgramPlan, gates: Sequence[str]) -> set[str]:
    """The gates that finish last in the plan: without one of them the gated workload could be decided sooner."""
    ends = {r.workload: r.end_day for r in plan.runs if r.workload in gates}
    last = max(ends.values(), default=0)
    return {g for g, e in ends.items() if e == last}


def program_decision(pp: ProgramProblem, data: ProgramData, plan: ProgramPlan | None, limits: Limits
                     ) -> ProgramDecision | None:
    """The value of the first gated workload's bake-offs (see module docstring); None without a plan or a gate,
    or when no plan exists on the candidate platforms with or without the bake-offs."""
    gated_w = next((w for w in data.workloads if w.decide_after), None)
    if plan is None or gated_w is None:
        return None
    t0 = time.monotonic()
    s = _setting(pp, data, gated_w.id, limits)
    platforms = _platforms(s, plan, gated_w.decide_after)
    for p in platforms:
        s.tables.grid[p.accelerator] = max(p.sigma, 1e-3) * GRID_Z
    index = {p.accelerator: i for i, p in enumerate(platforms)}
    runs = {r.workload: r.candidate for r in plan.runs}
    signals = [BakeoffSignal(g, index[runs[g].accelerator]) for g in gated_w.decide_after if g in runs]
    dropped = droppable(data, gated_w.id)
    slow = [g for g in sorted(critical(plan, gated_w.decide_after)) if g in dropped]
    worth_of = [g for g in slow if len(signals) <= MAX_BAKEOFF_VALUES]
    variants = [without(data, dropped, ungate=gated_w.id), without(data, ())] + [without(data, [g]) for g in worth_of]
    levels = solve_levels(s, variants, platforms)
    if levels is None:
        return None
    now_plans, after_plans, *others = levels
    if not now_plans or not after_plans:
        return None
    now_actions, after_actions = [a for a, _ in now_plans], [a for a, _ in after_plans]
    a = pp.problem_of(gated_w.id).assumptions.values
    residual = a.uncertainty.bakeoff_residual_sigma
    draws = Draws(a.uncertainty.seed, a.uncertainty.scenarios)
    st = two_stage(now_actions, after_actions, platforms, signals, residual, draws)
    out = _figures(s, platforms, st, now_actions, after_actions, residual, draws)
    without_actions = {g: [a for a, _ in plans] for g, plans in zip(worth_of, others, strict=True)}
    for g in dropped:
        if g not in without_actions and g in runs and len(signals) <= MAX_BAKEOFF_VALUES:
            without_actions[g] = [act.shifted(-saved(plan, g)) for act, plan in after_plans]
    worth = _per_bakeoff(platforms, signals, residual, st, without_actions)
    log.info("bake-off decision: %d platforms, %d + %d plans, %.2f s", len(platforms), len(now_actions),
             len(after_actions), time.monotonic() - t0)
    return replace(out, bakeoffs=tuple((g.id, platforms[g.platform].accelerator) for g in signals),
                   per_bakeoff=worth)


def _figures(s: _Setting, platforms: Sequence[DecisionPlatform], st: TwoStage,
             now_actions: Sequence[DecisionAction], after_actions: Sequence[DecisionAction],
             residual: BakeoffResidual, draws: Draws) -> ProgramDecision:
    """The decision's figures from the two-stage outcome (`estimate.program_decision.two_stage`)."""
    _best, now_gated = decide_now(after_actions, platforms, st.log_theta)
    value, se = paired(st.now - st.after)
    info, info_se = paired(now_gated - st.after)
    gate, _ = paired(now_gated - st.now)
    perfect, _ = paired(now_gated - st.perfect)
    share = shares(after_actions, st.chosen, len(platforms))
    chosen_now = now_actions[st.now_action]
    return ProgramDecision(
        s.gated, (), tuple(p.accelerator for p in platforms), value, se, float(st.now.mean()),
        float(st.after.mean()), info, info_se, gate, perfect, chosen_now.label,
        platforms[chosen_now.platform].accelerator,
        tuple((p.accelerator, float(share[i])) for i, p in enumerate(platforms)), residual, draws.n, draws.seed,
        s.late_usd, len(after_actions))


def _per_bakeoff(platforms: Sequence[DecisionPlatform], signals: Sequence[BakeoffSignal],
                 residual: BakeoffResidual, st: TwoStage, without_actions: dict[str, list[DecisionAction]]
                 ) -> tuple[BakeoffWorth, ...]:
    """Each bake-off's own value: the decision after the others alone, over the program without it, against the
    decision after all of them. A bake-off that finishes last is solved again without it at every level (the
    others then finish sooner); without one that does not, the program is the same but for its own run's cost."""
    worth = []
    for gi, g in enumerate(signals):
        acts = without_actions.get(g.id)
        if not acts:
            continue
        rest = [x for x in signals if x.id != g.id]
        _chosen, cost = decide_after(acts, platforms, rest, residual, st.log_theta, np.delete(st.y, gi, axis=1))
        v, se = paired(cost - st.after)
        worth.append(BakeoffWorth(g.id, platforms[g.platform].accelerator, v, se))
    return tuple(worth)


__all__ = ["ProgramDecision", "BakeoffWorth", "program_decision", "droppable", "without", "response",
           "solve_levels", "critical", "saved", "GRID_Z", "LEVEL_Z"]
