"""The CP-SAT model of a program: every workload on one calendar, bought lots shared, limits as guarded groups.

Variables (days from `as_of`, money in $1k rounded up, so the model never understates a cost or a spend):
- per workload: one chosen candidate (`x`), a start, and an end = start + the candidate's days;
- per purchase lot (`estimate/program.py`): present, order day, delivery = order + lead, usable = delivery +
  installation, days held = program end − delivery, and its cost and cash read from the quote's held-days table;
- the program's end = the latest workload end.

Constraint families, one helper each; a limit the user wrote is a *group* enforced by one literal (`groups.py`'s
convention: `workloads.main.schedule.deadline`, `workloads.sft.after`, `budget.per_quarter_usd.2027-Q2`,
`site.power_steps[0]`, `quotes.<id>.max_nodes`, …), so an explanation can drop it:
- owned node pools: one cumulative per system; a lot blocks its nodes until usable ([0, usable) when bought, the
  whole calendar when not), and a workload on owned hardware occupies its nodes while it runs. Reuse by a later
  workload needs no assignment (OR-Tools' resource idiom; program-and-risk notes §2);
- rented quotes shared by several workloads: one cumulative per quote, its capacity the quote's `max_nodes`;
- site power over time: installed power only grows (lots stay to the program's end), so a limit that holds on a
  segment [first, end) holds iff the lots delivered before `end` fit it — one linear row per segment; racks the same
  with the last segment;
- spend per quarter: lot capex in the quarter of its order, rent spread evenly over the days a rental runs
  (an overlap variable per workload and quarter times its daily rate);
- precedences, deadlines, earliest starts, `same_hardware_as`, the program budget;
- decision gates (`decide_after`): a gated workload starts no sooner than its gates finish, on a rented quote no
  sooner than its commitment's lead after that (and its quote still valid that day), and on owned nodes every lot
  of its system is ordered on or after that day (the pool does not say which lots a run uses, so a gated run
  reuses no lot ordered before its gates);
- rules, and when explaining the policy and the site's cooling: a run one of them rules out
  (`Candidate.barred_by`) is off while its group is enforced;
- `policy.deadline_confidence`: each run's latest start at the confidence, and the cuts learnt from plans that
  missed (`estimate/program_chance.py`), enforced with the deadline (and precedences) they rely on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ..estimate.program import Candidate, LotQuote, ProgramData, hardware_floor
from ..estimate.program_chance import CONFIDENCE_GROUP, ProgramChanceCut, identity
from .cpsat import Model

UNIT = 1000.0
"""Dollars per model money unit."""


def units(usd: float) -> int:
    """Dollars in model units, rounded up (the model never understates money)."""
    return int(math.ceil(usd / UNIT - 1e-9))


@dataclass(frozen=True)
class ProgramGroup:
    """A named limit of the program (its id is the path the user wrote, a workload named by its id)."""

    id: str
    text: str
    numeric: bool


@dataclass
class Lot:
    quote: LotQuote
    k: int
    present: Any
    order: Any
    delivered: Any
    held: Any
    cost: Any
    cash: Any
    cost_top: int
    """The upper bound of `cost`'s domain (model units)."""


@dataclass
class ProgramModel:
    """A built program model: the CpModel and the handles decoding and explanations read."""

    data: ProgramData
    model: Model
    horizon: int
    x: dict[tuple[int, int], Any] = field(default_factory=dict)
    start: list[Any] = field(default_factory=list)
    end: list[Any] = field(default_factory=list)
    program_end: Any = None
    lots: list[Lot] = field(default_factory=list)
    ported: dict[str, Any] = field(default_factory=dict)
    groups: dict[str, ProgramGroup] = field(default_factory=dict)
    literals: dict[str, Any] = field(default_factory=dict)
    quantities: dict[str, Any] = field(default_factory=dict)
    """Per numeric group, the expression it limits (what an exact relaxation minimises)."""
    cost: Any = 0
    cash: Any = 0

    def group(self, gid: str, text: str, numeric: bool = False) -> Any:
        if gid not in self.literals:
            self.literals[gid] = self.model.new_bool_var(f"g[{gid}]")
            self.groups[gid] = ProgramGroup(gid, text, numeric)
        return self.literals[gid]

    def candidates(self, wi: int) -> list[tuple[int, Candidate]]:
        return list(enumerate(self.data.workloads[wi].candidates))


