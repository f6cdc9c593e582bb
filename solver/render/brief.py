"""`plan solve`'s default view: the decision and what it rests on, in about 40 lines that fit the terminal.

The full report (`--verbose`, `--format markdown|json`) has every number behind the plan, the risk of every
alternative and one row per option that cannot work with the file:line of each limit. A person at a terminal first
needs less: which plan, why (expected cost, chance of the deadline, the price of more certainty), its quote at its
price, the dates, cost against cash, the few alternatives that come closest with their price and risk, and a
summary of what cannot work with the command that says more. Lines are wrapped, never cut, at the terminal's width
(`shutil.get_terminal_size`, 120 columns when the output is not a terminal, so files and tests are stable).
Offers are named as the catalog names them: buy, on demand, reserved, spot, managed.
"""

from __future__ import annotations

import shutil
import textwrap
from collections import Counter
from datetime import date, timedelta

from tabulate import tabulate

from ..inputs.units import usd
from ..solve.plan import Plan, PlanQuote, Result
from .safe import clean
from .text import (AFTER_RUN_TEXT, LINE_LABEL, OFFER_NAME, decision_lines, plural, quote_notices, render_explanation,
                   status_line, unpriced_lines)

ALTERNATIVE_ROWS = 4
"""Runners-up shown by default (the closest ones; `--top N` or `--verbose` for more)."""
DEFAULT_WIDTH = 120


def width() -> int:
    """The terminal's columns (at least 80), or 120 when the output is not a terminal."""
    return max(80, shutil.get_terminal_size((DEFAULT_WIDTH, 40)).columns)


def offer_name(p: Plan) -> str:
    return OFFER_NAME.get(p.offer or p.mode, p.offer or p.mode)


def unit_price(p: Plan) -> str:
    """The price of the plan's main quote (most nodes) with its unit: $/GPU-h, $/node, $/node-mo(nth)."""
    return quote_price(max(p.quotes, key=lambda q: (q.nodes, q.id)), month="mo")


def quote_price(q: PlanQuote, month: str = "month") -> str:
    """A quote's price with its unit: $/GPU-h (cloud), $/node (bought), $/node-month (managed)."""
    if q.mode == "cloud":
        return f"${q.price:,.2f}/GPU-h"
    return f"{usd(q.price)}/node-{month}" if q.mode == "managed" else f"{usd(q.price)}/node"


def wrap(text: str, w: int, first: str = "", rest: str = "  ") -> list[str]:
    """`text` wrapped at `w`, never inside an id or a number (no breaks on hyphens, no long words split)."""
    return textwrap.wrap(text, width=w, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False,
                         break_long_words=False)


def _wrap(label: str, text: str, w: int) -> list[str]:
    """`  label      text…` wrapped at `w` with a hanging indent under the text."""
    head = f"  {label:<10} "
    return wrap(text, w, head, " " * len(head)) or [head.rstrip()]


def chosen_block(r: Result, deadline: date | None, budget: float | None, applies_to: str, w: int) -> list[str]:
    p = r.plan
    assert p is not None
    stats = (r.extra.get("risk") or {}).get(p.option)
    out = [f"CHOSEN  {p.accelerator} · {p.system} · {offer_name(p)} — {plural(p.nodes, 'node')} = "
           f"{plural(p.gpus, 'GPU')}"]
    for line in decision_lines(r):  # "  decision      …" and its continuation lines
        out += _wrap("decision" if line.lstrip().startswith("decision") else "",
                     line.strip().removeprefix("decision").strip(), w)
    for q in p.quotes:
        money = quote_price(q)
        when = f"delivered {q.delivered}, ready {q.ready}" if q.mode == "buy" else f"ready {q.ready}"
        out += _wrap("quote" if q is p.quotes[0] else "", f"{q.id} ×{q.nodes}: {q.vendor}, {money} ({q.kind}), "
                     f"{when}", w)
    dates = f"{p.start} → {p.finish} ({p.training_days:.1f} days of training)"
    if stats is not None:
        day = lambda d: r.as_of + timedelta(days=d)  # noqa: E731
        dates += f"; finish P50 {day(stats.finish_p50)}, P90 {day(stats.finish_p90)}"
    if deadline is not None:
        dates += f"; deadline {deadline}"
    out += _wrap("schedule", dates, w)
    tail = f", P90 {usd(stats.cost_p90)}" if stats is not None else ""
    bud = f" · budget {usd(budget)} ({applies_to})" if budget else ""
    out += _wrap("cost", f"{usd(p.total_cost)} (expected: what this run consumes{tail}) · cash {usd(p.total_cash)} "
                 f"(what is paid{paid_text(p)}){bud}", w)
    lines = [f"{LINE_LABEL.get(n, n)} {usd(v)}" for n, v in p.lines.cost.items() if abs(v) >= 0.5]
    out += _wrap("", " · ".join(lines), w)
    if p.mode == "buy":
        out += _wrap("", f"bought hardware: {AFTER_RUN_TEXT[p.after_run]} (policy.after_run)", w)
    return [clean(x) for x in out]


