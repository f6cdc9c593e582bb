"""The CP-SAT model: choose one (option, node count) point and the quotes that supply its nodes.

Modelling:
- `z[p]` one-hot over points (an option at a node count); everything that depends on the node count — memory
  fit, days, power, racks, cost coefficients — is a constant of the point computed by the estimators, so the
  model is a selection with linear side constraints (the CP-SAT idiom for a configuration choice).
- Nodes come from the option's quotes. One quote: it supplies all n nodes. Several quotes of the same system and
  mode: `y[q,p]` nodes from quote q when point p is chosen, Σ_q y[q,p] = n_p·z[p], so each quote's per-node cost
  (which depends on the run length of p) stays linear. `u[q]` marks a quote used; one job's quotes lie on at most
  `policy.max_fabrics` fabrics (a provider's cluster; bought nodes share the site's).
- The planned start F is the latest of the floors (earliest start, option ready + rule delays, every used quote's
  ready offset + rule delays), pinned with a max-equality; the run starts at S ≥ F. The slip premium and the cost
  of bought hardware waiting for the start depend on F; they are step functions over the few values F can take
  (`timing.py`).
- Every user-facing limit is a guarded group (`groups.py`): its constraints are enforced by one literal, fixed
  true when optimising and free when explaining. No user limit is hidden in a variable domain.
- Money is integer in `money.units` (rounded up per term).

`build` assembles the model from one helper per constraint family, in the order a reader checks them: selection
and quote split, fabrics, schedule limits, policy, site, memory, quote capacity, rule adjustments, calendar,
delivery timing (slip and waits), rule conditions (which may test the whole cost), budget.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ..estimate.chance import ChanceCut, quote_sets
from ..estimate.options import Option, Point, Universe, option_quote_ready
from ..estimate.outlook import LateCut, rule_delay
from ..inputs.catalog import Quote
from ..inputs.problem import Problem
from ..inputs.rules import delay_days, matches_attrs, matches_point, quote_ids, rule_group
from ..inputs.spec import Adjust, Comparison, Rule
from .bounds import REFINE_FROM
from .cpsat import Model, cp_model
from .groups import Group, GroupKind, capacity_group
from .money import floor_units, units
from .objective import model_ceiling, needs_ceiling, universe_ceiling
from .reduce import r1_holds
from .screening import PRETRAINING, Screen, preemptible_forbidden
from .timing import Timing, candidates, delay_sums, rule_delays, timing, wait_of, wait_units

Guard = Literal["fixed", "assume"]
Usable = Callable[[Point], np.ndarray]
"""Which of a point's option quotes a plan there can use with the groups its model is solved under enforced
(`Bounds.usable`)."""


@dataclass
class Built:
    """A built model and the handles every later stage reads it through (variables, expressions, groups)."""

    model: cp_model.CpModel
    universe: Universe
    points: list[Point]
    unit: int
    groups: dict[str, Group]
    lits: dict[str, Any]
    z: list[cp_model.IntVar]
    sel: dict[str, Any]
    x: dict[str, Any]
    u: dict[str, Any]
    y: dict[tuple[str, int], Any]
    start: cp_model.IntVar
    finish: cp_model.IntVar
    planned: cp_model.IntVar
    cost: Any
    cash: Any
    rank: Any
    cost_hi: int = 0
    power_w: Any = 0
    racks: Any = 0
    slacks: dict[str, Any] = field(default_factory=dict)
    late: dict[str, Any] = field(default_factory=dict)
    """Per option of several quotes, the variable the lateness of its plan is charged by (money units): the largest
    of its used quotes' figures alone and of the cuts that hold (`add_lateness`)."""
    raisable: dict[str, int] = field(default_factory=dict)
    """Options whose charge `add_late_cut` may raise in this model, with the most it can be (units)."""