def _add_choices(pm: ProgramModel) -> None:
    m, h = pm.model, pm.horizon
    for wi, w in enumerate(pm.data.workloads):
        s = m.new_int_var(0, h, f"start[{w.id}]")
        e = m.new_int_var(0, h, f"end[{w.id}]")
        lits = []
        for ci, c in pm.candidates(wi):
            x = m.new_bool_var(f"x[{w.id},{ci}]")
            pm.x[wi, ci] = x
            lits.append(x)
            m.add(s >= c.ready_day).only_enforce_if(x)
            for gid in c.barred_by:
                m.add_implication(pm.group(gid, barring_text(gid)), ~x)
        m.add_exactly_one(lits)
        m.add(e == s + sum(pm.x[wi, ci] * c.days for ci, c in pm.candidates(wi)))
        pm.start.append(s)
        pm.end.append(e)
    pm.program_end = m.new_int_var(0, h, "program_end")
    m.add_max_equality(pm.program_end, pm.end)


BARRING = {"policy.modes": "allowed modes", "policy.require_ecc": "accelerators must have ECC memory",
           "policy.accelerators": "accelerator allow/deny list", "policy.vendors": "vendor allow/deny list",
           "policy.allow_estimates": "no estimated prices",
           "policy.allow_preemptible": "no spot capacity for multi-node pretraining",
           "site.cooling": "the site's cooling"}
"""What a policy or site group that rules runs out says (`Candidate.barred_by`)."""


def barring_text(gid: str) -> str:
    """A barring group's text: a rule by its name; a workload's own policy as the program's, for that workload."""
    if gid.startswith("rules."):
        return "rule " + gid.partition(".")[2]
    if gid.startswith("workloads."):
        wid, _, rest = gid[len("workloads."):].partition(".")
        return f"{BARRING.get(rest, rest)} ({wid})"
    return BARRING.get(gid, gid)


def _add_schedule(pm: ProgramModel) -> None:
    m = pm.model
    ids = [w.id for w in pm.data.workloads]
    for wi, w in enumerate(pm.data.workloads):
        lit = pm.group(w.earliest_group, "earliest start", numeric=True)
        m.add(pm.start[wi] >= w.earliest_day).only_enforce_if(lit)
        if w.deadline_group is not None and w.deadline_day is not None:
            lit = pm.group(w.deadline_group, "deadline", numeric=True)
            m.add(pm.end[wi] <= w.deadline_day).only_enforce_if(lit)
            _quantity_max(pm, w.deadline_group, pm.end[wi])
        if w.after:
            gid = f"workloads.{w.id}.after"
            lit = pm.group(gid, "starts after " + ", ".join(w.after))
            for a in w.after:
                m.add(pm.start[wi] >= pm.end[ids.index(a)]).only_enforce_if(lit)


def _add_decision_gates(pm: ProgramModel) -> None:
    """`decide_after` (see module docstring), one group per gated workload: its start ≥ each gate's end (+ the
    rented candidate's `commit_days`, each gate's end ≤ its `commit_by`), and, when it runs on owned nodes of a
    system, each present lot of that system ordered on or after each gate's end."""
    m = pm.model
    ids = [w.id for w in pm.data.workloads]
    for wi, w in enumerate(pm.data.workloads):
        if not w.decide_after:
            continue
        lit = pm.group(f"workloads.{w.id}.decide_after", "hardware decided after " + ", ".join(w.decide_after))
        gates = [pm.end[ids.index(g)] for g in w.decide_after]
        for gate in gates:
            m.add(pm.start[wi] >= gate).only_enforce_if(lit)
        for ci, c in pm.candidates(wi):
            for gate in gates:
                if c.commit_days > 0:
                    m.add(pm.start[wi] >= gate + c.commit_days).only_enforce_if([lit, pm.x[wi, ci]])
                if c.commit_by is not None:
                    m.add(gate <= c.commit_by).only_enforce_if([lit, pm.x[wi, ci]])
        for system in sorted({c.system for _, c in pm.candidates(wi) if c.owned}):
            on = m.new_bool_var(f"owned[{w.id},{system}]")
            m.add(on == sum(pm.x[wi, ci] for ci, c in pm.candidates(wi) if c.owned and c.system == system))
            for lot in (lot for lot in pm.lots if lot.quote.system == system):
                for gate in gates:
                    m.add(lot.order >= gate).only_enforce_if([lit, on, lot.present])


