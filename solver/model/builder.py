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

The larger families are modules of their own, functions taking the builder (typed by `builder_state.BuilderState`,
since they cannot import this module): lateness (`lateness.py`), the calendar and delivery timing
(`planned_start.py`), the deadline's confidence (`deadline_confidence.py`) and the rules (`rule_constraints.py`).
The others are methods of `_Builder` here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ..estimate.chance import ChanceCut
from ..estimate.options import Option, Point, Universe
from ..estimate.outlook import LateCut, rule_delay
from ..inputs.catalog import Quote
from ..inputs.problem import Problem
from .bounds import REFINE_FROM
from .cpsat import Model, cp_model
from .deadline_confidence import add_deadline_confidence
from .groups import Group, GroupKind, capacity_group
from .lateness import _pin_and, add_lateness, cut_literals
from .money import floor_units, units
from .objective import model_ceiling, needs_ceiling, universe_ceiling
from .planned_start import add_calendar, add_timing
from .reduce import r1_holds
from .rule_constraints import add_adjustments, add_conditions
from .screening import PRETRAINING, Screen, preemptible_forbidden

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
                self._split(o, i, np.flatnonzero(here).tolist())
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

    def _split(self, o: Option, i: int, modelled: Sequence[int]) -> None:
        """Point i's nodes over the quotes modelled there (`modelled`: their places in `o.quotes`; `y[q, i]`; a quote
        dropped there has no entry), each charged per node, the point's fixed lines once, the lateness of the quotes
        used together (`add_lateness`).

        A plan that takes all n nodes from one quote — every plan, with one fabric per job and quotes alone on their
        fabrics — is charged its lines and its lateness rounded up once (`plan_units`), as a one-quote option's plan
        is: a Boolean w[q, i] = (y[q, i] = n) takes off what rounding each node (and the lateness apart) up added,
        so the model's resolution is a money unit per plan, not per node (at $1k a node, 56 nodes could tie or
        invert plans $50k apart). An equality: a cost condition must see the cost the plan has."""
        pt, unit = self.points[i], self.unit
        self.cost_terms.append(units(pt.fixed.total_cost, unit) * self.z[i])
        self.cash_terms.append(units(pt.fixed.total_cash, unit) * self.z[i])
        share = []
        late = self._alone_late(pt, []) if modelled else None
        fixed_cost, fixed_cash = units(pt.fixed.total_cost, unit), units(pt.fixed.total_cash, unit)
        for j in modelled:
            q = o.quotes[j]
            v = self.m.new_int_var(0, pt.n, f"y[{q.id}@{pt.n}]")
            self.y[(q.id, i)] = v
            share.append(v)
            per_cost, per_cash = units(pt.per_node.cost(q.id), unit), units(pt.per_node.cash(q.id), unit)
            self.cost_terms.append(per_cost * v)
            self.cash_terms.append(per_cash * v)
            assert late is not None
            alone = float(late[j])
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

    # --- schedule limits -----------------------------------------------------------------------------------
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
    add_lateness(b, late_cuts)
    b.add_fabrics()
    b.add_schedule()
    b.add_policy()
    b.add_preemptible()
    b.add_site()
    b.add_memory()
    b.add_capacity()
    add_adjustments(b)
    add_calendar(b)
    if not groups_only:
        add_timing(b)
    add_deadline_confidence(b, cuts)
    add_conditions(b)
    if cost_hi is None and groups_only:
        cost_hi = 0  # a skeleton is never solved, and only an elastic model's slacks read the ceiling
    if cost_hi is None:
        cost_hi = universe_ceiling(problem, universe, unit, screen.outlook) if needs_ceiling(problem) else \
            model_ceiling(problem, points, unit, screen.outlook, universe.horizon)
    b.add_budget(cost_hi)
    return Built(b.m, universe, points, unit, b.groups, b.lits, b.z, b.sel, b.x, b.u, b.y, b.start, b.finish,
                 b.planned, b.cost_expr(), b.cash_expr(), sum(i * zi for i, zi in enumerate(b.z)), cost_hi, b.power_w,
                 b.racks, b.slacks, b.late, b.raisable)
