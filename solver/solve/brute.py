"""Exhaustive enumeration over the same options as the CP-SAT model, in plain Python.

Used by tests (the CP-SAT optimum must equal this on small problems) and by `bench/` (side-by-side timing).
It enumerates every workable point and every split of its nodes over the option's quotes, evaluates every
group directly (one fabric per job included), takes the earliest feasible start, prices waiting hardware at that
start and the lateness of the split's quotes together (`Outlook.charge`: what the model reaches by its cuts), and
scores with the same integer money rules as the model (each term rounded up to the money unit). It shares the per-point estimates with the model — the question it
answers is "did CP-SAT find the optimum over these options?", not "are the estimates right".
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..estimate.chance import ChanceModel, chance_model
from ..estimate.options import Option, Point, Universe, option_quote_ready
from ..estimate.outlook import Outlook, rule_delay
from ..inputs.catalog import Quote
from ..inputs.problem import Problem
from ..inputs.rules import delay_days, matches_attrs, matches_point, names_quote, policy_breaches
from ..inputs.spec import Comparison, CostObjective
from ..model.money import floor_units, units
from ..model.objective import finish_weight
from ..model.screening import preemptible_forbidden
from ..model.timing import timing, wait_of, wait_units


@dataclass(frozen=True)
class Enumerated:
    objective: int
    cost_units: int
    finish: int
    option: str
    n: int
    alloc: tuple[tuple[str, int], ...]
    start: int


def _splits(n: int, quotes: Sequence[Quote], limit: int) -> Iterator[dict[str, int]]:
    if len(quotes) == 1:
        yield {quotes[0].id: n}
        return
    count = 0
    for parts in itertools.product(range(n + 1), repeat=len(quotes) - 1):
        last = n - sum(parts)
        if last < 0:
            continue
        count += 1
        if count > limit:
            raise RuntimeError("too many allocations for brute force")
        alloc = dict(zip((q.id for q in quotes), list(parts) + [last], strict=True))
        if all(v == 0 or v >= max(1, q.min_nodes) for q, v in zip(quotes, alloc.values(), strict=True)):
            yield {k: v for k, v in alloc.items() if v > 0}


def _option_allowed(o: Option, problem: Problem) -> bool:
    if policy_breaches(problem.spec, o.attrs, ()):
        return False
    site = problem.spec.site
    if o.mode == "buy":
        if site is None or float(o.system.node_kw.value) > site.rack_power_kw:
            return False
    return True


def _rule_charges(pt: Point, alloc: dict[str, int], problem: Problem, unit: int) -> tuple[int, list[float], int]:
    """The add_usd units, add_pct percentages and delay days of the rules that match the plan."""
    o = pt.option
    delay, usd, pcts = 0, 0, []
    for rule in problem.spec.rules:
        when, then = rule.when, rule.then
        if isinstance(then, str) or not (matches_attrs(when, o.attrs) and
                                         matches_point(when, pt.gpus, pt.n, pt.days, pt.power_kw)
                                         and names_quote(rule, alloc)):
            continue
        usd += units(then.add_usd, unit) if then.add_usd else 0
        if then.add_pct:
            pcts.append(then.add_pct)
        delay += delay_days(then)
    return usd, pcts, delay


def _priced(pt: Point, alloc: dict[str, int], problem: Problem, unit: int, outlook: Outlook,
            start: int, delay: int, usd: int, pcts: list[float]) -> tuple[int, int]:
    """(cost, cash) units of the plan before waiting, as the model charges them.

    A plan that takes all its nodes from one quote is charged its lines rounded up once (`builder.plan_units`);
    a split, per node. Lateness: exact for a one-quote option; on several quotes, the largest of the plan's
    quotes' alone figures (with the rules that apply whatever the quotes) unless its quotes' joint figure is
    higher, which the model reaches by its cuts (`cuts.late_cuts`)."""
    o = pt.option
    quotes = {q.id: q for q in o.quotes}
    joint = units(outlook.charge(o, pt, outlook.plan_law(o, [quotes[q] for q in sorted(alloc)], start, delay)),
                  unit) if len(o.quotes) > 1 else 0
    if len(alloc) == 1:
        qid = next(iter(alloc))
        base = rule_delay(problem, pt, []) if len(o.quotes) > 1 else delay
        late = float(outlook.alone(o, pt, base)[[q.id for q in o.quotes].index(qid)])
        whole = pt.fixed.total_cost + pt.n * pt.per_node.cost(qid)
        cost = units(whole + late, unit) + usd + sum(units(whole * pct / 100, unit) for pct in pcts)
        cost += max(0, joint - units(late, unit))
        cash = units(pt.fixed.total_cash + pt.n * pt.per_node.cash(qid), unit) + usd
        return cost, cash
    cost = units(pt.fixed.total_cost, unit) + sum(k * units(pt.per_node.cost(q), unit) for q, k in alloc.items())
    cash = units(pt.fixed.total_cash, unit) + sum(k * units(pt.per_node.cash(q), unit) for q, k in alloc.items())
    cost += usd + sum(units(pt.fixed.total_cost * pct / 100, unit) + sum(
        k * units(pt.per_node.cost(q) * pct / 100, unit) for q, k in alloc.items()) for pct in pcts)
    alone = outlook.alone(o, pt, rule_delay(problem, pt, []))
    index = [q.id for q in o.quotes]
    cost += max(joint, max(units(float(alone[index.index(q)]), unit) for q in alloc))
    return cost, cash + usd


def _waiting(pt: Point, alloc: dict[str, int], problem: Problem, unit: int, start: int) -> tuple[int, int]:
    """(cost, cash) units of hardware that waits for the start (per node on a multi-quote option)."""
    o = pt.option
    quotes = {q.id: q for q in o.quotes}
    cost = cash = 0
    for qid, k in alloc.items():
        t = timing(problem, o, quotes[qid])
        w = wait_of(t, start)
        if w > 0:
            wc, wk = wait_units(pt, t, w, unit, len(o.quotes) == 1)
            mult = 1 if len(o.quotes) == 1 else k
            cost += wc * mult
            cash += wk * mult
    return cost, cash


def _admissible(pt: Point, alloc: dict[str, int], problem: Problem) -> bool:
    """Estimates, quote sizes, fabrics and a one-quote option's minimum order."""
    spec = problem.spec
    o = pt.option
    quotes = {q.id: q for q in o.quotes}
    if not spec.policy.allow_estimates and any(quotes[q].kind == "estimate" for q in alloc):
        return False
    if any(alloc[q] > quotes[q].max_nodes for q in alloc):
        return False
    if len({quotes[q].fabric_id for q in alloc}) > spec.policy.max_fabrics:
        return False
    return not (len(o.quotes) == 1 and pt.n < o.quotes[0].min_nodes)