def _quantity_max(pm: ProgramModel, gid: str, expr: Any) -> None:
    """The quantity of a group limiting several expressions is their maximum."""
    if gid not in pm.quantities:
        pm.quantities[gid] = [expr]
    else:
        pm.quantities[gid].append(expr)


def _add_same_hardware(pm: ProgramModel) -> None:
    ids = [w.id for w in pm.data.workloads]
    for wi, w in enumerate(pm.data.workloads):
        if w.same_hardware_as is None:
            continue
        other = ids.index(w.same_hardware_as)
        gid = f"workloads.{w.id}.same_hardware_as"
        lit = pm.group(gid, f"same accelerator as {w.same_hardware_as}")
        accels = sorted({c.accelerator for j in (wi, other) for c in pm.data.workloads[j].candidates})
        for acc in accels:
            mine = [pm.x[wi, ci] for ci, c in pm.candidates(wi) if c.accelerator == acc]
            theirs = [pm.x[other, ci] for ci, c in pm.candidates(other) if c.accelerator == acc]
            pm.model.add(sum(mine) == sum(theirs)).only_enforce_if(lit)


SCALE = 1000
"""Money rows with fractional slopes are written S·y ≥ A·day + B with integers A, B at this scale S."""


def pieces(table: tuple[float, ...], nodes: int, kinks: list[int], h: int) -> list[tuple[int, int, int, int]]:
    """A lot's held-days table (dollars per node) as linear pieces (first day, last day, A, B) over [0, h]: on its
    days S·units ≥ A·day + B bounds the table times `nodes` in model units from above. The table is linear between
    consecutive `kinks` (cost.py's resale-curve ages and depreciation life), so each piece is exact up to the
    rounding, which only raises it."""
    ends = sorted({0, h} | {k for k in kinks if 0 < k < h})
    out = []
    for b0, b1 in zip(ends, ends[1:], strict=False):
        v0, v1 = _at(table, b0) * nodes / UNIT, _at(table, b1) * nodes / UNIT
        slope = (v1 - v0) / (b1 - b0)
        a = round(slope * SCALE)
        b = max(math.ceil(v0 * SCALE - a * b0 - 1e-6), math.ceil(v1 * SCALE - a * b1 - 1e-6))
        out.append((b0, b1, a, b))
    return out


def _at(table: tuple[float, ...], day: int) -> float:
    return table[min(day, len(table) - 1)]


def convex(ps: list[tuple[int, int, int, int]]) -> bool:
    return all(p[2] <= q[2] for p, q in zip(ps, ps[1:], strict=False))


def hull(ps: list[tuple[int, int, int, int]]) -> list[tuple[int, int]]:
    """Integer lines (A, B) with A·day + B ≤ S·f(day) for the piecewise function `ps`, that together are its convex
    lower envelope at the breakpoints: valid lower bounds that give the LP relaxation the shape of a non-convex
    held-days cost."""
    pts = [(b0, a * b0 + c) for b0, _b1, a, c in ps] + [(ps[-1][1], ps[-1][2] * ps[-1][1] + ps[-1][3])]
    lower: list[tuple[int, int]] = []
    for p in pts:
        while len(lower) >= 2 and (lower[-1][0] - lower[-2][0]) * (p[1] - lower[-2][1]) <= \
                (lower[-1][1] - lower[-2][1]) * (p[0] - lower[-2][0]):
            lower.pop()
        lower.append(p)
    out = []
    for (x0, v0), (x1, v1) in zip(lower, lower[1:], strict=False):
        a = math.floor((v1 - v0) / (x1 - x0))
        out.append((a, min(v - a * x for x, v in pts)))
    return out


