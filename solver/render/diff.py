"""What changed since a saved plan, the way `terraform plan` / Infracost show it: one line per change — `+` added
(a quote now used, a new cost line), `-` removed, `~` changed — labels aligned, money and dates formatted, the
input changes that explain it underneath, and a summary line that counts them."""

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


MARK = {"add": "+", "remove": "-", "change": "~"}
LABEL_WIDTH = 40
"""Labels are padded to the longest in the diff, at most this wide; a longer one (a marketplace quote id) keeps its
whole name and the value follows after two spaces."""
FIELD_LABEL = {"cash": "cash", "p_deadline": "P(deadline)", "late_days_expected": "expected days late",
               "finish_p90": "finish p90", "objective_usd": "expected cost with lateness", "offer": "offer"}


def _change_value(c: dict[str, Any], side: str) -> str:
    v = c[side]
    if c["field"] == "p_deadline" and isinstance(v, (int, float)):
        return f"{v:.0%}"
    if c.get("unit") == "usd" or c["field"] == "objective_usd":
        return usd(v)
    if c["field"] == "late_days_expected" and isinstance(v, (int, float)):
        return f"{v:,.1f} days"
    return _value(v) + (f" {c['unit']}" if c.get("unit") and c["unit"] != "usd" else "")


def _change_row(c: dict[str, Any]) -> tuple[str, str, str]:
    """(marker, label, what): `+ quote X  32 nodes`, `- quote Y  72 nodes`, `~ nodes  72 -> 144`."""
    label = FIELD_LABEL.get(c["field"], c["field"])
    action = c.get("action", "change")
    if action == "add":
        return "+", label, _change_value(c, "to")
    if action == "remove":
        return "-", label, _change_value(c, "from")
    what = f"{_change_value(c, 'from')} -> {_change_value(c, 'to')}"
    if c.get("unit") == "usd" and isinstance(c["from"], (int, float)) and isinstance(c["to"], (int, float)):
        delta = c["to"] - c["from"]
        what += f"  ({'+' if delta >= 0 else '-'}{usd(abs(delta))})"
    return "~", label, what


def _line_row(c: dict[str, Any]) -> tuple[str, str, str]:
    label = "total cost" if c["line"] == "total" else LINE_LABEL.get(c["line"], c["line"])
    sign = "+" if c["delta"] >= 0 else "-"
    action = c.get("action", "change")
    if action == "add":
        return "+", label, usd(c["to"])
    if action == "remove":
        return "-", label, usd(c["from"])
    return "~", label, f"{usd(c['from'])} -> {usd(c['to'])}  ({sign}{usd(abs(c['delta']))})"


def _rows(rows: list[tuple[str, str, str]], indent: str = "  ") -> list[str]:
    width = min(LABEL_WIDTH, max((len(label) for _, label, _ in rows), default=0))
    return [f"{indent}{mark} {label:<{width}}  {what}" for mark, label, what in rows]


def summary_line(d: dict[str, Any]) -> str:
    """One line, as `terraform plan` ends: what changed, counted by marker, and the money."""
    s = d.get("summary")
    if s is None:
        return ""
    if not s["changed"]:
        return "Summary: no change."
    head = "the decision changed" if d.get("decision_changed") else "same decision"
    parts = [f"{s['add']} to add", f"{s['change']} to change", f"{s['remove']} to remove"]
    money = []
    for key, name in (("cost_delta_usd", "cost"), ("cash_delta_usd", "cash")):
        if key in s and abs(s[key]) >= 1:
            money.append(f"{name} {'+' if s[key] >= 0 else '-'}{usd(abs(s[key]))}")
    return f"Summary: {head}: " + ", ".join(parts) + (f"; {', '.join(money)}" if money else "") + "."


def render_diff(d: dict[str, Any], today: dict[str, Any] | None = None, *, title: str | None = None) -> str:
    """`terraform plan`'s shape: `+` added, `-` removed, `~` changed, labels aligned to the longest, the input
    changes that explain it, and a summary line."""
    lines = [title] if title else []
    if not d.get("same_problem", True):
        a, b = d["problems"]
        lines.append(f"! the saved plan is of problem '{a}', this is '{b}': the comparison may mean little")
    if d["status"][0] != d["status"][1]:
        lines.append(f"  ~ status  {d['status'][0]} -> {d['status'][1]}")
    if d["same_inputs"] and not d["changes"] and not d.get("cost_lines"):
        lines.append("no change: same inputs, same plan.")
        return clean("\n".join(lines) + "\n")
    if not d["changes"] and not d.get("cost_lines"):
        lines.append("no change in the plan.")
    if d["changes"]:
        lines += ["plan:"] + _rows([_change_row(c) for c in d["changes"]])
    cost_lines = {c["line"]: c for c in d.get("cost_lines", [])}
    ordered = [cost_lines[n] for n in [*LINE_ORDER, "total"] if n in cost_lines] + \
        [c for n, c in sorted(cost_lines.items()) if n not in LINE_ORDER and n != "total"]
    if ordered:
        lines += ["cost lines:"] + _rows([_line_row(c) for c in ordered])
    if d["causes"]:
        lines.append("why (input changes):")
        lines += [f"  {cause_text(c)}" for c in d["causes"]]
    if today is not None:
        if today.get("feasible"):
            lines.append(f"the previous plan is still feasible today at {usd(today['cost_usd'])}, finishing "
                         f"{today['finish']}")
        else:
            lines.append(f"the previous plan is no longer feasible: {today.get('reason')}")
    if d.get("summary"):
        lines.append(summary_line(d))
    return clean("\n".join(lines) + "\n")
