"""Rules in the CP-SAT model: each rule of the problem file is the guarded group `rules.<name>`.

An adjustment adds a fixed amount, a percentage of the cost lines or a delay to the plans it matches; a condition
forbids or requires them, and may compare the whole cost. Two families of `build` with the same matching (points by
attributes, quotes by name) and literals: the adjustments come before the calendar, whose floors carry their delays,
and the conditions after every cost term (adjustments, delivery timing), so that a cost condition sees the whole
cost the checker sees.
"""

from __future__ import annotations

import math
from typing import Any

from ..inputs.rules import delay_days, matches_attrs, matches_point, quote_ids, rule_group
from ..inputs.spec import Adjust, Comparison, Rule
from .builder_state import BuilderState
from .money import floor_units, units


def add_adjustments(bld: BuilderState) -> None:
    """Rules that adjust cost, the calendar or throughput; each rule is the group `rules.<name>`."""
    _add_rules(bld, adjust=True)


def add_conditions(bld: BuilderState) -> None:
    """Rules that forbid or require, added after every cost term (adjustments, delivery timing), so that a cost
    condition sees the whole cost the checker sees."""
    _add_rules(bld, adjust=False)


def _add_rules(bld: BuilderState, *, adjust: bool) -> None:
    for r_i, rule in enumerate(bld.spec.rules):
        if isinstance(rule.then, Adjust) != adjust:
            continue
        lit = bld.group(rule_group(rule.name), "rule", ("rules", r_i), rule.note or rule.name)
        match = [i for i, pt in enumerate(bld.points) if matches_attrs(rule.when, pt.option.attrs)
                 and matches_point(rule.when, pt.gpus, pt.n, pt.days, pt.power_kw)]
        qids = quote_ids(rule.when)
        named = [q.id for o in bld.options for q in o.quotes if q.id in qids] if qids is not None else None
        if isinstance(rule.then, Adjust):
            _adjust(bld, rule, rule.then, lit, match, named)
        elif rule.then == "forbid":
            _forbid(bld, rule, lit, match, named)
        else:
            _require(bld, rule, lit, match, named)


def _applies(bld: BuilderState, rule: Rule, match: list[int], named: list[str] | None) -> Any:
    """An expression equal to "the rule applies to the chosen plan": a matching point is chosen (the sum of
    their literals, exactly one of which can be 1) and, for a rule that names quotes, one of them is used (a
    Boolean tied to both)."""
    in_match = sum(bld.z[i] for i in match)
    if named is None:
        return in_match
    b = bld.m.new_bool_var(f"applies[{rule.name}]")
    used = [bld.u[qid] for qid in named]
    bld.m.add(b <= in_match)
    bld.m.add(b <= sum(used))
    for uq in used:
        bld.m.add(b >= in_match + uq - 1)
    return b


def _adjust(bld: BuilderState, rule: Rule, then: Adjust, lit: Any, match: list[int], named: list[str] | None) -> None:
    if not match or named == []:
        return
    gid = rule_group(rule.name)
    applies = _applies(bld, rule, match, named)
    if then.add_usd:
        k = units(then.add_usd, bld.unit)
        r = bld.m.new_int_var(0, k, f"add_usd[{gid}]")
        bld.m.add(r == k * applies).only_enforce_if(lit)
        if bld.guard == "assume":
            bld.m.add(r == 0).only_enforce_if(~lit)
        bld.cost_adds.append(r)
        bld.cash_adds.append(r)
    if then.add_pct:
        _add_pct(bld, gid, then.add_pct, lit, match, None if named is None else applies)
    if then.delay_days:
        d = delay_days(then)
        e = bld.m.new_int_var(0, d, f"delay[{gid}]")
        bld.m.add(e == d * applies).only_enforce_if(lit)
        if bld.guard == "assume":
            bld.m.add(e == 0).only_enforce_if(~lit)
        bld.delays.append(e)
        bld.delay_rules.append(d)


