"""The reports of the what-if commands in text and Markdown: `plan sensitivity` (break-even prices with their
units, the sweeps), `plan estimate` (one configuration), `plan risk` (the chosen plan's distributions and
tornado). The plan's own report is `text.py`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from tabulate import tabulate

from ..inputs.catalog import price_text
from ..inputs.units import usd
from .safe import clean
from .text import OFFER_NAME, _pct, plural


UNIT_MODE = {"usd per GPU-hour": "cloud", "usd per node": "buy", "usd per node-month": "managed"}
"""The mode whose price unit a break-even carries (`catalog.PRICE_UNITS`), to print it as the catalog does."""


def _priced(value: float | None, unit: str | None) -> str:
    if value is None:
        return "-"
    return price_text(value, UNIT_MODE[unit]) if unit in UNIT_MODE else f"{value:,.2f}"


def render_sensitivity(be: list[dict[str, Any]], sw: dict[str, list[dict[str, Any]]], *, markdown: bool = False
                       ) -> str:
    """`plan sensitivity`: the break-even prices (each with its unit) and the sweeps; `markdown`: headings and
    GitHub tables."""
    fmt = "github" if markdown else "simple"
    head = "## " if markdown else ""
    lines = [f"{head}Break-even prices (the quote price at which the ranking flips):",
             *([""] if markdown else []),
             tabulate([[b["role"], b["plan"], usd(b["cost_usd"]), b["quote"], _priced(b["current"], b.get("unit")),
                        _priced(b.get("break_even"), b.get("unit")), b.get("note") or ""]
                       for b in be], headers=["", "plan", "cost", "quote", "price today", "break-even", "note"],
                      tablefmt=fmt)]
    for name, rows in sw.items():
        lines += ["", f"{head}Sweep {name}:", *([""] if markdown else []),
                  tabulate([[r["value"], r["status"], r["option"] or "-", r["nodes"] or "-",
                             usd(r["cost_usd"]) if r["cost_usd"] is not None else "-", r["finish"] or "-"]
                            for r in rows], headers=["value", "status", "plan", "nodes", "cost", "finish"],
                           tablefmt=fmt)]
    return clean("\n".join(lines) + "\n")


def render_estimate(out: dict[str, Any], *, markdown: bool = False) -> str:
    m = out["memory_per_gpu_gb"]
    rows = [
        ["system", f"{out['system']} ({plural(out['nodes'], 'node')})"],
        ["model shape", f"{out['shape']['layers']} layers x {out['shape']['hidden']} hidden"],
        ["memory per GPU", f"{m['required']:.1f} GB required of {m['available']:g} GB "
                           f"(states {m['states']:.1f} + activations {m['activations']:.1f} + overhead "
                           f"{m['overhead']:.1f}, +headroom) -> {'fits' if out['fits'] else 'DOES NOT FIT'}"],
        ["recompute / TP", f"{out['recompute']} / {out['tensor_parallel']}"],
        ["min GPUs to fit", out["min_gpus"] if out["min_gpus"] is not None else "never fits"],
        ["cards by raw capacity", f"bf16 weights: {out['capacity_cards']['weights_bf16']}, "
                                  f"model states: {out['capacity_cards']['model_states']}"],
        ["training FLOPs", f"{out['flops']:.3e}"],
        ["MFU used", f"{out['mfu']:.1%}  ({', '.join(f'{k} {v:g}' for k, v in out['mfu_factors'].items())})"],
        ["scale-out efficiency", f"{out['scale_out_efficiency']:.1%}" if out["workable"] else "-"],
        ["GPU-hours (incl. failures)", f"{out['gpu_hours']:,.0f} (ideal {out['gpu_hours_ideal']:,.0f})"
         if out["workable"] else "unworkable: failures dominate"],
        ["days", f"{out['days']:.1f}" if out["workable"] else "-"],
    ]
    if out["workable"]:
        rows += [["P10-P90 (scenarios)", f"{out['gpu_hours_p10']:,.0f}-{out['gpu_hours_p90']:,.0f} GPU-hours, "
                                         f"{out['days_p10']:.1f}-{out['days_p90']:.1f} days (MFU spread "
                                         f"{out['mfu_sigma']:.2f} in log, interruptions; {out['scenarios']:,} "
                                         "scenarios)"]]
    if markdown:
        return clean("## Estimate\n\n" + tabulate(rows, headers=["", "value"], tablefmt="github")) + "\n"
    return clean(tabulate(rows, tablefmt="plain")) + "\n"


BAR_WIDTH = 40
"""Characters of the longest histogram bar."""


def bars(bins: Sequence[tuple[float, float, float]], label: Any) -> list[str]:
    top = max(w for _a, _b, w in bins) or 1.0
    return [f"  {label(a, b):<27} {'#' * max(0, round(BAR_WIDTH * w / top)):<{BAR_WIDTH}} {w:6.1%}"
            for a, b, w in bins]


def render_risk(rep: Any, *, markdown: bool = False) -> str:
    """`plan risk`: the chosen plan's distributions and tornado (answers/risk.RiskReport); `markdown`: a heading,
    the histograms in a code block, the tornado as a GitHub table."""
    p, st = rep.plan, rep.stats
    as_of = rep.problem.as_of

    def day(d: float) -> str:
        return str(as_of + timedelta(days=round(d)))

    deadline = rep.problem.spec.schedule.deadline
    lines = [f"Risk of the chosen plan: {p.accelerator} · {p.system} · {OFFER_NAME.get(p.offer or p.mode, p.mode)}, "
             f"{plural(p.nodes, 'node')} ({st.scenarios:,} scenarios, seed {st.seed})"]
    chance = (f"deadline {deadline}: {st.p_deadline:.0%} chance, {st.late_days_expected:.1f} days late expected; "
              if st.p_deadline is not None and deadline else "")
    lines.append(f"  {chance}finish P50 {day(st.finish_p50)}, P80 {day(st.finish_p80)}, P90 {day(st.finish_p90)} "
                 f"(planned {p.finish}, quotes at their P90 lead time)")
    lines.append(f"  cost: objective {usd(st.objective)} (± {usd(st.objective_std_error)} sampling); expected "
                 f"{usd(st.cost_expected)}, P90 {usd(st.cost_p90)}, CVaR95 {usd(st.cvar95)}")
    lines += ["", "Finish date:"] + bars(rep.finish_bins, lambda a, b: f"{day(a)} .. {day(b)}")
    lines += ["", "Cost:"] + bars(rep.cost_bins, lambda a, b: f"{usd(a)} .. {usd(b)}")
    rows = [[sw.label, " / ".join(_pct(x) for x in sw.p_deadline),
             f"{usd(sw.cost_expected[0])} / {usd(sw.cost_expected[1])}"] for sw in rep.swings]
    tornado = tabulate(rows, headers=["uncertainty", "P(deadline)", "expected cost"],
                       tablefmt="github" if markdown else "simple")
    what = ("What moves it (each uncertainty held at its favourable / unfavourable 10% decile, the others "
            "random):")
    if markdown:   # the summary as text, the histograms as a code block, the tornado as a table
        summary, bars_ = lines[:3], lines[3:]
        return clean("\n".join([f"## {summary[0]}", "", *["- " + x.strip() for x in summary[1:]], "", "```", *bars_[1:],
                                 "```", "", f"### {what}", "", tornado])) + "\n"
    lines += ["", what, tornado]
    return clean("\n".join(lines)) + "\n"