def _piecewise(pm: ProgramModel, b: Any, held: Any, ps: list[tuple[int, int, int, int]], top: int, name: str) -> Any:
    """Model units ≥ the held-days function of a bought lot, 0 when not bought (`held` is 0 then). A convex
    function is the maximum of its pieces, written S·y ≥ A·held + B·bought so that the LP relaxation sees it
    (minimisation makes it exact); otherwise one literal per piece says which one holds, and the convex envelope
    (`hull`) is added for the relaxation, and `_add_within_deadlines`' rows when the function is convex over the
    days a lot can be held before the last deadline."""
    m = pm.model
    y = m.new_int_var(0, top, name)
    m.add(y == 0).only_enforce_if(~b)
    if convex(ps):
        for _b0, _b1, a, c in ps:
            m.add(SCALE * y >= a * held + c * b)
        return y
    for a, c in hull(ps):
        m.add(SCALE * y >= a * held + c * b)
    lits = [m.new_bool_var("") for _ in ps]
    m.add(sum(lits) == b)
    for lit, (b0, b1, a, c) in zip(lits, ps, strict=True):
        m.add(held >= b0).only_enforce_if(lit)
        m.add(held <= b1).only_enforce_if(lit)
        m.add(SCALE * y >= a * held + c).only_enforce_if(lit)
    _add_within_deadlines(pm, b, y, held, ps)
    return y


def _add_within_deadlines(pm: ProgramModel, b: Any, y: Any, held: Any, ps: list[tuple[int, int, int, int]]) -> None:
    """Why: a held-days cost is concave over a long calendar (its slope falls once the depreciation life is
    reached), so its convex envelope over the whole calendar undercuts it by a quarter at the days held in a
    real program, and the relaxation then prefers owned hardware it cannot afford: a weak root bound the search
    must close (measured: bench/README.md, "Timings that used to live in docstrings (moved 2026-12-07)"). While
    every workload's deadline holds, the program ends by the last one, no lot is held longer, and over those days
    the function is often convex: its pieces there, S·y ≥ A·held + B·bought, are then exact rows for the
    relaxation. They are enforced with the deadline groups they rely on, so an explanation that drops one loses
    them."""
    days = [w.deadline_day for w in pm.data.workloads]
    groups = [w.deadline_group for w in pm.data.workloads]
    if any(d is None for d in days) or any(g is None for g in groups):
        return
    last = max(d for d in days if d is not None)
    within = [p for p in ps if p[0] < last]
    if len(within) == len(ps) or not convex(within):
        return
    lits = sorted({pm.literals[g] for g in groups if g is not None}, key=lambda v: v.index)
    for _b0, _b1, a, c in within:
        pm.model.add(SCALE * y >= a * held + c * b).only_enforce_if(lits)


def _add_lots(pm: ProgramModel) -> None:
    m, h = pm.model, pm.horizon
    for lq in pm.data.lots:
        prev: Lot | None = None
        gid = f"quotes.{lq.quote}.max_nodes"
        lit = pm.group(gid, f"{lq.quote}: at most {lq.max_nodes} nodes",
                       numeric=True)
        mine: list[Lot] = []
        cost_ps = pieces(lq.held_cost_usd, lq.lot_nodes, list(pm.data.kinks), h)
        cash_ps = pieces(lq.held_cash_usd, lq.lot_nodes, [], h)
        top_cost = units(max(lq.held_cost_usd) * lq.lot_nodes) + 2
        top_cash = units(max(lq.held_cash_usd) * lq.lot_nodes) + 2
        for k in range(lq.lots):
            name = f"{lq.quote}#{k}"
            b = m.new_bool_var(f"lot[{name}]")
            order = m.new_int_var(0, max(0, lq.last_order_day), f"order[{name}]")
            delivered = order + lq.lead_days
            held = m.new_int_var(0, h, f"held[{name}]")
            m.add(held == pm.program_end - delivered).only_enforce_if(b)
            m.add(held == 0).only_enforce_if(~b)
            # A lot usable only when every workload has finished serves none: without this, one delivered on the
            # program's last day is held 0 days, costs nothing, and may be bought for nothing (cash it never earns).
            m.add(delivered + lq.install_days < pm.program_end).only_enforce_if(b)
            lot_cost = _piecewise(pm, b, held, cost_ps, top_cost, f"cost[{name}]")
            lot_cash = _piecewise(pm, b, held, cash_ps, top_cash, f"cash[{name}]")
            if prev is not None:
                m.add_implication(b, prev.present)
                m.add(prev.order <= order)
            lot = Lot(lq, k, b, order, delivered, held, lot_cost, lot_cash, top_cost)
            mine.append(lot)
            prev = lot
        m.add(sum(lot.present for lot in mine) * lq.lot_nodes <= lq.max_nodes).only_enforce_if(lit)
        pm.quantities[gid] = [sum(lot.present for lot in mine) * lq.lot_nodes]
        pm.lots.extend(mine)