def _objective_value(problem: Problem, u: Universe, unit: int, cost: int, finish: int, cost_hi: int | None) -> int:
    obj = problem.spec.objective
    k = finish_weight(u.horizon)
    if obj == "time":
        # The objective *value* depends on the model's cost bound; compare (finish, cost) when it is not given.
        return finish * ((cost_hi or 10 ** 12) + 1) + cost
    if isinstance(obj, CostObjective):
        return (cost + units(obj.delay_cost_usd_per_day, unit) * finish) * k + finish
    return cost * k + finish


def _score(pt: Point, alloc: dict[str, int], problem: Problem, u: Universe, unit: int,
           cost_hi: int | None, outlook: Outlook, chance: ChanceModel | None = None) -> Enumerated | None:
    spec = problem.spec
    o = pt.option
    if not _admissible(pt, alloc, problem):
        return None
    quotes = {q.id: q for q in o.quotes}
    usd, pcts, delay = _rule_charges(pt, alloc, problem, unit)
    start = max([o.ready_day] + [option_quote_ready(quotes[q], o, problem.assumptions.values) for q in alloc]) + delay
    if spec.schedule.earliest_start is not None:
        start = max(start, u.earliest_day)
    cost, cash = _priced(pt, alloc, problem, unit, outlook, start, delay, usd, pcts)
    wait_cost, wait_cash = _waiting(pt, alloc, problem, unit, start)
    cost, cash = cost + wait_cost, cash + wait_cash
    finish = start + pt.days
    if u.deadline_day is not None and finish > u.deadline_day:
        return None
    if chance is not None and not chance.meets(chance.joint_share(
            o, pt, start, [(quotes[q], outlook.order(o, quotes[q], start, delay)) for q in sorted(alloc)], delay)):
        return None
    if spec.budget.max_usd is not None:
        spent = cash if spec.budget.applies_to == "cash" else cost
        if spent > floor_units(spec.budget.max_usd, unit):
            return None
    if not _hard_rules_hold(pt, alloc, problem, cost, unit):
        return None
    objective = _objective_value(problem, u, unit, cost, finish, cost_hi)
    return Enumerated(objective, cost, finish, o.id, pt.n, tuple(sorted(alloc.items())), start)


