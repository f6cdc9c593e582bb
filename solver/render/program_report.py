"""`plan report PROGRAM.yaml -o report.html`: a program's page to forward — the decision in a sentence, the
workloads, a Gantt of runs and purchases (inline SVG), cash by quarter against the caps, the decision gates and the
value of the bake-offs where there are any, the warnings.

It reads the program's JSON answer (`program.program_dict`: the typed contract of `plan solve --format json`, so
the page and the JSON cannot disagree) and writes one self-contained page with the single run's styles
(`report_html.CSS`): no network, no timestamp but `as_of`, the same bytes for the same inputs.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from ..inputs.units import usd
from . import svg
from .report_html import CSS, _d, _section, _table
from .svg import esc

ROW_HEIGHT = 22
"""Pixels per Gantt row."""
LABEL_WIDTH = 190
"""Pixels for the Gantt's row names."""


def render_program_report(answer: dict[str, Any]) -> str:
    """The whole page of a program (module docstring)."""
    prog = answer.get("program")
    name, as_of = answer["problem"], answer["as_of"]
    parts = [f"<header><h1>{esc(name)}</h1><p class=\"sub\">program as of {esc(as_of)} · "
             f"{esc(answer['status'])}</p></header>"]
    if prog is None:
        parts.append(_section("no-plan", "No program satisfies the inputs",
                              "<p>Nothing satisfies every workload; <code>plan solve</code> names the conflict.</p>"))
    else:
        parts += [_decision(prog), _workloads(prog), _gantt(prog), _quarters(prog), _bakeoffs(prog.get("decision")),
                  _warnings(answer.get("warnings") or [])]
    title = f"Program report: {name} (as of {as_of})"
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
            + "\n".join(p for p in parts if p) + "\n</main>\n</body>\n</html>\n")


def _decision(prog: dict[str, Any]) -> str:
    bought = sum(p["capex_usd"] for p in prog["purchases"])
    what = f"Buy {usd(bought)} of hardware and rent the rest" if bought else "Rent every run"
    text = (f"{what}: {len(prog['workloads'])} workloads finish by {prog['finish']} for a risk-adjusted cost of "
            f"{usd(prog['cost_usd'])} (cash paid {usd(prog['cash_usd'])}).")
    return _section("decision", "The decision", f"<p class=\"lead\">{esc(text)}</p>")


def _workloads(prog: dict[str, Any]) -> str:
    rows = [[esc(w["id"]), esc(w["option"]), f"{w['nodes']:,}", _d(w["start"]), _d(w["finish"]),
             esc(", ".join(w["quotes"]) or "owned"), esc(usd(w["cost_usd"]))] for w in prog["workloads"]]
    return _section("workloads", "Workloads",
                    _table(["workload", "option", "nodes", "start", "finish", "on", "run cost"], rows, num=(2, 6)))


def gantt_rows(prog: dict[str, Any]) -> list[tuple[str, list[tuple[date, date, str]]]]:
    """(row name, [(from, to, kind)]) per workload (its run) and per bought quote (on order, installing, usable
    until the program's end)."""
    out: list[tuple[str, list[tuple[date, date, str]]]] = []
    for w in prog["workloads"]:
        out.append((w["id"], [(date.fromisoformat(w["start"]), date.fromisoformat(w["finish"]), "run")]))
    end = date.fromisoformat(prog["finish"])
    for p in prog["purchases"]:
        order, delivered, usable = (date.fromisoformat(p[k]) for k in ("order", "delivered", "usable"))
        out.append((f"buy {p['quote']}", [(order, delivered, "order"), (delivered, usable, "install"),
                                           (usable, max(usable, end), "owned")]))
    return out


def _gantt(prog: dict[str, Any]) -> str:
    rows = gantt_rows(prog)
    days = [d for _n, spans in rows for a, b, _k in spans for d in (a, b)]
    first, last = min(days), max(days)
    x = svg.Scale(first.toordinal(), max(last.toordinal(), first.toordinal() + 1), LABEL_WIDTH, svg.WIDTH - 10)
    cls = {"run": "bar", "order": "late", "install": "neg", "owned": "bar"}
    body = [svg._text(LABEL_WIDTH, 14, str(first)), svg._text(svg.WIDTH - 10, 14, str(last), anchor="end")]
    for k, (name, spans) in enumerate(rows):
        y = 24 + k * ROW_HEIGHT
        body.append(svg._text(LABEL_WIDTH - 6, y + 14, name, anchor="end"))
        for a, b, kind in spans:
            body.append(svg._rect(x(a.toordinal()), y + 3, x(b.toordinal()) - x(a.toordinal()), ROW_HEIGHT - 6,
                                  cls[kind], f"{name}: {kind} {a} → {b}"))
    chart = svg.frame(30 + len(rows) * ROW_HEIGHT, "Runs and purchases over time", body)
    note = ("<p class=\"sub\">Runs; bought hardware on order (delivery), installing, then usable to the "
            "program's end.</p>")
    return _section("gantt", "When", chart, note)


def _quarters(prog: dict[str, Any]) -> str:
    rows = [[esc(q["quarter"]), esc(usd(q["spend_usd"])), esc(usd(q.get("paid_usd") or 0.0)),
             esc(usd(q["cap_usd"])) if q["cap_usd"] is not None else "—"] for q in prog["quarters"]]
    return _section("cash", "Cash by quarter", f"<p class=\"sub\">{esc(prog.get('quarters_note', ''))}</p>",
                    _table(["quarter", "committed", "paid", "cap"], rows, num=(1, 2, 3)))


def _bakeoffs(dec: dict[str, Any] | None) -> str:
    if not dec:
        return ""
    value = dec.get("value_of_bakeoffs_usd")
    if value is None:
        return ""
    verdict = "worth their cost and delay" if value > 0 else "not worth their cost and delay"
    shares = ", ".join(f"{k} {v:.0%}" for k, v in sorted((dec.get("platform_shares") or {}).items(),
                                                          key=lambda kv: -kv[1]))
    change = f"save {usd(value)}" if value > 0 else f"cost {usd(-value)} more"
    text = (f"Deciding after the bake-offs is expected to {change} than deciding now "
            f"(± {usd(dec.get('standard_error_usd') or 0.0)}): they are {verdict}. Platform chosen after them: "
            f"{shares}.")
    return _section("bakeoffs", "What the bake-offs are worth", f"<p>{esc(text)}</p>")


def _warnings(warnings: list[Any]) -> str:
    if not warnings:
        return ""
    items = "".join(f"<li>{esc(w if isinstance(w, str) else w.get('text') or w)}</li>" for w in warnings)
    return _section("warnings", "Warnings", f"<ul>{items}</ul>")


__all__ = ["render_program_report", "gantt_rows"]