def _add_pools(pm: ProgramModel) -> None:
    """Owned nodes: a lot's nodes are blocked until usable; a workload on owned hardware occupies n while it runs."""
    m, h = pm.model, pm.horizon
    for system in sorted({lq.system for lq in pm.data.lots}):
        intervals, demands = [], []
        for lot in pm.lots:
            if lot.quote.system != system:
                continue
            blocked = m.new_int_var(0, h + 1, f"blocked[{lot.quote.quote}#{lot.k}]")
            m.add(blocked == lot.delivered + lot.quote.install_days).only_enforce_if(lot.present)
            m.add(blocked == h + 1).only_enforce_if(~lot.present)
            intervals.append(m.new_interval_var(0, blocked, blocked, f"pool[{lot.quote.quote}#{lot.k}]"))
            demands.append(lot.quote.lot_nodes)
        for wi, w in enumerate(pm.data.workloads):
            for ci, c in pm.candidates(wi):
                if c.owned and c.system == system:
                    intervals.append(m.new_optional_interval_var(pm.start[wi], c.days, pm.end[wi], pm.x[wi, ci],
                                                                 f"run[{w.id},{ci}]"))
                    demands.append(c.nodes)
        capacity = sum(lot.quote.lot_nodes for lot in pm.lots if lot.quote.system == system)
        m.add_cumulative(intervals, demands, capacity)


def _add_hardware_bounds(pm: ProgramModel) -> None:
    """Redundant rows for the LP relaxation. Per workload on owned nodes of a system: that system's lots cost at
    least its `hardware_floor`, and their cash at least n × the cheapest capex; without them the relaxation runs
    every workload on owned hardware nobody paid for. Per system: the lots' node-days held after installation are
    at least the node-days its workloads run, Σ lot_nodes·(held − install·bought) ≥ Σ n·days·x — every node a run
    uses is usable and held on each of its days — so workloads that share bought nodes pay for holding them through
    all their runs, not through the longest one alone (with the held-days rows of each lot, a tighter root bound;
    measured: bench/README.md, "Timings that used to live in docstrings (moved 2026-12-07)")."""
    m = pm.model
    for system in sorted({lq.system for lq in pm.data.lots}):
        capex = min(lq.capex_usd_per_node for lq in pm.data.lots if lq.system == system)
        lots = [lot for lot in pm.lots if lot.quote.system == system]
        used = [(wi, ci, c) for wi in range(len(pm.data.workloads)) for ci, c in pm.candidates(wi)
                if c.owned and c.system == system]
        if used:
            m.add(sum(lot.quote.lot_nodes * (lot.held - lot.quote.install_days * lot.present) for lot in lots) >=
                  sum(pm.x[wi, ci] * c.nodes * c.days for wi, ci, c in used))
        for wi in range(len(pm.data.workloads)):
            mine = [(ci, c) for w2, ci, c in used if w2 == wi]
            if mine:
                m.add(sum(lot.cost for lot in lots) >=
                      sum(pm.x[wi, ci] * int(hardware_floor(pm.data, c) / UNIT) for ci, c in mine))
                m.add(sum(lot.cash for lot in lots) >= sum(pm.x[wi, ci] * int(c.nodes * capex / UNIT)
                                                          for ci, c in mine))


def _add_rented_sharing(pm: ProgramModel) -> None:
    """A rented quote used by several workloads holds at most its `max_nodes` at any time."""
    m = pm.model
    for qid, cap in pm.data.rented_capacity:
        users = [(wi, ci, c) for wi in range(len(pm.data.workloads)) for ci, c in pm.candidates(wi)
                 if c.quote == qid]
        if len({wi for wi, _, _ in users}) < 2:
            continue
        gid = f"quotes.{qid}.max_nodes"
        lit = pm.group(gid, f"{qid}: at most {cap} nodes", numeric=True)
        total = sum(c.nodes for _, _, c in users)
        capacity = m.new_int_var(0, total, f"cap[{qid}]")
        m.add(capacity == min(cap, total)).only_enforce_if(lit)
        intervals = [m.new_optional_interval_var(pm.start[wi], c.days, pm.end[wi], pm.x[wi, ci],
                                                 f"rent[{qid},{wi},{ci}]") for wi, ci, c in users]
        m.add_cumulative(intervals, [c.nodes for _, _, c in users], capacity)
        pm.quantities[gid] = [capacity]


