"""Matching of declarative rules against options and node counts.

A rule's `when` has two kinds of conditions:
- attributes of the option (accelerator, system, vendor, class, mode, ecc, cooling, software, network) and of
  the quote (quote id), fixed before solving;
- plan quantities (gpus, nodes, days, power_kw, cost) that depend on the decision. gpus/nodes/days/power_kw
  are constants of each (option, node count) point, so the CP-SAT builder turns the rule into constraints over
  exactly the matching point literals; cost is a model variable and becomes a reified linear constraint.
Nothing here filters options before the solve: that would hide the rule from explanations.
"""

from __future__ import annotations

from typing import Any

from .problem import Comparison, Rule, When

_ATTR_FIELDS = {"accelerator": "accelerator", "system": "system", "vendor": "vendor", "class_": "class",
                "mode": "mode", "ecc": "ecc", "cooling": "cooling", "software": "software", "network": "network"}


def _values(v: str | list[str]) -> list[str]:
    return [v] if isinstance(v, str) else list(v)


def matches_attrs(when: When, attrs: dict[str, Any]) -> bool:
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
    """Quantity conditions that are constants of an (option, node count) point."""
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


def referenced_names(rule: Rule) -> dict[str, list[str]]:
    """Ids a rule names, for validating them against the catalog (typos must be errors)."""
    w = rule.when
    out: dict[str, list[str]] = {}
    for field in ("accelerator", "system", "vendor", "class_", "mode", "quote", "cooling", "software", "network"):
        v = getattr(w, field)
        if v is not None:
            out[_ATTR_FIELDS.get(field, field)] = _values(v)
    return out