class _Builder:
    """The state shared by the constraint-family helpers while one model is built."""

    def __init__(self, problem: Problem, universe: Universe, screen: Screen, unit: int, guard: Guard,
                 elastic: bool, points: list[Point], active: frozenset[str] | None = None) -> None:
        self.problem = problem
        self.active = active
        """The groups the model will be solved under, when it is solved under one known set only (see `build`)."""
        self.spec = problem.spec
        self.a = problem.assumptions.values
        self.universe = universe
        self.screen = screen
        self.unit = unit
        self.guard = guard
        self.elastic = elastic
        self.m = Model()
        self.points = points
        self.z = [self.m.new_bool_var(f"z[{pt.option.id}@{pt.n}]") for pt in points]
        self.groups: dict[str, Group] = {}
        self.lits: dict[str, Any] = {}
        self.slacks: dict[str, Any] = {}
        self.by_option: dict[str, list[int]] = {}
        for i, pt in enumerate(points):
            self.by_option.setdefault(pt.option.id, []).append(i)
        self.options = [o for o in universe.options if o.id in self.by_option]
        self.sel = {o.id: sum(self.z[i] for i in self.by_option[o.id]) for o in self.options}
        self.max_n = max((pt.n for pt in points), default=1)
        self.zero = self.m.new_constant(0)
        self.x: dict[str, Any] = {}
        self.u: dict[str, Any] = {}
        self.y: dict[tuple[str, int], Any] = {}
        self.cost_terms: list[Any] = []
        self.cash_terms: list[Any] = []
        self.cost_adds: list[Any] = []
        self.cash_adds: list[Any] = []
        self.delays: list[Any] = []
        self.power_w: Any = 0
        self.racks: Any = 0
        self.horizon = universe.horizon
        self.start = self.m.new_int_var(0, self.horizon, "start_day")
        self.planned = self.m.new_int_var(0, self.horizon, "planned_start_day")
        self.finish = self.m.new_int_var(0, 2 * self.horizon, "finish_day")
        self.earliest_term: Any = 0
        self.floors: list[Any] = []
        self.delay_rules: list[int] = []
        self.thresholds: dict[tuple[str, str, int], Any] = {}
        self.outlook = screen.outlook
        self.late: dict[str, Any] = {}
        self.late_at: dict[str, list[tuple[int, int]]] = {}
        self.raisable: dict[str, int] = {}
        """Options whose lateness charge a cut can raise in the built model, with its most (`_late_charge`)."""
        self.whole: dict[tuple[str, int], Any] = {}
        """w[q, i]: the plan at point i takes all its nodes from quote q (`_split`)."""
        """Per quote of an option of several, (lateness units of the quote alone, point) where it is modelled."""

    # --- groups and slacks ------------------------------------------------------------------------------------
    def group(self, gid: str, kind: GroupKind, path: tuple[Any, ...], text: str, unit_name: str | None = None,
              value: Any = None) -> Any:
        """The literal enforcing group `gid` (made on first use): constant true, or a free Boolean to assume."""
        if gid not in self.lits:
            self.groups[gid] = Group(gid, kind, path, text, unit_name, value)
            self.lits[gid] = self.m.new_bool_var(gid) if self.guard == "assume" else self.m.new_constant(1)
        return self.lits[gid]

    def slack(self, gid: str, hi: int) -> Any:
        """A non-negative slack on a numeric limit (elastic models only; 0 otherwise)."""
        if not self.elastic:
            return 0
        v = self.m.new_int_var(0, max(1, hi), f"slack[{gid}]")
        self.slacks[gid] = v
        return v

    def forbid_options(self, gid: str, path: tuple[Any, ...], text: str, bad: list[Option]) -> None:
        lit = self.group(gid, "policy", path, text)
        if bad:
            self.m.add(sum(self.sel[o.id] for o in bad) == 0).only_enforce_if(lit)

    # --- selection and quote split -------------------------------------------------------------------------
    def add_selection(self, protect: frozenset[str], reduce: bool, usable: Usable | None,
                      quotes: bool = True) -> None:
        """One point; its nodes split over the option's quotes; cost and cash terms of each (see module doc).
        With `reduce`, quotes a point never needs (`reduce.py`) get no variable there, and a quote no point needs
        none at all. With `usable` (optimisation: every group enforced), a big option's quotes that a point cannot
        use — too late for the deadline, a minimum order above its nodes, an estimate where none is allowed — get
        none there either, and the presolve looks only at the quotes some point can use. An explanation model
        solved once under known groups may get `usable` for those groups. Without `quotes` (a skeleton that only
        lists the groups) no quote gets a variable: which groups exist depends on the options, not on the split."""
        self.m.add_exactly_one(self.z)
        zero = self.zero
        for o in self.options:
            idx = self.by_option[o.id]
            if len(o.quotes) == 1:
                self._single_quote(o, idx)
                continue
            if not quotes:
                for q in o.quotes:
                    self.u[q.id], self.x[q.id] = zero, 0
                continue
            among, usable_at = self._usable(o, idx, protect, usable) if reduce else (None, None)
            alone_exact = self.active is not None and r1_holds(self.problem, o, self.active)
            kept = self.screen.reduction(o, [self.points[i] for i in idx], self.unit, protect,
                                         every_limit=self.guard == "fixed", among=among,
                                         alone_exact=alone_exact) if reduce else None
            if kept is None:
                everywhere = np.ones(len(o.quotes), dtype=bool) if among is None else among
                kept = [everywhere] * len(idx)
            needed = np.logical_or.reduce(kept) if kept else np.zeros(len(o.quotes), dtype=bool)
            modelled = needed.tolist()
            for q, m in zip(o.quotes, modelled, strict=True):
                self.u[q.id] = self.m.new_bool_var(f"u[{q.id}]") if m else zero
            for k, i in enumerate(idx):
                here = kept[k] if usable_at is None else kept[k] & usable_at[k]
                self._split(o, i, [o.quotes[j] for j in np.flatnonzero(here)])
            for q, m in zip(o.quotes, modelled, strict=True):
                if not m:
                    self.x[q.id] = 0
                    continue
                xq = sum(v for i in idx if (v := self.y.get((q.id, i))) is not None)
                self.x[q.id] = xq
                self.m.add(xq <= self.max_n * self.u[q.id])
                self.m.add(xq >= max(1, q.min_nodes) * self.u[q.id])
                self.m.add(self.u[q.id] <= self.sel[o.id])

    def _usable(self, o: Option, idx: list[int], protect: frozenset[str], usable: Usable | None
                ) -> tuple[np.ndarray | None, list[np.ndarray] | None]:
        """(a mask of the quotes some point of a big option can use, and protected ones; per point, those it can
        use), or (None, None) when all are modelled: small options, elastic models. `usable` must hold for every
        solve of the model: optimisation (every group enforced), or one solve under a known set of groups."""
        if usable is None or self.elastic or len(o.quotes) < REFINE_FROM:
            return None, None
        masks = [usable(self.points[i]) for i in idx]
        union = np.logical_or.reduce(masks) | np.array([q.id in protect for q in o.quotes])
        if union.all():
            return None, None
        return union, masks

    def _single_quote(self, o: Option, idx: list[int]) -> None:
        """A one-quote option: each point is one plan, charged its cost lines and its lateness in one term, rounded
        up once (`plan_units`)."""
        q = o.quotes[0]
        z, pts = self.z, self.points
        self.x[q.id] = sum(pts[i].n * z[i] for i in idx)
        self.u[q.id] = self.sel[o.id]
        for i in idx:
            pt = pts[i]
            if pt.n < q.min_nodes:
                self.m.add(z[i] == 0)
            cost, cash = plan_units(pt, q.id, self.unit, float(self._alone_late(pt, [q.id])[0]))
            self.cost_terms.append(cost * z[i])
            self.cash_terms.append(cash * z[i])

    def _alone_late(self, pt: Point, used: list[str]) -> np.ndarray:
        """The lateness charge (dollars) of a plan at `pt` using each quote of its option alone (`Outlook.alone`),
        with the delays of the rules that apply there whatever its quotes — and, for a one-quote option, the rules
        that name its quote."""
        return self.outlook.alone(pt.option, pt, rule_delay(self.problem, pt, used))

    def _split(self, o: Option, i: int, quotes: Sequence[Quote]) -> None:
        """Point i's nodes over the quotes modelled there (`y[q, i]`; a quote dropped there has no entry), each
        charged per node, the point's fixed lines once, the lateness of the quotes used together (`add_lateness`).

        A plan that takes all n nodes from one quote — every plan, with one fabric per job and quotes alone on their
        fabrics — is charged its lines and its lateness rounded up once (`plan_units`), as a one-quote option's plan
        is: a Boolean w[q, i] = (y[q, i] = n) takes off what rounding each node (and the lateness apart) up added,
        so the model's resolution is a money unit per plan, not per node (at $1k a node, 56 nodes could tie or
        invert plans $50k apart). An equality: a cost condition must see the cost the plan has."""
        pt, unit = self.points[i], self.unit
        self.cost_terms.append(units(pt.fixed.total_cost, unit) * self.z[i])
        self.cash_terms.append(units(pt.fixed.total_cash, unit) * self.z[i])
        share = []
        late = self._alone_late(pt, []) if quotes else None
        index = {q.id: k for k, q in enumerate(o.quotes)}
        fixed_cost, fixed_cash = units(pt.fixed.total_cost, unit), units(pt.fixed.total_cash, unit)
        for q in quotes:
            v = self.m.new_int_var(0, pt.n, f"y[{q.id}@{pt.n}]")
            self.y[(q.id, i)] = v
            share.append(v)
            per_cost, per_cash = units(pt.per_node.cost(q.id), unit), units(pt.per_node.cash(q.id), unit)
            self.cost_terms.append(per_cost * v)
            self.cash_terms.append(per_cash * v)
            assert late is not None
            alone = float(late[index[q.id]])
            charge = units(alone, unit)
            whole_cost, whole_cash = plan_units(pt, q.id, unit, alone)
            rebate = (fixed_cost + pt.n * per_cost + charge - whole_cost, fixed_cash + pt.n * per_cash - whole_cash)
            if rebate[0] > 0 or rebate[1] > 0:
                w = self._whole_of(q.id, i)
                self.cost_terms.append(-rebate[0] * w)
                self.cash_terms.append(-rebate[1] * w)
            if charge > 0:
                self.late_at.setdefault(q.id, []).append((charge, i))
        self.m.add(sum(share) == pt.n * self.z[i])

    def _whole_of(self, qid: str, i: int) -> Any:
        """w[q, i] = (y[q, i] = n): the plan at point i takes all its nodes from quote q (made on first use; pinned
        both ways)."""
        w = self.whole.get((qid, i))
        if w is None:
            n, v = self.points[i].n, self.y[(qid, i)]
            w = self.whole[(qid, i)] = self.m.new_bool_var(f"whole[{qid}@{n}]")
            self.m.add(v >= n * w)
            self.m.add(v <= n - 1 + w)
        return w

    # --- fabrics ------------------------------------------------------------------------------------------
    def add_fabrics(self) -> None:
        """One job runs on one fabric: the nodes of an option come from quotes on at most `policy.max_fabrics`
        fabrics (group `policy.max_fabrics`; a provider's cluster is a fabric, bought nodes share the site's)."""
        limit = self.spec.policy.max_fabrics
        wide = [o for o in self.options if len(o.fabrics) > limit]
        if not wide:
            return
        lit = self.group("policy.max_fabrics", "policy", ("policy", "max_fabrics"),
                         f"one job on at most {limit} fabric{'s' if limit > 1 else ''}", "fabric", limit)
        for o in wide:
            on: dict[str, Any] = {}
            for q in o.quotes:
                if isinstance(self.u[q.id], int) or self.u[q.id] is self.zero:
                    continue
                f = q.fabric_id
                if f not in on:
                    on[f] = self.m.new_bool_var(f"fabric[{o.id}:{f}]")
                self.m.add(self.u[q.id] <= on[f])
            if len(on) > limit:
                self.m.add(sum(on.values()) <= limit).only_enforce_if(lit)

    # --- calendar ------------------------------------------------------------------------------------------
    def add_calendar(self) -> None:
        """finish = start + days of the chosen point; start ≥ the planned start F, the latest of the floors: the
        earliest start, the option's readiness and every used quote's readiness, each plus the delays of the rules
        that apply (added by `add_adjustments`). F is pinned to that maximum: the timing costs depend on it."""
        m, z, pts = self.m, self.z, self.points
        m.add(self.finish == self.start + sum(pts[i].days * z[i] for i in range(len(pts))))
        delay = sum(self.delays) if self.delays else 0
        floors: list[Any] = [self.earliest_term, sum(o.ready_day * self.sel[o.id] for o in self.options) + delay]
        for o in self.options:
            for q in o.quotes:
                if isinstance(self.u[q.id], int) or self.u[q.id] is self.zero:
                    continue
                rd = option_quote_ready(q, o, self.a)
                if rd > 0:
                    floors.append(rd * self.u[q.id] + delay)
        for f in floors:
            m.add(self.planned >= f)
        m.add(self.start >= self.planned)
        self.floors = floors

    def pin_planned_start(self, priced: bool) -> None:
        """F is the maximum of the floors when a cost depends on it (`add_timing`); otherwise nothing pushes it up
        and the run starts at it (the objective minimises the finish), so F = start is enough."""
        if priced:
            self.m.add_max_equality(self.planned, self.floors)
        else:
            self.m.add(self.planned == self.start)

    def _threshold(self, var: Any, name: str, op: str, v: int) -> Any:
        """A literal equal to `var <= v` (op "le") or `var >= v` (op "ge"), made once per value."""
        key = (name, op, v)
        lit = self.thresholds.get(key)
        if lit is None:
            lit = self.m.new_bool_var(f"{name}_{op}_{v}")
            if op == "le":
                self.m.add(var <= v).only_enforce_if(lit)
                self.m.add(var >= v + 1).only_enforce_if(~lit)
            else:
                self.m.add(var >= v).only_enforce_if(lit)
                self.m.add(var <= v - 1).only_enforce_if(~lit)
            self.thresholds[key] = lit
        return lit

    def add_timing(self) -> None:
        """Waiting bought hardware as a step function of the planned start F (`timing.py`): wait_q,v = Σ_p
        (waitcost_q,p(v) − waitcost_q,p(v⁻)) · nodes_q,p if F ≥ v, else 0, v⁻ the step before v (`_wait_steps`: the
        steps at or before F add up to the wait at F). Equalities, not bounds the objective pushes down, for the
        reason `_add_pct` gives. With the deadline fixed, a point p can only have F ≤ deadline − days_p: later steps
        are left out. (Lateness does not depend on F in the model: rented capacity is used when it arrives, and
        bought hardware's is charged at the quote's own floor, a lower bound the cuts make exact: `add_lateness`.)"""
        sums = delay_sums(self.delay_rules)
        spec, u = self.spec, self.universe
        earliest = u.earliest_day if spec.schedule.earliest_start is not None and u.earliest_day > 0 else None
        timings = {q.id: timing(self.problem, o, q) for o in self.options for q in o.quotes
                   if o.mode == "buy" and not (isinstance(self.u[q.id], int) or self.u[q.id] is self.zero)}
        starts, _lags = candidates(earliest, [o.ready_day for o in self.options],
                                   [t.offset for t in timings.values()], sums)
        waits = 0
        for o in self.options:
            for q in o.quotes:
                t = timings.get(q.id)
                if t is not None and t.order_by is not None:
                    waits += self._wait_steps(o, t, starts)
        self.pin_planned_start(waits > 0)

    def add_lateness(self, cuts: Sequence[LateCut]) -> None:
        """Lateness of a plan on an option of several quotes: the quotes it uses arrive independently and the run
        starts after the last, so its charge is at least each used quote's alone (`Outlook.alone`) — the model
        charges the largest of them — and, for a set of quotes a cut names at a point (a plan found to be charged
        less than its quotes together cost, `solve/pipeline.py`), that set's own figure whenever all of it is used
        there. Equalities again: `late` is the maximum of its terms, each pinned to its figure or to 0."""
        index = {(pt.option.id, pt.n): i for i, pt in enumerate(self.points)}
        by_option: dict[str, list[LateCut]] = {}
        for cut in cuts:
            by_option.setdefault(cut.option, []).append(cut)
        for o in self.options:
            if len(o.quotes) == 1:
                continue
            terms: list[Any] = []
            top = 0
            for q in o.quotes:
                at = self.late_at.get(q.id)
                used = self.u[q.id]
                if not at or isinstance(used, int) or used is self.zero:
                    continue
                hi = max(k for k, _ in at)
                t = self.m.new_int_var(0, hi, f"late[{q.id}]")
                self.m.add(t == sum(k * self.z[i] for k, i in at)).only_enforce_if(used)
                self.m.add(t == 0).only_enforce_if(~used)
                terms.append(t)
                top = max(top, hi)
            for cut in by_option.get(o.id, []):
                i = index.get((cut.option, cut.nodes))
                lits = [x for qid in cut.quotes
                        if (x := self.u.get(qid)) is not None and not isinstance(x, int) and x is not self.zero]
                if i is None or len(lits) < cut.needed:
                    continue
                b = self.m.new_bool_var(f"late_cut[{o.id}@{cut.nodes}]")
                self._pin_and(b, [self.z[i], *cut_literals(self.m, cut, lits)])
                terms.append(cut.units * b)
                top = max(top, cut.units)
            if not terms:
                continue
            late = self.m.new_int_var(0, top, f"late[{o.id}]")
            self.m.add_max_equality(late, [0, *terms])
            self.cost_terms.append(self._late_charge(o, late, top))

    def _late_charge(self, o: Option, late: Any, top: int) -> Any:
        """The variable the option's lateness is charged by: `late` itself when a rule tests the cost (a cost
        condition must see the cost the plan has); otherwise a variable at least `late`, up to the most any of the
        option's points can be charged (`Outlook.late_ceiling`), which a later cut can raise in this very model
        (`add_late_cut`) without a rebuild — the minimisation holds it at the largest of its terms."""
        if any(r.when.cost is not None for r in self.spec.rules):
            self.late[o.id] = late
            return late
        delays = sum(rule_delays(self.problem))   # every rule's delay, as the objective's ceiling counts them
        ceiling = max([top] + [units(self.outlook.late_ceiling(o, pt, self.universe.horizon, delays), self.unit)
                               for pt in self.points if pt.option is o and pt.workable])
        charged = self.m.new_int_var(0, ceiling, f"late_charged[{o.id}]")
        self.m.add(charged >= late)
        self.late[o.id] = charged
        self.raisable[o.id] = ceiling
        return charged

    def _pin_and(self, b: Any, conds: Sequence[Any]) -> None:
        _pin_and(self.m, b, conds)

    def _wait_steps(self, o: Option, t: Timing, starts: list[int]) -> int:
        """The wait costs of one bought quote (see `add_timing`); returns how many steps were added.

        The planned start F is at or past every step v ≤ F, so each step carries what the wait at v adds to the
        wait at the step before (in the model's units, each rounded as a single step's would be): the active steps
        add up to the wait at F exactly. Each step once carried the whole wait at v, and a quote whose order-by date
        passed before several candidate starts was charged its wait at each of them (a $300k node bought 64 days
        early, a second quote ready in between: $342k counted against $334k)."""
        idx = self.by_option[o.id]
        single = len(o.quotes) == 1
        qid = t.quote.id
        added = 0
        dl = self.universe.deadline_day if self.guard == "fixed" else None
        counted: dict[tuple[int, int], int] = {}
        """(point, view) → the units of the wait counted by the steps so far."""
        for v in starts:
            w = wait_of(t, v)
            if w <= 0:
                continue
            live = [i for i in idx if dl is None or v + self.points[i].days <= dl]
            if not live:
                continue
            terms: tuple[list[Any], list[Any]] = ([], [])
            span = [[0, 0], [0, 0]]
            for i in live:
                nodes = self.z[i] if single else self.y.get((qid, i))
                if nodes is None:  # the quote is not modelled at this point (`reduce.py`)
                    continue
                pt = self.points[i]
                for view, k in enumerate(wait_units(pt, t, w, self.unit, single)):
                    step = k - counted.get((i, view), 0)
                    counted[(i, view)] = k
                    if step != 0:
                        terms[view].append(step * nodes)
                        most = step if single else step * pt.n
                        span[view] = [min(span[view][0], most), max(span[view][1], most)]
            if not terms[0] and not terms[1]:
                continue
            ge = self._threshold(self.planned, "F", "ge", v)
            for view in (0, 1):
                if not terms[view]:
                    continue
                lo, hi = span[view]
                extra = self.m.new_int_var(lo, hi, f"wait_{'cash' if view else 'cost'}[{qid}>={v}]")
                self.m.add(extra == sum(terms[view])).only_enforce_if(ge)
                self.m.add(extra == 0).only_enforce_if(~ge)
                (self.cash_adds if view else self.cost_adds).append(extra)
                added += 1
        return added

    def add_schedule(self) -> None:
        spec, u = self.spec, self.universe
        if spec.schedule.earliest_start is not None and u.earliest_day > 0:
            lit = self.group("schedule.earliest_start", "limit", ("schedule", "earliest_start"),
                             f"start on or after {self.problem.earliest_start}", "day", self.problem.earliest_start)
            self.earliest_term = u.earliest_day * lit - self.slack("schedule.earliest_start", u.earliest_day)
        if u.deadline_day is not None:
            lit = self.group("schedule.deadline", "limit", ("schedule", "deadline"),
                             f"finish by {spec.schedule.deadline}", "day", spec.schedule.deadline)
            self.m.add(self.finish <= u.deadline_day + self.slack("schedule.deadline", 2 * self.horizon)
                       ).only_enforce_if(lit)

    # --- policy --------------------------------------------------------------------------------------------
    def add_policy(self) -> None:
        pol = self.spec.policy
        opts = self.options
        self.forbid_options("policy.modes", ("policy", "modes"), f"modes limited to {', '.join(pol.modes)}",
                            [o for o in opts if o.mode not in pol.modes])
        if pol.require_ecc:
            self.forbid_options("policy.require_ecc", ("policy", "require_ecc"), "accelerators must have ECC memory",
                                [o for o in opts if not o.attrs["ecc"]])
        if pol.accelerators.include or pol.accelerators.exclude:
            self.forbid_options("policy.accelerators", ("policy", "accelerators"), "accelerator allow/deny list",
                                [o for o in opts if "policy.accelerators" in self._breaches(o)])
        if pol.vendors.include or pol.vendors.exclude:
            self.forbid_options("policy.vendors", ("policy", "vendors"), "vendor allow/deny list",
                                [o for o in opts if "policy.vendors" in self._breaches(o)])
        if not pol.allow_estimates:
            lit = self.group("policy.allow_estimates", "policy", ("policy", "allow_estimates"), "no estimated prices")
            est = [self.u[q.id] for o in opts for q in o.quotes if q.kind == "estimate"
                   and not isinstance(self.u[q.id], int)]
            if est:
                self.m.add(sum(est) == 0).only_enforce_if(lit)

    def add_preemptible(self) -> None:
        """Spot capacity for a multi-node pretraining run only with `policy.allow_preemptible` (a reclaimed node
        stalls every other node until the job restarts from its last checkpoint). The group exists whenever a spot
        option could be forbidden, whatever node counts the model holds: the explanations list a problem's groups
        from a skeleton model of one point per option (`PairOracle.all_groups`), and a single-node skeleton point
        must not hide the group from them."""
        pol = self.spec.policy
        if pol.allow_preemptible or self.spec.workload.method not in PRETRAINING or \
                not any(o.preemptible for o in self.options):
            return
        lit = self.group("policy.allow_preemptible", "policy", ("policy", "allow_preemptible"),
                         "no spot capacity for multi-node pretraining")
        bad = [self.z[i] for i, pt in enumerate(self.points) if preemptible_forbidden(self.spec, pt)]
        if bad:
            self.m.add(sum(bad) == 0).only_enforce_if(lit)

    def _breaches(self, o: Option) -> set[str]:
        return {g for item in self.screen.facts(o).breaches for g in item}

    # --- site ----------------------------------------------------------------------------------------------
    def add_site(self) -> None:
        """Bought hardware only: cooling, IT power, racks (physical, and as rack power allows)."""
        site = self.spec.site
        buy = [o for o in self.options if o.mode == "buy"]
        if site is None or not buy:
            return
        m, z, pts = self.m, self.z, self.points
        idx = [i for o in buy for i in self.by_option[o.id]]
        self.forbid_options("site.cooling", ("site", "cooling"), f"site cools {', '.join(site.cooling)}",
                            [o for o in buy if o.system.cooling not in site.cooling])
        lit_p = self.group("site.it_power_kw", "limit", ("site", "it_power_kw"), f"IT power {site.it_power_kw:g} kW",
                           "kW", site.it_power_kw)
        self.power_w = sum(math.ceil(pts[i].power_kw * 1000 - 1e-6) * z[i] for i in idx)
        hi_w = max((math.ceil(pts[i].power_kw * 1000) for i in idx), default=1)
        m.add(self.power_w <= int(math.floor(site.it_power_kw * 1000 + 1e-6)) + self.slack("site.it_power_kw", hi_w)
              ).only_enforce_if(lit_p)
        lit_rp = self.group("site.rack_power_kw", "limit", ("site", "rack_power_kw"),
                            f"{site.rack_power_kw:g} kW per rack", "kW", site.rack_power_kw)
        too_hot = [o for o in buy if float(o.system.node_kw.value) > site.rack_power_kw]
        if too_hot:
            m.add(sum(self.sel[o.id] for o in too_hot) == 0).only_enforce_if(lit_rp)
        lit_r = self.group("site.racks", "limit", ("site", "racks"), f"{site.racks} racks", "rack", site.racks)
        hi_r = max((pts[i].racks_with_power or pts[i].racks_physical for i in idx), default=1)
        s_r = self.slack("site.racks", hi_r)
        m.add(sum(pts[i].racks_physical * z[i] for i in idx) <= site.racks + s_r).only_enforce_if(lit_r)
        self.racks = sum((pts[i].racks_with_power or 0) * z[i] for o in buy if o not in too_hot
                         for i in self.by_option[o.id])
        m.add(self.racks <= site.racks + s_r).only_enforce_if([lit_r, lit_rp])

    # --- the deadline's confidence ----------------------------------------------------------------------------
    def add_deadline_confidence(self, cuts: Sequence[ChanceCut]) -> None:
        """start ≤ F*(point, quote) for the chosen point and each quote it uses (`estimate/chance.py`): a necessary
        condition of finishing by the deadline in a share c of the scenarios; plus the cuts of plans whose quotes,
        taken jointly, missed it (`solve/cuts.py`). A quote with no nodes variable at a point (the presolve or
        the bounds left it out there) cannot be used with that point, so it needs no constraint there."""
        chance = self.screen.chance
        if chance is None:
            return
        lit = self.group("policy.deadline_confidence", "limit", ("policy", "deadline_confidence"),
                         f"finish by the deadline in {chance.confidence:.0%} of the risk scenarios", "share",
                         chance.confidence)
        index = {(pt.option.id, pt.n): i for i, pt in enumerate(self.points)}
        for i, pt in enumerate(self.points):
            single = len(pt.option.quotes) == 1
            usable = [q for q in pt.option.quotes if self._used(q.id) is not None
                      and (single or (q.id, i) in self.y)]
            for qs in quote_sets(usable):
                self._latest_start([self.z[i], *(self._used(q.id) for q in qs)],
                                   chance.latest_start(pt.option, pt, qs), lit)
        for cut in cuts:
            at = index.get((cut.option, cut.nodes))
            if at is not None and all(qid in self.u and self._used(qid) is not None for qid in cut.quotes):
                self._latest_start([self.z[at], *(self._used(qid) for qid in cut.quotes)], cut.latest_start, lit)

    def _used(self, qid: str) -> Any:
        """The literal "quote qid is used", True when its option has no other quote (the point implies it), None
        when it cannot be (dropped as dominated)."""
        used = self.u[qid]
        if used is self.zero or (isinstance(used, int) and used == 0):
            return None
        return used if isinstance(used, cp_model.IntVar) else True

    def _latest_start(self, conds: list[Any], latest: int | None, lit: Any) -> None:
        """start ≤ latest when every condition holds; the conditions cannot all hold when there is no latest."""
        conds = [c for c in conds if c is not True]
        if latest is None:
            self.m.add_bool_or([~c for c in conds]).only_enforce_if(lit)
        elif latest < self.horizon:
            self.m.add(self.start <= latest).only_enforce_if([*conds, lit])

    # --- memory and capacity -------------------------------------------------------------------------------
    def add_memory(self) -> None:
        lit = self.group("workload.memory", "fit", ("workload",), "model states + activations fit in memory")
        unfit = [self.z[i] for i, pt in enumerate(self.points) if not pt.fits]
        if unfit:
            self.m.add(sum(unfit) == 0).only_enforce_if(lit)

    def add_capacity(self) -> None:
        for o in self.options:
            for q in o.quotes:
                gid = capacity_group(q.id)
                lit = self.group(gid, "capacity", ("quotes", q.id, "max_nodes"),
                                 f"{q.id} can supply at most {q.max_nodes} nodes", "node", q.max_nodes)
                if q.max_nodes < self.max_n and not isinstance(self.x[q.id], int):
                    self.m.add(self.x[q.id] <= q.max_nodes + self.slack(gid, self.max_n)).only_enforce_if(lit)

    # --- rules ---------------------------------------------------------------------------------------------
    def add_adjustments(self) -> None:
        """Rules that adjust cost, the calendar or throughput; each rule is the group `rules.<name>`."""
        self._add_rules(adjust=True)

    def add_conditions(self) -> None:
        """Rules that forbid or require, added after every cost term (adjustments, delivery timing), so that a cost
        condition sees the whole cost the checker sees."""
        self._add_rules(adjust=False)

    def _add_rules(self, *, adjust: bool) -> None:
        for r_i, rule in enumerate(self.spec.rules):
            if isinstance(rule.then, Adjust) != adjust:
                continue
            lit = self.group(rule_group(rule.name), "rule", ("rules", r_i), rule.note or rule.name)
            match = [i for i, pt in enumerate(self.points) if matches_attrs(rule.when, pt.option.attrs)
                     and matches_point(rule.when, pt.gpus, pt.n, pt.days, pt.power_kw)]
            qids = quote_ids(rule.when)
            named = [q.id for o in self.options for q in o.quotes if q.id in qids] if qids is not None else None
            if isinstance(rule.then, Adjust):
                self._adjust(rule, rule.then, lit, match, named)
            elif rule.then == "forbid":
                self._forbid(rule, lit, match, named)
            else:
                self._require(rule, lit, match, named)

    def _applies(self, rule: Rule, match: list[int], named: list[str] | None) -> Any:
        """An expression equal to "the rule applies to the chosen plan": a matching point is chosen (the sum of
        their literals, exactly one of which can be 1) and, for a rule that names quotes, one of them is used (a
        Boolean tied to both)."""
        in_match = sum(self.z[i] for i in match)
        if named is None:
            return in_match
        b = self.m.new_bool_var(f"applies[{rule.name}]")
        used = [self.u[qid] for qid in named]
        self.m.add(b <= in_match)
        self.m.add(b <= sum(used))
        for uq in used:
            self.m.add(b >= in_match + uq - 1)
        return b

    def _adjust(self, rule: Rule, then: Adjust, lit: Any, match: list[int], named: list[str] | None) -> None:
        if not match or named == []:
            return
        gid = rule_group(rule.name)
        applies = self._applies(rule, match, named)
        if then.add_usd:
            k = units(then.add_usd, self.unit)
            r = self.m.new_int_var(0, k, f"add_usd[{gid}]")
            self.m.add(r == k * applies).only_enforce_if(lit)
            if self.guard == "assume":
                self.m.add(r == 0).only_enforce_if(~lit)
            self.cost_adds.append(r)
            self.cash_adds.append(r)
        if then.add_pct:
            self._add_pct(gid, then.add_pct, lit, match, None if named is None else applies)
        if then.delay_days:
            d = delay_days(then)
            e = self.m.new_int_var(0, d, f"delay[{gid}]")
            self.m.add(e == d * applies).only_enforce_if(lit)
            if self.guard == "assume":
                self.m.add(e == 0).only_enforce_if(~lit)
            self.delays.append(e)
            self.delay_rules.append(d)

    def _add_pct(self, gid: str, pct: float, lit: Any, match: list[int], applies: Any | None) -> None:
        """A percentage of the chosen point's cost lines (not of the slip premium), rounded up term by term.

        The terms are zero unless a matching point is chosen, so a rule without a quote condition needs no other
        condition; one that names quotes applies only when `applies` (a named quote is used). A percentage may be
        negative (a preference), so outside those conditions the surcharge is held at zero.

        Stated as equalities, not as a bound the objective pushes down: with `r ≥ Σ terms` the search could settle
        a plan with the surcharge above its terms and then improve it one unit per solution — a random problem's
        cheaper neighbour took 46 s over 51,879 solutions (0.03 deterministic seconds), its 20 % rebate walked down
        a dollar at a time. An equality also keeps a cost condition (`when: cost`) from being met by a surcharge no
        plan pays."""
        terms: list[Any] = []
        hi = 0
        for i in match:
            pt = self.points[i]
            if len(pt.option.quotes) == 1:
                q = pt.option.quotes[0]
                k = units((pt.fixed.total_cost + pt.n * pt.per_node.cost(q.id)) * pct / 100.0, self.unit)
                terms.append(k * self.z[i])
                hi = max(hi, abs(k))
            else:
                k0 = units(pt.fixed.total_cost * pct / 100.0, self.unit)
                terms.append(k0 * self.z[i])
                ks = [units(pt.per_node.cost(q.id) * pct / 100.0, self.unit) for q in pt.option.quotes]
                terms += [k * v for k, q in zip(ks, pt.option.quotes, strict=True)
                          if (v := self.y.get((q.id, i))) is not None]
                for k, q in zip(ks, pt.option.quotes, strict=True):   # a whole plan's percentage rounded once
                    if (q.id, i) not in self.y:
                        continue
                    once = units((pt.fixed.total_cost + pt.n * pt.per_node.cost(q.id)) * pct / 100.0, self.unit)
                    if once != k0 + pt.n * k:
                        terms.append((once - k0 - pt.n * k) * self._whole_of(q.id, i))
                    hi = max(hi, abs(once))   # rounded once, a discount can exceed its per-node terms' sum
                hi = max(hi, abs(k0) + pt.n * max(abs(k) for k in ks) + 1)
        r = self.m.new_int_var(-hi, hi, f"add_pct[{gid}]")
        if applies is None:
            self.m.add(r == sum(terms)).only_enforce_if(lit)
        else:
            self.m.add(r == sum(terms)).only_enforce_if([lit, applies])
            self.m.add(r == 0).only_enforce_if(~applies)
        if self.guard == "assume":
            self.m.add(r == 0).only_enforce_if(~lit)
        self.cost_adds.append(r)

    def _forbid(self, rule: Rule, lit: Any, match: list[int], named: list[str] | None) -> None:
        if rule.when.cost is not None:
            b = self.m.new_bool_var(f"match[{rule_group(rule.name)}]")
            self.m.add(b == sum(self.z[i] for i in match)) if match else self.m.add(b == 0)
            self._cost_bound(rule.when.cost, negate=True, lits=[lit, b])
        elif named is not None:
            for i in match:
                for q in self.points[i].option.quotes:
                    if q.id in named:
                        if len(self.points[i].option.quotes) == 1:
                            self.m.add(self.z[i] == 0).only_enforce_if(lit)
                        elif (q.id, i) in self.y:  # a multi-quote point without the quote has none of its nodes
                            self.m.add(self.y[(q.id, i)] == 0).only_enforce_if([lit, self.z[i]])
        elif match:
            self.m.add(sum(self.z[i] for i in match) == 0).only_enforce_if(lit)

    def _require(self, rule: Rule, lit: Any, match: list[int], named: list[str] | None) -> None:
        self.m.add(sum(self.z[i] for i in match) == 1).only_enforce_if(lit)
        if named is not None:
            self.m.add(sum(self.u[qid] for qid in named) >= 1).only_enforce_if(lit)
        if rule.when.cost is not None:
            self._cost_bound(rule.when.cost, negate=False, lits=[lit])

    def _cost_bound(self, cmp: Comparison, *, negate: bool, lits: list[Any]) -> None:
        """A single-operator cost comparison (or its negation) in money units, enforced by `lits`. Costs in the
        model are rounded up to the unit: thresholds are compared as whole units."""
        ops = [(k, getattr(cmp, k)) for k in ("gt", "ge", "lt", "le", "eq") if getattr(cmp, k) is not None]
        if len(ops) != 1:
            raise ValueError("a cost condition takes exactly one operator")
        op, v = ops[0]
        if negate:
            op = {"gt": "le", "ge": "lt", "lt": "ge", "le": "gt", "eq": "ne"}[op]
        cost = self.cost_expr()
        k_floor, k_ceil = floor_units(v, self.unit), int(math.ceil(v / self.unit - 1e-9))
        constraint = {"le": lambda: cost <= k_floor, "lt": lambda: cost <= k_ceil - 1, "ge": lambda: cost >= k_ceil,
                      "gt": lambda: cost >= k_floor + 1, "eq": lambda: cost == k_ceil,
                      "ne": lambda: cost != k_ceil}[op]()
        self.m.add(constraint).only_enforce_if(lits)

    # --- money ---------------------------------------------------------------------------------------------
    def cost_expr(self) -> Any:
        return sum(self.cost_terms) + sum(self.cost_adds)

    def cash_expr(self) -> Any:
        return sum(self.cash_terms) + sum(self.cash_adds)

    def add_budget(self, cost_hi: int) -> None:
        """Cash (or cost) at most the budget, after every rule has added its surcharges."""
        budget = self.spec.budget
        if budget.max_usd is None:
            return
        lit = self.group("budget.max_usd", "limit", ("budget", "max_usd"),
                         f"{budget.applies_to} at most ${budget.max_usd:,.0f}", "usd", budget.max_usd)
        expr = self.cash_expr() if budget.applies_to == "cash" else self.cost_expr()
        self.m.add(expr <= floor_units(budget.max_usd, self.unit) + self.slack("budget.max_usd", cost_hi + 1)
                   ).only_enforce_if(lit)