def _delivered_before(pm: ProgramModel, lot: Lot, day: int) -> Any:
    """A literal that is true when the lot is bought and delivered before `day` (may be true otherwise only if
    that does not help: it only ever appears on the left of a ≤ limit)."""
    m = pm.model
    late = m.new_bool_var(f"late[{lot.quote.quote}#{lot.k},{day}]")
    m.add(lot.delivered >= day).only_enforce_if(late)
    m.add(lot.delivered < day).only_enforce_if(~late)
    on = m.new_bool_var(f"on[{lot.quote.quote}#{lot.k},{day}]")
    m.add_bool_or([on, ~lot.present, late])
    return on


def _add_power_and_racks(pm: ProgramModel) -> None:
    m = pm.model
    for win in pm.data.power:
        lit = pm.group(win.group, f"IT power {win.limit:,.0f} kW {win.label}", numeric=True)
        end = min(win.end, pm.horizon + 1)
        used = sum(_delivered_before(pm, lot, end) * math.ceil(lot.quote.node_kw * lot.quote.lot_nodes * 10)
                   for lot in pm.lots)
        m.add(used <= math.floor(win.limit * 10 + 1e-6)).only_enforce_if(lit)
        pm.quantities[win.group] = [used]
    if pm.data.racks is not None and pm.lots:
        lit = pm.group("site.racks", f"{pm.data.racks} racks", numeric=True)
        used = sum(lot.present * lot.quote.racks_per_lot for lot in pm.lots)
        m.add(used <= pm.data.racks).only_enforce_if(lit)
        pm.quantities["site.racks"] = [used]


def rent_per_day(c: Candidate) -> int:
    """Dollars per day a rental's cash counts in the quarters it overlaps (rounded up)."""
    return 0 if c.owned else int(math.ceil(c.cash_usd / c.days - 1e-9))


def _rent_in(pm: ProgramModel, wi: int, first: int, end: int) -> Any:
    """Dollars of workload `wi`'s rent that fall in days [first, end): its daily rate (0 on owned nodes) times the
    days its run overlaps them; None when no run of it can overlap those days. (One enforced row per candidate
    instead of the product, which solved slower; measured: bench/README.md, "Timings that used to live in
    docstrings (moved 2026-12-07)".)"""
    m, w = pm.model, pm.data.workloads[wi]
    rented = [(ci, c) for ci, c in pm.candidates(wi) if not c.owned]
    latest = w.deadline_day if w.deadline_day is not None else pm.horizon
    soonest = max(w.earliest_day, min((c.ready_day for _, c in rented), default=pm.horizon))
    if not rented or soonest >= end or latest <= first:
        return None
    lo = m.new_int_var(first, max(first, pm.horizon), "")
    m.add_max_equality(lo, [pm.start[wi], first])
    hi = m.new_int_var(min(end, 0), max(end, pm.horizon), "")
    m.add_min_equality(hi, [pm.end[wi], end])
    overlap = m.new_int_var(0, max(0, end - first), "")
    m.add_max_equality(overlap, [hi - lo, 0])
    rate = m.new_int_var(0, max(rent_per_day(c) for _, c in rented), "")
    m.add(rate == sum(pm.x[wi, ci] * rent_per_day(c) for ci, c in rented))
    paid = m.new_int_var(0, max(rent_per_day(c) for _, c in rented) * max(0, end - first), "")
    m.add_multiplication_equality(paid, [rate, overlap])
    return paid


