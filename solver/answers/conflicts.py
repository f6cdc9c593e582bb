"""Why an option cannot work, or why nothing can: a minimal set of the user's constraint groups that rules it out.

Three sources of proof, cheapest first:
1. Point-local facts (`model/screening.py`): if the groups of a set exclude every point of a pair one by one, the
   set is infeasible without any solve. A greedy cover, shrunk by deletion, is the explanation.
2. CP-SAT assumption cores: a feasibility-only model (no objective, one worker, presolve off —
   google/or-tools#5141) with every group literal as an assumption; the solver's core is a hint, mapped through our
   own literal table, re-verified, then shrunk by deletion.
3. The pair oracle: the whole problem under any set of active groups, decided pair by pair, for conflicts over
   the whole problem and for relaxations (`relax.py`).

Every solve goes through the command's engine, so `--time-limit` bounds it. A solve that stops at the limit proves
nothing: a group whose removal could not be decided is kept, and the result says it is **not proven minimal**.

Where they live: point-local covers in `covers.py`, assumption cores and the shared check `_decide` in `cores.py`,
the deletion filter (QuickXplain) in `deletion.py`, what a minimisation is asked and answers in `minimum.py`. This
module holds the pair oracle and the searches that need it, and re-exports the rest, so callers import from here.
"""

from __future__ import annotations

import dataclasses
import heapq
import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from ..estimate.options import Option, Point, Universe
from ..model.builder import Built, build
from ..model.groups import capacity_group, capacity_quote, rank
from ..model.money import floor_units
from ..solve.engine import FEASIBLE, INFEASIBLE, OPTIMAL, UNKNOWN
from ..solve.grow import Step, grow
from ..solve.pipeline import Context, Forcing, per_pair
from .cores import Conflict, _decide, minimal_conflict
from .cores import _units as _units
from .covers import _items_cover, _shrunk, covering_reason, shrink
from .covers import _cover as _cover, _shared_singleton as _shared_singleton
from .deletion import deletion_filter
from .deletion import _delete_one_by_one as _delete_one_by_one, _Stopped as _Stopped
from .minimum import BOUND_KIND, NO_FLOOR, Kind, Minimum, PointFloor, _kind, budgeted
from .witness import limits_of, witness, witness_alone


log = logging.getLogger(__name__)


def exclusion_reasons(ctx: Context, pairs: list[str]) -> dict[str, Conflict]:
    """For each accelerator/mode pair with no plan: a minimal conflict of groups that excludes it. Each pair's is
    searched on its own, so they are shared out like the solve's pairs (`pipeline.per_pair`): with a deadline
    confidence at 1,000 quotes these searches are most of `plan solve`."""
    def one(pair: str) -> Conflict:
        log.info("why %s cannot work", pair)
        return why_excluded(ctx, ctx.universe.subset(pair), pair)

    return dict(zip(pairs, per_pair(ctx, pairs, one), strict=True))


def why_excluded(ctx: Context, sub: Universe, label: str, forced: Forcing | None = None,
                 protect: frozenset[str] = frozenset()) -> Conflict:
    """A minimal conflict that rules out every plan over `sub` (a pair, or some of its options), with `forced`
    constraints (default: one of `sub`'s options is used): a point-local cover made minimal when there is one,
    else an assumption core shrunk by deletion."""
    cover = covering_reason(ctx, sub)
    made: list[tuple[Built, list[Any]]] = []
    cuts = [c for pair in sorted({o.pair for o in sub.options}) for c in ctx.cuts.get(pair, ())]

    def forced_model() -> tuple[Built, list[Any]]:
        """The explanation model with the forcing, built on first use; with the solve's cuts of plans whose quotes
        missed the deadline's confidence together, which hold whatever else is relaxed (`cuts.chance_cuts`)."""
        if not made:
            b = build(ctx.problem, sub, ctx.screen, ctx.unit, guard="assume", protect=protect, cuts=cuts)
            if forced is not None:
                lits = forced(b)
            else:
                ids = [o.id for o in sub.options if o.id in b.sel]
                lit = b.model.new_bool_var(f"force[{label}]")
                b.model.add(sum(b.sel[i] for i in ids) == 1).only_enforce_if(lit)
                lits = [lit]
            made.append((b, lits))
        return made[0]

    if cover is not None:
        return _shrunk(ctx, sub, forced_model, cover, _pair_status_of(ctx, sub) if forced is None else None)
    b, lits = forced_model()
    core = minimal_conflict(ctx, b, lits, shown=(lambda act: witness(ctx, sub, act)) if forced is None else None)
    if core is None:
        return Conflict((), proven=False)
    if cuts:
        # A relaxed model may find a plan whose quotes miss the confidence together, which its cuts do not exclude
        # yet: a group kept because of such a plan may not be needed, so minimality is not proven.
        return Conflict(core.groups, proven=False)
    return core


