"""Ways out of infeasibility: the minimal conflict, its cause, exact single-limit relaxations, what dropping a
policy would allow, the cheapest combined relaxation — each with the plan it leads to.

- **Cause.** When the deadline is in the conflict, the earliest each pair's capacity can be ready and the earliest
  it can finish (over every node count that fits, starting when enough of its quotes' capacity has arrived),
  computed from the estimates alone: the dates behind "cannot finish by the deadline".
- **Exact relaxation** of a numeric group g (budget, deadline, earliest start, power, racks, rack power, quote
  capacity): with every other group enforced and g dropped, minimise the quantity g limits (cash, finish day, IT
  watts, racks, the quote's nodes; maximise the start for earliest_start). The optimum is the smallest limit that
  restores feasibility: feasible at it, infeasible one unit short (units: $1k or $1, a day, a kW, a rack, a node).
  Rack power changes the points themselves, so it is found by search over the values where a rack starts to hold
  one more node, each a what-if of the validated problem. Fixes are listed smallest relative change first.
- **Combined relaxation** (Gurobi feasRelax / CPLEX FeasOpt): every numeric limit gets a slack; minimise the total
  relative change (Σ slack/limit), then cost.
- **Alternatives:** minimal correction sets among the conflict's groups — single groups whose removal alone gives
  a plan, then pairs when no single one does (MARCO's MCS idea, bounded).
A result that a time limit stopped from being proven says so (`proven: false`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from datetime import timedelta
from itertools import combinations
from typing import Any

from ..estimate.options import option_quote_ready
from ..model.builder import Built
from ..model.decode import decode
from ..model.groups import MEMORY, capacity_group, capacity_quote, is_numeric, reason, where
from ..solve.engine import INFEASIBLE, OPTIMAL
from ..solve.forked import fork_map
from ..solve.pipeline import Context, prepare, processes_for
from ..solve.plan import make_plan
from .conflicts import Minimum, PairOracle, PointFloor, budgeted, covering_reason, deletion_filter

log = logging.getLogger(__name__)
MAX_ALTERNATIVES = 5
"""Most "drop these constraints" alternatives listed: each is a solve, and the first few say what matters."""
_SCHEDULE = frozenset({"schedule.deadline", "schedule.earliest_start"})
MAX_CAUSES = 8
"""Most pairs listed in the schedule cause table (the earliest finishers first)."""
MAX_QUOTE_RELAXATIONS = 6
"""Most quotes whose capacity is relaxed one at a time when a conflict holds many (a marketplace catalog puts
every quote of a short-capacity pair in it): each relaxation is two solves, and past a few the list only repeats
"raise one more quote". The quotes with the most capacity go first — the fewest nodes short of a plan."""


def plan_summary(ctx: Context, b: Built, solver_value: Callable[[Any], int]) -> dict[str, Any]:
    """The plan of a solution as plain data for an explanation (exact dollars, from the estimates)."""
    plan = make_plan(ctx.problem, ctx.universe, decode(b, solver_value), b.unit, ctx.screen.outlook)
    return {"option": plan.option, "accelerator": plan.accelerator, "mode": plan.mode, "offer": plan.offer,
            "nodes": plan.nodes, "gpus": plan.gpus, "finish": plan.finish.isoformat(), "cost_usd": round(plan.total_cost),
            "cash_usd": round(plan.total_cash), "quotes": {q.id: q.nodes for q in plan.quotes}}


def _quantity(ctx: Context, g: str) -> Callable[[Built], Any]:
    """What a numeric group limits, as a model expression (the relaxation minimises it, then caps it)."""
    qid = capacity_quote(g)
    if qid is not None:
        return lambda b: b.x[qid] if qid in b.x else 0
    return {"budget.max_usd": budgeted(ctx.problem),
            "schedule.deadline": lambda b: b.finish, "schedule.earliest_start": lambda b: -b.start,
            "site.it_power_kw": lambda b: b.power_w, "site.racks": lambda b: b.racks}[g]


def _lower(ctx: Context, oracle: PairOracle, g: str, act: set[str]) -> str | PointFloor | None:
    """What bounds the quantity of g's relaxation per point, so that its minimisation is solved over the few points
    that could hold the minimum (`PairOracle.minimize`): the budgeted quantity and the finish by the point bounds, a
    quote's nodes by `PairOracle.quote_floor`, and the start (its negative is minimised) by the deadline: a plan at a
    point finishes `days` after it starts, so with the deadline D enforced it starts by D − days, and −start ≥ days −
    D. None where nothing bounds it (power and racks; the start without a plain deadline), so every point is
    modelled."""
    if g == "budget.max_usd":
        return ctx.problem.spec.budget.applies_to
    if g == "schedule.deadline":
        return "finish"
    if (qid := capacity_quote(g)) is not None:
        return oracle.quote_floor(qid, act)
    deadline = ctx.universe.deadline_day
    if g == "schedule.earliest_start" and deadline is not None and "schedule.deadline" in act \
            and ctx.screen.chance is None:
        return lambda pt: pt.days - deadline
    return None


def _sole_fabric(ctx: Context, g: str, active: list[str]) -> str | None:
    """The fabric every plan of a quote capacity's relaxation runs on: with every group but the capacity the
    problem is infeasible, so a plan under the rest exceeds the capacity and uses the quote; one job runs on one
    fabric (`policy.max_fabrics` of 1, enforced), so it uses nothing else. A marketplace pair has thousands of
    quotes, each a variable per node count in a model of them all; the quote's fabric has a few (measured:
    bench/README.md, "Timings that used to live in docstrings (moved 2026-12-07)"). None for other groups, or when
    a job may span fabrics."""
    qid = capacity_quote(g)
    if qid is None or "policy.max_fabrics" not in active or ctx.problem.spec.policy.max_fabrics != 1:
        return None
    return ctx.universe.quote(qid).fabric_id


def _relative(frm: float, to: float) -> float:
    return abs(to - frm) / max(abs(frm), 1e-9)


def _numeric_relaxation(ctx: Context, oracle: PairOracle, g: str, groups: list[str]) -> dict[str, Any] | None:
    if g == "site.rack_power_kw":
        return _rack_power_relaxation(ctx, oracle)
    if g == "policy.deadline_confidence" or (g == "schedule.deadline" and ctx.screen.chance is not None):
        return _resolved_relaxation(ctx, oracle, g)
    spec, as_of, unit = ctx.problem.spec, ctx.problem.as_of, ctx.unit
    active = [h for h in groups if h != g]
    lower = _lower(ctx, oracle, g, set(active))
    fabric = _sole_fabric(ctx, g, active)
    r = oracle.minimize(active, _quantity(ctx, g), lower=lower, fabric=fabric)
    if r is None:
        return None
    span = max(1, (ctx.universe.deadline_day or 0) - ctx.universe.earliest_day)
    out: dict[str, Any] = {"group": g, "proven": r.proven}
    if g == "budget.max_usd":
        assert spec.budget.max_usd is not None
        to_usd = r.value * unit
        out.update({"from": spec.budget.max_usd, "to": to_usd, "unit": "usd",
                    "change": _relative(spec.budget.max_usd, to_usd)})
    elif g == "schedule.deadline":
        assert spec.schedule.deadline is not None
        to = as_of + timedelta(days=r.value)
        out.update({"from": spec.schedule.deadline.isoformat(), "to": to.isoformat(), "unit": "day",
                    "change": (to - spec.schedule.deadline).days / span})
    elif g == "schedule.earliest_start":
        assert spec.schedule.earliest_start is not None
        to = as_of + timedelta(days=-r.value)
        out.update({"from": spec.schedule.earliest_start.isoformat(), "to": to.isoformat(), "unit": "day",
                    "change": (spec.schedule.earliest_start - to).days / span})
    elif g == "site.it_power_kw":
        assert spec.site is not None
        kw = math.ceil(r.value / 1000 - 1e-9)
        out.update({"from": spec.site.it_power_kw, "to": kw, "unit": "kW",
                    "change": _relative(spec.site.it_power_kw, kw)})
    elif g == "site.racks":
        assert spec.site is not None
        out.update({"from": spec.site.racks, "to": r.value, "unit": "rack",
                    "change": _relative(spec.site.racks, r.value)})
    else:
        quote = ctx.universe.quote(capacity_quote(g) or "")
        out.update({"from": quote.max_nodes, "to": r.value, "unit": "node",
                    "change": _relative(quote.max_nodes, r.value)})
    bound = r.value if g != "site.it_power_kw" else int(out["to"]) * 1000
    cheapest = oracle.minimize(active, lambda b: b.cost, cap=(_quantity(ctx, g), bound), lower="cost", cap_on=lower,
                               fabric=fabric)
    best: Minimum = cheapest if cheapest is not None else r
    out["plan"] = plan_summary(ctx, best.model, best.outcome.solver.value)
    return out


def _rack_power_relaxation(ctx: Context, oracle: PairOracle) -> dict[str, Any] | None:
    """The smallest whole kW per rack that gives a plan: feasibility only changes where a rack starts to hold one
    more node (k × node kW), so those values are searched, each a what-if of the problem (`with_sets`), solved by
    the same engine at the same money unit."""
    site = ctx.problem.spec.site
    assert site is not None
    cands = sorted({math.ceil(float(o.system.node_kw.value) * k - 1e-9)
                    for o in oracle.universe.options if o.mode == "buy"
                    for k in range(1, int(o.system.nodes_per_rack.value) + 1)
                    if float(o.system.node_kw.value) * k > site.rack_power_kw})
    statuses: dict[int, str] = {}
    oracles: dict[int, PairOracle] = {}
    # Rack power only changes bought options, and with every other group enforced no other pair has a plan (the
    # problem is infeasible), so only the buy pairs are rebuilt; their estimates do not depend on the site.
    buy_pairs = {o.pair for o in oracle.universe.options if o.mode == "buy"}

    def status(v: int) -> str:
        if v not in statuses:
            o2 = what_if_oracle(ctx, oracle, [f"site.rack_power_kw={v}"], buy_pairs)
            statuses[v] = o2.status(o2.all_groups())
            oracles[v] = o2
        return statuses[v]

    if not cands or status(cands[-1]) != "feasible":
        return None
    lo, hi = 0, len(cands) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if status(cands[mid]) == "feasible":
            hi = mid
        else:
            lo = mid + 1
    to = cands[lo]
    proven = all(st != "unknown" for st in statuses.values())
    out: dict[str, Any] = {"group": "site.rack_power_kw", "from": site.rack_power_kw, "to": to, "unit": "kW",
                           "proven": proven, "change": _relative(site.rack_power_kw, to)}
    o2 = oracles[to]
    cheapest = o2.minimize(o2.all_groups(), lambda b: b.cost, lower="cost")
    if cheapest is not None:
        out["plan"] = plan_summary(o2.ctx, cheapest.model, cheapest.outcome.solver.value)
    return out


CONFIDENCE_STEP = 0.01
"""Resolution of a relaxed `policy.deadline_confidence`: the largest confidence a plan meets, to the point below."""
MAX_DEADLINE_DOUBLINGS = 12
"""How far past the deadline (2^12 days from a day) a relaxation under a confidence looks before giving up."""


def what_if_oracle(ctx: Context, oracle: PairOracle, sets: list[str], pairs: set[str] | None = None) -> PairOracle:
    """An oracle over the problem with `sets` applied, asking what `oracle` asks: the same pairs (or those of them in
    `pairs`) and the same forcing (a why-not's "this option is used"), solved by the same engine at the same unit."""
    keep = set(oracle.items) if pairs is None else set(oracle.items) & pairs
    sub = prepare(ctx.problem.with_sets(sets), ctx.settings, unit=ctx.unit, engine=ctx.engine, only_pairs=keep,
                  estimates=ctx.estimates)
    return PairOracle(sub, pairs=sorted(p for p in sub.universe.pairs() if p in keep), forced=oracle.forced_fn,
                      protect=oracle.protect, forced_options=oracle.forced_options)


def _resolved_relaxation(ctx: Context, oracle: PairOracle, g: str) -> dict[str, Any] | None:
    """The deadline's confidence, or the deadline itself when a confidence binds it, relaxed by re-solving what-ifs
    of the problem: the chance constraints are computed from the deadline and the confidence (`estimate/chance.py`),
    so no slack in one model can stand for either. Feasibility is monotone in both, so a bisection finds the least
    change: the largest confidence (to `CONFIDENCE_STEP`) or the earliest deadline (to the day) that has a plan."""
    spec = ctx.problem.spec
    statuses: dict[int, PairOracle] = {}
    # Neither relaxation can give a plan to a pair that has none with the deadline and its confidence both dropped
    # (feasibility is monotone in each): only the others are rebuilt at each step.
    loose = [h for h in oracle.all_groups() if h not in ("schedule.deadline", "policy.deadline_confidence")]
    candidates = {p for p in oracle.items if oracle.pair_status(p, loose) != INFEASIBLE}

    def oracle_at(step: int) -> PairOracle:
        if step not in statuses:
            change = (f"policy.deadline_confidence={step * CONFIDENCE_STEP:.2f}" if g == "policy.deadline_confidence"
                      else f"schedule.deadline={spec.schedule.deadline + timedelta(days=step)}")  # type: ignore[operator]
            statuses[step] = what_if_oracle(ctx, oracle, [change], candidates)
        return statuses[step]

    def feasible(step: int) -> bool:
        o = oracle_at(step)
        return o.status(o.all_groups()) == "feasible"

    if g == "policy.deadline_confidence":
        assert spec.policy.deadline_confidence is not None
        top = math.ceil(round(spec.policy.deadline_confidence / CONFIDENCE_STEP, 9)) - 1
        floor = round(0.5 / CONFIDENCE_STEP)
        if top < floor or not feasible(floor):
            return None
        lo, hi = floor, top            # the largest feasible step in [floor, top]
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if feasible(mid) else (lo, mid - 1)
        found = lo
        out: dict[str, Any] = {"group": g, "from": spec.policy.deadline_confidence,
                               "to": round(found * CONFIDENCE_STEP, 2), "unit": "share",
                               "change": _relative(spec.policy.deadline_confidence, found * CONFIDENCE_STEP)}
    else:
        assert spec.schedule.deadline is not None
        hi = 1
        while not feasible(hi):
            hi *= 2
            if hi > 2 ** MAX_DEADLINE_DOUBLINGS:
                return None
        lo = hi // 2 + 1 if hi > 1 else 1
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if feasible(mid) else (mid + 1, hi)
        found = lo
        span = max(1, (ctx.universe.deadline_day or 0) - ctx.universe.earliest_day)
        to = spec.schedule.deadline + timedelta(days=found)
        out = {"group": g, "from": spec.schedule.deadline.isoformat(), "to": to.isoformat(), "unit": "day",
               "change": found / span}
    o = oracle_at(found)
    out["proven"] = all(x.undecided == 0 for x in statuses.values())
    cheapest = o.minimize(o.all_groups(), lambda b: b.cost, lower="cost")
    if cheapest is not None:
        out["plan"] = plan_summary(o.ctx, cheapest.model, cheapest.outcome.solver.value)
    return out


def _drop(ctx: Context, oracle: PairOracle, drop: list[str], groups: list[str]) -> dict[str, Any] | None:
    r = oracle.minimize([h for h in groups if h not in drop], lambda b: b.cost, lower="cost")
    if r is None:
        return None
    way: dict[str, Any] = {"drop": drop, "plan": plan_summary(ctx, r.model, r.outcome.solver.value)}
    if not r.proven:
        way["cheapest_not_proven"] = True   # a time limit stopped the search with this plan
    return way


def _weights(ctx: Context) -> dict[str, int]:
    """Integer weights so Σ weight × slack is the total relative change (in millionths of each limit)."""
    spec, u, unit = ctx.problem.spec, ctx.universe, ctx.unit
    w: dict[str, int] = {}
    if spec.budget.max_usd is not None:
        w["budget.max_usd"] = max(1, round(1e6 * unit / spec.budget.max_usd))
    if u.deadline_day is not None:
        span = max(1, u.deadline_day - u.earliest_day)
        w["schedule.deadline"] = max(1, round(1e6 / span))
        w["schedule.earliest_start"] = max(1, round(1e6 / span))
    if spec.site is not None:
        w["site.it_power_kw"] = max(1, round(1e6 / (spec.site.it_power_kw * 1000)))
        w["site.racks"] = max(1, round(1e6 / spec.site.racks))
    for o in u.options:
        for q in o.quotes:
            w[capacity_group(q.id)] = max(1, round(1e6 / q.max_nodes))
    return w


def beyond_slack(items: Sequence[Sequence[frozenset[str]]]) -> bool:
    """Whether every point of a pair has a point-local reason made only of groups that get no slack in an elastic
    model (policy, memory, rules, non-numeric site limits): no joint change of numeric limits gives it a plan, so its
    elastic model need not be built."""
    return all(any(not any(is_numeric(g) for g in it) for it in reasons) for reasons in items)


def combined_relaxation(ctx: Context, pairs: list[str] | None = None) -> dict[str, Any] | None:
    """Cheapest joint change of numeric limits (min Σ relative slack, then min cost), by pair. Not offered under a
    deadline confidence: its constraints depend on the deadline, so a slack on the deadline would not relax them."""
    if ctx.screen.chance is not None:
        return None
    el = PairOracle(ctx, pairs=pairs, elastic=True)
    weights = _weights(ctx)
    best: tuple[int, int, str, Built, Any, bool] | None = None
    for pair, items in el.items.items():
        if beyond_slack(items):
            continue
        b = el.model(pair)
        if not b.slacks:
            continue
        m = b.model
        m.clear_assumptions()
        m.add_assumptions(list(b.lits.values()))
        total = sum(weights.get(g, 1) * s for g, s in b.slacks.items())
        m.minimize(total)
        out = ctx.engine.solve(m, label=f"{pair}-combined")
        if not out.has_solution:
            m.clear_assumptions()
            m.clear_objective()
            continue
        tv = out.value(total)
        cap = m.new_bool_var("phase2")
        m.add(total <= tv).only_enforce_if(cap)
        m.add_assumptions([cap])
        m.minimize(b.cost)
        out2 = ctx.engine.solve(m, label=f"{pair}-combined-cost")
        proven = out.status == OPTIMAL and out2.status == OPTIMAL
        if out2.has_solution:
            out = out2
        m.clear_assumptions()
        m.clear_objective()
        cv = out.value(b.cost)
        if best is None or (tv, cv, pair) < (best[0], best[1], best[2]):
            best = (tv, cv, pair, b, out, proven)
    if best is None:
        return None
    _tv, _cv, _pair, b, out, proven = best
    return {"changes": [_slack_change(ctx, g, out.value(s)) for g, s in sorted(b.slacks.items()) if out.value(s) > 0],
            "plan": plan_summary(ctx, b, out.solver.value), "proven": proven}


def _slack_change(ctx: Context, g: str, v: int) -> dict[str, Any]:
    spec, unit = ctx.problem.spec, ctx.unit
    sched = spec.schedule
    if g == "budget.max_usd":
        assert spec.budget.max_usd is not None
        return {"group": g, "from": spec.budget.max_usd, "to": spec.budget.max_usd + v * unit, "unit": "usd"}
    if g == "schedule.deadline":
        assert sched.deadline is not None
        return {"group": g, "from": sched.deadline.isoformat(), "to": (sched.deadline + timedelta(days=v)).isoformat(),
                "unit": "day"}
    if g == "schedule.earliest_start":
        assert sched.earliest_start is not None
        return {"group": g, "from": sched.earliest_start.isoformat(),
                "to": (sched.earliest_start - timedelta(days=v)).isoformat(), "unit": "day"}
    if g in ("site.it_power_kw", "site.racks"):
        assert spec.site is not None
        if g == "site.racks":
            return {"group": g, "from": spec.site.racks, "to": spec.site.racks + v, "unit": "rack"}
        return {"group": g, "from": spec.site.it_power_kw, "to": math.ceil(spec.site.it_power_kw + v / 1000),
                "unit": "kW"}
    q = ctx.universe.quote(capacity_quote(g) or "")
    return {"group": g, "from": q.max_nodes, "to": q.max_nodes + v, "unit": "node"}


def schedule_causes(ctx: Context, pairs: list[str] | None = None) -> list[dict[str, Any]]:
    """Per pair, the earliest its capacity can be ready and the earliest it can finish: over every node count
    that its quotes can supply and that nothing but the schedule rules out (memory, site, policy, budget: the
    point-local reasons of `model/screening.py`), training starts when enough of their capacity has arrived
    (quotes in order of ready day) and not before the option is ready or the earliest start."""
    u = ctx.universe
    a = ctx.problem.assumptions.values
    out = []
    for pair in (pairs if pairs is not None else u.pairs()):
        best: tuple[int, int, int, str] | None = None  # finish, ready, nodes, option
        for o in u.subset(pair).options:
            arrivals = sorted((option_quote_ready(q, o, a), q.max_nodes) for q in o.quotes)
            first_ready = max(o.ready_day, arrivals[0][0])
            for pt in o.points:
                if not pt.workable or any(not (item & _SCHEDULE) for item in ctx.screen.violations(pt)):
                    continue
                have, ready = 0, None
                for day, cap in arrivals:
                    have += cap
                    if have >= pt.n:
                        ready = day
                        break
                if ready is None:
                    continue
                start = max(ready, o.ready_day, u.earliest_day)
                cand = (start + pt.days, first_ready, pt.n, o.id)
                if best is None or cand < best:
                    best = cand
        if best is not None:
            finish, ready, nodes, option = best
            out.append({"pair": pair, "option": option, "ready": (u.as_of + timedelta(days=ready)).isoformat(),
                        "fastest_finish": (u.as_of + timedelta(days=finish)).isoformat(), "nodes": nodes})
    out.sort(key=lambda c: (c["fastest_finish"], c["pair"]))
    return out[:MAX_CAUSES]


def conflict_of(ctx: Context, oracle: PairOracle | None = None) -> tuple[list[str], bool] | None:
    """The minimal conflict of an infeasible problem and whether it is proven; None when it is feasible after all
    (the first step of `explain`, alone for answers that need only the conflict, such as a sweep's rows)."""
    if not ctx.universe.options and oracle is None:
        return _nothing_to_plan(ctx)
    oracle = oracle or PairOracle(ctx)
    groups = oracle.all_groups()
    first = oracle.status(groups)
    if first == "feasible":
        return None
    cover = covering_reason(ctx, ctx.universe) if oracle.forced_fn is None else None
    if cover is not None and MEMORY in groups and MEMORY not in cover:
        # Memory is a fact of the workload, not a choice: seeded first it is the last removal tried, so every
        # other group was found needed with memory in force, and the conflict is minimal with memory fixed too.
        cover = [MEMORY, *cover]
    log.info("looking for a minimal conflict among %d constraints", len(groups))
    found = deletion_filter(oracle.status, groups, cover, stop=ctx.engine.spent, needed=oracle.needed)
    return list(found.groups), found.proven and first == "infeasible" and oracle.undecided == 0


def _quotes_not_relaxed(ctx: Context, conflict: list[str]) -> set[str]:
    """The quote capacity groups of the conflict beyond the `MAX_QUOTE_RELAXATIONS` quotes with the most capacity
    (ties: by id), which are not relaxed one by one."""
    held = sorted((-ctx.universe.quote(q).max_nodes, q) for g in conflict if (q := capacity_quote(g)) is not None)
    return {capacity_group(q) for _cap, q in held[MAX_QUOTE_RELAXATIONS:]}


def _ways_out(ctx: Context, oracle: PairOracle, todo: list[str], groups: list[str]
              ) -> list[tuple[str, dict[str, Any] | None]]:
    """Each conflict group's way out, in the conflict's order: a numeric group's exact relaxation, another's drop
    (None: none gives a plan).

    They are independent questions about one problem, so they run side by side (`forked.fork_map`; measured:
    bench/README.md, "Timings that used to live in docstrings (moved 2026-12-07)"). A task changes
    nothing another reads to answer: the oracle knows every point's reasons from its start (its items), its other
    memos are of answers, and a capped minimisation caps a copy of a shared model (`_minimize_in`). So the answers
    are those of the serial order, whatever the processes (tests/test_relax_parallel.py). The biggest first: the
    numeric groups (two minimisations each), the budget's the first of those."""
    def one(g: str) -> tuple[dict[str, Any] | None, bool]:
        log.info("relaxing %s", g)
        way = _numeric_relaxation(ctx, oracle, g, groups) if is_numeric(g) else _drop(ctx, oracle, [g], groups)
        return way, ctx.engine.out_of_time

    order = sorted(range(len(todo)), key=lambda k: (not is_numeric(todo[k]), todo[k] != "budget.max_usd", k))
    answers = fork_map(one, todo, processes_for(ctx, len(todo)), order=order)
    for _way, out_of_time in answers:
        ctx.engine.out_of_time = ctx.engine.out_of_time or out_of_time
    return [(g, way) for g, (way, _oot) in zip(todo, answers, strict=True)]


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _nothing_to_plan(ctx: Context) -> dict[str, Any]:
    """No option can be modelled at all — every quote expired, not yet quoted or without a price — so no constraint
    of the problem is to blame (a conflict search would name one at random: the empty set is already infeasible).
    Say what is missing instead."""
    u = ctx.universe
    parts = []
    if u.expired:
        parts.append(f"{_count(len(u.expired), 'quote')} expired before {ctx.problem.as_of} (--allow-expired uses "
                     "them; or refresh the quotes)")
    if u.not_yet_quoted:
        parts.append(f"{_count(len(u.not_yet_quoted), 'quote')} dated after {ctx.problem.as_of}")
    if u.unpriced:
        parts.append(f"{_count(len(u.unpriced), 'quote')} without a price")
    cause = "no quote can be used: " + ("; ".join(parts) if parts else "the catalog has no quote for any "
                                        "accelerator the policy allows")
    return {"conflict": [], "conflict_detail": [], "relaxations": [], "alternatives": [], "combined": None,
            "proven": True, "cause": cause}


def explain(ctx: Context, *, oracle: PairOracle | None = None) -> dict[str, Any]:
    """The full explanation of an infeasible problem (or of a forced option, with a forcing oracle)."""
    if not ctx.universe.options and oracle is None:
        return _nothing_to_plan(ctx)
    oracle = oracle or PairOracle(ctx)
    groups = oracle.all_groups()
    found = conflict_of(ctx, oracle)
    if found is None:
        return {"conflict": [], "conflict_detail": [], "relaxations": [], "alternatives": [], "combined": None,
                "proven": True, "note": "feasible when re-checked"}
    conflict, proven = found
    detail = [{"group": g, "text": oracle.groups[g].text if g in oracle.groups else reason(g),
               "where": where(ctx.problem, g)} for g in conflict]
    if ctx.engine.out_of_time:
        # --max-seconds is spent: every way out would be a search that returns at once with nothing.
        cut: dict[str, Any] = {"conflict": conflict, "conflict_detail": detail, "relaxations": [], "alternatives": [],
                               "combined": None, "proven": False,
                               "stopped_by": ctx.settings.wall_limit}
        if "schedule.deadline" in conflict:
            cut["causes"] = schedule_causes(ctx, sorted(oracle.items))
        return cut
    relaxations: list[dict[str, Any]] = []
    alternatives: list[dict[str, Any]] = []
    skipped = _quotes_not_relaxed(ctx, conflict)
    for g, way in _ways_out(ctx, oracle, [g for g in conflict if g not in skipped], groups):
        if way is None:
            continue
        if is_numeric(g):
            relaxations.append(way)
            alternatives.append({"drop": [g], "relax": {k: way[k] for k in ("from", "to", "unit")},
                                 "plan": way.get("plan")})
        else:
            alternatives.append(way)
    stopped = ctx.engine.out_of_time   # --max-seconds ran out while the ways out were searched
    if not alternatives and not stopped:
        for g1, g2 in combinations(conflict, 2):
            d = _drop(ctx, oracle, [g1, g2], groups)
            if d is not None:
                alternatives.append(d)
            if len(alternatives) >= MAX_ALTERNATIVES:
                break
    relaxations.sort(key=lambda r: (r["change"], r["group"]))
    combined = combined_relaxation(ctx) if not relaxations and oracle.forced_fn is None and not stopped else None
    out: dict[str, Any] = {"conflict": conflict, "conflict_detail": detail, "relaxations": relaxations,
                           "alternatives": alternatives[:MAX_ALTERNATIVES], "combined": combined,
                           "proven": proven}
    if stopped:
        out["stopped_by"] = ctx.settings.wall_limit
    if skipped:
        out["quotes_not_relaxed"] = len(skipped)
    if "schedule.deadline" in conflict:
        out["causes"] = schedule_causes(ctx, sorted(oracle.items))
    return out