def _add_quarters(pm: ProgramModel) -> None:
    m = pm.model
    for q in pm.data.quarters:
        lit = pm.group(q.group, f"spend in {q.label}", numeric=True)
        spend = []
        for lot in pm.lots:
            if lot.quote.last_order_day < q.first or q.end <= 0:
                continue
            early = m.new_bool_var("")
            m.add(lot.order < q.first).only_enforce_if(early)
            m.add(lot.order >= q.first).only_enforce_if(~early)
            late = m.new_bool_var("")
            m.add(lot.order >= q.end).only_enforce_if(late)
            m.add(lot.order < q.end).only_enforce_if(~late)
            inside = m.new_bool_var("")
            m.add_bool_or([inside, ~lot.present, early, late])
            spend.append(inside * math.ceil(lot.quote.capex_usd_per_node * lot.quote.lot_nodes))
        for wi in range(len(pm.data.workloads)):
            paid = _rent_in(pm, wi, q.first, q.end)
            if paid is not None:
                spend.append(paid)
        total = sum(spend)
        m.add(total <= int(q.limit)).only_enforce_if(lit)
        pm.quantities[q.group] = [total]


def _add_money(pm: ProgramModel) -> None:
    m = pm.model
    cost_terms: list[Any] = []
    cash_terms: list[Any] = []
    for wi in range(len(pm.data.workloads)):
        for ci, c in pm.candidates(wi):
            cost_terms.append(pm.x[wi, ci] * units(c.cost_usd))
            cash_terms.append(pm.x[wi, ci] * units(c.cash_usd))
            key = c.porting_key
            if key not in pm.ported:
                pm.ported[key] = m.new_bool_var(f"ported[{key}]")
            m.add_implication(pm.x[wi, ci], pm.ported[key])
    port = {c.porting_key: c.porting_usd for w in pm.data.workloads for c in w.candidates}
    for key, lit in pm.ported.items():
        cost_terms.append(lit * units(port[key]))
        cash_terms.append(lit * units(port[key]))
    cost_terms += [lot.cost for lot in pm.lots]
    cash_terms += [lot.cash for lot in pm.lots]
    pm.cost = sum(cost_terms)
    pm.cash = sum(cash_terms)
    if pm.data.budget_usd is not None:
        lit = pm.group("budget.max_usd", f"budget {pm.data.budget_usd:,.0f} USD",
                       numeric=True)
        limited = pm.cash if pm.data.budget_on_cash else pm.cost
        m.add(limited <= math.floor(pm.data.budget_usd / UNIT + 1e-9)).only_enforce_if(lit)
        pm.quantities["budget.max_usd"] = [limited]


def _add_chance(pm: ProgramModel, limits: bool) -> None:
    """Each candidate starts by its latest start at the confidence (None: never, while its workload's deadline
    and the confidence hold), and every cut learnt so far that applies to this model. The chained bound (after its
    ancestors) is a start limit only with `limits` (a feasibility check: it proves infeasible dates without dozens of
    rounds of cuts); otherwise only where it rules a candidate out: as a start limit it made the optimisation much
    slower to prove for the same optimum and no cut either way, as an exclusion faster (measured: bench/README.md,
    "Timings that used to live in docstrings (moved 2026-12-07)")."""
    chance = pm.data.chance
    if chance is None:
        return
    conf = pm.group(CONFIDENCE_GROUP, f"each deadline met in {chance.confidence:.0%} of the risk scenarios")
    bounds = chance.start_bounds(pm.data.workloads, pm.data.lots)
    for wi, w in enumerate(pm.data.workloads):
        if w.deadline_day is None or w.deadline_group is None:
            continue
        guard = [conf, pm.literals[w.deadline_group]]
        for ci, c in pm.candidates(wi):
            bound = bounds[w.id, identity(c)]
            _latest(pm, wi, ci, bound.alone, guard)
            chained = bound.chained if limits or bound.chained is None else bound.alone
            if chained != bound.alone and all(g in pm.literals for g in bound.after):
                _latest(pm, wi, ci, chained, guard + [pm.literals[g] for g in bound.after])
    for cut in chance.cuts:
        _add_cut(pm, cut, conf)


def _latest(pm: ProgramModel, wi: int, ci: int, top: int | None, guard: list[Any]) -> None:
    """Candidate ci of workload wi starts by `top` while the `guard` groups hold (None: is not chosen then)."""
    x = pm.x[wi, ci]
    if top is None:
        pm.model.add_bool_or([~x] + [~g for g in guard])
    elif top < pm.horizon:
        pm.model.add(pm.start[wi] <= top).only_enforce_if([x, *guard])


