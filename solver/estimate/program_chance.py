"""Deadlines at a confidence in a program (`policy.deadline_confidence`): every workload with a deadline finishes
by it in at least a fraction c of the risk scenarios — the scenarios and the timing rule of `plan risk PROGRAM`.

The timing rule (whole days; `answers/program_risk.py` simulates with `finishes`). In scenario s a run starts on
the latest of
- its planned start F (nothing starts earlier than planned);
- its own readiness: its software's port, ⌈porting_s⌉; on a rented quote, the capacity, ⌈lead_s⌉ + installation;
- every bought lot of its system that the plan makes usable by F: ⌈max(planned delivery, order + lead_s)⌉ plus
  installation (one lead draw per quote: a vendor's slip hits every lot ordered from it);
- the finish of the workloads it runs `after`, and of the runs before it on the same resource (the same owned
  system or rented quote, ending by F in the plan);
and finishes d_s = max(1, ⌈wall_s / 24⌉) days later, wall_s being `scenarios.wall_hours` at the run's point (its
MFU draw shared per platform, its own interruptions).

Every finish is a maximum of terms that never fall when a start or an order day moves later, or a lot or an edge
is added: lateness is monotone in the plan. That makes the chance constraint exact in CP-SAT in two parts:
- **Necessary, up front** (`ProgramChance.start_bounds`). Whatever else the plan does, a run starts no earlier
  than its own readiness (on owned nodes, no earlier than the soonest lot ordered on day 0), so it meets the
  confidence only if F ≤ F*, F* the k-th largest D − d_s over the scenarios whose readiness leaves room,
  k = ⌈c·N⌉ — the order statistic of `chance.py` for one run. Chained: no earlier either than the earliest its
  ancestors can finish in that scenario, while those precedences hold.
- **Lazy cuts** (`ProgramChance.learn`). A plan that misses for workload w names what w's finish depends on: the
  runs upstream of it (precedences and resource order) with their candidates and starts, and the lots they wait
  for with their order days. Every plan with candidates no earlier there (in every scenario), starts and order
  days no earlier, the same resource order and the same lots usable by each start finishes w no earlier in any
  scenario, so it misses too; the cut says that one of those differs. Before it is added each threshold is lowered
  as far as the bound still misses (bisection: lateness is monotone), and the edges and lots w misses without are
  dropped, so one cut removes every plan at least as late, not one plan.
A plan the solver returns is simulated; when it misses, its cuts are added and the program is solved again
(`solve/program.py`). The last plan meets every deadline at the confidence and is optimal in a relaxation of the
problem (necessary conditions and valid cuts), so it is the optimum.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..bisection import least_holding
from ..errors import InternalError
from ..inputs.assumptions import Assumptions
from .compute import TimeEstimate
from .scenarios import wall_hours
from .uncertainty import Draws, lead_days, mfu_factor, porting_days

CONFIDENCE_GROUP = "policy.deadline_confidence"


@dataclass(frozen=True)
class RunScenario:
    """What a candidate's scenarios read: its point's time estimate, its platform (the MFU draw is shared per
    software stack and accelerator class), its software's porting delay, and on a rented quote the quote's lead
    times (p50, p90) and installation."""

    time: TimeEstimate
    software: str
    cls: str
    port_key: str
    port_days: float
    lead: tuple[float, float | None] | None
    install_days: float
    measured: bool = False
    """The user measured the workload's MFU on this accelerator (`uncertainty.mfu_factor`)."""


class CandidateView(Protocol):
    """What this module reads of a candidate run (`estimate.program.Candidate`, which imports this module: hence a
    protocol, named apart from the class it describes)."""

    @property
    def workload(self) -> str: ...
    @property
    def option(self) -> str: ...
    @property
    def system(self) -> str: ...
    @property
    def nodes(self) -> int: ...
    @property
    def quote(self) -> str | None: ...
    @property
    def days(self) -> int: ...
    @property
    def ready_day(self) -> int: ...
    @property
    def label(self) -> str: ...
    @property
    def scenario(self) -> RunScenario | None: ...


class LotQuoteView(Protocol):
    """What this module reads of a bought quote's lots (`estimate.program.LotQuote`)."""

    @property
    def quote(self) -> str: ...
    @property
    def system(self) -> str: ...
    @property
    def lead_days(self) -> int: ...
    @property
    def install_days(self) -> int: ...