def add_late_cut(b: Built, cut: LateCut) -> bool:
    """Add a lateness cut to a built model (`_late_charge`): a plan at the cut's point using all its quotes is
    charged at least its units. False when this model cannot take it so (a rebuild then adds it with the rest)."""
    if cut.option not in b.raisable:
        return False
    i = next((k for k, pt in enumerate(b.points) if pt.option.id == cut.option and pt.n == cut.nodes), None)
    lits = [b.u.get(qid) for qid in cut.quotes]
    if any(x is None for x in lits):
        return False
    lits = [x for x in lits if not (isinstance(x, int) and x == 0)]   # quotes this model cannot use
    if i is None or len(lits) < cut.needed:
        return True   # a point this model leaves out, or too few quotes it can use: the cut never applies here
    if cut.units > b.raisable[cut.option]:
        return False
    m = b.model
    on = m.new_bool_var(f"late_cut[{cut.option}@{cut.nodes}]")
    _pin_and(m, on, [b.z[i], *cut_literals(m, cut, lits)])
    m.add(b.late[cut.option] >= cut.units * on)
    return True


def cut_literals(m: Any, cut: LateCut, lits: Sequence[Any]) -> list[Any]:
    """The conditions on quotes under which `cut` applies (`lits`: the quotes' use literals, 1 for one every plan
    uses): each of them used; for a pool cut (`LateCut.at_least` k), one literal that is true exactly when k or
    more of them are used."""
    live = [x for x in lits if not isinstance(x, int)]
    if not cut.at_least or cut.at_least >= len(lits):
        return live
    need = cut.at_least - (len(lits) - len(live))     # quotes every plan uses count already
    if need <= 0:
        return []
    many = m.new_bool_var(f"late_pool[{cut.option}@{cut.nodes}>={cut.at_least}]")
    m.add(sum(live) >= need).only_enforce_if(many)
    m.add(sum(live) <= need - 1).only_enforce_if(~many)
    return [many]