def _add_cut(pm: ProgramModel, cut: ProgramChanceCut, conf: Any) -> None:
    """One clause: the confidence, the deadline or a precedence the cut relies on is dropped, or the plan differs
    from the cut's set somewhere (`ProgramChanceCut`). Nothing is added when the model cannot hold a plan of the set (a
    candidate or a lot it names is not in this model) or the deadline is later than the one it was learnt at."""
    m = pm.model
    ids = [w.id for w in pm.data.workloads]
    w = pm.data.workloads[ids.index(cut.workload)]
    if w.deadline_day is None or w.deadline_group is None or w.deadline_day > cut.deadline:
        return
    if any(g not in pm.literals for g in cut.after):
        return
    clause = [~conf, ~pm.literals[w.deadline_group]] + [~pm.literals[g] for g in cut.after]
    for wid, idents, top in cut.runs:
        wi = ids.index(wid)
        wanted = set(idents)
        same = [pm.x[wi, ci] for ci, c in pm.candidates(wi) if identity(c) in wanted]
        if not same:
            return
        clause.append(~same[0] if len(same) == 1 else _literal(m, sum(same) == 0))
        if top is not None:
            clause.append(_literal(m, pm.start[wi] <= top - 1))
    lots = {(lot.quote.quote, lot.k): lot for lot in pm.lots}
    for qid, k, top in cut.lots:
        if (qid, k) not in lots:
            return
        clause.append(~lots[qid, k].present)
        if top is not None:
            clause.append(_literal(m, lots[qid, k].order <= top - 1))
    for u, v in cut.pairs:
        clause.append(_literal(m, pm.end[ids.index(u)] >= pm.start[ids.index(v)] + 1))
    for qid, k, v in cut.lot_waits:
        lot = lots[qid, k]
        clause.append(_literal(m, lot.delivered + lot.quote.install_days >= pm.start[ids.index(v)] + 1))
    m.add_bool_or(clause)


def _literal(m: Model, condition: Any) -> Any:
    """A literal that implies `condition` (one direction is all a clause needs)."""
    lit = m.new_bool_var("")
    m.add(condition).only_enforce_if(lit)
    return lit


def build_program_model(data: ProgramData, checking: bool = False) -> ProgramModel:
    """The program model with every group's literal free (solving fixes them; see module docstring); `checking`:
    for feasibility checks, with the constraints that prove infeasibility sooner and slow an optimisation down."""
    pm = ProgramModel(data, Model(), data.calendar_days)
    _add_choices(pm)
    _add_schedule(pm)
    _add_same_hardware(pm)
    _add_lots(pm)
    _add_decision_gates(pm)
    _add_pools(pm)
    _add_hardware_bounds(pm)
    _add_rented_sharing(pm)
    _add_power_and_racks(pm)
    _add_quarters(pm)
    _add_money(pm)
    _add_chance(pm, checking)
    return pm


def objective_weight(pm: ProgramModel) -> int:
    """One unit of cost outweighs every day of every workload's end."""
    return (pm.horizon + 1) * len(pm.data.workloads) + 1


def cost_ceiling(pm: ProgramModel) -> int:
    """An upper bound of the model's cost in units: every workload on its dearest candidate, every stack ported,
    every lot at the top of its cost variable's domain (what makes the time objective lexicographic)."""
    runs = sum(max((units(c.cost_usd) for c in w.candidates), default=0) for w in pm.data.workloads)
    port = {c.porting_key: units(c.porting_usd) for w in pm.data.workloads for c in w.candidates}
    return runs + sum(port.values()) + sum(lot.cost_top for lot in pm.lots)


def objective(pm: ProgramModel) -> Any:
    """The program's objective (`ProgramData.objective`) as one integer expression: `cost` is cost, then the
    earliest ends; `time` the program's end, then cost, then the ends; a delay cost per day adds that many units
    per day of the program's end to its cost, then the ends (the single run's three objectives, with the
    program's end as its finish)."""
    kind, per_day = pm.data.objective
    weight = objective_weight(pm)
    if kind == "time":
        return pm.program_end * ((cost_ceiling(pm) + 1) * weight) + pm.cost * weight + sum(pm.end)
    if kind == "delay":
        return (pm.cost + units(per_day) * pm.program_end) * weight + sum(pm.end)
    return pm.cost * weight + sum(pm.end)


__all__ = ["ProgramModel", "ProgramGroup", "Lot", "build_program_model", "objective", "objective_weight", "units",
           "UNIT", "rent_per_day"]