Identity = tuple[str, int, str | None, int, int]
"""A candidate of one workload across reductions of the same program: option, nodes, rented quote, planned days
and ready day (what its scenarios and its place in the timing rule depend on)."""


def identity(c: CandidateView) -> Identity:
    return (c.option, c.nodes, c.quote, c.days, c.ready_day)


class Scenarios(Protocol):
    """Whole days per scenario: a candidate's duration and own readiness, a bought quote's lead time."""

    @property
    def n(self) -> int: ...

    def days(self, c: CandidateView) -> np.ndarray: ...

    def ready(self, c: CandidateView) -> np.ndarray: ...

    def lead(self, quote: str) -> np.ndarray: ...


@dataclass
class DrawnScenarios:
    """The scenarios of `plan risk` (`uncertainty.py`'s draws at the assumptions' seed), kept per candidate."""

    draws: Draws
    assumptions: Assumptions
    quote_leads: Mapping[str, tuple[float, float | None]]
    """Every bought quote's lead-time p50 and p90 (days)."""
    _days: dict[tuple[str, TimeEstimate, str, str], np.ndarray] = field(default_factory=dict)
    _ready: dict[tuple[str, str | None], np.ndarray] = field(default_factory=dict)
    _lead: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return self.draws.n

    def wall(self, c: CandidateView) -> np.ndarray:
        sc = _scenario(c)
        a = self.assumptions
        source = f"interruptions:{c.workload}"
        return wall_hours(sc.time, a.reliability.restart_hours, mfu_factor(self.draws, a, sc.software, sc.cls, sc.measured),
                          self.draws.normal(source), self.draws.uniform(source))

    def days(self, c: CandidateView) -> np.ndarray:
        """Kept for the `DAYS_KEPT` most recently asked points: the up-front bounds read every candidate once (a
        widened explanation, thousands), the cuts read the few of the plans again and again."""
        sc = _scenario(c)
        key = (c.workload, sc.time, sc.software, sc.cls, sc.measured)
        got = self._days.pop(key, None)
        if got is None:
            got = np.maximum(1, np.ceil(self.wall(c) / 24.0 - 1e-9)).astype(np.int32)
            while len(self._days) >= DAYS_KEPT:
                self._days.pop(next(iter(self._days)))
        self._days[key] = got
        return got

    def ready(self, c: CandidateView) -> np.ndarray:
        sc = _scenario(c)
        key = (sc.port_key, c.quote)
        got = self._ready.get(key)
        if got is None:
            port = porting_days(self.draws, self.assumptions, sc.port_key, sc.port_days)
            got = np.ceil(port - 1e-9).astype(np.int32)
            if c.quote is not None and sc.lead is not None:
                lead = self._whole_lead(c.quote, *sc.lead)
                got = np.maximum(got, np.ceil(lead + sc.install_days - 1e-9).astype(np.int32))
            self._ready[key] = got
        return got

    def lead(self, quote: str) -> np.ndarray:
        """A bought quote's lead time per scenario, whole days."""
        return self._whole_lead(quote, *self.quote_leads[quote])

    def _whole_lead(self, quote: str, p50: float, p90: float | None) -> np.ndarray:
        got = self._lead.get(quote)
        if got is None:
            got = self._lead[quote] = np.ceil(lead_days(self.draws, quote, p50, p90,
                                                        self.assumptions.lead_time_cap_quantile)
                                              - 1e-9).astype(np.int32)
        return got


DAYS_KEPT = 2048
"""Points whose scenario days a `DrawnScenarios` keeps (10,000 scenarios: 40 kB each; a widened explanation of the
200B example reads 1,356 candidates again at every deadline it tries)."""


def _scenario(c: CandidateView) -> RunScenario:
    if c.scenario is None:
        raise ValueError(f"{c.label} of {c.workload} carries no scenario data")
    return c.scenario


@dataclass(frozen=True)
class RunAt:
    """One run of a plan as the timing rule reads it."""

    workload: str
    candidate: CandidateView
    start: int
    end: int


@dataclass(frozen=True)
class LotAt:
    """One bought lot of a plan: ordered on `order`, due `delivered` (the plan's lead), usable after `install`."""

    quote: str
    k: int
    system: str
    order: int
    delivered: int
    install: int

    @property
    def usable(self) -> int:
        return self.delivered + self.install


