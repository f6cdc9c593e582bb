"""What changed since a saved plan, the way `terraform plan` / Infracost show it: one line per change — `+` added
(a quote now used, a new cost line), `-` removed, `~` changed — labels aligned, money and dates formatted, the
input changes that explain it underneath, and a summary line that counts them."""

from __future__ import annotations

from typing import Any

from ..answers.history import InputChange, LineChange, PlanChange, PlanDiff, PlanToday
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


def cause_text(c: InputChange) -> str:
    used = " (used)" if c.used and c.kind == "quote" else ""
    if c.kind == "problem":
        path = c.path or ""
        return f"~ problem {path}: {_value(c.before, path)} -> {_value(c.after, path)}"
    if c.change is not None:
        return f"{'+' if c.change == 'new' else '-'} quote {c.quote}{used}: {c.change}"
    f = c.field or ""
    if f == "price" and isinstance(c.before, (int, float)) and isinstance(c.after, (int, float)):
        return f"~ quote {c.quote}{used}: price {c.before:,.2f} -> {c.after:,.2f}"
    return f"~ quote {c.quote}{used}: {f} {_value(c.before, f)} -> {_value(c.after, f)}"


MARK = {"add": "+", "remove": "-", "change": "~"}
LABEL_WIDTH = 40
"""Labels are padded to the longest in the diff, at most this wide; a longer one (a marketplace quote id) keeps its
whole name and the value follows after two spaces."""
FIELD_LABEL = {"cash": "cash", "p_deadline": "P(deadline)", "late_days_expected": "expected days late",
               "finish_p90": "finish p90", "objective_usd": "expected cost with lateness", "offer": "offer"}


def _change_value(c: PlanChange, v: Any) -> str:
    if c.field == "p_deadline" and isinstance(v, (int, float)):
        return f"{v:.0%}"
    if c.unit == "usd":
        return usd(v)
    if c.field == "late_days_expected" and isinstance(v, (int, float)):
        return f"{v:,.1f} days"
    return _value(v) + (f" {c.unit}" if c.unit else "")


def _change_row(c: PlanChange) -> tuple[str, str, str]:
    """(marker, label, what): `+ quote X  32 nodes`, `- quote Y  72 nodes`, `~ nodes  72 -> 144`."""
    label = FIELD_LABEL.get(c.field, c.field)
    if c.action == "add":
        return "+", label, _change_value(c, c.after)
    if c.action == "remove":
        return "-", label, _change_value(c, c.before)
    what = f"{_change_value(c, c.before)} -> {_change_value(c, c.after)}"
    if c.unit == "usd" and isinstance(c.before, (int, float)) and isinstance(c.after, (int, float)):
        delta = c.after - c.before
        what += f"  ({'+' if delta >= 0 else '-'}{usd(abs(delta))})"
    return "~", label, what


def _line_row(c: LineChange) -> tuple[str, str, str]:
    label = "total cost" if c.line == "total" else LINE_LABEL.get(c.line, c.line)
    if c.action == "add":
        return "+", label, usd(c.after)
    if c.action == "remove":
        return "-", label, usd(c.before)
    sign = "+" if c.delta >= 0 else "-"
    return "~", label, f"{usd(c.before)} -> {usd(c.after)}  ({sign}{usd(abs(c.delta))})"


def _rows(rows: list[tuple[str, str, str]], indent: str = "  ") -> list[str]:
    width = min(LABEL_WIDTH, max((len(label) for _, label, _ in rows), default=0))
    return [f"{indent}{mark} {label:<{width}}  {what}" for mark, label, what in rows]


def summary_line(d: PlanDiff) -> str:
    """One line, as `terraform plan` ends: what changed, counted by marker, and the money."""
    s = d.summary
    if not s.changed:
        return "Summary: no change."
    head = "the decision changed" if d.decision_changed else "same decision"
    parts = [f"{s.add} to add", f"{s.change} to change", f"{s.remove} to remove"]
    money = [f"{name} {'+' if v >= 0 else '-'}{usd(abs(v))}"
             for v, name in ((s.cost_delta_usd, "cost"), (s.cash_delta_usd, "cash")) if v is not None and abs(v) >= 1]
    return f"Summary: {head}: " + ", ".join(parts) + (f"; {', '.join(money)}" if money else "") + "."


def render_diff(d: PlanDiff, today: PlanToday | None = None, *, title: str | None = None) -> str:
    """`terraform plan`'s shape: `+` added, `-` removed, `~` changed, labels aligned to the longest, the input
    changes that explain it, and a summary line."""
    lines = [title] if title else []
    if not d.same_problem:
        a, b = d.problems
        lines.append(f"! the saved plan is of problem '{a}', this is '{b}': the comparison may mean little")
    if d.status[0] != d.status[1]:
        lines.append(f"  ~ status  {d.status[0]} -> {d.status[1]}")
    if d.same_inputs and not d.changes and not d.cost_lines:
        lines.append("no change: same inputs, same plan.")
        return clean("\n".join(lines) + "\n")
    if not d.changes and not d.cost_lines:
        lines.append("no change in the plan.")
    if d.changes:
        lines += ["plan:"] + _rows([_change_row(c) for c in d.changes])
    cost_lines = {c.line: c for c in d.cost_lines or ()}
    ordered = [cost_lines[n] for n in [*LINE_ORDER, "total"] if n in cost_lines] + \
        [c for n, c in sorted(cost_lines.items()) if n not in LINE_ORDER and n != "total"]
    if ordered:
        lines += ["cost lines:"] + _rows([_line_row(c) for c in ordered])
    if d.causes:
        lines.append("why (input changes):")
        lines += [f"  {cause_text(c)}" for c in d.causes]
    if today is not None:
        if today.feasible:
            lines.append(f"the previous plan is still feasible today at {usd(today.cost_usd or 0.0)}, finishing "
                         f"{today.finish}")
        else:
            lines.append(f"the previous plan is no longer feasible: {today.reason}")
    lines.append(summary_line(d))
    return clean("\n".join(lines) + "\n")