SHOWN_QUARTERS = 6
"""Quarters of payments the default view names (the `--verbose` table has every one)."""


def paid_text(p: Plan) -> str:
    """`: 2027-Q1 $2.96M, Q2 $9.40M, …`: the plan's payments by calendar quarter, the year named when it changes."""
    quarters = [q for q in p.cash_by_quarter if abs(q.usd) >= 0.5]
    if not quarters:
        return ""
    parts, year = [], ""
    for q in quarters[:SHOWN_QUARTERS]:
        y, label = q.quarter.split("-")
        parts.append(f"{q.quarter if y != year else label} {usd(q.usd)}")
        year = y
    return ": " + ", ".join(parts) + (", …" if len(quarters) > SHOWN_QUARTERS else "")


def alternatives_table(r: Result, top: int | None, w: int) -> list[str]:
    """The chosen plan and the closest runners-up: offer, price with its unit, cost, delta, P(deadline), days
    late, finish P90; `~` on a row searched to within 5% of its best (`settle.SETTLE_GAP`)."""
    if r.plan is None:
        return []
    risk = r.extra.get("risk") or {}
    rows_shown = (top - 1) if top is not None else ALTERNATIVE_ROWS
    entries = [(r.plan, 0.0, 0.0, True)] + [(a.plan, a.delta_usd, a.settled_usd, False)
                                             for a in r.alternatives[: max(0, rows_shown)]]
    rows = []
    for p, delta, settled, chosen in entries:
        st = risk.get(p.option)
        est = "*" if any(q.kind == "estimate" for q in p.quotes) else ""
        rows.append(["CHOSEN" if chosen else "", p.accelerator, offer_name(p), p.nodes, unit_price(p) + est,
                     usd(p.total_cost) + ("~" if settled else ""),
                     "" if chosen else ("+" if delta >= 0 else "-") + usd(abs(delta)),
                     "-" if st is None or st.p_deadline is None else f"{st.p_deadline:.0%}",
                     "-" if st is None or st.p_deadline is None else f"{st.late_days_expected:.1f}",
                     "-" if st is None else str(r.as_of + timedelta(days=st.finish_p90))])
    more = len(r.alternatives) - (len(entries) - 1)
    title = ("Alternatives: the best plan of each other accelerator and offer, closest first"
             + (f" ({more} more with --verbose)" if more > 0 else "") + ":")
    head = ["", "accelerator", "offer", "nodes", "price", "cost", "delta", "P(deadline)", "days late", "finish P90"]
    align = ("left", "left", "left", "right", "right", "right", "right", "right", "right", "left")
    keep = list(range(len(head)))
    for drop in (None, 9, 6, 8, 0):  # a narrow terminal: P90 dates go first, the deltas, the days late, the label
        if drop == 0:
            rows = [[r[0], ("→ " if r[0] else "  ") + r[1], *r[2:]] for r in rows]
        if drop is not None:
            keep.remove(drop)
        table = tabulate([[r[k] for k in keep] for r in rows], headers=[head[k] for k in keep], tablefmt="simple",
                         colalign=[align[k] for k in keep], disable_numparse=True)
        if max(len(x) for x in table.splitlines()) <= w:
            break
    notes = []
    if any(e[0].quotes and any(q.kind == "estimate" for q in e[0].quotes) for e in entries):
        notes.append("* rests on an estimated price")
    if any(e[2] for e in entries):
        notes.append("~ searched to within 5% of its best (it cannot rank first or second)")
    return [*wrap(clean(title), w), *clean(table).splitlines()] + (wrap(clean("; ".join(notes)), w, "  ", "  ")
                                                                   if notes else [])


