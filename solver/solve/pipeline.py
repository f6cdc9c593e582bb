"""Solve a problem: estimate, model and optimise each accelerator/mode pair, tie-break, re-check, rank.

A plan uses exactly one option, so the problem decomposes exactly by accelerator/mode pair: each pair's model
(same groups, only that pair's options) is solved to proven optimality, the best pair is the plan and the others
are the runners-up. This is far faster than one model over every option (the one-hot over thousands of points has
a weak relaxation) and gives the candidate table for free; `SolveSettings.cross_check` solves the full model too
and requires the same optimum (the tests use it). Within a pair, points enter the model in order of their lower
bound (`grow.py`).

Determinism: one worker, seed 0, a deterministic time limit (`engine.py`), the model built in sorted order, and a
lexicographic tie-break (objective → option/node rank → quote order) so equal plans cannot swap. Every plan goes
through the independent checker before it is returned.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from .. import collect
from ..errors import PlanCheckError
from ..estimate.chance import ChanceCut
from ..estimate.outlook import LateCut
from ..estimate.options import EstimateCache, Option, Point, Universe, build_universe, shared_estimates
from ..inputs.problem import Problem
from ..model.bounds import Bounds
from ..model.builder import Built, add_late_cut, build
from ..model.decode import decode
from ..model.money import money_unit, units
from ..model.objective import needs_ceiling, objective, universe_ceiling
from ..model.screening import Screen, ScreenFindings
from .checker import check_plan
from .cuts import chance_cuts, late_cuts
from .engine import INFEASIBLE, OPTIMAL, UNKNOWN, Engine, Limits, Outcome
from .forked import SharedMinimum, available_cpus, fork_map, in_child
from .grow import Step, grow
from .settle import SETTLE_GAP, SETTLED, Incumbent, PairOutcome, per_cost_unit, settled_gap, within
from .settle import settled as settle_outcome
from .plan import Alternative, ExcludedOption, Plan, Reason, Result, exclusion_order, make_plan

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class Hint:
    """A previous plan to warm-start from (a hint only: the result is proven as usual)."""

    option: str
    nodes: int
    quotes: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class SolveSettings:
    """How to solve (not what): limits per CP-SAT call, expired quotes, what to compute besides the plan."""

    time_limit: float = 20.0
    workers: int = 1
    allow_expired: bool = False
    alternatives: bool = True
    cross_check: bool = False
    hint: Hint | None = None
    debug_model: str | None = None
    wall_deadline: float | None = None
    """`time.monotonic()` by which the command must stop searching (`--max-seconds`); None: no wall-clock limit."""
    max_seconds: float | None = None
    """The `--max-seconds` the deadline came from (for messages)."""
    reduce: bool = True
    """Drop the quotes a point never needs before modelling (`model/reduce.py`); off only to test that presolve."""
    settle: float = SETTLE_GAP
    """How close to its optimum a pair outside the first `exact_places` is searched (`SETTLE_GAP`); 0: every pair
    to its proven optimum (`--exact-alternatives`)."""
    exact_places: int = 2
    """Every pair that could rank in the first this many places is searched to its proven optimum: the winner and
    the runner-up the report compares it with (`--top N`: N)."""
    processes: int | None = None
    """Processes (this one included) that solve pairs, and then compute a plan's answers, side by side
    (`forked.py`); None: the pairs left after `FORK_AFTER_SECONDS` go to every available CPU (`processes_for`). The
    answer is the same either way."""

    @property
    def limits(self) -> Limits:
        return Limits(self.time_limit, self.workers, self.debug_model, self.wall_deadline)

    @property
    def wall_limit(self) -> str:
        """The wall-clock limit as the user gave it, for saying what stopped a search (`stopped_by`)."""
        return f"--max-seconds {self.max_seconds:g}"


@dataclass
class Context:
    """One problem made ready to solve: its universe, screen, money unit, bounds, and the engine of the command.

    Later stages (explanations, why-not, sensitivity) solve through the same context, so every CP-SAT call of a
    command obeys the same limits and is counted in one place."""

    problem: Problem
    settings: SolveSettings
    universe: Universe
    screen: Screen
    unit: int
    bounds: Bounds
    engine: Engine
    estimates: EstimateCache = field(default_factory=dict)
    """Memory and time estimates by system and node count, reusable by what-ifs that change neither the workload
    nor the assumptions (prices, quotes, site limits): see `EstimateCache`."""
    ceilings: dict[str, int] = field(default_factory=dict)
    cuts: dict[str, list[ChanceCut]] = field(default_factory=dict)
    """Per pair, the plans found to miss the deadline's confidence jointly (`solve_pair`); every later model of the
    pair carries them."""
    late_cuts: dict[str, list[LateCut]] = field(default_factory=dict)
    """Per pair, the sets of quotes found to be later together than their largest lateness alone (`solve_pair`)."""

    def cost_hi(self) -> int | None:
        """The objective's cost ceiling when the objective needs one (the time objective), else None."""
        if not needs_ceiling(self.problem):
            return None
        return universe_ceiling(self.problem, self.universe, self.unit, self.screen.outlook, self.ceilings)

    def objective(self, b: Built) -> Any:
        return objective(b.cost, b.finish, self.problem, self.universe.horizon, b.cost_hi, b.unit)


