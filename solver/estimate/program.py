"""Estimates for a program: per workload its candidate runs, per bought quote its purchase lots, and the calendar.

Everything the program model (`model/program.py`) chooses from is a constant computed here by the single-run
estimators (`options.py`, `cost.py`), so the model only places intervals and counts money:

- A *candidate* is one way to run a workload: an option (system × mode) at n nodes, on one rented quote (one fabric
  per job) or on the program's owned pool of that system. Its duration is the point's wall time (failures
  included); its cost is what the run itself consumes — for rented capacity n × the quote's per-node lines plus the
  per-plan operations line, for owned hardware the energy it draws while it runs and the operations line. Porting
  is charged once per software stack and framework in the program, not per workload (`porting_usd`).
- A *lot* is a fixed-size batch of a bought quote's nodes (about `assumptions.program.lot_gpus` GPUs, at least the
  quote's minimum order): ordered on a day, delivered `lead` days later, usable after installation, and held to the
  end of the program. Its cost depends only on how long it is held, so it is a table over held days:
  price × (hardware share charged − resale credited) + capital, support and hall per day held (cost.py's formulas,
  the same `policy.after_run` semantics as a single run, held from delivery to the program's end).
- The candidate sizes of an option are the node counts on its (days, cost) Pareto front, thinned to at most
  `assumptions.program.sizes_per_option` spread evenly in log(days) — always the cheapest and the fastest. The
  optimum is over these candidates; the program's output says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date

from .. import collect
from ..inputs.assumptions import Assumptions
from ..inputs.catalog import Quote
from ..inputs.problem import Problem
from ..inputs.spec import CostObjective
from ..inputs.program import ProgramProblem, quarter_bounds
from ..inputs.rules import (adjustments, delay_days, lot_allowed, names_quote, option_attrs,
                            policy_breaches, program_run_hits, rule_group)
from .delivery import install_days
from .uncertainty import Draws
from .program_chance import DrawnScenarios, ProgramChance, RunScenario
from .options import Option, Point, Universe, build_universe, offer_of, option_quote_ready
from .program_holding import held_tables


@dataclass(frozen=True)
class Candidate:
    """One way to run one workload (see module docstring); money in dollars."""

    workload: str
    option: str
    accelerator: str
    system: str
    mode: str
    nodes: int
    gpus: int
    days: int
    ready_day: int
    """First day it may start on this option whatever the schedule says: the platform's availability and porting,
    the rented quote's delivery at the lead-time confidence and the rules' delays, on owned nodes the first day the
    lots can deliver n nodes (`owned_ready_day`): facts, not groups."""
    quote: str | None
    """The rented quote; None when it runs on owned nodes of `system`."""
    cost_usd: float
    cash_usd: float
    porting_key: str
    porting_usd: float
    barred_by: tuple[str, ...] = ()
    """The rules (`rules.<name>` groups) that forbid this run, or require what it is not: the model keeps it, off
    while any of them is enforced, so that an explanation can name a rule and `--why-not` can drop one."""
    scenario: RunScenario | None = field(default=None, compare=False, repr=False)
    """What its risk scenarios read (`program_chance.py`); None in data made by hand without them."""
    commit_days: int = 0
    """Days from committing to its rented quote to its first day on it (lead time at the confidence, installation,
    the rules' delays): a workload with `decide_after` starts on a rented quote no sooner after its gates finish.
    0 on owned nodes (their lots carry their lead time)."""
    commit_by: int | None = None
    """The last day its rented quote may be committed at its price (its `valid_until`): a gated workload's gates
    must finish by then. None on owned nodes (their lots' `last_order_day`)."""

    @property
    def owned(self) -> bool:
        return self.quote is None

    @property
    def label(self) -> str:
        return f"{self.option} x{self.nodes}" + (f" ({self.quote})" if self.quote else " (owned)")


@dataclass(frozen=True)
class LotQuote:
    """A bought quote as purchase lots (see module docstring). Tables are per node, indexed by days held."""

    quote: str
    system: str
    lot_nodes: int
    lots: int
    max_nodes: int
    last_order_day: int
    lead_days: int
    install_days: int
    node_kw: float
    racks_per_lot: int
    capex_usd_per_node: float
    held_cost_usd: tuple[float, ...]
    held_cash_usd: tuple[float, ...]


@dataclass(frozen=True)
class WorkloadData:
    id: str
    earliest_day: int
    deadline_day: int | None
    deadline_group: str | None
    earliest_group: str
    after: tuple[str, ...]
    same_hardware_as: str | None
    candidates: tuple[Candidate, ...]
    considered: int
    """Points that could run it (memory, policy, rules) before the program's last deadline and the thinning."""
    first_finish: int | None = None
    """The earliest day any of those could finish, started as soon as it may (for the report)."""
    decide_after: tuple[str, ...] = ()
    """Its decision gates: its hardware is ordered or committed only once these workloads have finished."""


@dataclass(frozen=True)
class Window:
    """A limit over days [first, end): a power segment (kW) or a quarter (dollars)."""

    group: str
    label: str
    first: int
    end: int
    limit: float


@dataclass(frozen=True)
class ProgramData:
    workloads: tuple[WorkloadData, ...]
    lots: tuple[LotQuote, ...]
    rented_capacity: tuple[tuple[str, int], ...]
    """Rented quotes whose capacity the model enforces (several workloads may fill them), with their `max_nodes`."""
    power: tuple[Window, ...]
    racks: int | None
    quarters: tuple[Window, ...]
    budget_usd: float | None
    budget_on_cash: bool
    horizon: int
    """The program's latest deadline when every workload has one, else `calendar_days`."""
    calendar_days: int
    """A day after any end a plan can have even with every deadline dropped: the model's calendar and the length
    of the held-days tables."""
    as_of: date
    sizes_per_option: int
    kinks: tuple[int, ...] = ()
    """Days held at which a lot's held-days cost changes slope (the resale curve's ages, the depreciation life)."""
    quote_capacity: tuple[tuple[str, int], ...] = ()
    """Every rented quote a candidate uses, with its `max_nodes` (the checker's and `relaxed`'s reference)."""
    objective: tuple[str, float] = ("cost", 0.0)
    """What the program minimises: ("cost", 0) cost, then ends; ("time", 0) the program's end, then cost;
    ("delay", usd_per_day) cost + usd_per_day × the program's end in days from `as_of`, then ends."""
    chance: ProgramChance | None = field(default=None, compare=False)
    """`policy.deadline_confidence`: the scenarios each deadline must be met in, and the cuts learnt so far
    (`program_chance.py`); None without one."""


def _day(d: date | None, as_of: date) -> int | None:
    return None if d is None else (d - as_of).days


def _groups(pp: ProgramProblem, i: int) -> tuple[str | None, str]:
    """The groups that name a workload's deadline and earliest start: its own when it is the binding one."""
    w, spec = pp.spec.workloads[i], pp.spec
    own_d, prog_d = w.schedule.deadline, spec.schedule.deadline
    dl = None
    if own_d is not None and (prog_d is None or own_d <= prog_d):
        dl = f"workloads.{w.id}.schedule.deadline"
    elif prog_d is not None:
        dl = "schedule.deadline"
    own_s, prog_s = w.schedule.earliest_start, spec.schedule.earliest_start
    es = f"workloads.{w.id}.schedule.earliest_start" if own_s is not None and (prog_s is None or own_s >= prog_s) \
        else "schedule.earliest_start"
    return dl, es


def _allowed(problem: Problem, o: Option) -> bool:
    """Policy and cooling, which hold whatever the size (a program has no per-option groups; rules are groups, see
    `Candidate.barred_by`)."""
    kinds = [q.kind for q in o.quotes]
    return not policy_breaches(problem.spec, o.attrs, kinds)


def _spot_allowed(problem: Problem, o: Option, pt: Point) -> bool:
    """Spot capacity for multi-node pretraining only when the policy allows it."""
    spec = problem.spec
    return not (o.preemptible and pt.n > 1 and spec.workload.method in ("pretrain", "continued_pretrain")
                and not spec.policy.allow_preemptible)


def policy_groups(pp: ProgramProblem, i: int, o: Option) -> tuple[str, ...]:
    """The policy and site groups that rule out option `o` for workload `i`, each named where it is written: the
    program's (`policy.accelerators`, `site.cooling`, …) when the program's own sections rule it out, the
    workload's (`workloads.<id>.policy.accelerators`) when only its narrowing does."""
    item, problem = pp.workloads[i]
    kinds = [q.kind for q in o.quotes]
    program_spec = problem.spec.model_copy(update={"policy": pp.spec.policy})
    mine = policy_breaches(program_spec, o.attrs, kinds)
    narrowed = [f"workloads.{item.id}.{g}" for g in policy_breaches(problem.spec, o.attrs, kinds) if g not in mine]
    return tuple(mine) + tuple(narrowed)


def _barred_by(problem: Problem, o: Option, pt: Point, quote: str | None, lots: list[str], cost: float
               ) -> tuple[str, ...]:
    """The forbid/require rules that rule out one run (`program_run_hits`: the point, the rented quote or the lots
    it may use, its own cost; `lots`: the option's bought quotes the program may buy)."""
    out = []
    for r in problem.spec.rules:
        if isinstance(r.then, str):
            hit = program_run_hits(r, o.attrs, pt.gpus, pt.n, pt.days, pt.power_kw, quote, lots, cost)
            if (r.then == "forbid" and hit) or (r.then == "require" and not hit):
                out.append(rule_group(r.name))
    return tuple(out)


def _rule_terms(problem: Problem, o: Option, pt: Point, base: float, quote: str | None) -> tuple[float, int]:
    """(dollars, delay days) the adjustment rules add to a run: add_usd + add_pct of the run's cost. A rule that
    names quotes adjusts the runs on those rented quotes (`inputs/program.py` refuses one that names a bought
    quote: its lots serve several workloads)."""
    usd, delay = 0.0, 0
    for r, then in adjustments(problem.spec.rules, o.attrs, pt.gpus, pt.n, pt.days, pt.power_kw):
        if r.when.quote is not None and (quote is None or not names_quote(r, [quote])):
            continue
        usd += (then.add_usd or 0.0) + base * (then.add_pct or 0.0) / 100.0
        delay += delay_days(then)
    return usd, delay


def _porting(o: Option, a: Assumptions) -> float:
    return o.porting.weeks * a.money.engineer_usd_per_month * 12.0 / 52.0


def _run_lines(pt: Point) -> tuple[float, float]:
    """(cost, cash) of the per-plan lines other than porting (operations; porting is the program's)."""
    lines = pt.fixed
    return (lines.total_cost - lines.cost.get("porting", 0.0), lines.total_cash - lines.cash.get("porting", 0.0))


def run_money(problem: Problem, pt: Point, quote: str | None) -> tuple[float, float]:
    """(cost, cash) of one run at point `pt` before the rules' additions: on a rented quote its nodes' lines, on
    owned nodes the energy it draws (the hardware is the lots'), plus the per-plan lines other than porting."""
    run_cost, run_cash = _run_lines(pt)
    if quote is not None:
        return pt.n * pt.per_node.cost(quote) + run_cost, pt.n * pt.per_node.cash(quote) + run_cash
    site = problem.spec.site
    assert site is not None and pt.time is not None
    energy = pt.power_kw * site.pue * site.electricity_usd_per_kwh * pt.time.wall_hours
    return energy + run_cost, energy + run_cash


def _candidates_of(problem: Problem, wid: str, o: Option, owned_cap: dict[str, int],
                   policy: tuple[str, ...] | None = None) -> list[Candidate]:
    """The workload's candidates on one option: every fitting point on every source (a rented quote, or the owned
    pool). `policy` (when explaining): the policy groups that rule the option out (`policy_groups`; empty when
    none does), which bar each candidate with the rules that do; spot points the policy forbids are then barred by
    `policy.allow_preemptible` instead of left out."""
    a = problem.assumptions.values
    site = problem.spec.site
    out: list[Candidate] = []
    key = f"{o.accel.software}/{problem.spec.workload.framework}"
    port = _porting(o, a)
    sources: list[Quote | None] = [None] if o.mode == "buy" else list(o.quotes)
    lots = [q.id for q in o.quotes if lot_allowed(problem.spec.rules, q.id, o.attrs)] if o.mode == "buy" else []
    for q in sources:
        ready = max(o.ready_day, option_quote_ready(q, o, a) if q is not None else 0)
        qid = q.id if q is not None else None
        for pt in o.points:
            if not (pt.fits and pt.workable and pt.time is not None):
                continue
            spot = () if _spot_allowed(problem, o, pt) else ("policy.allow_preemptible",)
            if spot and policy is None:
                continue
            if q is not None and not (q.min_nodes <= pt.n <= q.max_nodes):
                continue
            if q is None and (site is None or pt.n > owned_cap.get(o.system.id, 0)):
                continue
            cost, cash = run_money(problem, pt, qid)
            add, delay = _rule_terms(problem, o, pt, cost, qid)
            barred = (policy or ()) + spot + _barred_by(problem, o, pt, qid, lots if q is None else [], cost + add)
            start = ready + delay
            lead = None if q is None else (q.lead_time_days, q.lead_time_p90_days)
            scenario = RunScenario(pt.time, o.accel.software, o.accel.cls, key, o.porting.delay_days, lead,
                                   install_days(o.mode, o.accel.cls, a),
                                   o.accel.id in (problem.spec.workload.measured_mfu or {}))
            commit = 0 if q is None else option_quote_ready(q, o, a) + delay
            by = None if q is None else (q.valid_until - problem.as_of).days
            out.append(Candidate(wid, o.id, o.accel.id, o.system.id, o.mode, pt.n, pt.gpus, pt.days, start,
                                 qid, cost + add, cash + add, key, port, barred, scenario, commit, by))
    return out


def thin(cands: Sequence[Candidate], k: int) -> list[Candidate]:
    """The (days, cost) Pareto front of one option's candidates on one source, thinned to at most k spread evenly
    in log(days), keeping the cheapest and the fastest (see module docstring)."""
    front: list[Candidate] = []
    for c in sorted(cands, key=lambda c: (c.days, c.cost_usd, c.nodes)):
        if not front or c.cost_usd < front[-1].cost_usd - 1e-6:
            front.append(c)
    if len(front) <= k:
        return front
    lo, hi = math.log(front[0].days), math.log(front[-1].days)
    picked: list[Candidate] = []
    for j in range(k):
        target = lo + (hi - lo) * j / (k - 1)
        best = min(front, key=lambda c: (abs(math.log(c.days) - target), c.days))
        if best not in picked:
            picked.append(best)
    return sorted(picked, key=lambda c: (c.days, c.cost_usd))


def _owned_capacity(universe: Universe, problem: Problem) -> dict[str, int]:
    """Per system, the most nodes the program may buy: the quotes its rules let it buy (`lot_allowed`)."""
    cap: dict[str, int] = {}
    for o in universe.options:
        if o.mode == "buy":
            cap[o.system.id] = cap.get(o.system.id, 0) + sum(q.max_nodes for q in o.quotes
                                                             if lot_allowed(problem.spec.rules, q.id, o.attrs))
    return cap


def cap_day(pp: ProgramProblem) -> int | None:
    """The program's latest deadline when every workload has one (no plan finishes later), else None."""
    days = [_day(p.spec.schedule.deadline, pp.as_of) for _w, p in pp.workloads]
    return None if any(d is None for d in days) else max(d for d in days if d is not None)


def allowed_pairs(problem: Problem) -> set[str]:
    """The accelerator/offer pairs the workload's policy allows with at least one quote (its universe is built for
    these only: a bake-off narrowed to one accelerator in the cloud needs a handful of options, not sixty)."""
    cat = problem.catalog
    out: set[str] = set()
    for q in cat.quotes.values():
        system = cat.systems[q.system]
        accel = cat.accelerators[system.accelerator]
        attrs = option_attrs(accelerator=accel.id, system=system.id, vendor=accel.vendor, cls=accel.cls,
                             mode=q.mode, ecc=bool(accel.ecc.value), cooling=system.cooling, software=accel.software,
                             network=system.network)
        if not policy_breaches(problem.spec, attrs, [q.kind]):
            out.add(f"{accel.id}/{offer_of(q)}")
    return out


def workload_data(pp: ProgramProblem, i: int, k: int, policy_barred: bool = False) -> WorkloadData:
    """Workload `i`'s candidates. `policy_barred`: also the options its policy or the site rule out, each barred
    by the groups that do (`policy_groups`) — what an explanation needs to name them; otherwise only the options
    they allow are estimated at all (a bake-off narrowed to one accelerator needs a handful of options)."""
    item, problem = pp.workloads[i]
    universe = build_universe(problem, only_pairs=None if policy_barred else allowed_pairs(problem))
    earliest = (problem.earliest_start - pp.as_of).days
    deadline = _day(problem.spec.schedule.deadline, pp.as_of)
    last = cap_day(pp)
    cap = _owned_capacity(universe, problem)
    cands: list[Candidate] = []
    considered = 0
    first_finish: int | None = None
    for o in universe.options:
        policy = policy_groups(pp, i, o) if policy_barred else None
        if not policy_barred and not _allowed(problem, o):
            continue
        every = _candidates_of(problem, item.id, o, cap, policy)
        considered += len(every)
        finishes = [max(c.ready_day, earliest) + c.days for c in every]
        first_finish = min([f for f in (first_finish,) if f is not None] + finishes, default=None)
        # a workload's own deadline is a group the model enforces (an explanation may drop it); the program's
        # latest deadline bounds every candidate
        mine = [c for c, f in zip(every, finishes, strict=True) if last is None or f <= last]
        by_source: dict[tuple[str | None, tuple[str, ...]], list[Candidate]] = {}
        for c in mine:
            by_source.setdefault((c.quote, c.barred_by), []).append(c)
        for src in sorted(by_source, key=lambda s: (s[0] or "", s[1])):
            cands.extend(thin(by_source[src], k))
    dl, es = _groups(pp, i)
    return WorkloadData(item.id, earliest, deadline, dl, es, tuple(item.after), item.same_hardware_as,
                        tuple(sorted(cands, key=lambda c: (c.option, c.quote or "", c.nodes))), considered,
                        first_finish, tuple(item.decide_after))


def lot_quotes(pp: ProgramProblem, needs: dict[str, int], horizon: int) -> list[LotQuote]:
    """The purchase lots of every bought quote of a system some owned candidate runs on (`needs`: its largest n)."""
    problem = pp.first
    a = problem.assumptions.values
    site = problem.spec.site
    out: list[LotQuote] = []
    if site is None:
        return out
    for qid in sorted(problem.catalog.quotes):
        q = problem.catalog.quotes[qid]
        if q.mode != "buy" or q.system not in needs or not q.priced or q.expired(pp.as_of) \
                or q.not_yet_quoted(pp.as_of):
            continue
        system = problem.catalog.systems[q.system]
        accel = problem.catalog.accelerators[system.accelerator]
        attrs = option_attrs(accelerator=accel.id, system=system.id, vendor=accel.vendor, cls=accel.cls, mode=q.mode,
                             ecc=bool(accel.ecc.value), cooling=system.cooling, software=accel.software,
                             network=system.network)
        if not lot_allowed(problem.spec.rules, q.id, attrs):
            continue
        lot = min(q.max_nodes, max(q.min_nodes, math.ceil(a.program.lot_gpus / system.per_node)))
        node_kw = float(system.node_kw.value)
        per_rack = min(int(system.nodes_per_rack.value), int(site.rack_power_kw // node_kw))
        if per_rack < 1:
            continue
        lots = max(1, math.ceil(needs[q.system] / lot))
        cost, cash, capex = held_tables(q, system, problem, horizon)
        out.append(LotQuote(q.id, q.system, lot, lots, q.max_nodes, (q.valid_until - pp.as_of).days,
                            math.ceil(q.lead_days(a.confidence)), math.ceil(install_days("buy", accel.cls, a)),
                            node_kw, math.ceil(lot / per_rack), capex, cost, cash))
    return out


def _windows(pp: ProgramProblem) -> tuple[tuple[Window, ...], tuple[Window, ...]]:
    spec, as_of = pp.spec, pp.as_of
    power: list[Window] = []
    if spec.site is not None:
        steps = spec.site.power_steps
        bounds = [0] + [max(0, (s.from_ - as_of).days) for s in steps]
        limits = [spec.site.it_power_kw] + [s.it_power_kw for s in steps]
        groups = ["site.it_power_kw"] + [f"site.power_steps[{i}]" for i in range(len(steps))]
        labels = [f"until {steps[0].from_}" if steps else "always"] + \
            [f"from {s.from_}" for s in steps]
        for j, (g, lab, lim) in enumerate(zip(groups, labels, limits, strict=True)):
            end = bounds[j + 1] if j + 1 < len(bounds) else MAX_DAY
            if end > bounds[j]:
                power.append(Window(g, lab, bounds[j], end, float(lim)))
    quarters: list[Window] = []
    for label, cap in sorted(spec.budget.per_quarter_usd.items()):
        first, nxt = quarter_bounds(label)
        quarters.append(Window(f"budget.per_quarter_usd.{label}", label, (first - as_of).days,
                               (nxt - as_of).days, float(cap)))
    return tuple(power), tuple(quarters)


MAX_DAY = 10 ** 6
"""A day after any program's end (the open end of the last power segment)."""


def calendar_days(pp: ProgramProblem, workloads: Sequence[WorkloadData], horizon: int) -> int:
    """See `ProgramData.calendar_days`: the latest ready day or last lot delivery, plus every workload back to back
    at its longest candidate, plus the longest commitment of a gated workload's rented candidates (counted from its
    gates' finish, not from day 0)."""
    problem = pp.first
    a = problem.assumptions.values
    ready = max((max(c.ready_day, w.earliest_day) for w in workloads for c in w.candidates), default=0)
    install = math.ceil(max(a.install_days.values()))
    lead = max((max(0, (q.valid_until - pp.as_of).days) + math.ceil(q.lead_days(a.confidence)) + install
                for q in problem.catalog.quotes.values() if q.mode == "buy"), default=0)
    longest = sum(max((c.days for c in w.candidates), default=0) for w in workloads)
    gated = max((c.commit_days for w in workloads if w.decide_after for c in w.candidates), default=0)
    return max(horizon, max(ready, lead) + longest + gated) + 1


def _kinks(problem: Problem) -> tuple[int, ...]:
    """See `ProgramData.kinks`: between these days every held-days line of `cost.py` is linear."""
    money = problem.assumptions.values.money
    ages = [round(age * 365) for age in money.resale_value_by_age_years]
    return tuple(sorted(set(ages) | {round(money.depreciation_years * 365)}))


def _most_per_workload(workloads: Sequence[WorkloadData]) -> list[dict[str, int]]:
    """Per workload, the most nodes any of its candidates takes of each rented quote."""
    out = []
    for w in workloads:
        per: dict[str, int] = {}
        for c in w.candidates:
            if c.quote is not None:
                per[c.quote] = max(per.get(c.quote, 0), c.nodes)
        out.append(per)
    return out


def free_quotes(workloads: Sequence[WorkloadData], capacity: dict[str, int]) -> set[str]:
    """Rented quotes whose capacity no plan can exceed: every workload on it at its largest candidate at once."""
    most: dict[str, int] = {}
    for per in _most_per_workload(workloads):
        for q, n in per.items():
            most[q] = most.get(q, 0) + n
    return {q for q, n in most.items() if n <= capacity[q]}


def _rate(c: Candidate) -> float:
    return 0.0 if c.owned else c.cash_usd / c.days


def _dominates(a: Candidate, b: Candidate, room: dict[str, int], pinned: bool, gated: bool = False) -> bool:
    """`a` can replace `b` in any plan: started on `b`'s day it runs inside `b`'s interval, costs and spends no more
    in any quarter, keeps the software stack (and the accelerator, for a workload `pinned` by `same_hardware_as`),
    is ruled out by no rule that does not rule out `b` too, and takes no more of the same resource — or a rented
    quote with room for it whatever the other workloads take of it (`room`); for a `gated` workload (decide_after)
    it is also committed no longer before its start, and may be committed as late."""
    if (pinned and a.accelerator != b.accelerator) or a.porting_key != b.porting_key or a.owned != b.owned \
            or not set(a.barred_by) <= set(b.barred_by):
        return False
    if gated and (a.commit_days > b.commit_days or (a.commit_by or 0) < (b.commit_by or 0)):
        return False
    if not (a.ready_day <= b.ready_day and a.days <= b.days and a.cost_usd <= b.cost_usd
            and a.cash_usd <= b.cash_usd and _rate(a) <= _rate(b)):
        return False
    if a.owned:
        return a.system == b.system and a.nodes <= b.nodes
    if a.quote == b.quote and a.nodes <= b.nodes:
        return True
    return a.nodes <= room.get(a.quote or "", 0)


def undominated(w: WorkloadData, room: dict[str, int], pinned: bool = True) -> WorkloadData:
    """The workload without candidates another one of its own can always replace (an exact reduction: the
    conditions hold whatever limits are enforced, so explanations are unchanged too). `room`: nodes of each rented
    quote left for this workload when every other one takes the most it can of it."""
    cands = sorted(w.candidates, key=lambda c: (c.cost_usd, c.days, c.ready_day, c.nodes, c.option, c.quote or ""))
    kept: list[Candidate] = []
    for c in cands:
        if not any(_dominates(k, c, room, pinned, bool(w.decide_after)) for k in kept):
            kept.append(c)
    kept.sort(key=lambda c: (c.option, c.quote or "", c.nodes))
    return replace(w, candidates=tuple(kept))


def reduce_candidates(workloads: Sequence[WorkloadData], capacity: dict[str, int], exempt: str | None = None
                      ) -> list[WorkloadData]:
    """Every workload `undominated` (but `exempt`, whose candidates a why-not will filter by what they run on), each
    with the room the others leave on every rented quote.

    Not under `policy.deadline_confidence` (`relaxed` and `reduced` skip it then): a candidate no worse in its
    planned days can be later in some scenarios (a less mature platform, another vendor's lead time), and the
    timing rule's resource order depends on planned ends, so a shorter run can make another one wait for it."""
    most = _most_per_workload(workloads)
    total: dict[str, int] = {}
    for per in most:
        for q, n in per.items():
            total[q] = total.get(q, 0) + n
    pinned = {w.id for w in workloads if w.same_hardware_as} | {w.same_hardware_as for w in workloads}
    out = []
    for w, mine in zip(workloads, most, strict=True):
        room = {q: cap - (total.get(q, 0) - mine.get(q, 0)) for q, cap in capacity.items()}
        out.append(w if w.id == exempt else undominated(w, room, w.id in pinned))
    return out


def _undominated(data: ProgramData, capacity: dict[str, int], exempt: str | None = None) -> list[WorkloadData]:
    """`reduce_candidates` of the program's workloads, unless a deadline confidence makes dominance unsound (see
    there)."""
    return list(data.workloads) if data.chance is not None else reduce_candidates(data.workloads, capacity, exempt)


def hardware_floor(data: ProgramData, c: Candidate) -> float:
    """Dollars the bought lots cost at least if `c` runs on owned nodes: n nodes delivered before it starts and held
    until the program ends (at least its days plus installation), at the cheapest quote's held-days cost (which
    never falls with time). 0 for a rented candidate."""
    if not c.owned:
        return 0.0
    quotes = [lq for lq in data.lots if lq.system == c.system]
    if not quotes:
        return 0.0
    held = min(data.calendar_days, c.days + min(lq.install_days for lq in quotes))
    return c.nodes * min(lq.held_cost_usd[min(held, len(lq.held_cost_usd) - 1)] for lq in quotes)


def relaxed(data: ProgramData, enforced: set[str]) -> ProgramData:
    """The program with only the `enforced` rented quotes' capacities (the others treated as unlimited), and the
    candidates that this makes dominated removed. Its optimum is a lower bound of the program's; when its plan
    fits every quote's capacity it is the program's optimum (`solve/program.py` adds the quotes a plan overfills
    and solves again)."""
    capacity = {q: (n if q in enforced else 10 ** 9) for q, n in data.quote_capacity}
    workloads = _undominated(data, capacity)
    kept = tuple((q, n) for q, n in data.rented_capacity if q in enforced)
    return replace(data, workloads=tuple(workloads), rented_capacity=kept, lots=_lots_needed(data.lots, workloads))


def _lots_needed(lots: Sequence[LotQuote], workloads: Sequence[WorkloadData]) -> tuple[LotQuote, ...]:
    """Lots of the systems some candidate still runs on owned nodes, as many as its largest such candidate needs
    (more are never usable at once, and a lot bought but never used only costs)."""
    need: dict[str, int] = {}
    for w in workloads:
        for c in w.candidates:
            if c.owned:
                need[c.system] = max(need.get(c.system, 0), c.nodes)
    return tuple(replace(lq, lots=min(lq.lots, math.ceil(need[lq.system] / lq.lot_nodes)))
                 for lq in lots if lq.system in need)


def program_data(pp: ProgramProblem, exempt: str | None = None) -> ProgramData:
    """Everything the program model chooses from (see module docstring), reduced (`reduced`)."""
    return reduced(gathered(pp), exempt)


@collect.paused()
def gathered(pp: ProgramProblem, policy_barred: bool = False) -> ProgramData:
    """Every workload's candidates, the lots and the calendar, before any dominance (every rented quote's capacity
    enforced). Garbage collection waits for the whole program (`collect`), not for each workload's universe: the
    collections between workloads re-scanned every candidate made so far, a cost that grows with each workload
    (measured: bench/README.md, "Timings that used to live in docstrings (moved 2026-12-07)")."""
    a = pp.first.assumptions.values
    k = a.program.sizes_per_option
    workloads = [workload_data(pp, i, k, policy_barred) for i in range(len(pp.workloads))]
    last = cap_day(pp)
    needs: dict[str, int] = {}
    for w in workloads:
        for c in w.candidates:
            if c.owned:
                needs[c.system] = max(needs.get(c.system, 0), c.nodes)
    calendar = calendar_days(pp, workloads, last or 0)
    lots = lot_quotes(pp, needs, calendar)
    workloads = [replace(w, candidates=deliverable(w, lots, last)) for w in workloads]
    capacity = tuple(sorted({c.quote: pp.first.catalog.quotes[c.quote].max_nodes for w in workloads
                             for c in w.candidates if c.quote is not None}.items()))
    power, quarters = _windows(pp)
    site = pp.spec.site
    return ProgramData(tuple(workloads), tuple(lots), capacity, power, site.racks if site is not None else None,
                       quarters, pp.spec.budget.max_usd, pp.spec.budget.applies_to == "cash",
                       last if last is not None else calendar, calendar, pp.as_of, k, _kinks(pp.first), capacity,
                       _objective(pp), _chance(pp))


def _chance(pp: ProgramProblem) -> ProgramChance | None:
    """The program's chance constraints, when `policy.deadline_confidence` is set and a workload has a deadline."""
    c = pp.spec.policy.deadline_confidence
    if c is None or all(p.spec.schedule.deadline is None for _w, p in pp.workloads):
        return None
    problem = pp.first
    a = problem.assumptions.values
    leads = {q.id: (q.lead_time_days, q.lead_time_p90_days) for q in problem.catalog.quotes.values()
             if q.mode == "buy"}
    return ProgramChance(c, DrawnScenarios(Draws(a.uncertainty.seed, a.uncertainty.scenarios), a, leads))


def _objective(pp: ProgramProblem) -> tuple[str, float]:
    obj = pp.spec.objective
    if isinstance(obj, CostObjective):
        return ("delay", obj.delay_cost_usd_per_day)
    return (obj, 0.0)


def owned_ready_day(lots: Sequence[LotQuote], system: str, nodes: int) -> int | None:
    """The first day `nodes` owned nodes of `system` can all be usable: every lot ordered on day 0 (the first
    order day the model allows), usable after its lead time and installation, the soonest first. None when all the
    lots together have fewer nodes. A run on owned nodes cannot start earlier — the pool (`model/program.py`)
    blocks a lot's nodes until it is usable — so this is a fact about the candidate, not a choice: stating it as
    the candidate's ready day lets presolve and the LP drop owned runs the deliveries make late (the ten-workload
    bench's 200B run on GB200 racks, ordered a year ahead, cannot meet its deadline)."""
    have = 0
    for lq in sorted((lq for lq in lots if lq.system == system), key=lambda lq: lq.lead_days + lq.install_days):
        have += lq.lots * lq.lot_nodes
        if have >= nodes:
            return lq.lead_days + lq.install_days
    return None


def deliverable(w: WorkloadData, lots: Sequence[LotQuote], last: int | None) -> tuple[Candidate, ...]:
    """The workload's candidates with each owned one's ready day raised to `owned_ready_day`; owned ones the
    lots cannot supply, or that then cannot finish by the program's last deadline, dropped."""
    out = []
    for c in w.candidates:
        if c.owned:
            day = owned_ready_day(lots, c.system, c.nodes)
            if day is None:
                continue
            c = replace(c, ready_day=max(c.ready_day, day))
            if last is not None and max(c.ready_day, w.earliest_day) + c.days > last:
                continue
        out.append(c)
    return tuple(out)


def reduced(data: ProgramData, exempt: str | None = None) -> ProgramData:
    """`data` with its dominated candidates dropped (`reduce_candidates`; all of `exempt`'s kept: a why-not
    restricts them to some accelerator, system or quote, which dominance does not respect) and no capacity row for
    quotes no plan can fill."""
    capacity = dict(data.quote_capacity)
    workloads = _undominated(data, capacity, exempt)
    free = free_quotes(workloads, capacity)
    return replace(data, workloads=tuple(workloads),
                   rented_capacity=tuple((q, n) for q, n in data.quote_capacity if q not in free))


__all__ = ["Candidate", "LotQuote", "WorkloadData", "Window", "ProgramData", "program_data", "thin",
           "workload_data", "lot_quotes", "gathered", "reduced", "calendar_days", "free_quotes", "undominated",
           "reduce_candidates",
           "hardware_floor", "owned_ready_day", "deliverable", "policy_groups", "relaxed", "held_tables", "run_money",
           "MAX_DAY"]