def _add_pct(bld: BuilderState, gid: str, pct: float, lit: Any, match: list[int], applies: Any | None) -> None:
    """A percentage of the chosen point's cost lines (not of the slip premium), rounded up term by term.

    The terms are zero unless a matching point is chosen, so a rule without a quote condition needs no other
    condition; one that names quotes applies only when `applies` (a named quote is used). A percentage may be
    negative (a preference), so outside those conditions the surcharge is held at zero.

    Stated as equalities, not as a bound the objective pushes down: with `r ≥ Σ terms` the search could settle
    a plan with the surcharge above its terms and then improve it one unit per solution — a random problem's
    20 % rebate walked down a dollar at a time over tens of thousands of solutions (measured: bench/README.md,
    "Timings that used to live in docstrings (moved 2026-12-07)"). An equality also keeps a cost condition (`when: cost`) from being met by a surcharge no
    plan pays."""
    terms: list[Any] = []
    hi = 0
    for i in match:
        pt = bld.points[i]
        if len(pt.option.quotes) == 1:
            q = pt.option.quotes[0]
            k = units((pt.fixed.total_cost + pt.n * pt.per_node.cost(q.id)) * pct / 100.0, bld.unit)
            terms.append(k * bld.z[i])
            hi = max(hi, abs(k))
        else:
            k0 = units(pt.fixed.total_cost * pct / 100.0, bld.unit)
            terms.append(k0 * bld.z[i])
            ks = [units(pt.per_node.cost(q.id) * pct / 100.0, bld.unit) for q in pt.option.quotes]
            terms += [k * v for k, q in zip(ks, pt.option.quotes, strict=True)
                      if (v := bld.y.get((q.id, i))) is not None]
            for k, q in zip(ks, pt.option.quotes, strict=True):   # a whole plan's percentage rounded once
                if (q.id, i) not in bld.y:
                    continue
                once = units((pt.fixed.total_cost + pt.n * pt.per_node.cost(q.id)) * pct / 100.0, bld.unit)
                if once != k0 + pt.n * k:
                    terms.append((once - k0 - pt.n * k) * bld._whole_of(q.id, i))
                hi = max(hi, abs(once))   # rounded once, a discount can exceed its per-node terms' sum
            hi = max(hi, abs(k0) + pt.n * max(abs(k) for k in ks) + 1)
    r = bld.m.new_int_var(-hi, hi, f"add_pct[{gid}]")
    if applies is None:
        bld.m.add(r == sum(terms)).only_enforce_if(lit)
    else:
        bld.m.add(r == sum(terms)).only_enforce_if([lit, applies])
        bld.m.add(r == 0).only_enforce_if(~applies)
    if bld.guard == "assume":
        bld.m.add(r == 0).only_enforce_if(~lit)
    bld.cost_adds.append(r)


def _forbid(bld: BuilderState, rule: Rule, lit: Any, match: list[int], named: list[str] | None) -> None:
    if rule.when.cost is not None:
        b = bld.m.new_bool_var(f"match[{rule_group(rule.name)}]")
        bld.m.add(b == sum(bld.z[i] for i in match)) if match else bld.m.add(b == 0)
        _cost_bound(bld, rule.when.cost, negate=True, lits=[lit, b])
    elif named is not None:
        for i in match:
            for q in bld.points[i].option.quotes:
                if q.id in named:
                    if len(bld.points[i].option.quotes) == 1:
                        bld.m.add(bld.z[i] == 0).only_enforce_if(lit)
                    elif (q.id, i) in bld.y:  # a multi-quote point without the quote has none of its nodes
                        bld.m.add(bld.y[(q.id, i)] == 0).only_enforce_if([lit, bld.z[i]])
    elif match:
        bld.m.add(sum(bld.z[i] for i in match) == 0).only_enforce_if(lit)


def _require(bld: BuilderState, rule: Rule, lit: Any, match: list[int], named: list[str] | None) -> None:
    bld.m.add(sum(bld.z[i] for i in match) == 1).only_enforce_if(lit)
    if named is not None:
        bld.m.add(sum(bld.u[qid] for qid in named) >= 1).only_enforce_if(lit)
    if rule.when.cost is not None:
        _cost_bound(bld, rule.when.cost, negate=False, lits=[lit])


def _cost_bound(bld: BuilderState, cmp: Comparison, *, negate: bool, lits: list[Any]) -> None:
    """A single-operator cost comparison (or its negation) in money units, enforced by `lits`. Costs in the
    model are rounded up to the unit: thresholds are compared as whole units."""
    ops = [(k, getattr(cmp, k)) for k in ("gt", "ge", "lt", "le", "eq") if getattr(cmp, k) is not None]
    if len(ops) != 1:
        raise ValueError("a cost condition takes exactly one operator")
    op, v = ops[0]
    if negate:
        op = {"gt": "le", "ge": "lt", "lt": "ge", "le": "gt", "eq": "ne"}[op]
    cost = bld.cost_expr()
    k_floor, k_ceil = floor_units(v, bld.unit), int(math.ceil(v / bld.unit - 1e-9))
    constraint = {"le": lambda: cost <= k_floor, "lt": lambda: cost <= k_ceil - 1, "ge": lambda: cost >= k_ceil,
                  "gt": lambda: cost >= k_floor + 1, "eq": lambda: cost == k_ceil,
                  "ne": lambda: cost != k_ceil}[op]()
    bld.m.add(constraint).only_enforce_if(lits)