@collect.paused()
def prepare(problem: Problem, settings: SolveSettings | None = None, *, estimates: EstimateCache | None = None,
            only_pairs: set[str] | None = None, unit: int | None = None, engine: Engine | None = None,
            universe: Universe | None = None, horizon_floor: int | None = None,
            only_quotes: frozenset[str] | None = None) -> Context:
    """Estimate every point of the problem and set up screening, bounds and the engine.

    `estimates` shares memory/time estimates between re-priced problems; `only_pairs` builds only some pairs;
    `unit` fixes the money unit (a re-priced problem is compared with the original at the original's unit);
    `engine` reuses the command's engine; `universe` is one already built for a problem whose points are the same
    (only its schedule differs: the points do not depend on the deadline); `horizon_floor` (with `only_pairs`) is
    the calendar horizon of a problem that differs from this one only in those pairs' quotes; `only_quotes` (with
    both) reads only those of the pairs' quotes (`build_universe`)."""
    settings = settings or SolveSettings()
    estimates = shared_estimates(problem) if estimates is None else estimates
    if universe is None:
        universe = build_universe(problem, allow_expired=settings.allow_expired, only_pairs=only_pairs,
                                  estimates=estimates, horizon_floor=horizon_floor, only_quotes=only_quotes)
    unit = unit or money_unit(universe)
    screen = Screen(problem, universe)
    log.info("estimated %d options, %d points", len(universe.options), sum(len(o.points) for o in universe.options))
    return Context(problem, settings, universe, screen, unit, Bounds(screen, unit), engine or Engine(settings.limits),
                   estimates)


Forcing = Callable[[Built], list[Any]]
"""Adds constraints to a built model and returns the literals that must hold (why-not: "the target is used")."""


def _add_hint(b: Built, hint: Hint | None) -> None:
    """Warm start from a previous plan: a complete hint of its point and split when this model has them.
    CP-SAT repairs or ignores an infeasible hint, and the result is proven as usual."""
    if hint is None:
        return
    idx = next((i for i, pt in enumerate(b.points) if pt.option.id == hint.option and pt.n == hint.nodes), None)
    if idx is None:
        return
    for i, zi in enumerate(b.z):
        b.model.add_hint(zi, i == idx)
    quotes = dict(hint.quotes)
    seen: set[int] = set()
    for (qid, i), v in b.y.items():
        dom = b.model.proto.variables[v.index].domain
        if v.index in seen or dom[0] == dom[-1]:  # shared constants (dominated quotes) take no hint
            continue
        seen.add(v.index)
        b.model.add_hint(v, int(quotes.get(qid, 0)) if i == idx else 0)


def _tie_break(ctx: Context, b: Built, first: Outcome, obj: Any, best: int, label: str) -> Outcome:
    """Among plans with the optimal objective, the one with the smallest option/node rank, then quote order: the
    same answer whatever order CP-SAT found plans in. The quote term stays below one unit of rank (each quote's
    index times its nodes, at most (quotes − 1) × the largest node count)."""
    m = b.model
    tie = m.new_bool_var("tie_break_phase")
    m.add(obj == best).only_enforce_if(tie)
    m.add_assumptions([tie])
    quotes = sorted(q for q in b.x)
    qrank = sum(k * b.x[qid] for k, qid in enumerate(quotes))
    max_n = max((pt.n for pt in b.points), default=1)
    m.minimize(b.rank * (max(0, len(quotes) - 1) * max_n + 1) + qrank)
    m.clear_hints()
    for zi in b.z:
        m.add_hint(zi, first.value(zi))
    second = ctx.engine.solve(m, label=label + "-tie-break")
    m.clear_hints()
    return second if second.has_solution else first