def _pin_and(m: Any, b: Any, conds: Sequence[Any]) -> None:
    """b = the conjunction of `conds`, both ways."""
    for c in conds:
        m.add(b <= c)
    m.add(b >= sum(conds) - (len(conds) - 1))


def plan_units(pt: Point, qid: str, unit: int, late_usd: float = 0.0) -> tuple[int, int]:
    """(cost, cash) in money units of the plan at `pt` that takes all its nodes from quote `qid`: its fixed and
    per-node lines and its lateness charge alone, each total rounded up once (the model's charge of such a plan;
    `solve/brute.py`, the bounds and the presolve count it the same way)."""
    return (units(pt.fixed.total_cost + pt.n * pt.per_node.cost(qid) + late_usd, unit),
            units(pt.fixed.total_cash + pt.n * pt.per_node.cash(qid), unit))


def model_points(universe: Universe, screen: Screen, *, prune: bool,
                 keep: set[tuple[str, int]] | None = None) -> list[Point]:
    """The points a model is built over: workable ones, limited to `keep`, without the screened-out ones when
    pruning (optimisation only; explanations need every point)."""
    return [pt for o in universe.options for pt in o.points if pt.workable
            and (keep is None or pt.key in keep) and not (prune and screen.excluded(pt))]


def build(problem: Problem, universe: Universe, screen: Screen, unit: int, *, guard: Guard = "fixed",
          prune: bool | None = None, elastic: bool = False, keep: set[tuple[str, int]] | None = None,
          cost_hi: int | None = None, protect: frozenset[str] = frozenset(),
          cuts: Sequence[ChanceCut] = (), reduce: bool = True, groups_only: bool = False,
          usable: Usable | None = None, active: frozenset[str] | None = None,
          late_cuts: Sequence[LateCut] = ()) -> Built:
    """Build the model.

    `guard='assume'` makes every group literal a free Boolean for explanations; `elastic=True` gives every numeric
    limit a slack variable (`Built.slacks`) for feasRelax-style repairs; `keep` limits the points to those keys
    (bound-pruned solves); `cost_hi` overrides the objective's cost ceiling (see `objective.py`); quotes in
    `protect` are never dropped as dominated (a why-not question forces them to be used); `reduce=False` models
    every quote at every point (the reduction's tests compare both); `usable` leaves out, at each point of a big
    option, the quotes no plan there can use (optimisation models only); `groups_only` leaves out the quotes' split
    and the delivery timing, which make no group (a skeleton built to list the groups, never solved); `active`, for
    an explanation model solved once under exactly those groups, lets the presolve use what they enforce
    (`reduce.r1_holds`).
    """
    prune = (guard == "fixed") if prune is None else prune
    points = model_points(universe, screen, prune=prune, keep=keep)
    b = _Builder(problem, universe, screen, unit, guard, elastic, points, None if elastic else active)
    b.add_selection(protect, reduce, usable, quotes=not groups_only)
    b.add_lateness(late_cuts)
    b.add_fabrics()
    b.add_schedule()
    b.add_policy()
    b.add_preemptible()
    b.add_site()
    b.add_memory()
    b.add_capacity()
    b.add_adjustments()
    b.add_calendar()
    if not groups_only:
        b.add_timing()
    b.add_deadline_confidence(cuts)
    b.add_conditions()
    if cost_hi is None and groups_only:
        cost_hi = 0  # a skeleton is never solved, and only an elastic model's slacks read the ceiling
    if cost_hi is None:
        cost_hi = universe_ceiling(problem, universe, unit, screen.outlook) if needs_ceiling(problem) else \
            model_ceiling(problem, points, unit, screen.outlook, universe.horizon)
    b.add_budget(cost_hi)
    return Built(b.m, universe, points, unit, b.groups, b.lits, b.z, b.sel, b.x, b.u, b.y, b.start, b.finish,
                 b.planned, b.cost_expr(), b.cash_expr(), sum(i * zi for i, zi in enumerate(b.z)), cost_hi, b.power_w,
                 b.racks, b.slacks, b.late, b.raisable)