def _pair_status_of(ctx: Context, sub: Universe) -> Callable[[set[str]], str] | None:
    """When `sub` is one whole pair and the bounds are sound: its status under a set of groups from the model of only
    the points and quotes the bounds leave (`PairOracle._bounded_status`, the same answer as its full model's). A
    full model of a rented pair at 100,000 quotes took minutes to build for a cover's one undecided removal."""
    pairs = {o.pair for o in sub.options}
    if len(pairs) != 1 or not ctx.bounds.sound:
        return None
    pair = next(iter(pairs))
    if len(ctx.universe.subset(pair).options) != len(sub.options):
        return None
    oracle: list[PairOracle] = []

    def status(active: set[str]) -> str:
        if not oracle:
            oracle.append(PairOracle(ctx, pairs=[pair]))
        return oracle[0]._bounded_status(pair, active)
    return status


class PairOracle:
    """The whole problem under any set of active groups, by decomposition over accelerator/mode pairs.

    A plan uses exactly one option, so the problem is feasible iff some pair's sub-model is. Each pair first gets
    the exact Python cover test (no solve), then a CP-SAT solve. `forced(b)` adds literals that must hold in every
    pair's model (why-not: "this accelerator / quote is used"); `pairs` restricts the pairs. `undecided` counts
    solves stopped by the time limit: a caller that relies on an answer must check it.
    """

    def __init__(self, ctx: Context, *, pairs: list[str] | None = None, forced: Forcing | None = None,
                 elastic: bool = False, protect: frozenset[str] = frozenset(),
                 forced_options: frozenset[str] | None = None) -> None:
        self.ctx = ctx
        self.problem, self.universe, self.unit = ctx.problem, ctx.universe, ctx.unit
        self.forced_fn = forced
        self.forced_options = forced_options
        """When the forcing says exactly "the plan uses one of these options" (a why-not of an accelerator or an
        option, not of a quote): a plan written down over these options satisfies it (`_quick`)."""
        self.protect = protect
        """Quotes the forcing names, kept out of the presolve (`model/reduce.py`)."""
        self.elastic = elastic
        self.items: dict[str, list[tuple[frozenset[str], ...]]] = {}
        """Per pair, the distinct point-local reasons of its workable points (the cover test's input): the points of
        an option too slow or too small for the same limits share theirs, so a pair has a few dozen, not hundreds."""
        self._open: dict[str, int] = {}
        """Per pair, the position in `items` of the last reasons the cover test found open (tried first next time:
        the conflict search asks about ever smaller sets of groups, under which what was open stays open)."""
        self.models: dict[str, Built] = {}
        self.forced: dict[str, list[Any]] = {}
        self.groups: dict[str, Any] = {}
        self.memo: dict[tuple[str, frozenset[str]], str] = {}
        self.quick: dict[tuple[str, frozenset[str]], str | None] = {}
        self.undecided = 0
        self._all: list[str] | None = None
        self._lows: dict[tuple[str, frozenset[str]], list[tuple[int, Point, tuple[int, int, int]]]] = {}
        self._bounded_memo: dict[tuple[str, frozenset[str]], str] = {}
        self._floors: dict[tuple[str, int], list[tuple[int, int, Point]]] = {}
        self._capacities: dict[str, frozenset[str]] = {}
        """Per pair, the capacity groups of its options' quotes: the only ones that touch its plans (`_key`)."""
        for pair in (pairs if pairs is not None else ctx.universe.pairs()):
            sub = ctx.universe.subset(pair)
            self.items[pair] = list(dict.fromkeys(tuple(ctx.screen.violations(pt)) for o in sub.options
                                                  for pt in o.points if pt.workable))
            self._capacities[pair] = frozenset(capacity_group(q.id) for o in sub.options for q in o.quotes)
        self._every_capacity = frozenset().union(*self._capacities.values())

    def _key(self, pair: str, act: set[str]) -> tuple[str, frozenset[str]]:
        """(pair, the groups of `act` that can change its answers): all but the capacity groups of other pairs'
        quotes, which have no variable in its model, no place in its point bounds and no reason at its points. A
        deadline's conflict at 10,000 quotes holds some 800 capacities of four pairs' quotes; the search varies
        them, and each pair's answers repeat under every variation of the others'."""
        return pair, (frozenset(act) - self._every_capacity) | (self._capacities[pair] & act)

    def model(self, pair: str) -> Built:
        if pair not in self.models:
            b = build(self.problem, self.universe.subset(pair), self.ctx.screen, self.unit, guard="assume",
                      elastic=self.elastic, cuts=self.ctx.cuts.get(pair, ()), protect=self.protect)
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
            skeleton = dataclasses.replace(self.universe, options=tuple(opts))
            b = build(self.problem, skeleton, self.ctx.screen, self.unit, guard="assume", groups_only=True)
            for g, grp in b.groups.items():
                self.groups.setdefault(g, grp)
            self._all = sorted(b.groups, key=rank)
        return self._all

    def covered(self, pair: str, active: set[str]) -> bool:
        """Exact Python proof that this pair is infeasible under `active` (only without forcing)."""
        its = self.items[pair]
        if self.forced_fn is not None or not its:
            return False
        holds = active.issuperset  # mapped, not a generator: ~240,000 items per explanation at 10,000 quotes
        last = self._open.get(pair)
        if last is not None and not any(map(holds, its[last])):
            return False
        for k, reasons in enumerate(its):
            if not any(map(holds, reasons)):
                self._open[pair] = k
                return False
        return True

    def needed(self, core: list[str]) -> set[str]:
        """The capacity groups of `core`, an infeasible set, whose removal alone is shown to leave a plan, without a
        solve: at a point all of whose reasons within `core` name the quote's capacity, the cluster from that quote
        alone, no longer capped (`witness_alone`). Every conflict within `core` holds them (fewer groups, more
        plans), so the deletion keeps them whatever it has removed (`deletion_filter`'s `needed`).

        A marketplace deadline's conflict is mostly such capacities: each quote ready in time is short of the
        cluster only because it is capped. QuickXplain finds k of them among n in about 2k·log₂(n/k) checks, each a
        cover and a witness over the pair's thousands of quotes: 7,875 among 92,704 groups at 100,000 quotes ran
        for 20 minutes unfinished. None for a forcing (a plan must also satisfy it) or an elastic model."""
        if self.forced_fn is not None or self.elastic:
            return set()
        act = set(core)
        lim = limits_of(self.ctx, act)
        if lim is None:
            return set()
        found: set[str] = set()
        for pair in self.items:
            mine = self._capacities[pair] & act
            if not mine:
                continue
            for o in self.universe.subset(pair).options:
                position: dict[str, int] | None = None
                for pt in o.points:
                    inside = [it for it in self.ctx.screen.violations(pt) if it <= act] if pt.workable else []
                    if not inside:
                        continue
                    sole = frozenset.intersection(*inside) & mine
                    for g in sorted(sole - found):
                        position = position or {q.id: j for j, q in enumerate(o.quotes)}
                        j = position.get(capacity_quote(g) or "")
                        if j is not None and witness_alone(self.ctx, pt, j, act, lim):
                            found.add(g)
        return found

    def _pruned(self, b: Built, act: set[str]) -> list[Any]:
        """Assumptions z=0 for the points a point-local reason already excludes under `act` (exact), so the solver
        searches only what is left."""
        return [b.z[i].Not() for i, pt in enumerate(b.points) if self._ruled_out(pt, act)]

    def _ruled_out(self, pt: Point, act: set[str]) -> bool:
        """Whether a point-local reason of the point, as the screen knows it, lies within `act` (exact; a point whose
        reasons were never computed is not ruled out)."""
        known = self.ctx.screen.known(pt)
        return known is not None and any(it <= act for it in known)

    def _quick(self, pair: str, act: set[str]) -> str | None:
        """The pair's status without its model where a closed form settles it: no plan at any point by the point
        bounds under `act` (`_items_cover`; forcing only removes plans), or a plan written down (`witness.py`):
        without forcing over the pair's options, under a forcing to some options over those of them in the pair (a
        plan there satisfies it; a why-not's feasible checks at 10,000 quotes otherwise built models of every point
        left without the budget); None otherwise. Not for elastic models, whose slacks make the limits soft."""
        if self.elastic:
            return None
        key = self._key(pair, act)
        if key not in self.quick:
            sub, mine = self.universe.subset(pair), key[1]
            self.quick[key] = INFEASIBLE if _items_cover(self.ctx, sub, mine) else \
                FEASIBLE if (forced := self._witness_universe(sub)) is not None and witness(self.ctx, forced, mine) \
                else None
        return self.quick[key]

    def _witness_universe(self, sub: Universe) -> Universe | None:
        """The part of a pair in which any plan satisfies the forcing (all of it without one); None when no plan
        written down can be known to (a forced quote)."""
        if self.forced_fn is None:
            return sub
        if self.forced_options is None:
            return None
        return dataclasses.replace(sub, options=tuple(o for o in sub.options if o.id in self.forced_options))

    def status(self, active: list[str]) -> str:
        """`feasible` if some pair has a plan under `active`, `infeasible` if none has, `unknown` if a time limit
        left a pair undecided and no other pair has a plan."""
        act = set(active)
        unknown = False
        for pair in self.items:
            if self.ctx.engine.spent():
                return UNKNOWN
            st = self.pair_status(pair, active, act)
            if st == FEASIBLE:
                return FEASIBLE
            unknown = unknown or st == UNKNOWN
        return UNKNOWN if unknown else INFEASIBLE

    def pair_status(self, pair: str, active: list[str], act: set[str] | None = None) -> str:
        """`feasible`, `infeasible` or `unknown` for one pair under the active groups (memoised)."""
        act = set(active) if act is None else act
        if self.covered(pair, act):
            return INFEASIBLE
        quick = self._quick(pair, act)
        if quick is not None:
            return quick
        if not self.elastic and self.ctx.bounds.sound:
            return self._bounded_status(pair, act)
        b = self.model(pair)
        key = (pair, frozenset(act & set(b.lits)))
        st = self.memo.get(key)
        if st is None:
            # The literals fixed on a copy (`_decide`), not assumed: under assumptions the search's LP leaves out the
            # limits they enforce (half-reified, linearised only at level 2), and with the bounds off (a discount
            # rule) nothing else proves a budget out of reach — 1,186 variables, the budget alone active: unknown
            # after the 20 s limit (37 s of wall time) assumed, infeasible in 0.01 s fixed.
            st = _decide(self.ctx, b, [b.lits[g] for g in active if g in b.lits] + self.forced[pair]
                         + self._pruned(b, act), f"{pair}-feasible")
            st = FEASIBLE if st in (OPTIMAL, FEASIBLE) else st
            if st == UNKNOWN:
                st = self._status_by_budget(pair, act)
            self.memo[key] = st
            if st == UNKNOWN:
                self.undecided += 1
        return st

    def _bounded_status(self, pair: str, act: set[str]) -> str:
        """The pair's status under `act` from a model of only the points that can have a plan under `act` (their
        point bounds, `_lower_bounds`) and, at each, only the quotes a plan there can use (`Bounds.usable`): the same
        plans as the pair's full model, which with a marketplace catalog is far bigger. At 10,000 quotes the full
        models of three rented pairs took 17-28 s each to build (the presolve over every point and quote), for an
        infeasible deadline's conflict search as for a why-not's; the model of the points a deadline leaves has
        a few quotes at a few points. Forcing only removes plans, so the bounds hold under it. With the budget
        active the least budgeted quantity decides first (`_status_by_budget`). The groups' literals are fixed, not
        assumed, for the reason `_decide` gives. A search the time limit stops is `unknown` (counted in
        `undecided`): the full model has the same plans and more to search, so it is not tried (at 1,000 quotes, a
        $12M budget, one such check took 158 s there and was undecided too)."""
        key = self._key(pair, act)
        if key not in self._bounded_memo:
            lows = self._lower_bounds(pair, act)
            st = INFEASIBLE if not lows else self._status_by_budget(pair, act)
            if st == UNKNOWN:
                b = build(self.problem, self.universe.subset(pair), self.ctx.screen, self.unit, guard="assume",
                          keep={pt.key for _k, pt, _low in lows}, cuts=self.ctx.cuts.get(pair, ()),
                          protect=self.protect, usable=lambda pt: self.ctx.bounds.usable(pt, act),
                          active=frozenset(act))
                forced = self.forced_fn(b) if self.forced_fn is not None else []
                b.model.add_bool_and([b.lits[g] for g in act if g in b.lits] + forced)
                st = self.ctx.engine.solve(b.model, label=f"{pair}-feasible-bounded").status
                st = FEASIBLE if st in (OPTIMAL, FEASIBLE) else st
                if st == UNKNOWN:
                    self.undecided += 1
            self._bounded_memo[key] = st
        return self._bounded_memo[key]

    def _status_by_budget(self, pair: str, act: set[str]) -> str:
        """A pair's status when the budget is one of the groups: the pair has a plan under `act` iff its least
        budgeted quantity (cash or cost: the budget constraint's own expression) without the budget is within the
        budget's bound. The minimisation over points by their bounds (`_bounded`, as in the budget relaxation) is
        fast where a feasibility search near the budget is not: its bound prunes, and its least plan is the witness
        (1,000 quotes, why-not h100-sxm under $12M: three checks each left undecided after 20 s of search, decided
        so in 0.6 s; the why-not 252 s -> 11 s, the same conflict, now proven). `unknown` when the budget is not
        active, the bounds are off, or the minimisation is not proven."""
        budget = self.problem.spec.budget
        if budget.max_usd is None or "budget.max_usd" not in act or self.elastic or not self.ctx.bounds.sound:
            return UNKNOWN
        free = act - {"budget.max_usd"}
        cands = self._candidates(pair, free, BOUND_KIND[budget.applies_to])
        if not cands:  # no point has a plan even without the budget
            return INFEASIBLE
        got = self._bounded(pair, cands, free, budgeted(self.problem), None)
        if got is None:
            return UNKNOWN
        if got.outcome.status == INFEASIBLE:
            return INFEASIBLE
        if got.value <= floor_units(budget.max_usd, self.unit):
            return FEASIBLE   # a plan within the budget, the least or not
        return INFEASIBLE if got.proven else UNKNOWN

    def minimize(self, active: list[str], quantity: Callable[[Built], Any],
                 cap: tuple[Callable[[Built], Any], int] | None = None,
                 lower: str | PointFloor | None = None, cap_on: str | PointFloor | None = None,
                 fabric: str | None = None) -> "Minimum | None":
        """min over pairs of `quantity(b)` with `active` groups enforced.

        `cap` = (expression, bound) adds `expression <= bound` for this solve only (a relaxed limit). `lower` =
        "cost", "cash" or "finish" says the quantity is the model's cost, cash or finish day, for which the bounds
        give per-point lower bounds; a `PointFloor` gives them for another quantity. Each pair is then solved over
        the few points that could still be optimal (`solve/grow.py`). `cap_on` says the same of the cap's
        expression: points whose bound on it exceeds the cap cannot meet it and are left out (a relaxed deadline's
        cheapest plan is not searched among points that cannot finish by it). `fabric`: the caller knows that every
        plan under `active` runs on this fabric alone (`relax._sole_fabric`), so the other pairs are not asked and a
        bounded model gives variables only to its quotes."""
        act = set(active)
        best: Minimum | None = None
        # Forcing (a why-not's target) only removes plans, so the bounds stay lower bounds under it.
        bounded = lower is not None and not self.elastic and self.ctx.bounds.sound
        pairs = [pair for pair in self.items if not self.covered(pair, act)
                 and (fabric is None or any(q.fabric_id == fabric for o in self.universe.subset(pair).options
                                            for q in o.quotes))]
        ordered: Iterable[tuple[str, list[tuple[int, Point]]]] = ((pair, []) for pair in pairs)
        if bounded:
            assert lower is not None
            limit = (_kind(cap_on), cap[1]) if cap is not None and cap_on is not None else None
            ordered = self._by_bound(pairs, act, _kind(lower), limit,
                                     lambda low: best is not None and low > best.value)
        complete = True
        for pair, cands in ordered:
            spent = self.ctx.engine.spent()
            got = self._bounded(pair, cands, act, quantity, cap, fabric) if bounded and not spent else None
            if got is None and (spent or self.ctx.engine.spent()):
                # --max-seconds is over: every solve would return at once undecided, and the fallback below would
                # first build the pair's full model (minutes at 100,000 quotes) for nothing.
                self.undecided += 1
                complete = False
                break
            if got is None:
                b = self.model(pair)
                got = _minimize_in(self.ctx, b, [b.lits[g] for g in active if g in b.lits] + self.forced[pair]
                                   + self._pruned(b, act), quantity, cap, pair, shared=True)
            if got.outcome.status not in (OPTIMAL, INFEASIBLE) or not got.complete:
                self.undecided += 1
                complete = False
            if got.outcome.has_solution and (best is None or (got.value, pair) < (best.value, best.pair)):
                best = dataclasses.replace(got, pair=pair)
        return None if best is None else dataclasses.replace(best, complete=complete)

    def _by_bound(self, pairs: list[str], act: set[str], which: Kind, limit: tuple[Kind, int] | None,
                  beaten: Callable[[int], bool]) -> Iterator[tuple[str, list[tuple[int, Point]]]]:
        """The pairs that have candidates (`_candidates`), each with them, in order of their best candidate's bound
        (then name), until the next bound is `beaten` (exceeds the best plan found, which only falls): a pair bounded
        above the minimum so far cannot win.

        Best first over floors: a pair's candidates (a point bound each: at 10,000 quotes and a $5M budget, the
        budget relaxation bounded 956 points, 0.3 of its 0.49 s, to solve one pair) are computed when its floor
        (`Bounds.point_floor`, the least over its open points) comes up, and not at all once the floor is beaten.
        A floor is at most the pair's best bound, and a pair comes up with its floor before any pair whose bound
        is above it: the same pairs in the same order as bounding every pair first."""
        heap = [(self._floor(pair, act, which), False, pair) for pair in pairs]
        heapq.heapify(heap)
        found: dict[str, list[tuple[int, Point]]] = {}
        while heap:
            low, exact, pair = heapq.heappop(heap)
            if beaten(low):
                return
            if exact:
                yield pair, found[pair]
                continue
            cands = self._candidates(pair, act, which, limit)
            if cands:
                found[pair] = cands
                heapq.heappush(heap, (cands[0][0], True, pair))

    def _floor(self, pair: str, act: set[str], which: Kind) -> int:
        """The least floor of kind `which` (`Bounds.point_floor`) over the pair's workable points that no point-local
        reason within `act` excludes; `NO_FLOOR` when there are none. The points are visited by floor (their order
        kept per pair and kind), so the reasons are tested only up to the first point they leave open. A
        `PointFloor` is its own floor (it costs no more)."""
        if not isinstance(which, int):
            return min((which(pt) for o in self.universe.subset(pair).options for pt in o.points
                        if pt.workable and not self._ruled_out(pt, act)), default=NO_FLOOR)
        key = (pair, which)
        ranked = self._floors.get(key)
        if ranked is None:
            floor = self.ctx.bounds.point_floor
            ranked = self._floors[key] = sorted(
                ((floor(pt)[which], k, pt) for k, pt in enumerate(
                    pt for o in self.universe.subset(pair).options for pt in o.points if pt.workable)),
                key=lambda t: (t[0], t[1]))
        return next((low for low, _k, pt in ranked if not self._ruled_out(pt, act)), NO_FLOOR)

    def _candidates(self, pair: str, act: set[str], which: Kind,
                    limit: tuple[Kind, int] | None = None) -> list[tuple[int, Point]]:
        """The pair's points that `act` does not already exclude, with their lower bound on cost (which=0), cash (1)
        or finish day (2), or by a `PointFloor`, sorted by it; with `limit` = (kind, bound), only points whose lower
        bound of that kind is within the bound."""
        def bound(kind: Kind, pt: Point, low: tuple[int, int, int]) -> int:
            return low[kind] if isinstance(kind, int) else kind(pt)

        cands = [(bound(which, pt, low), k, pt) for k, pt, low in self._lower_bounds(pair, act)
                 if limit is None or bound(limit[0], pt, low) <= limit[1]]
        cands.sort(key=lambda t: (t[0], t[1]))
        return [(lb, pt) for lb, _k, pt in cands]

    def quote_floor(self, qid: str, act: set[str]) -> PointFloor:
        """A lower bound on the nodes a plan takes from quote `qid` at a point, with the groups `act` enforced and the
        quote's own capacity not (the quantity of its relaxation, `relax.py`), from the point's reasons and the
        other quotes' capacities:

        - 0 where a plan within the quote's capacity is not ruled out: at a point of another option (the quote has
          no nodes there), or one no point-local reason excludes under `act` with the capacity enforced too.
        - Otherwise every plan there takes more than its capacity c from it, and at least n minus what the option's
          other quotes can hold: Σy = n over the quotes (`builder._split`), each other quote at most its capacity
          when that is enforced, and with one fabric per job only the quotes on the quote's fabric beside it (a plan
          that uses it runs there). So max(c + 1, n − others), or c + 1 when some other capacity is not enforced.

        A rented copy alone on its fabric gets n itself: the minimisation grows from the fewest nodes up, as the
        cost's does from the cheapest points, instead of modelling every point of a pair with hundreds of quotes
        (1,000 quotes, a 2027-01-20 deadline: 0.7-0.8 s to build one such model, 0.03-0.17 s to solve it)."""
        quote = self.universe.quote(qid)
        full = act | {capacity_group(qid)}
        fabric_only = self.problem.spec.policy.max_fabrics == 1 and "policy.max_fabrics" in act
        others: dict[str, tuple[bool, int | None]] = {}

        def held_by_others(o: Option) -> tuple[bool, int | None]:
            """(whether the option has the quote, what its other quotes hold: None when not all are capped)."""
            if o.id not in others:
                rest = [q for q in o.quotes if q.id != qid]
                others[o.id] = (len(rest) < len(o.quotes),
                                None if any(capacity_group(q.id) not in act for q in rest) else sum(
                                    q.max_nodes for q in rest if not fabric_only or q.fabric_id == quote.fabric_id))
            return others[o.id]

        def floor(pt: Point) -> int:
            has, held = held_by_others(pt.option)
            if not has or not self._ruled_out(pt, full):
                return 0
            return quote.max_nodes + 1 if held is None else max(quote.max_nodes + 1, pt.n - held)
        return floor

    def _lower_bounds(self, pair: str, act: set[str]) -> list[tuple[int, Point, tuple[int, int, int]]]:
        """(position, point, its bounds) of the pair's workable points that have a plan by their bounds under `act`
        and no point-local reason within it; kept per (pair, groups): a relaxation minimises its quantity and then
        the cost under the same groups."""
        key = self._key(pair, act)
        got = self._lows.get(key)
        if got is None:
            got = []
            sub = self.universe.subset(pair)
            for k, pt in enumerate(pt for o in sub.options for pt in o.points if pt.workable):
                if self._ruled_out(pt, act):
                    continue
                low = self.ctx.bounds.point_lower(pt, act)
                if low is not None:
                    got.append((k, pt, low))
            self._lows[key] = got
        return got

    def _bounded(self, pair: str, cands: list[tuple[int, Point]], act: set[str], quantity: Callable[[Built], Any],
                 cap: tuple[Callable[[Built], Any], int] | None, fabric: str | None = None) -> "Minimum | None":
        """One pair's minimum over a growing set of its points (`solve/grow.py`), proven or the best plan the time
        limit left (not proven: `minimize` counts it undecided); None to fall back to the model over every point
        when the search found no plan and did not prove there is none. A plan found is not searched for again in
        the full model, which has the same plans and more to search: at 100,000 quotes, dropping a deadline's
        `policy.max_fabrics` ran into the time limit on the bounded model, then spent minutes and 4 GB building
        the pair's full one."""
        sub = self.universe.subset(pair)
        on: dict[str, np.ndarray] = {}

        def usable(pt: Point) -> np.ndarray:
            mask = self.ctx.bounds.usable(pt, act)
            if fabric is None:
                return mask
            o = pt.option
            if o.id not in on:
                on[o.id] = np.array([q.fabric_id == fabric for q in o.quotes], dtype=bool)
            return mask & on[o.id]

        def step(keep: set[tuple[str, int]], _last: Step[Minimum] | None) -> Step[Minimum]:
            b = build(self.problem, sub, self.ctx.screen, self.unit, guard="assume", keep=keep,
                      cuts=self.ctx.cuts.get(pair, ()), protect=self.protect, usable=usable, active=frozenset(act))
            forced = self.forced_fn(b) if self.forced_fn else []
            got = _minimize_in(self.ctx, b, [b.lits[g] for g in act if g in b.lits] + forced, quantity, cap, pair)
            return Step(got.outcome.status, got.value if got.outcome.has_solution else None, got)

        weights: dict[tuple[str, int], int] = {}

        def weight(pt: Point) -> int:
            """`Bounds.weight` under `act`, once per point: the search asks again at every growth and part."""
            if pt.key not in weights:
                weights[pt.key] = self.ctx.bounds.weight(pt, act)
            return weights[pt.key]

        found = grow(cands, step, weight, parts=True)
        got = found.payload
        if got is None or not (found.status in (OPTIMAL, INFEASIBLE) or got.outcome.has_solution):
            return None
        # By parts, a time limit may stop the search after other parts were proven: their least is not the pair's.
        return got if found.status in (OPTIMAL, INFEASIBLE) else dataclasses.replace(got, complete=False)


