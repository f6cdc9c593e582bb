"""What the user's policy and rules say about an option: the one reading every stage shares.

A rule's `when` has two kinds of conditions:
- attributes of the option (accelerator, system, vendor, class, mode, ecc, cooling, software, network) and of
  the quote (quote id), fixed before solving;
- plan quantities (gpus, nodes, days, power_kw, cost) that depend on the decision. gpus/nodes/days/power_kw
  are constants of each (option, node count) point, so the CP-SAT builder turns the rule into constraints over
  exactly the matching point literals; cost is a model variable and becomes a reified linear constraint.
Nothing here filters options before the solve: that would hide the rule from explanations.

The model, the bounds, the enumeration and the independent checker all read policy and rules through these
functions: they are the meaning of the input, not an encoding, and a second reading of the same YAML would only
be a second place for the two to drift apart (the checker's independence is from the CP-SAT encoding).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

from .spec import Adjust, Comparison, ProblemSpec, Rule, When

_ATTR_FIELDS = {"accelerator": "accelerator", "system": "system", "vendor": "vendor", "class_": "class",
                "mode": "mode", "ecc": "ecc", "cooling": "cooling", "software": "software", "network": "network"}


def option_attrs(*, accelerator: str, system: str, vendor: str, cls: str, mode: str, ecc: bool, cooling: str,
                 software: str, network: str) -> dict[str, Any]:
    """The attributes a rule's `when` can test, keyed as in the problem file."""
    return {"accelerator": accelerator, "system": system, "vendor": vendor, "class": cls, "mode": mode,
            "ecc": bool(ecc), "cooling": cooling, "software": software, "network": network}


def _values(v: str | list[str]) -> list[str]:
    return [v] if isinstance(v, str) else list(v)


def matches_attrs(when: When, attrs: Mapping[str, Any]) -> bool:
    """True when every attribute condition holds for the option (quote and quantities are not checked)."""
    for field, key in _ATTR_FIELDS.items():
        want = getattr(when, field)
        if want is None:
            continue
        have = attrs[key]
        if isinstance(want, bool):
            if bool(have) != want:
                return False
        elif str(have).lower() not in [w.lower() for w in _values(want)]:
            return False
    return True


def matches_point(when: When, gpus: int, nodes: int, days: float | None, power_kw: float) -> bool:
    """Quantity conditions that are constants of an (option, node count) point (`days` None: not tested)."""
    checks: list[tuple[Comparison | None, float | None]] = [
        (when.gpus, gpus), (when.nodes, nodes), (when.days, days), (when.power_kw, power_kw)]
    for cmp, x in checks:
        if cmp is None:
            continue
        if x is None or not cmp.test(x):
            return False
    return True


def quote_ids(when: When) -> list[str] | None:
    return None if when.quote is None else _values(when.quote)


def names_quote(rule: Rule, used: Collection[str]) -> bool:
    """A rule without a `quote:` condition holds for any quotes; one with it, when a named quote is used."""
    qids = quote_ids(rule.when)
    return qids is None or any(q in qids for q in used)


def adjustments(rules: Sequence[Rule], attrs: Mapping[str, Any], gpus: int, nodes: int, days: float | None,
                power_kw: float) -> Iterator[tuple[Rule, Adjust]]:
    """The adjustment rules (`then:` a mapping) whose attribute and quantity conditions hold at a point; rules that
    name quotes are included (the caller tests `names_quote` against the quotes a plan uses)."""
    for rule in rules:
        then = rule.then
        if isinstance(then, Adjust) and matches_attrs(rule.when, attrs) and \
                matches_point(rule.when, gpus, nodes, days, power_kw):
            yield rule, then


def rule_group(name: str) -> str:
    """The group id of a rule (what explanations, `--why-not` and diffs call it)."""
    return f"rules.{name}"


def program_run_hits(rule: Rule, attrs: Mapping[str, Any], gpus: int, nodes: int, days: float | None,
                     power_kw: float, quote: str | None, lots: Collection[str], cost: float) -> bool:
    """Whether a rule's `when` holds for one workload's run in a program: the option's attributes and the point's
    quantities as for a single run; `quote` names the run's rented quote, or, for a run on owned nodes (`quote`
    None), one of the bought quotes whose lots it may run on (`lots`: those of its system the program may buy) —
    except for `forbid`, which keeps a run off a bought quote by not buying that quote (`lot_allowed`), not by
    forbidding the run; `cost` is the run's own cost (on owned nodes what it draws and its operations: the
    hardware is the program's purchases)."""
    w = rule.when
    if not (matches_attrs(w, attrs) and matches_point(w, gpus, nodes, days, power_kw)):
        return False
    if w.quote is not None:
        if quote is not None:
            if not names_quote(rule, [quote]):
                return False
        elif rule.then == "forbid" or not names_quote(rule, lots):
            return False
    return w.cost is None or w.cost.test(cost)


def lot_allowed(rules: Sequence[Rule], quote: str, attrs: Mapping[str, Any]) -> bool:
    """Whether a program may buy lots of a quote: no `forbid` rule names it (with its option's attributes), and
    every `require` rule that names quotes names it (a run on owned nodes then uses the named quotes' lots only).
    A rule that names a bought quote tests nothing else (`inputs/program.py` refuses the rest)."""
    for r in rules:
        named = quote_ids(r.when)
        if named is None:
            continue
        if r.then == "forbid" and quote in named and matches_attrs(r.when, attrs):
            return False
        if r.then == "require" and quote not in named:
            return False
    return True


def delay_days(then: Adjust) -> int:
    """Whole days a matching rule adds to the start (the calendar is in days; a part day costs a day)."""
    return math.ceil(then.delay_days) if then.delay_days else 0


def policy_breaches(spec: ProblemSpec, attrs: Mapping[str, Any], quote_kinds: Collection[str]) -> list[str]:
    """Policy and site groups an option breaks whatever its size (group ids, in a fixed order).

    `quote_kinds` are the kinds of the option's usable quotes: `policy.allow_estimates: false` rules the option out
    only when every one of them is an estimate.
    """
    pol = spec.policy
    out: list[str] = []
    if attrs["mode"] not in pol.modes:
        out.append("policy.modes")
    if pol.require_ecc and not attrs["ecc"]:
        out.append("policy.require_ecc")
    if not _selected(attrs["accelerator"], pol.accelerators.include, pol.accelerators.exclude):
        out.append("policy.accelerators")
    if not _selected(attrs["vendor"], pol.vendors.include, pol.vendors.exclude):
        out.append("policy.vendors")
    if not pol.allow_estimates and quote_kinds and all(k == "estimate" for k in quote_kinds):
        out.append("policy.allow_estimates")
    if attrs["mode"] == "buy" and spec.site is not None and attrs["cooling"] not in spec.site.cooling:
        out.append("site.cooling")
    return out


def _selected(value: str, include: Sequence[str], exclude: Sequence[str]) -> bool:
    inc = {s.lower() for s in include}
    return (not inc or value.lower() in inc) and value.lower() not in {s.lower() for s in exclude}


def referenced_names(rule: Rule) -> dict[str, list[str]]:
    """Ids a rule names, for validating them against the catalog (typos must be errors)."""
    w = rule.when
    out: dict[str, list[str]] = {}
    for field in ("accelerator", "system", "vendor", "class_", "mode", "quote", "cooling", "software", "network"):
        v = getattr(w, field)
        if v is not None:
            out[_ATTR_FIELDS.get(field, field)] = _values(v)
    return out