def optimise(ctx: Context, b: Built, assumptions: list[Any] | None = None, *, tie_break: bool = True,
             hint: Hint | None = None, label: str = "optimise") -> PairOutcome:
    """Solve `b` for its best plan, optionally under assumption literals; the plan is made but not checked."""
    m = b.model
    m.clear_hints()
    m.clear_assumptions()
    if assumptions:
        m.add_assumptions(assumptions)
    _add_hint(b, hint)
    obj = ctx.objective(b)
    m.minimize(obj)
    out = ctx.engine.solve(m, label=label)
    try:
        if not out.has_solution:
            return PairOutcome(out.status, None, None, None)
        best, bound = out.value(obj), out.bound()
        proven = out.status == OPTIMAL or bound >= best
        if tie_break and proven:
            out = _tie_break(ctx, b, out, obj, best, label)
        decision = decode(b, out.solver.value)
        plan = make_plan(ctx.problem, ctx.universe, decision, b.unit, ctx.screen.outlook)
        return PairOutcome(OPTIMAL if proven else "feasible", plan, best, bound)
    finally:
        m.clear_assumptions()
        m.clear_objective()
        m.clear_hints()


MAX_CHANCE_CUTS = 50
"""Most plans of one pair that may fail the deadline's confidence jointly before the search gives up (each adds a
cut; with at most `chance.EXACT_QUOTE_SETS` quotes per option none can fail)."""


def solve_pair(ctx: Context, universe: Universe, cost_hi: int | None, *, tie_break: bool,
               forced: Forcing | None = None, protect: frozenset[str] = frozenset(),
               hint: Hint | None = None, cost_cap: int | None = None,
               speculate: Callable[[int], bool] | None = None, settle: float = 0.0) -> PairOutcome:
    """`solve_pair_once`, and the checks that make its answer exact: under `policy.deadline_confidence`, the joint
    check of the plan found (a plan whose quotes together miss the confidence adds a cut); and the lateness of a
    plan that uses several quotes together (the model charges the largest of theirs alone, never more than their
    joint figure: a plan charged less than that adds a cut with it). Cuts are kept in the context for every later
    model of the pair, and the pair is solved again. When the plan found is charged exactly, it is the optimum: the
    model charges every other plan no more than it costs.

    `speculate` (without `tie_break`): asked with the optimum found, True has the tie-break run at once on the model
    that proved it, as `tie_break=True` would have, and kept as the outcome's `tie_broken` — unless its plan needs a
    cut (the tie-break is then left to a later call, which cuts and solves again). The solve ranks its pairs first
    and tie-breaks only the winner; asked whether a pair's optimum is the least so far, this spares the winner a
    second search from scratch after the others (its caches may be on another process).

    `settle` > 0: a model optimum whose plan is charged less than its joint lateness, but by no more than `settle`
    of its cost, ends the search (`SETTLED`, `settle.py`); the cuts it found are kept for a later exact search."""
    pair = universe.options[0].pair if universe.options else "?"
    cuts = ctx.cuts.setdefault(pair, [])
    lates = ctx.late_cuts.setdefault(pair, [])
    for _ in range(MAX_CHANCE_CUTS):
        if ctx.engine.seconds_left() == 0.0:  # --max-seconds spent: not even a model is built
            ctx.engine.out_of_time = True
            return PairOutcome(UNKNOWN, None, None, None)
        out = solve_pair_once(ctx, universe, cost_hi, tie_break=tie_break, forced=forced, protect=protect, hint=hint,
                              cost_cap=cost_cap, speculate=speculate, settle=settle)
        found = chance_cuts(ctx, out.plan) if out.plan is not None else []
        late = late_cuts(ctx, out.plan) if out.plan is not None and not found else []
        settled = out.settled_with or settle_outcome(ctx, out, late, settle)
        if settled is not None:
            lates.extend(late)
            return settled
        if not found and not late:
            tied = out.tie_broken
            if tied is not None and (tied.plan is None or chance_cuts(ctx, tied.plan) or late_cuts(ctx, tied.plan)):
                return replace(out, tie_broken=None)
            return out
        if found:
            log.info("pair %s: %s x%d misses the deadline's confidence jointly; cut at start <= %s (+%d on subsets)",
                     pair, found[0].option, found[0].nodes, found[0].latest_start, len(found) - 1)
        for c in late:
            log.info("pair %s: %s x%d with %s is late together: %d units, the model charged %s", pair, c.option,
                     c.nodes, ", ".join(c.quotes), c.units, out.plan.late_units if out.plan else None)
        cuts.extend(found)
        lates.extend(late)
    return PairOutcome(UNKNOWN, None, None, None)