@dataclass(frozen=True)
class Waits:
    """What one run waits for (module docstring): the workloads it runs after, the runs before it on its
    resource, the lots of its system usable by its planned start."""

    run: RunAt
    after: tuple[str, ...]
    before: tuple[str, ...]
    lots: tuple[LotAt, ...]


def waits(runs: Sequence[RunAt], lots: Sequence[LotAt], after: Mapping[str, tuple[str, ...]]) -> dict[str, Waits]:
    """Every run's waits in a plan, the runs taken in the order they start."""
    out: dict[str, Waits] = {}
    on_resource: dict[str, list[RunAt]] = {}
    for r in sorted(runs, key=lambda r: (r.start, r.end, r.workload)):
        c = r.candidate
        resource = f"owned:{c.system}" if c.quote is None else f"quote:{c.quote}"
        before = tuple(u.workload for u in on_resource.get(resource, []) if u.end <= r.start)
        mine = tuple(lot for lot in lots if c.quote is None and lot.system == c.system and lot.usable <= r.start)
        out[r.workload] = Waits(r, tuple(after.get(r.workload, ())), before, mine)
        on_resource.setdefault(resource, []).append(r)
    return out


def finishes(sc: Scenarios, plan: Mapping[str, Waits], starts: Mapping[str, int] | None = None,
             orders: Mapping[tuple[str, int], int] | None = None,
             floors: Mapping[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Each run's finish day per scenario (the timing rule), with some planned starts and lot order days replaced
    (`starts`, `orders`: what a cut's bound tries), and some runs' finishes replaced by a floor (`floors`: the
    earliest any of their candidates can finish). Edges to runs in neither are not followed."""
    starts = starts or {}
    orders = orders or {}
    floors = floors or {}
    done: dict[str, np.ndarray] = {}

    def finish(wid: str) -> np.ndarray:
        got = done.get(wid)
        if got is not None:
            return got
        x = plan[wid]
        t = np.maximum(sc.ready(x.run.candidate), starts.get(wid, x.run.start))
        for lot in x.lots:
            order = orders.get((lot.quote, lot.k), lot.order)
            t = np.maximum(t, np.maximum(order + lot.delivered - lot.order, order + sc.lead(lot.quote)) + lot.install)
        for u in x.after + x.before:
            if u in plan:
                t = np.maximum(t, finish(u))
            elif u in floors:
                t = np.maximum(t, floors[u])
        got = done[wid] = t + sc.days(x.run.candidate)
        return got

    for wid in sorted(plan):
        finish(wid)
    return done


@dataclass(frozen=True)
class ProgramChanceCut:
    """A set of plans that miss `workload`'s deadline (at most `deadline`) at the confidence: those with each run of
    `runs` on that candidate and starting on its threshold or later (None: any day), each `pairs` edge (u, v) kept
    (u ends by v's start), each lot of `lots` bought and ordered on its threshold or later, and each `lot_waits`
    lot usable by the start of the run named. `after` names the precedence groups the bound relied on."""

    workload: str
    deadline: int
    runs: tuple[tuple[str, tuple[Identity, ...], int | None], ...]
    pairs: tuple[tuple[str, str], ...]
    lots: tuple[tuple[str, int, int | None], ...]
    lot_waits: tuple[tuple[str, int, str], ...]
    after: tuple[str, ...]


class WorkloadView(Protocol):
    """What this module reads of a workload (`estimate.program.WorkloadData`)."""

    @property
    def id(self) -> str: ...
    @property
    def deadline_day(self) -> int | None: ...
    @property
    def after(self) -> tuple[str, ...]: ...
    @property
    def candidates(self) -> Sequence[CandidateView]: ...


@dataclass(frozen=True)
class StartBound:
    """A candidate's latest start at the confidence (None: none meets it): `alone`, from its own readiness; `chained`
    also from the earliest its ancestors can finish in each scenario, valid while the precedences `after` hold."""

    alone: int | None
    chained: int | None
    after: tuple[str, ...]


BOUNDS_KEPT = 8
"""Programs (candidates, deadlines, lots) whose start bounds a `ProgramChance` keeps: an explanation asks about the
same data dozens of times."""


@dataclass
class ProgramChance:
    """A program's chance constraints: the confidence, its scenarios, and the cuts learnt so far (valid for any
    set of the program's groups: each is guarded by the groups its bound relies on, and by a deadline no later
    than the one it was learnt at)."""

    confidence: float
    scenarios: Scenarios
    cuts: list[ProgramChanceCut] = field(default_factory=list)
    _bounds: dict[tuple[object, ...], dict[tuple[str, Identity], StartBound]] = field(default_factory=dict)
    _alone: dict[tuple[str, Identity, int, tuple[object, ...]], int | None] = field(default_factory=dict)
    """F* alone by workload, candidate, deadline and the lots of its system (it depends on nothing else)."""

    @property
    def needed(self) -> int:
        """Scenarios that must meet a deadline: ⌈c·N⌉."""
        return math.ceil(round(self.confidence * self.scenarios.n, 9))

    def start_bounds(self, workloads: Sequence[WorkloadView], lots: Sequence[LotQuoteView]
                     ) -> dict[tuple[str, Identity], StartBound]:
        """Every candidate's `StartBound` (module docstring), by workload and identity.

        The chained bound: in scenario s a workload cannot finish before L_u,s = min over its candidates c of
        max(c's ready day, its own readiness, L of the workloads it follows) + d_c,s (each candidate as early as
        it can ever start; the minimum over candidates, as the plan may pick any), so a run after u starts no
        earlier than max_u L_u,s — a per-scenario readiness that makes F* smaller for a run whose predecessors are
        uncertain (the 200B run after a TPU bake-off whose port may take months)."""
        key = (tuple((w.id, w.deadline_day, w.after, tuple(w.candidates)) for w in workloads),
               tuple((lq.quote, lq.system, lq.lead_days, lq.install_days) for lq in lots))
        got = self._bounds.pop(key, None)
        if got is None:
            got = self._start_bounds(workloads, lots)
            while len(self._bounds) >= BOUNDS_KEPT:
                self._bounds.pop(next(iter(self._bounds)))
        self._bounds[key] = got
        return got

    def _start_bounds(self, workloads: Sequence[WorkloadView], lots: Sequence[LotQuoteView]
                      ) -> dict[tuple[str, Identity], StartBound]:
        by_id = {w.id: w for w in workloads}
        earliest: dict[str, np.ndarray | None] = {}
        ancestry: dict[str, tuple[str, ...]] = {}

        def finish_bound(wid: str) -> np.ndarray | None:
            if wid not in earliest:
                pre = preceding(wid)
                best: np.ndarray | None = None
                for c in by_id[wid].candidates:
                    ready = self._own_ready(c, lots)
                    if ready is None:
                        continue
                    ready = np.maximum(ready, c.ready_day)
                    done = (ready if pre is None else np.maximum(ready, pre)) + self.scenarios.days(c)
                    best = done if best is None else np.minimum(best, done)
                earliest[wid] = best
            return earliest[wid]

        def preceding(wid: str) -> np.ndarray | None:
            ups = [u for u in by_id[wid].after if u in by_id]
            known = [b for b in (finish_bound(u) for u in ups) if b is not None]
            ancestry[wid] = tuple(sorted({wid}.union(*(ancestry[u] for u in ups)))) if ups else ()
            return np.max(np.stack(known), axis=0) if known else None

        out: dict[tuple[str, Identity], StartBound] = {}
        for w in workloads:
            if w.deadline_day is None:
                continue
            pre = preceding(w.id)
            after = tuple(f"workloads.{a}.after" for a in ancestry[w.id])
            for c in w.candidates:
                mine = tuple((lq.quote, lq.lead_days, lq.install_days) for lq in lots
                             if c.quote is None and lq.system == c.system)
                key = (w.id, identity(c), w.deadline_day, mine)
                if key not in self._alone:
                    ready = self._own_ready(c, lots)
                    self._alone[key] = None if ready is None else self._kth(c, w.deadline_day, ready)
                alone = chained = self._alone[key]
                if pre is not None and alone is not None:
                    ready = self._own_ready(c, lots)
                    assert ready is not None
                    chained = self._kth(c, w.deadline_day, np.maximum(ready, pre))
                out[w.id, identity(c)] = StartBound(alone, chained, after)
        return out

    def _own_ready(self, c: CandidateView, lots: Sequence[LotQuoteView]) -> np.ndarray | None:
        """A candidate's own readiness per scenario; on owned nodes no earlier than the soonest lot of its system
        ordered on day 0 (None: no lot of it at all)."""
        sc = self.scenarios
        ready = sc.ready(c)
        if c.quote is None:
            mine = [lq for lq in lots if lq.system == c.system]
            if not mine:
                return None
            soonest = np.min(np.stack([np.maximum(lq.lead_days, sc.lead(lq.quote)) + lq.install_days
                                       for lq in mine]), axis=0)
            ready = np.maximum(ready, soonest)
        return ready

    def _kth(self, c: CandidateView, deadline: int, ready: np.ndarray) -> int | None:
        """The latest start F with max(F, ready_s) + d_s ≤ deadline in ⌈c·N⌉ scenarios: the k-th largest
        deadline − d_s among the scenarios whose readiness leaves room."""
        slack = deadline - self.scenarios.days(c)
        ok = slack[ready <= slack]
        k = self.needed
        if len(ok) < k:
            return None
        return int(np.partition(ok, len(ok) - k)[len(ok) - k])

    def met(self, plan: Mapping[str, Waits], deadlines: Mapping[str, int]) -> dict[str, int]:
        """Scenarios in which each workload with a deadline meets it."""
        done = finishes(self.scenarios, plan)
        return {w: int(np.count_nonzero(done[w] <= d)) for w, d in deadlines.items()}

    def learn(self, runs: Sequence[RunAt], lots: Sequence[LotAt], deadlines: Mapping[str, int],
              after: Mapping[str, tuple[str, ...]], candidates: Mapping[str, Sequence[CandidateView]]) -> list[str]:
        """The workloads this plan makes miss their deadline at the confidence (`deadlines`: the enforced ones;
        `after`: the enforced precedences), each with a cut added to the pool (`candidates`: each workload's, for
        the cut's sets of candidates no earlier than the plan's)."""
        plan = waits(runs, lots, after)
        missed = sorted(w for w, n in self.met(plan, deadlines).items() if n < self.needed)
        for w in missed:
            cut = self._cut(plan, w, deadlines[w], candidates)
            if cut in self.cuts:
                raise InternalError(f"the deadline-confidence cut for {w} was learnt twice: the model did not "
                                    "enforce it")
            self.cuts.append(cut)
        return missed

    def _cut(self, plan: Mapping[str, Waits], wid: str, deadline: int, candidates: Mapping[str, Sequence[CandidateView]]
             ) -> ProgramChanceCut:
        """The cut of a missing workload, lifted (module docstring): edges and lots dropped while the bound
        still misses; runs upstream replaced by the earliest any of their candidates can finish (`_floor`: then the
        cut names neither their candidate nor their start) while it still misses; then each start and order
        threshold lowered by bisection."""
        bound = _Bound(self.scenarios, wid, deadline, self.needed)
        q = bound.drop_edges_and_lots(_cone(plan, wid))
        floors: dict[str, np.ndarray] = {}
        for v in sorted(q, key=lambda v: (q[v].run.start, v)):
            if v == wid or v not in q or any(v in x.before for x in q.values()):
                continue
            trial_floors = {**floors, v: self._floor(candidates[v])}
            trial = _cone(q, wid, trial_floors)
            if bound.misses(trial, floors=trial_floors):
                floors, q = trial_floors, trial
        starts, orders = bound.thresholds(q, floors)
        return ProgramChanceCut(
            wid, deadline,
            tuple((v, self._no_earlier(q, v, candidates[v]), starts[v] if starts[v] > 0 else None) for v in sorted(q)),
            tuple(sorted((u, v) for v in q for u in q[v].before)),
            tuple(sorted((lot.quote, lot.k, orders[lot.quote, lot.k] or None)
                         for lot in {lot for x in q.values() for lot in x.lots})),
            tuple(sorted((lot.quote, lot.k, v) for v in q for lot in q[v].lots)),
            tuple(sorted({f"workloads.{v}.after" for v in q if q[v].after})))

    def _floor(self, mine: Sequence[CandidateView]) -> np.ndarray:
        """The earliest a workload can finish in each scenario whatever the plan, its predecessors aside: over its
        candidates, max(ready day, own readiness) + days (every run starts no earlier than its candidate's ready
        day, a fact of the model)."""
        sc = self.scenarios
        return np.min(np.stack([np.maximum(sc.ready(c), c.ready_day) + sc.days(c) for c in mine]), axis=0)

    def _no_earlier(self, q: Mapping[str, Waits], v: str, mine: Sequence[CandidateView]) -> tuple[Identity, ...]:
        """The candidates of `v` that make the bound miss wherever the plan's does: no earlier ready and no fewer
        days in any scenario, on the same resource when the bound relies on `v`'s resource order, on owned nodes
        of the same system when it relies on lots `v` waits for."""
        sc = self.scenarios
        c = q[v].run.candidate
        ordered = bool(q[v].before) or any(v in x.before for x in q.values())
        ready, days = sc.ready(c), sc.days(c)
        out = []
        for other in mine:
            if q[v].lots and not (other.quote is None and other.system == c.system):
                continue
            if ordered and not (other.quote == c.quote and (c.quote is not None or other.system == c.system)):
                continue
            if identity(other) == identity(c) or (bool(np.all(sc.ready(other) >= ready))
                                                  and bool(np.all(sc.days(other) >= days))):
                out.append(identity(other))
        return tuple(sorted(out, key=lambda i: (i[0], i[1], i[2] or "", i[3], i[4])))


@dataclass(frozen=True)
class _Bound:
    """The bound a cut is lifted on: workload `wid`'s finish in the runs kept, against its deadline."""

    scenarios: Scenarios
    wid: str
    deadline: int
    needed: int

    def misses(self, q: Mapping[str, Waits], starts: Mapping[str, int] | None = None,
               orders: Mapping[tuple[str, int], int] | None = None,
               floors: Mapping[str, np.ndarray] | None = None) -> bool:
        done = finishes(self.scenarios, q, starts, orders, floors)
        return int(np.count_nonzero(done[self.wid] <= self.deadline)) < self.needed

    def drop_edges_and_lots(self, q: dict[str, Waits]) -> dict[str, Waits]:
        """`q` without each edge and lot the bound still misses without (and the runs no longer upstream)."""
        for v in sorted(q, key=lambda v: (-q[v].run.start, v)):
            if v not in q:
                continue
            for kind in ("after", "before"):
                for u in getattr(q[v], kind):
                    trial = _cone({**q, v: _without(q[v], kind, u)}, self.wid)
                    if self.misses(trial):
                        q = trial
            # the last lots first: a cut that keeps a quote's first lot holds for every plan buying any of its lots
            for lot in sorted(q[v].lots, key=lambda lot: (lot.quote, -lot.k)):
                trial = _cone({**q, v: _without_lot(q[v], lot)}, self.wid)
                if self.misses(trial):
                    q = trial
        return q

    def thresholds(self, q: Mapping[str, Waits], floors: Mapping[str, np.ndarray]
                   ) -> tuple[dict[str, int], dict[tuple[str, int], int]]:
        """Each run's start and each lot's order day lowered, one after the other, to the least at which the
        bound still misses."""
        starts: dict[str, int] = {}
        orders: dict[tuple[str, int], int] = {}

        def start_at(v: str) -> Callable[[int], bool]:
            return lambda t: self.misses(q, {**starts, v: t}, None, floors)

        def order_at(key: tuple[str, int]) -> Callable[[int], bool]:
            return lambda o: self.misses(q, starts, {**orders, key: o}, floors)

        for v in sorted(q, key=lambda v: (-q[v].run.start, v)):
            starts[v] = least_holding(0, q[v].run.start, start_at(v))
        for lot in sorted({lot for x in q.values() for lot in x.lots}, key=lambda lot: (lot.quote, lot.k)):
            orders[lot.quote, lot.k] = least_holding(0, lot.order, order_at((lot.quote, lot.k)))
        return starts, orders


def _cone(plan: Mapping[str, Waits], wid: str, floored: Mapping[str, np.ndarray] | None = None
          ) -> dict[str, Waits]:
    """The runs `wid`'s finish depends on (itself included), not through runs `floored`."""
    out: dict[str, Waits] = {}
    todo = [wid]
    while todo:
        v = todo.pop()
        if v in out or v not in plan or (floored is not None and v in floored):
            continue
        out[v] = plan[v]
        todo += [u for u in plan[v].after + plan[v].before if u in plan]
    return out


def _without(x: Waits, kind: str, u: str) -> Waits:
    if kind == "after":
        return Waits(x.run, tuple(a for a in x.after if a != u), x.before, x.lots)
    return Waits(x.run, x.after, tuple(b for b in x.before if b != u), x.lots)


def _without_lot(x: Waits, lot: LotAt) -> Waits:
    return Waits(x.run, x.after, x.before, tuple(other for other in x.lots if other != lot))


__all__ = ["ProgramChanceCut", "ProgramChance", "DrawnScenarios", "RunScenario", "RunAt", "LotAt", "Waits", "Scenarios",
           "waits", "finishes", "identity", "CONFIDENCE_GROUP"]
