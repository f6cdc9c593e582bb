"""The CP-SAT model: choose one (option, node count) point and the quotes that supply its nodes.

Modelling (see `../shared/reference/cp-sat-notes.md` §1.4):
- `z[p]` one-hot over points (an option at a node count); everything that depends on the node count —
  memory fit, days, power, racks, cost coefficients — is a constant of the point computed in Python.
- Nodes come from the option's quotes. One quote: it supplies all n nodes. Several quotes of the same
  system and mode: `y[q,p]` nodes from quote q when point p is chosen, Σ_q y[q,p] = n_p·z[p], so each quote's
  per-node cost (which depends on the run length of p) stays linear. `u[q]` marks a quote used; the cluster
  starts when the last used quote's capacity is ready.
- Every user-facing limit is a *guarded group*: its constraints are enforced by one literal named after the
  YAML path (`budget.max_usd`, `site.it_power_kw`, `rules.<name>`, `quotes.<id>.max_nodes`, …). Solving fixes
  the literals true; explanations pass them as assumptions. No user limit is hidden in a variable domain.
- Money is integer in `unit` dollars: $1,000 (a coarse unit keeps coefficients far from the int overflow
  behind google/or-tools#5293) or $1 for problems whose scale is under $1M, where $1k would erase the
  answer. Every cost term is rounded **up** to the unit, so the model never accepts a plan whose exact
  dollar cost exceeds the budget; the report shows exact dollars from the independent checker.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal

from .cpsat import Model, cp_model

from .assumptions import Assumptions
from .cost import slip_premium
from .errors import InputError
from .catalog import Quote
from .options import Option, Point, Universe, quote_ready_day
from .problem import CostObjective, LoadedProblem
from .rules import matches_attrs, matches_point, quote_ids

MoneyUnit = int


@dataclass
class Group:
    """A named, guarded constraint group: the unit of explanations."""

    id: str
    kind: Literal["limit", "policy", "rule", "capacity", "fit"]
    yaml_path: tuple[Any, ...]
    text: str
    unit: str | None = None
    value: Any = None


@dataclass
class Built:
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
    y: dict[tuple[str, int], cp_model.IntVar]
    start: cp_model.IntVar
    finish: cp_model.IntVar
    cost: Any
    cash: Any
    rank: Any
    cost_hi: int = 0
    power_w: Any = 0
    racks: Any = 0
    slacks: dict[str, Any] = field(default_factory=dict)
    option_index: dict[str, int] = field(default_factory=dict)
    pair_lits: dict[str, Any] = field(default_factory=dict)


def money_unit(lp: LoadedProblem, universe: Universe) -> int:
    """$1k when the problem's scale is $1M or more, $1 below (where $1k would erase the answer).

    The scale is the cheapest point that fits in memory and can meet the deadline: what realistic plans
    cost. Not the budget — a $500k budget on a $10M problem is still a $1k-resolution problem — and not the
    cheapest point overall, which for a big model is some absurd one-card, ten-year run.
    """
    dl = universe.deadline_day
    costs = [pt.fixed.total_cost + pt.n * pt.per_node.extreme(False, min)
             for o in universe.options for pt in o.points
             if pt.workable and pt.fits and (dl is None or max(o.ready_day, universe.earliest_day) + pt.days <= dl)]
    if not costs:
        costs = [pt.fixed.total_cost + pt.n * pt.per_node.extreme(False, min)
                 for o in universe.options for pt in o.points if pt.workable]
    return 1000 if min(costs, default=1e9) >= 1e6 else 1


MAX_UNITS = 10 ** 15


def units(dollars: float, unit: int) -> int:
    """Round up to the money unit (conservative: the model never under-counts a cost).

    Amounts beyond 1e15 units cannot be planned with exactly (CP-SAT is int64, and sums of such terms would
    overflow): they are bad input — absurd prices or assumptions — not a model to build.
    """
    v = dollars / unit
    if not math.isfinite(v) or abs(v) > MAX_UNITS:
        raise InputError(f"a cost of ${dollars:.3g} is too large to plan with; check prices, rates and risk "
                         "overrides for absurd values")
    return int(math.ceil(v - 1e-9))


_MEMORY = frozenset({"workload.memory"})
_DEADLINE = frozenset({"schedule.deadline"})
_DEADLINE_START = frozenset({"schedule.deadline", "schedule.earliest_start"})
_RACK_POWER = frozenset({"site.rack_power_kw"})
_RACKS_POWER = frozenset({"site.racks", "site.rack_power_kw"})
_RACKS = frozenset({"site.racks"})
_POWER = frozenset({"site.it_power_kw"})


def _option_violations(o: Option, lp: LoadedProblem, a: Assumptions) -> tuple[list[frozenset[str]], int, list[Any],
                                                                             tuple[int, frozenset[str]], bool]:
    """The node-count-independent part of `point_violations`, computed once per option."""
    p = lp.problem
    pol = p.policy
    out: list[frozenset[str]] = []
    if o.mode not in pol.modes:
        out.append(frozenset({"policy.modes"}))
    if pol.require_ecc and not o.accel.ecc.value:
        out.append(frozenset({"policy.require_ecc"}))
    inc = {s.lower() for s in pol.accelerators.include}
    if (inc and o.accel.id not in inc) or o.accel.id in {s.lower() for s in pol.accelerators.exclude}:
        out.append(frozenset({"policy.accelerators"}))
    vinc = {s.lower() for s in pol.vendors.include}
    if (vinc and o.accel.vendor not in vinc) or o.accel.vendor in {s.lower() for s in pol.vendors.exclude}:
        out.append(frozenset({"policy.vendors"}))
    if not pol.allow_estimates and all(q.kind == "estimate" for q in o.quotes):
        out.append(frozenset({"policy.allow_estimates"}))
    if o.mode == "buy" and p.site is not None and o.system.cooling not in p.site.cooling:
        out.append(frozenset({"site.cooling"}))
    first = max(o.ready_day, min(quote_ready_day(q, o, a) for q in o.quotes))
    forbids = [r for r in p.rules if r.then == "forbid" and r.when.cost is None and r.when.quote is None
               and matches_attrs(r.when, o.attrs)]
    capacity = (sum(q.max_nodes for q in o.quotes), frozenset(f"quotes.{q.id}.max_nodes" for q in o.quotes))
    # With a negative % surcharge a plan can cost less than its lines: then the budget is not a point-local proof.
    budget_exact = p.budget.max_usd is not None and not any(
        not isinstance(r.then, str) and (r.then.add_pct or 0) < 0 for r in p.rules)
    return out, first, forbids, capacity, budget_exact


def _capacitated_budget_items(pt: Point, lp: LoadedProblem, a: Assumptions, universe: Universe, fixed: float,
                              cash: bool) -> list[frozenset[str]]:
    """Budget reasoning over the quotes a point can really use.

    The cheapest split fills the cheapest quotes first (an exact lower bound for a linear cost with box limits;
    min_nodes and rule delays are ignored, which only makes the bound optimistic). With the deadline enforced, a
    quote whose capacity arrives too late for this point to finish in time cannot be used at all. An item lists
    exactly the groups the bound relied on: the budget, the deadline (and earliest start) if they removed quotes,
    and the capacities the greedy fill exhausted.
    """
    p = lp.problem
    o = pt.option
    limit = p.budget.max_usd
    assert limit is not None
    out: list[frozenset[str]] = []
    variants: list[tuple[frozenset[str], int | None]] = [(frozenset(), None)]
    if universe.deadline_day is not None:
        variants.append((frozenset({"schedule.deadline"}), 0))
        if p.schedule.earliest_start is not None:
            variants.append((frozenset({"schedule.deadline", "schedule.earliest_start"}), universe.earliest_day))
    for base, earliest in variants:
        usable = o.quotes
        if earliest is not None:
            usable = [q for q in o.quotes
                      if max(o.ready_day, quote_ready_day(q, o, a), earliest) + pt.days <= universe.deadline_day]  # type: ignore[operator]
        ranked = sorted((pt.per_node.total(q.id, cash), q.id, q.max_nodes)
                        for q in usable)
        if not ranked:
            if base:
                out.append(frozenset(base))
            continue
        # bound_k: the k cheapest quotes filled to their capacity, the rest at the (k+1)-th quote's price with its
        # capacity not enforced. Non-decreasing in k; the first k over budget needs only those k capacities.
        rest, spend = pt.n, fixed
        for k, (l, qid, cap) in enumerate(ranked):
            if spend + rest * l > limit:
                out.append(frozenset(base | {"budget.max_usd"} | {f"quotes.{r[1]}.max_nodes" for r in ranked[:k]}))
                break
            take = min(rest, cap)
            spend += take * l
            rest -= take
            if rest == 0:
                break
        else:
            if base:
                out.append(frozenset(base | {f"quotes.{q.id}.max_nodes" for q in usable}))
    return out


def point_violations(pt: Point, lp: LoadedProblem, a: Assumptions, universe: Universe,
                     unit: int, *, capacitated: bool = True) -> list[frozenset[str]]:
    """Point-local reasons a point can never be chosen: each item is a set of groups that, all enforced,
    exclude the point whatever else is decided (Python presolve and cheap explanations).

    Only exact checks live here: a point listed as violating `site.it_power_kw` draws more than the limit,
    one violating `schedule.deadline` cannot finish in time even starting the day its hardware is ready.
    Results are cached per point (the problem and universe are fixed for a point's lifetime).
    `capacitated=False` skips the budget items that reason over quote capacities (the costly part, needed only
    to explain) and is not cached.
    """
    if pt.violations is not None:
        return pt.violations
    o = pt.option
    if o.static_violations is None:
        o.static_violations = _option_violations(o, lp, a)
    static, first, forbids, capacity, budget_exact = o.static_violations
    p = lp.problem
    out = list(static)
    if not pt.fits:
        out.append(_MEMORY)
    if pt.n > capacity[0]:
        out.append(capacity[1])
    if universe.deadline_day is not None:
        if first + pt.days > universe.deadline_day:
            out.append(_DEADLINE)
        elif p.schedule.earliest_start is not None and max(first, universe.earliest_day) + pt.days > universe.deadline_day:
            out.append(_DEADLINE_START)
    site = p.site
    if o.mode == "buy" and site is not None:
        if pt.racks_with_power is None:
            out.append(_RACK_POWER)
        elif pt.racks_with_power > site.racks:
            out.append(_RACKS_POWER if pt.racks_physical <= site.racks else _RACKS)
        if pt.power_kw > site.it_power_kw + 1e-9:
            out.append(_POWER)
    if out and not capacitated:
        return out  # excluded already: spare pricing the point
    if budget_exact and p.budget.max_usd is not None:
        cash = p.budget.applies_to == "cash"
        fixed = pt.fixed.total_cash if cash else pt.fixed.total_cost
        per = pt.per_node.extreme(cash, min)
        if fixed + pt.n * per > p.budget.max_usd:
            out.append(frozenset({"budget.max_usd"}))
        elif len(o.quotes) > 1 and capacitated:
            out += _capacitated_budget_items(pt, lp, a, universe, fixed, cash)
    for rule in forbids:
        if matches_point(rule.when, pt.gpus, pt.n, pt.days, pt.power_kw):
            out.append(frozenset({f"rules.{rule.name}"}))
    if capacitated:
        pt.violations = out
    return out


def dominated_quotes(o: Option, pts: list[Point], lp: LoadedProblem, a: Assumptions,
                     protect: frozenset[str] = frozenset()) -> set[str]:
    """Quotes another quote of the same option beats on everything (Python presolve, optimisation only).

    q is dominated by d when d alone can supply any point of the option (capacity at least the largest node count,
    min_nodes no larger than q's), is ready no later, has no larger slip premium, is no dearer per node at every
    point (cost and cash), is not an estimate unless q is, and no rule names either: then moving q's nodes to d
    never makes a plan worse or infeasible. Ties keep the smaller id, so the result is deterministic.
    """
    named = {qid for r in lp.problem.rules for qid in (quote_ids(r.when) or [])} | protect
    top = max((pt.n for pt in pts), default=0)
    ready = {q.id: quote_ready_day(q, o, a) for q in o.quotes}
    slip = {q.id: slip_premium(q.lead_time_days, q.lead_time_p90_days, a.money) for q in o.quotes}
    out: set[str] = set()
    for q in o.quotes:
        if q.id in named:
            continue
        for d in o.quotes:
            if d.id == q.id or d.id in named or d.id in out or d.max_nodes < top or d.min_nodes > q.min_nodes:
                continue
            if ready[d.id] > ready[q.id] or slip[d.id] > slip[q.id] or (d.kind == "estimate" and q.kind != "estimate"):
                continue
            pairs = [((pt.per_node.cost(d.id), pt.per_node.cash(d.id)), (pt.per_node.cost(q.id), pt.per_node.cash(q.id)))
                     for pt in pts]
            if any(dl[0] > ql[0] or dl[1] > ql[1] for dl, ql in pairs):
                continue
            strict = any(dl[0] < ql[0] or dl[1] < ql[1] for dl, ql in pairs) or \
                ready[d.id] < ready[q.id] or slip[d.id] < slip[q.id]
            if strict or d.id < q.id:
                out.add(q.id)
                break
    return out


def statically_excluded(pt: Point, lp: LoadedProblem, a: Assumptions, universe: Universe, unit: int) -> bool:
    """Python presolve for optimisation (every group enforced): drop points no plan can use.

    The groups' constraints stay in the model; this only spares CP-SAT literals that could never be 1.
    Explanation models never prune.
    """
    if pt.excluded is None:
        pt.excluded = pt.n < min(q.min_nodes for q in pt.option.quotes) or bool(
            pt.violations if pt.violations is not None else
            point_violations(pt, lp, a, universe, unit, capacitated=False))
    return pt.excluded


def _point_ceiling(pt: Point, unit: int) -> int:
    return units(pt.fixed.total_cost, unit) + pt.n * units(pt.per_node.extreme(False, max), unit) + 1


def _ceiling(lp: LoadedProblem, a: Assumptions, point_hi: int, quotes: Iterable[Quote], unit: int) -> int:
    """The most expensive point plus everything rules and delivery slip can add on top of it."""
    p = lp.problem
    adds = sum(units(r.then.add_usd or 0, unit) for r in p.rules if not isinstance(r.then, str))
    pct = sum(max(0.0, r.then.add_pct or 0.0) for r in p.rules if not isinstance(r.then, str))
    slip = max([units(slip_premium(q.lead_time_days, q.lead_time_p90_days, a.money), unit) for q in quotes] + [0])
    return int(point_hi * (1 + pct / 100.0) + 2) + adds + slip


def cost_ceiling(lp: LoadedProblem, a: Assumptions, universe: Universe, unit: int) -> int:
    """An upper bound (in money units) on the model's cost of any plan over `universe`.

    It is the multiplier of lexicographic objectives (`objective`), so it must not depend on which points a
    particular model keeps: models of different pairs, or of a pruned subset, must score a plan identically.
    """
    for o in universe.options:
        if unit not in o.ceilings:
            o.ceilings[unit] = max((_point_ceiling(pt, unit) for pt in o.points if pt.workable), default=0)
    point_hi = max((o.ceilings[unit] for o in universe.options), default=0)
    return _ceiling(lp, a, point_hi, (q for o in universe.options for q in o.quotes), unit)


def _model_ceiling(lp: LoadedProblem, a: Assumptions, points: list[Point], unit: int) -> int:
    """`cost_ceiling` over one model's points (enough when the ceiling is not an objective multiplier)."""
    point_hi = max((_point_ceiling(pt, unit) for pt in points), default=0)
    return _ceiling(lp, a, point_hi, {q.id: q for pt in points for q in pt.option.quotes}.values(), unit)


def needs_ceiling(lp: LoadedProblem) -> bool:
    """Only the time objective multiplies by the cost ceiling; the others use it for the overflow check only,
    where each model's own points suffice (and pricing every point of the universe would be wasted work)."""
    return lp.problem.objective == "time"


def objective(cost: Any, finish: Any, lp: LoadedProblem, horizon: int, cost_hi: int | None, unit: int) -> Any:
    """The lexicographic primary objective as one integer (or linear expression over model variables).

    cost: minimise cost, then finish (finish < k = 2·horizon + 1 always); time: finish, then cost
    (cost ≤ cost_hi); cost with a delay cost per day: cost + delay × finish, then finish. Monotone in both
    cost and finish, which the bounds in `bounds.py` rely on. `cost_hi` None: only for plain numbers, which
    cannot overflow (it is needed by the time objective; see `needs_ceiling`).
    """
    obj = lp.problem.objective
    k_finish = 2 * horizon + 1
    if cost_hi is None:
        if obj == "time":
            raise ValueError("the time objective needs the cost ceiling")
    elif (cost_hi + 1) * (k_finish + 1) > 2 ** 61:
        raise InputError(f"costs up to ${cost_hi * unit:.3g} over a {horizon}-day calendar are beyond "
                         "what plan can optimise exactly; check prices and assumptions for absurd values")
    if obj == "time":
        assert cost_hi is not None
        return finish * (cost_hi + 1) + cost
    if isinstance(obj, CostObjective):
        per_day = units(obj.delay_cost_usd_per_day, unit)
        return (cost + per_day * finish) * k_finish + finish
    return cost * k_finish + finish


def build(lp: LoadedProblem, a: Assumptions, universe: Universe, *, guard: Literal["fixed", "assume"] = "fixed",
          unit: int | None = None, prune: bool | None = None, elastic: bool = False,
          keep: set[tuple[str, int]] | None = None, cost_hi: int | None = None,
          protect: frozenset[str] = frozenset()) -> Built:
    """Build the model. `guard='assume'` makes every group literal a free Boolean for explanations;
    `elastic=True` gives every numeric limit a slack variable (`Built.slacks`) for feasRelax-style repairs;
    `keep` limits the points to those (option id, nodes) (bound-pruned solves, see `solve.py`); `cost_hi`
    overrides the objective multiplier (see `cost_ceiling`); quotes in `protect` are never dropped as dominated
    (a why-not question forces them to be used)."""
    p = lp.problem
    m = Model()
    unit = unit or money_unit(lp, universe)
    prune = (guard == "fixed") if prune is None else prune
    points = [pt for o in universe.options for pt in o.points if pt.workable
              and (keep is None or (o.id, pt.n) in keep)
              and not (prune and statically_excluded(pt, lp, a, universe, unit))]
    z = [m.new_bool_var(f"z[{pt.option.id}@{pt.n}]") for pt in points]
    groups: dict[str, Group] = {}
    lits: dict[str, Any] = {}

    def group(gid: str, kind: Any, path: tuple[Any, ...], text: str, unit_name: str | None = None,
              value: Any = None) -> Any:
        if gid not in lits:
            groups[gid] = Group(gid, kind, path, text, unit_name, value)
            lits[gid] = m.new_bool_var(gid) if guard == "assume" else m.new_constant(1)
        return lits[gid]

    slacks: dict[str, Any] = {}

    def slack(gid: str, hi: int) -> Any:
        """A non-negative slack on a numeric limit (elastic models only; 0 otherwise)."""
        if not elastic:
            return 0
        v = m.new_int_var(0, max(1, hi), f"slack[{gid}]")
        slacks[gid] = v
        return v

    m.add_exactly_one(z)
    by_option: dict[str, list[int]] = {}
    for i, pt in enumerate(points):
        by_option.setdefault(pt.option.id, []).append(i)
    options = [o for o in universe.options if o.id in by_option]
    sel = {o.id: sum(z[i] for i in by_option[o.id]) for o in options}
    max_n = max((pt.n for pt in points), default=1)

    x: dict[str, Any] = {}
    u: dict[str, Any] = {}
    y: dict[tuple[str, int], cp_model.IntVar] = {}
    cost_terms: list[Any] = []
    cash_terms: list[Any] = []
    for o in options:
        idx = by_option[o.id]
        if len(o.quotes) == 1:
            q = o.quotes[0]
            x[q.id] = sum(points[i].n * z[i] for i in idx)
            u[q.id] = sel[o.id]
            for i in idx:
                pt = points[i]
                if pt.n < q.min_nodes:
                    m.add(z[i] == 0)
                cost_terms.append(units(pt.fixed.total_cost + pt.n * pt.per_node.cost(q.id), unit) * z[i])
                cash_terms.append(units(pt.fixed.total_cash + pt.n * pt.per_node.cash(q.id), unit) * z[i])
            continue
        dominated = dominated_quotes(o, [points[i] for i in idx], lp, a, protect) if prune else set()
        zero = m.new_constant(0)
        for q in o.quotes:
            u[q.id] = m.new_bool_var(f"u[{q.id}]") if q.id not in dominated else zero
        for i in idx:
            pt = points[i]
            cost_terms.append(units(pt.fixed.total_cost, unit) * z[i])
            cash_terms.append(units(pt.fixed.total_cash, unit) * z[i])
            share = []
            for q in o.quotes:
                if q.id in dominated:
                    y[(q.id, i)] = zero
                    continue
                v = m.new_int_var(0, pt.n, f"y[{q.id}@{pt.n}]")
                y[(q.id, i)] = v
                share.append(v)
                cost_terms.append(units(pt.per_node.cost(q.id), unit) * v)
                cash_terms.append(units(pt.per_node.cash(q.id), unit) * v)
            m.add(sum(share) == pt.n * z[i])
        for q in o.quotes:
            if q.id in dominated:
                x[q.id] = 0
                continue
            xq = sum(y[(q.id, i)] for i in idx)
            x[q.id] = xq
            m.add(xq <= max_n * u[q.id])
            m.add(xq >= max(1, q.min_nodes) * u[q.id])
            m.add(u[q.id] <= sel[o.id])

    horizon = universe.horizon
    start = m.new_int_var(0, horizon, "start_day")
    finish = m.new_int_var(0, 2 * horizon, "finish_day")
    m.add(finish == start + sum(points[i].days * z[i] for i in range(len(points))))
    for o in options:
        if o.ready_day > 0:
            m.add(start >= o.ready_day * sel[o.id])
        for q in o.quotes:
            rd = quote_ready_day(q, o, a)
            if rd > 0:
                m.add(start >= rd * u[q.id])

    # Delivery-slip exposure: the slowest used quote's (p90 − p50) × delay cost per day.
    slip = m.new_int_var(0, max([units(slip_premium(q.lead_time_days, q.lead_time_p90_days, a.money), unit)
                                 for o in options for q in o.quotes] + [0]), "slip_premium")
    for o in options:
        for q in o.quotes:
            k = units(slip_premium(q.lead_time_days, q.lead_time_p90_days, a.money), unit)
            if k > 0:
                m.add(slip >= k * u[q.id])
    cost_terms.append(slip)

    # --- schedule -------------------------------------------------------------------------------------
    if p.schedule.earliest_start is not None and universe.earliest_day > 0:
        lit = group("schedule.earliest_start", "limit", ("schedule", "earliest_start"),
                    f"start on or after {lp.earliest_start}", "day", lp.earliest_start)
        m.add(start + slack("schedule.earliest_start", universe.earliest_day) >= universe.earliest_day
              ).only_enforce_if(lit)
    if universe.deadline_day is not None:
        lit = group("schedule.deadline", "limit", ("schedule", "deadline"), f"finish by {p.schedule.deadline}",
                    "day", p.schedule.deadline)
        m.add(finish <= universe.deadline_day + slack("schedule.deadline", 2 * horizon)).only_enforce_if(lit)

    # --- policy ---------------------------------------------------------------------------------------
    def forbid_options(gid: str, path: tuple[Any, ...], text: str, bad: list[Option]) -> None:
        lit = group(gid, "policy", path, text)
        if bad:
            m.add(sum(sel[o.id] for o in bad) == 0).only_enforce_if(lit)

    pol = p.policy
    forbid_options("policy.modes", ("policy", "modes"), f"modes limited to {', '.join(pol.modes)}",
                   [o for o in options if o.mode not in pol.modes])
    if pol.require_ecc:
        forbid_options("policy.require_ecc", ("policy", "require_ecc"), "accelerators must have ECC memory",
                       [o for o in options if not o.accel.ecc.value])
    inc = {s.lower() for s in pol.accelerators.include}
    exc = {s.lower() for s in pol.accelerators.exclude}
    if inc or exc:
        forbid_options("policy.accelerators", ("policy", "accelerators"), "accelerator allow/deny list",
                       [o for o in options if (inc and o.accel.id not in inc) or o.accel.id in exc])
    vinc = {s.lower() for s in pol.vendors.include}
    vexc = {s.lower() for s in pol.vendors.exclude}
    if vinc or vexc:
        forbid_options("policy.vendors", ("policy", "vendors"), "vendor allow/deny list",
                       [o for o in options if (vinc and o.accel.vendor not in vinc) or o.accel.vendor in vexc])
    if not pol.allow_estimates:
        lit = group("policy.allow_estimates", "policy", ("policy", "allow_estimates"), "no estimated prices")
        est = [u[q.id] for o in options for q in o.quotes if q.kind == "estimate"]
        if est:
            m.add(sum(est) == 0).only_enforce_if(lit)

    # --- site (bought hardware only) -------------------------------------------------------------------
    site = p.site
    buy = [o for o in options if o.mode == "buy"]
    if site is not None and buy:
        bad = [o for o in buy if o.system.cooling not in site.cooling]
        forbid_options("site.cooling", ("site", "cooling"), f"site cools {', '.join(site.cooling)}", bad)
        lit_p = group("site.it_power_kw", "limit", ("site", "it_power_kw"), f"IT power {site.it_power_kw:g} kW",
                      "kW", site.it_power_kw)
        power_w = sum(math.ceil(points[i].power_kw * 1000 - 1e-6) * z[i] for o in buy for i in by_option[o.id])
        hi_w = max((math.ceil(points[i].power_kw * 1000) for o in buy for i in by_option[o.id]), default=1)
        m.add(power_w <= int(math.floor(site.it_power_kw * 1000 + 1e-6)) + slack("site.it_power_kw", hi_w)
              ).only_enforce_if(lit_p)
        lit_rp = group("site.rack_power_kw", "limit", ("site", "rack_power_kw"),
                       f"{site.rack_power_kw:g} kW per rack", "kW", site.rack_power_kw)
        too_hot = [o for o in buy if float(o.system.node_kw.value) > site.rack_power_kw]
        if too_hot:
            m.add(sum(sel[o.id] for o in too_hot) == 0).only_enforce_if(lit_rp)
        lit_r = group("site.racks", "limit", ("site", "racks"), f"{site.racks} racks", "rack", site.racks)
        hi_r = max((points[i].racks_with_power or points[i].racks_physical for o in buy for i in by_option[o.id]),
                   default=1)
        s_r = slack("site.racks", hi_r)
        m.add(sum(points[i].racks_physical * z[i] for o in buy for i in by_option[o.id]) <= site.racks + s_r
              ).only_enforce_if(lit_r)
        racks_expr = sum((points[i].racks_with_power or 0) * z[i] for o in buy for i in by_option[o.id]
                         if o not in too_hot)
        m.add(racks_expr <= site.racks + s_r).only_enforce_if([lit_r, lit_rp])

    # --- memory fit -----------------------------------------------------------------------------------
    lit_m = group("workload.memory", "fit", ("workload",), "model states + activations fit in memory")
    unfit = [z[i] for i, pt in enumerate(points) if not pt.fits]
    if unfit:
        m.add(sum(unfit) == 0).only_enforce_if(lit_m)

    # --- quote capacity -------------------------------------------------------------------------------
    for o in options:
        for q in o.quotes:
            lit = group(f"quotes.{q.id}.max_nodes", "capacity", ("quotes", q.id, "max_nodes"),
                        f"{q.id} can supply at most {q.max_nodes} nodes", "node", q.max_nodes)
            if q.max_nodes < max_n and not isinstance(x[q.id], int):
                m.add(x[q.id] <= q.max_nodes + slack(f"quotes.{q.id}.max_nodes", max_n)).only_enforce_if(lit)

    cost_expr = sum(cost_terms)
    cash_expr = sum(cash_terms)

    # --- rules ----------------------------------------------------------------------------------------
    # Adjustments first, so that cost conditions of forbid/require rules see the adjusted cost.
    ordered = sorted(enumerate(p.rules), key=lambda ir: isinstance(ir[1].then, str))
    for r_i, rule in ordered:
        gid = f"rules.{rule.name}"
        lit = group(gid, "rule", ("rules", r_i), rule.note or rule.name)
        when = rule.when
        match = [i for i, pt in enumerate(points)
                 if matches_attrs(when, pt.option.attrs)
                 and matches_point(when, pt.gpus, pt.n, pt.days, pt.power_kw)]
        qids = quote_ids(when)
        match_q = [q.id for o in options for q in o.quotes if qids is None or q.id in qids] if qids else []
        then = rule.then
        if then == "forbid":
            if when.cost is not None:
                b = _indicator(m, [z[i] for i in match], f"match[{gid}]")
                _cost_bound(m, cost_expr, when.cost, unit, negate=True, lits=[lit, b])
            elif qids is not None:
                for i in match:
                    pt = points[i]
                    for q in pt.option.quotes:
                        if q.id in match_q:
                            if (q.id, i) in y:
                                m.add(y[(q.id, i)] == 0).only_enforce_if([lit, z[i]])
                            else:
                                m.add(z[i] == 0).only_enforce_if(lit)
            elif match:
                m.add(sum(z[i] for i in match) == 0).only_enforce_if(lit)
        elif then == "require":
            m.add(sum(z[i] for i in match) == 1).only_enforce_if(lit)
            if qids is not None:
                m.add(sum(u[qid] for qid in match_q) >= 1).only_enforce_if(lit)
            if when.cost is not None:
                _cost_bound(m, cost_expr, when.cost, unit, negate=False, lits=[lit])
        else:
            if then.add_usd:
                k = units(then.add_usd, unit)
                r = m.new_int_var(0, k, f"add_usd[{gid}]")
                m.add(r >= k * sum(z[i] for i in match)).only_enforce_if(lit)
                cost_expr = cost_expr + r
                cash_expr = cash_expr + r
            if then.add_pct:
                terms = []
                hi = 0
                for i in match:
                    pt = points[i]
                    if len(pt.option.quotes) == 1:
                        q = pt.option.quotes[0]
                        k = units((pt.fixed.total_cost + pt.n * pt.per_node.cost(q.id)) * then.add_pct / 100.0, unit)
                        terms.append(k * z[i])
                        hi = max(hi, abs(k))
                    else:
                        k0 = units(pt.fixed.total_cost * then.add_pct / 100.0, unit)
                        terms.append(k0 * z[i])
                        ks = [units(pt.per_node.cost(q.id) * then.add_pct / 100.0, unit) for q in pt.option.quotes]
                        terms += [k * y[(q.id, i)] for k, q in zip(ks, pt.option.quotes)]
                        hi = max(hi, abs(k0) + pt.n * max(abs(k) for k in ks))
                if terms:
                    r = m.new_int_var(-hi, hi, f"add_pct[{gid}]")
                    m.add(r >= sum(terms)).only_enforce_if(lit)
                    if guard == "assume":
                        m.add(r >= 0).only_enforce_if(~lit)
                    cost_expr = cost_expr + r
            if then.delay_days:
                d = int(math.ceil(then.delay_days))
                for o in options:
                    idx_o = [i for i in match if points[i].option is o]
                    if not idx_o:
                        continue
                    mo = sum(z[i] for i in idx_o)
                    m.add(start >= (o.ready_day + d) * mo).only_enforce_if(lit)
                    for q in o.quotes:
                        rd = quote_ready_day(q, o, a) + d
                        m.add(start >= rd * (u[q.id] + mo - 1)).only_enforce_if(lit)

    built = Built(m, universe, points, unit, groups, lits, z, sel, x, u, y, start, finish, cost_expr, cash_expr,
                  sum(i * z[i] for i in range(len(points))))
    if cost_hi is None:
        cost_hi = cost_ceiling(lp, a, universe, unit) if needs_ceiling(lp) else _model_ceiling(lp, a, points, unit)
    built.cost_hi = cost_hi
    built.option_index = {o.id: k for k, o in enumerate(options)}

    # --- budget (after rules, which may add cash) -------------------------------------------------------
    if p.budget.max_usd is not None:
        lit = group("budget.max_usd", "limit", ("budget", "max_usd"),
                    f"{p.budget.applies_to} at most ${p.budget.max_usd:,.0f}", "usd", p.budget.max_usd)
        limit = int(math.floor(p.budget.max_usd / unit + 1e-9))
        expr = built.cash if p.budget.applies_to == "cash" else built.cost
        m.add(expr <= limit + slack("budget.max_usd", built.cost_hi + 1)).only_enforce_if(lit)
    built.groups, built.lits = groups, lits
    built.slacks = slacks
    if site is not None and buy:
        built.power_w, built.racks = power_w, racks_expr
    return built


def _indicator(m: cp_model.CpModel, zs: list[Any], name: str) -> Any:
    b = m.new_bool_var(name)
    m.add(b == sum(zs)) if zs else m.add(b == 0)
    return b


def _cost_bound(m: cp_model.CpModel, cost: Any, cmp: Any, unit: int, *, negate: bool, lits: list[Any]) -> None:
    """Encode a single-operator cost comparison (or its negation) in money units, enforced by `lits`."""
    ops = [(k, getattr(cmp, k)) for k in ("gt", "ge", "lt", "le", "eq") if getattr(cmp, k) is not None]
    if len(ops) != 1:
        raise ValueError("a cost condition takes exactly one operator")
    op, v = ops[0]
    if negate:
        op = {"gt": "le", "ge": "lt", "lt": "ge", "le": "gt", "eq": "ne"}[op]
    # Costs in the model are rounded up to the unit: compare against the unit count of the threshold.
    k_floor = int(math.floor(v / unit + 1e-9))
    k_ceil = int(math.ceil(v / unit - 1e-9))
    if op == "le":
        m.add(cost <= k_floor).only_enforce_if(lits)
    elif op == "lt":
        m.add(cost <= k_ceil - 1).only_enforce_if(lits)
    elif op == "ge":
        m.add(cost >= k_ceil).only_enforce_if(lits)
    elif op == "gt":
        m.add(cost >= k_floor + 1).only_enforce_if(lits)
    elif op == "eq":
        m.add(cost == k_ceil).only_enforce_if(lits)
    else:
        m.add(cost != k_ceil).only_enforce_if(lits)