@dataclass(frozen=True)
class Search:
    """What one search of a pair's model asks (`solve_pair_once`'s arguments)."""

    forced: Forcing | None
    cost_cap: int | None
    tie_break: bool
    settle: float


def _run_cutting(ctx: Context, b: Built, pair: str, s: Search, hint: Hint | None, incumbent: Incumbent
                 ) -> PairOutcome:
    """Optimise `b`; while the plan found is charged less than its quotes' joint lateness, the cut goes into this
    model and it is solved again, without a rebuild (a cut it cannot take is left to `solve_pair`, which rebuilds
    with it) — until the plan is charged exactly, is within `settle` of the model's optimum, or a plan an earlier
    cut's search found is (`Incumbent`: the outcome then carries it as `settled_with`)."""
    if s.cost_cap is not None:
        b.model.add(b.cost <= s.cost_cap)
    out = optimise(ctx, b, s.forced(b) if s.forced else None, tie_break=s.tie_break, hint=hint, label=pair)
    for _ in range(MAX_CHANCE_CUTS):
        if out.plan is None or chance_cuts(ctx, out.plan):
            return out
        late = late_cuts(ctx, out.plan)
        if not late or within(out, late, s.settle):
            return out
        if (done := incumbent.offer(ctx, out, late, s.settle)) is not None:
            return replace(out, settled_with=done)
        if not all([add_late_cut(b, c) for c in late]):
            return out
        ctx.late_cuts.setdefault(pair, []).extend(late)
        log.info("pair %s: %s x%d with %s is late together: %d units, the model charged %s (cut in the model)",
                 pair, late[0].option, late[0].nodes, ", ".join(late[0].quotes), late[0].units, out.plan.late_units)
        out = optimise(ctx, b, s.forced(b) if s.forced else None, tie_break=s.tie_break, hint=_hint_of(out.plan),
                       label=pair)
    return out