def _minimize_in(ctx: Context, b: Built, assumptions: list[Any], quantity: Callable[[Built], Any],
                 cap: tuple[Callable[[Built], Any], int] | None, label: str, *, shared: bool = False) -> Minimum:
    """Minimise `quantity(b)` under `assumptions` (and `cap` = (expression, bound), for this solve only). On a
    `shared` model (`PairOracle.model`) the cap goes on a copy: CP-SAT cannot take a constraint back, and a model that
    kept it would be searched differently by every later question, each answer depending on which came first."""
    m = b.model.clone() if cap is not None and shared else b.model
    m.clear_assumptions()
    m.add_assumptions(assumptions)
    if cap is not None:
        lit = m.new_bool_var("cap")
        m.add(cap[0](b) <= cap[1]).only_enforce_if(lit)
        m.add_assumptions([lit])
    expr = quantity(b)
    m.minimize(expr)
    try:
        out = ctx.engine.solve(m, label=f"{label}-minimize")
    finally:
        m.clear_assumptions()
        m.clear_objective()
    value = out.value(expr) if out.has_solution else 0
    return Minimum(value, b, out, label)


__all__ = ["Conflict", "PairOracle", "Minimum", "PointFloor", "Kind", "NO_FLOOR", "BOUND_KIND", "budgeted",
           "minimal_conflict", "covering_reason", "shrink", "exclusion_reasons", "why_excluded", "deletion_filter"]