def _hard_rules_hold(pt: Point, alloc: dict[str, int], problem: Problem, cost: int, unit: int) -> bool:
    """No forbid rule matches the plan and every require rule does (cost conditions at the model's resolution)."""
    o = pt.option
    for rule in problem.spec.rules:
        when, then = rule.when, rule.then
        if not isinstance(then, str):
            continue
        hit = matches_attrs(when, o.attrs) and matches_point(when, pt.gpus, pt.n, pt.days, pt.power_kw) \
            and names_quote(rule, alloc)
        if when.cost is not None:
            hit = hit and _cost_test(when.cost, cost, unit)
        if (then == "forbid" and hit) or (then == "require" and not hit):
            return False
    return True


def _cost_test(cmp: Comparison, cost_units: int, unit: int) -> bool:
    """The model's reading of a cost comparison at unit resolution (see `_cost_bound` in model/rule_constraints.py)."""
    for op in ("gt", "ge", "lt", "le", "eq"):
        v = getattr(cmp, op)
        if v is None:
            continue
        lo, hi = math.floor(v / unit + 1e-9), math.ceil(v / unit - 1e-9)
        ok = {"gt": cost_units >= lo + 1, "ge": cost_units >= hi, "lt": cost_units <= hi - 1,
              "le": cost_units <= lo, "eq": cost_units == hi}[op]
        if not ok:
            return False
    return True


def best_at(pt: Point, problem: Problem, u: Universe, unit: int, *, cost_hi: int | None = None,
            allocation_limit: int = 200_000, chance: ChanceModel | None = None,
            outlook: Outlook | None = None) -> Enumerated | None:
    """The best plan at one point over every split of its nodes (None: no feasible plan there)."""
    o = pt.option
    site = problem.spec.site
    if not _option_allowed(o, problem) or not pt.workable or not pt.fits or preemptible_forbidden(problem.spec, pt):
        return None
    if o.mode == "buy":
        assert site is not None
        if pt.power_kw > site.it_power_kw + 1e-9 or pt.racks_with_power is None \
                or pt.racks_with_power > site.racks or pt.racks_physical > site.racks:
            return None
    best: Enumerated | None = None
    outlook = outlook or Outlook.of(problem)
    for alloc in _splits(pt.n, o.quotes, allocation_limit):
        c = _score(pt, alloc, problem, u, unit, cost_hi, outlook, chance)
        if c is not None and (best is None or c.objective < best.objective):
            best = c
    return best


def brute_force(problem: Problem, u: Universe, unit: int, *, cost_hi: int | None = None,
                allocation_limit: int = 200_000) -> Enumerated | None:
    """The best candidate by the model's primary objective (ties: earliest finish, then option id, then n)."""
    best: Enumerated | None = None
    outlook = Outlook.of(problem)
    chance = chance_model(problem, outlook)
    for o in u.options:
        for pt in o.points:
            c = best_at(pt, problem, u, unit, cost_hi=cost_hi, allocation_limit=allocation_limit, chance=chance,
                        outlook=outlook)
            if c is not None and (best is None or (c.objective, c.option, c.n) < (best.objective, best.option, best.n)):
                best = c
    return best