def solve_pair_once(ctx: Context, universe: Universe, cost_hi: int | None, *, tie_break: bool,
                    forced: Forcing | None = None, protect: frozenset[str] = frozenset(),
                    hint: Hint | None = None, cost_cap: int | None = None,
                    speculate: Callable[[int], bool] | None = None, settle: float = 0.0) -> PairOutcome:
    """Optimise over `universe` (one pair), modelling only the points whose bound could still win (`grow.py`).

    The presolve (`model/reduce.py`) decides per point which quotes are modelled there, so a model over some of
    the points has the same quotes at those points as the model over all of them. `forced` constraints only
    restrict plans, so the bounds stay valid under them. `cost_cap` (units) is a hard limit on the plan's cost:
    enforced in the model, and points whose cost bound exceeds it are never modelled. An unproven search falls back
    to the model over every point."""
    pair = universe.options[0].pair if universe.options else "?"
    pts = _open_points(ctx, universe)

    def model(keep: set[tuple[str, int]] | None) -> Built:
        return build(ctx.problem, universe, ctx.screen, ctx.unit, cost_hi=cost_hi, protect=protect, keep=keep,
                     cuts=ctx.cuts.get(pair, ()), reduce=ctx.settings.reduce, usable=ctx.bounds.usable,
                     late_cuts=ctx.late_cuts.get(pair, ()))

    incumbent = Incumbent()

    def run(b: Built, h: Hint | None, tb: bool) -> PairOutcome:
        return _run_cutting(ctx, b, pair, Search(forced, cost_cap, tb, settle), h, incumbent)

    if not pts:  # every point has a point-local proof that it cannot be chosen
        return PairOutcome(INFEASIBLE, None, None, None)
    ranked = [] if not ctx.bounds.sound else \
        sorted(((lb, k, pt) for k, pt in enumerate(pts)
                if (lb := ctx.bounds.point_bound(pt, cost_hi, cost_cap)) is not None), key=lambda t: (t[0], t[1]))
    if not ranked:
        if ctx.bounds.sound:  # each point's bound proves it has no plan (within `cost_cap`): nothing to search
            return PairOutcome(INFEASIBLE, None, None, None)
        return run(model(None), hint, tie_break)

    def step(keep: set[tuple[str, int]], last: Step[tuple[PairOutcome, Built]] | None
             ) -> Step[tuple[PairOutcome, Built]]:
        prev = last.payload[0].plan if last is not None else None
        b = model(keep)
        out = run(b, _hint_of(prev) if prev is not None else hint, False)
        return Step(out.status, out.objective, (out, b))

    found = grow([(lb, pt) for lb, _k, pt in ranked], step, ctx.bounds.weight)
    out, b = found.payload
    if found.status == OPTIMAL:
        if out.settled_with is not None:   # settled: no tie-break (its plan is not the optimum's)
            return out
        if tie_break:
            return run(b, _hint_of(out.plan), True)
        if speculate is not None and out.objective is not None and speculate(out.objective):
            return replace(out, tie_broken=run(b, _hint_of(out.plan), True))
        return out
    if found.status == INFEASIBLE:
        return out
    if ctx.engine.out_of_time:  # no time for the fallback: the best found, bounded over every point of the pair
        modeled = {pt.key for pt in b.points}
        outside = [lb for lb, _k, pt in ranked if pt.key not in modeled]
        bound = min([out.bound] + outside) if out.bound is not None else None
        return PairOutcome(out.status if out.plan is not None else UNKNOWN, out.plan, out.objective, bound)
    return run(model(None), hint, tie_break)


def _hint_of(plan: Plan | None) -> Hint | None:
    return None if plan is None else Hint(plan.option, plan.nodes, plan.decision()[2])


def _unworkable(problem: Problem, universe: Universe) -> list[ExcludedOption]:
    a = problem.assumptions.values
    why = Reason(f"unworkable: failures eat >{a.reliability.max_lost_fraction:.0%} of the run, or it exceeds "
                 f"{a.max_training_days:,.0f} days")
    return [ExcludedOption(o.accel.id, o.mode, o.system.id, (why,))
            for o in universe.options if not any(pt.workable for pt in o.points)]