def unpriced_summary(r: Result, w: int) -> list[str]:
    """Hardware without a price that could win, one line each; the rest counted with their reasons."""
    wins = [x for x, be in zip(unpriced_lines(r), r.extra.get("unpriced", []), strict=True)
            if be.get("price") is not None]
    others = [be for be in r.extra.get("unpriced", []) if be.get("price") is None]
    out = []
    for x in wins:
        out += wrap("Without a price yet: " + x, w)
    if others:
        why = Counter(g for be in others for g in (be.get("reasons") or ["its dates or other costs"]))
        text = (f"{plural(len(others), 'quote')} without a price cannot become the plan at any price ("
                + ", ".join(f"{g}" + (f" ×{n}" if n > 1 else "") for g, n in _ranked(why)) + ")")
        out += wrap(text, w)
    return [clean(x) for x in out]


def excluded_summary(r: Result, w: int) -> list[str]:
    """How many options cannot work and the limits that rule them out most often; the full table is one flag
    away (each with the file:line where the limit was stated)."""
    if not r.excluded:
        return []
    options = {(e.accelerator, e.mode or "-") for e in r.excluded}
    why = Counter(g for e in r.excluded for g in sorted({x.group or _short(x.text) for x in e.reasons}))
    top = ", ".join(f"{g} ×{n}" for g, n in _ranked(why)[:6])
    text = (f"Cannot work: {plural(len(options), 'option')} — {top}" + (", …" if len(why) > 6 else "")
            + "; `plan solve --verbose` lists each with the file:line of its limits, `plan explain FILE --why-not ID`"
            " asks about one.")
    return [clean(x) for x in wrap(text, w)]


def _ranked(counts: Counter[str]) -> list[tuple[str, int]]:
    """Most frequent first, ties by name: the same order in every process (a set's order is not)."""
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def _short(text: str) -> str:
    return text.split(":")[0] if ":" in text else text


def render_brief(r: Result, *, deadline: date | None = None, budget: float | None = None,
                 applies_to: str = "cash", top: int | None = None, w: int | None = None) -> str:
    """The default `plan solve` view (module docstring)."""
    w = w or width()
    out: list[str] = [*wrap(status_line(r), w), ""]
    if r.plan is not None:
        out += chosen_block(r, deadline, budget, applies_to, w) + [""]
    warnings = list(r.warnings) + quote_notices(r, False)
    if r.as_of_defaulted:
        warnings.insert(0, f"as_of not set: planning as of today, {r.as_of}")
    if warnings:
        out.append("WARNINGS")
        for x in warnings:
            out += wrap(clean(x), w, "  ! ", "    ")
        out.append("")
    if r.explanation:
        for line in render_explanation(r.explanation, verbose=False).rstrip().splitlines():
            indent = " " * (len(line) - len(line.lstrip()))
            out += wrap(line, w, "", indent + "    ") if len(line) > w else [line]
        out.append("")
    if r.plan is not None and r.alternatives:
        out += alternatives_table(r, top, w) + [""]
    rest = unpriced_summary(r, w) + excluded_summary(r, w)
    out += rest
    return "\n".join(out).rstrip() + "\n"


__all__ = ["render_brief", "offer_name", "unit_price", "width", "OFFER_NAME"]
