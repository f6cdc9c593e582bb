"""What changed since a saved plan, the way `terraform plan` / Infracost show it: one line per change, `~` for a
changed value, money and dates formatted, input changes that explain it underneath."""

from __future__ import annotations

from typing import Any

from ..estimate.cost import LINE_ORDER
from ..inputs.units import usd
from .safe import clean
from .text import LINE_LABEL

_MONEY_KEYS = ("price", "max_usd", "usd", "add_usd")


def _value(v: Any, key: str = "") -> str:
    """A value as a person reads it: no Python reprs (None, 150000000.0, {'a': 1})."""
    if v is None:
        return "(none)"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        if any(k in key for k in _MONEY_KEYS) and key != "price" and abs(v) >= 1000:
            return usd(v)
        if isinstance(v, float) and not v.is_integer():
            return f"{v:,.4g}" if abs(v) < 1000 else f"{v:,.2f}"
        return f"{int(v):,}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_value(x, str(k))}" for k, x in sorted(v.items())) + "}"
    return str(v)


def cause_text(c: dict[str, Any]) -> str:
    used = " (used)" if c.get("used") and c["kind"] == "quote" else ""
    if c["kind"] == "problem":
        return f"~ problem {c['path']}: {_value(c['from'], c['path'])} -> {_value(c['to'], c['path'])}"
    if "change" in c:
        return f"{'+' if c['change'] == 'new' else '-'} quote {c['id']}{used}: {c['change']}"
    f = c["field"]
    if f == "price" and isinstance(c["from"], (int, float)) and isinstance(c["to"], (int, float)):
        return f"~ quote {c['id']}{used}: price {c['from']:,.2f} -> {c['to']:,.2f}"
    return f"~ quote {c['id']}{used}: {f} {_value(c['from'], f)} -> {_value(c['to'], f)}"


def render_diff(d: dict[str, Any], today: dict[str, Any] | None = None, *, title: str | None = None) -> str:
    lines = [title] if title else []
    if not d.get("same_problem", True):
        a, b = d["problems"]
        lines.append(f"! the saved plan is of problem '{a}', this is '{b}': the comparison may mean little")
    if d["status"][0] != d["status"][1]:
        lines.append(f"~ status       {d['status'][0]} -> {d['status'][1]}")
    if d["same_inputs"] and not d["changes"] and not d.get("cost_lines"):
        lines.append("no change: same inputs, same plan.")
        return clean("\n".join(lines) + "\n")
    if not d["changes"] and not d.get("cost_lines"):
        lines.append("no change in the plan.")
    for c in d["changes"]:
        unit = f" {c['unit']}" if c.get("unit") else ""
        lines.append(f"~ {c['field']:<34} {_value(c['from'])} -> {_value(c['to'])}{unit}")
    cost_lines = {c["line"]: c for c in d.get("cost_lines", [])}
    for name in [*LINE_ORDER, "total"]:
        c = cost_lines.get(name)
        if c is None:
            continue
        sign = "+" if c["delta"] >= 0 else "-"
        label = "total cost" if name == "total" else LINE_LABEL.get(name, name)
        lines.append(f"~ {label:<34} {usd(c['from'])} -> {usd(c['to'])}  ({sign}{usd(abs(c['delta']))})")
    if d["causes"]:
        lines.append("why (input changes):")
        lines += [f"  {cause_text(c)}" for c in d["causes"]]
    if today is not None:
        if today.get("feasible"):
            lines.append(f"the previous plan is still feasible today at {usd(today['cost_usd'])}, finishing "
                         f"{today['finish']}")
        else:
            lines.append(f"the previous plan is no longer feasible: {today.get('reason')}")
    return clean("\n".join(lines) + "\n")