@collect.paused()
def solve_problem(problem: Problem, settings: SolveSettings | None = None, ctx: Context | None = None) -> Result:
    """`plan solve` without explanations (the answers stage adds them): the best plan, the best plan of every other
    pair, the pairs with no plan, and the status."""
    t0 = time.perf_counter()
    ctx = ctx or prepare(problem, settings)
    settings = ctx.settings
    universe = ctx.universe
    solved: list[tuple[int, str, Plan]] = []
    infeasible: list[str] = []
    unproven: list[tuple[str, int | None]] = []
    cost_hi = ctx.cost_hi()
    pairs = universe.pairs()
    tied: dict[str, PairOutcome] = {}
    settled: dict[str, PairOutcome] = {}
    for pair, out in zip(pairs, _solve_pairs(ctx, pairs, cost_hi), strict=True):
        if out.tie_broken is not None:
            tied[pair] = out.tie_broken
        if out.plan is None:
            if out.status == INFEASIBLE:
                infeasible.append(pair)
            else:
                unproven.append((pair, _closed_form_bound(ctx, pair, cost_hi)))
            continue
        check_plan(problem, universe, out.plan)
        assert out.objective is not None
        solved.append((out.objective, pair, out.plan))
        if out.status not in (OPTIMAL, SETTLED):
            unproven.append((pair, out.bound))
        if out.settled:
            settled[pair] = out
        log.info("pair %s: %s, objective %s", pair, out.status, out.objective)
    solved.sort(key=lambda t: rank(t[0], t[2], t[1]))
    if solved and not unproven:
        # Only the winner needs the canonical tie-break among equal plans; alternatives are one per pair already.
        # Its search usually made it already (`speculate`): the same model and calls, so the same plan.
        pair = solved[0][1]
        out = tied[pair] if pair in tied else \
            solve_pair(ctx, universe.subset(pair), cost_hi, tie_break=True, hint=settings.hint)
        if out.plan is not None and out.objective == solved[0][0]:
            check_plan(problem, universe, out.plan)
            solved[0] = (out.objective, pair, out.plan)
    best_plan = solved[0][2] if solved else None
    best = solved[0][0] if solved else None
    status = (OPTIMAL if not unproven else "feasible") if solved else (INFEASIBLE if not unproven else "unknown")
    bound = best
    warnings: list[str] = []
    if unproven:
        bounds = [b for _, b in unproven if b is not None]
        bound = min([best] + bounds) if best is not None and len(bounds) == len(unproven) else None
        limit = settings.wall_limit if ctx.engine.out_of_time else "--time-limit"
        warnings.append(f"time limit reached ({limit}) before optimality was proven for: "
                        + ", ".join(p for p, _ in unproven))
    if settings.cross_check:
        _cross_check(ctx, status, best)
    # Runners-up in the order of the objective (cost for `cost`, finish for `time`), as the solve ranks pairs.
    alternatives = tuple(Alternative(p, p.total_cost - best_plan.total_cost,  # type: ignore[union-attr]
                                     settled_gap(ctx, settled.get(pair)))
                         for _, pair, p in solved[1:])
    if best_plan is not None:
        warnings.extend(best_plan.warnings)
    excluded = [ExcludedOption(e.accelerator, e.mode, e.system, (Reason(e.reason),))
                for e in universe.static_excluded] + _unworkable(problem, universe)
    return Result(status=status, plan=best_plan, alternatives=tuple(alternatives),
                  excluded=tuple(sorted(excluded, key=exclusion_order)), objective=best, bound=bound,
                  solve_seconds=time.perf_counter() - t0, warnings=tuple(warnings), problem_name=problem.spec.name,
                  as_of=problem.as_of, as_of_defaulted=problem.as_of_defaulted, unit=ctx.unit,
                  expired=tuple((q.id, q.valid_until) for q in universe.expired),
                  not_yet_quoted=tuple((q.id, q.quoted_on) for q in universe.not_yet_quoted),
                  infeasible_pairs=tuple(infeasible),
                  stopped_by=settings.wall_limit if ctx.engine.out_of_time else None)


def rank(objective: int, plan: Plan, pair: str) -> tuple[int, float, str]:
    """How the solve ranks the pairs' best plans: by the model's objective, then by the plan's exact cost (two plans
    within one money unit of each other tie in the model: the cheaper in dollars comes first), then by pair name."""
    return objective, round(plan.total_cost, 6), pair


PARALLEL_MAX_QUOTES = 30_000
"""Quotes beyond which the default is one process: a child shares the parent's memory only until it writes to it,
and a search writes all over the heap (reference counts, new objects in old arenas). With 100,000 quotes two
processes peak at 2.2 GB together instead of 1.1 GB for little time saved (measured: bench/README.md, "Timings
that used to live in docstrings (moved 2026-12-07)"). `--processes` overrides the default either way."""
FORK_AFTER_SECONDS = 0.1
"""By default the pairs are searched here, smallest first, and the ones left after this long are shared with forked
children: a short search (a tight deadline that leaves a few points) never pays for forking and for the caches its
later stages would fill again, and a long one is shared. Short, since this process works on after forking
(`forked.py`): sharing sooner takes no search away from it (measured: bench/README.md, "Timings that used to live
in docstrings (moved 2026-12-07)"). Where the work runs never changes the answer."""


def processes_for(ctx: Context, items: int) -> int:
    """How many processes (this one included) may share `items` items of work (pairs, or a plan's answers): the
    settings' own, else every CPU for a catalog of at most `PARALLEL_MAX_QUOTES` usable quotes; never more than
    the items, and one when models are written for debugging (their files are numbered in call order)."""
    return _processes(ctx.settings, sum(len(o.quotes) for o in ctx.universe.options), items)


def processes_for_problem(problem: Problem, settings: SolveSettings, items: int) -> int:
    """`processes_for` before any context exists (whole solves side by side: the frontier's dates), counting the
    catalog's quotes."""
    return _processes(settings, len(problem.catalog.quotes), items)


def _processes(settings: SolveSettings, quotes: int, items: int) -> int:
    if settings.debug_model:
        return 1
    wanted = settings.processes
    if wanted is None:
        wanted = available_cpus() if quotes <= PARALLEL_MAX_QUOTES else 1
    return max(1, min(wanted, items))


def _solve_pairs(ctx: Context, pairs: list[str], cost_hi: int | None) -> list[PairOutcome]:
    """Each pair's best plan without the tie-break, in the pairs' order, shared out by `per_pair`.

    A child's chance cuts and wall-clock stop come back with its outcome, so the context ends as the serial solve
    leaves it: the screen's point reasons too (`Screen.findings`); other caches are filled again where later stages
    need them."""
    hint = ctx.settings.hint
    least = SharedMinimum()

    def one(pair: str) -> tuple[PairOutcome, tuple[list[ChanceCut], list[LateCut]]]:
        out = solve_pair(ctx, ctx.universe.subset(pair), cost_hi, tie_break=False, hint=hint, speculate=least.offer,
                         settle=ctx.settings.settle)
        return out, (ctx.cuts.get(pair, []), ctx.late_cuts.get(pair, []))

    outcomes = []
    for pair, (out, (cuts, lates)) in zip(pairs, per_pair(ctx, pairs, one), strict=True):
        if cuts:
            ctx.cuts[pair] = cuts
        if lates:
            ctx.late_cuts[pair] = lates
        outcomes.append(out)
    return _unsettle(ctx, pairs, outcomes, cost_hi)


def _unsettle(ctx: Context, pairs: list[str], outcomes: list[PairOutcome], cost_hi: int | None) -> list[PairOutcome]:
    """The settled pairs that could still rank in the first `exact_places` places (the winner and the runner-up by
    default), searched again to their proven optimum (in the pairs' order, with the cuts their first search
    found), until none can. With P the objective of the plan in the last of those places among all the plans found,
    a settled pair whose bound is above P cannot reach them (its optimum is at least its bound), and keeps its plan,
    within `settle` of its optimum; nor can a plan it could have displace one of them. P can only fall as pairs
    are searched exactly, hence the loop. So the places that matter hold proven optima, and the answer is the same
    as with every pair searched exactly (`tests/test_settle.py`)."""
    outcomes = list(outcomes)
    places = max(1, ctx.settings.exact_places)
    while True:
        found = sorted(o.objective for o in outcomes if o.plan is not None and o.objective is not None)
        last = found[min(places, len(found)) - 1] if found else None
        k = next((k for k, o in enumerate(outcomes) if o.settled and last is not None and o.bound is not None
                  and o.bound <= last), None)
        if k is None:
            return outcomes
        log.info("pair %s: settled, may rank in the first %d: searched to its optimum", pairs[k], places)
        outcomes[k] = solve_pair(ctx, ctx.universe.subset(pairs[k]), cost_hi, tie_break=False,
                                 hint=ctx.settings.hint)


def per_pair(ctx: Context, pairs: list[str], one: Callable[[str], T]) -> list[T]:
    """[one(pair) for pair in pairs] on up to `processes_for` processes: with `--processes` the pairs are forked out
    from the start, by default only those left after `FORK_AFTER_SECONDS` (largest first, this process taking the
    smallest before and meanwhile). `one` must answer from the context alone (each pair is searched on its own).

    What a forked search learns that later stages rely on comes back with its answer and is adopted here, so the
    context ends as a serial run leaves it: the screen's point reasons of the pair's options (`Screen.findings`:
    an explanation prunes the points whose reasons are known) and the wall clock running out (`--max-seconds`)."""
    def run(pair: str) -> tuple[T, bool, ScreenFindings | None]:
        got = one(pair)
        found = ctx.screen.findings({o.id for o in ctx.universe.subset(pair).options}) if in_child() else None
        return got, ctx.engine.out_of_time, found

    size = {o.pair: 0 for o in ctx.universe.options}
    for o in ctx.universe.options:
        size[o.pair] += search_work(o)
    left = sorted(range(len(pairs)), key=lambda k: (-size.get(pairs[k], 0), k))   # largest first
    processes = processes_for(ctx, len(pairs))
    answers: dict[int, tuple[T, bool, ScreenFindings | None]] = {}
    if processes == 1 or ctx.settings.processes is None:
        start = time.monotonic()
        while left and (processes == 1 or len(left) < 2 or time.monotonic() - start < FORK_AFTER_SECONDS):
            k = left.pop()  # the smallest left
            answers[k] = run(pairs[k])
    if left:
        log.info("forking %d processes for %d pairs", processes, len(left))
        answers.update(zip(left, fork_map(run, [pairs[k] for k in left], processes), strict=True))
    out = []
    for k in range(len(pairs)):
        got, out_of_time, findings = answers[k]
        if findings is not None:
            ctx.screen.adopt(findings)
        ctx.engine.out_of_time = ctx.engine.out_of_time or out_of_time
        out.append(got)
    return out


SHARED_FABRIC_WEIGHT = 8
"""How much more a quote that shares its fabric with others weighs in `search_work` than one alone on its own."""


def search_work(o: Option) -> int:
    """A rough measure of the work of searching an option, to hand the largest searches out first: its workable
    points × its quotes, a quote on the option's most shared fabric weighing `SHARED_FABRIC_WEIGHT` more. Bought
    quotes share the site's fabric, so a plan may split its nodes over them (and their lateness together is cut
    and searched again), where a rented cluster alone on its fabric makes one-quote plans; points the estimates
    already rule out cost nothing. On catalog-shaped quotes this ranks the slow pairs first (a bought H200 pair of
    184 quotes took 0.74 s, a reserved H100 pair of 1,012 quotes 0.28 s, an H100 spot pair with no workable point
    0.004 s; bench/README.md), where points × quotes put the spot pair ahead of the H200 purchase."""
    workable = sum(1 for pt in o.points if pt.workable)
    shared = max(Counter(q.fabric_id for q in o.quotes).values(), default=0)
    return workable * (len(o.quotes) + SHARED_FABRIC_WEIGHT * (shared if shared > 1 else 0))


def _closed_form_bound(ctx: Context, pair: str, cost_hi: int | None) -> int | None:
    """A lower bound on the objective of any plan of a pair whose search found nothing before a limit (a search
    that never started, under `--max-seconds`): the least closed-form point bound (`model/bounds.py`); None when the
    bounds are not sound for the problem (the gap is then unknown)."""
    if not ctx.bounds.sound:
        return None
    # Screened-out points have no plan: skipping them keeps the bound, and the screen's test is memoised per point
    # where a point bound prices the point's quotes (measured: bench/README.md, "Timings that used to live in
    # docstrings (moved 2026-12-07)").
    found = [b for pt in _open_points(ctx, ctx.universe.subset(pair))
             if (b := ctx.bounds.point_bound(pt, cost_hi)) is not None]
    return min(found) if found else NO_PLAN_BOUND


def _open_points(ctx: Context, universe: Universe) -> list[Point]:
    """The workable points of `universe` the screen does not exclude: the only ones where a plan can be."""
    return [pt for o in universe.options for pt in o.points if pt.workable and not ctx.screen.excluded(pt)]


NO_PLAN_BOUND = 2 ** 62
"""The bound of a pair none of whose points can have a plan (each point's closed-form bound says so)."""


def _cross_check(ctx: Context, status: str, best: int | None) -> None:
    """Solve the undecomposed model and require the same optimum (guards decomposition and CP-SAT alike)."""
    b = build(ctx.problem, ctx.universe, ctx.screen, ctx.unit)
    out = optimise(ctx, b, tie_break=False, label="cross-check")
    if out.status in (OPTIMAL, INFEASIBLE) and status in (OPTIMAL, INFEASIBLE) and \
            (out.status, out.objective) != (status, best):
        raise PlanCheckError(f"cross-check failed: full model {out.status} {out.objective}, per pair {status} {best} "
                             "(cf. google/or-tools#5293)")


__all__ = ["SolveSettings", "Hint", "Context", "prepare", "solve_problem", "solve_pair", "rank", "NO_PLAN_BOUND",
           "optimise", "PairOutcome", "Forcing", "processes_for", "processes_for_problem", "per_pair"]
