"""`plan risk PROGRAM` as text and JSON (`answers.program_risk.ProgramRisk`): each workload's chance of its
deadline and P50/P90 finish, the program's chance that every deadline holds, its end and cost distributions, and
the tornado. Cost is what the program consumes (risk-adjusted by the scenarios themselves), not cash."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from tabulate import tabulate

from ..answers.program_risk import ProgramRisk
from ..inputs.saved import SCHEMA_VERSION
from .safe import clean
from ..inputs.units import usd
from .whatif_text import bars


def _pct(p: float | None) -> str:
    return "-" if p is None else f"{p:.1%}"


def render_program_risk(name: str, as_of: date, risk: ProgramRisk) -> str:
    def day(d: float) -> str:
        return str(as_of + timedelta(days=round(d)))

    lines = [f"Risk of program {name} as planned (same runs, lots and order days; {risk.scenarios:,} scenarios, "
             f"seed {risk.seed}):", ""]
    rows = [[w.id, day(w.deadline_day) if w.deadline_day is not None else "-", _pct(w.p_deadline),
             day(w.planned_finish), day(w.finish_p50), day(w.finish_p90)] for w in risk.workloads]
    lines.append(tabulate(rows, headers=["workload", "deadline", "P(by deadline)", "planned finish", "P50", "P90"],
                          disable_numparse=True))
    every = f"every deadline met in {_pct(risk.p_all)} of scenarios; " if risk.p_all is not None else ""
    lines += ["", f"Program: {every}ends P50 {day(risk.end_p50)}, P90 {day(risk.end_p90)} (planned "
                  f"{day(risk.end_planned)})",
              f"Cost (what the program consumes): planned {usd(risk.cost_planned)}; by scenarios expected "
              f"{usd(risk.cost_expected)}, P90 {usd(risk.cost_p90)}, CVaR95 {usd(risk.cvar95)}"]
    lines += ["", "Program end:"] + bars(risk.end_bins, lambda a, b: f"{day(a)} .. {day(b)}")
    lines += ["", "Cost:"] + bars(risk.cost_bins, lambda a, b: f"{usd(a)} .. {usd(b)}")
    rows = [[s.label, " / ".join(_pct(x) for x in s.p_all), f"{usd(s.cost_expected[0])} / {usd(s.cost_expected[1])}"]
            for s in risk.swings]
    lines += ["", "What moves it (each uncertainty held at its favourable / unfavourable 10% decile, the others "
                  "random):", tabulate(rows, headers=["uncertainty", "P(every deadline)", "expected cost"],
                                       disable_numparse=True)]
    return clean("\n".join(lines)) + "\n"


def program_risk_dict(name: str, as_of: date, risk: ProgramRisk) -> dict[str, Any]:
    def day(d: float) -> str:
        return (as_of + timedelta(days=round(d))).isoformat()

    def r4(p: float | None) -> float | None:
        return None if p is None else round(p, 4)

    return {"schema_version": SCHEMA_VERSION, "problem": name, "as_of": as_of.isoformat(), "kind": "program",
            "scenarios": risk.scenarios, "seed": risk.seed,
            "workloads": [{"id": w.id, "deadline": day(w.deadline_day) if w.deadline_day is not None else None,
                           "p_deadline": r4(w.p_deadline), "planned_finish": day(w.planned_finish),
                           "finish_p50": day(w.finish_p50), "finish_p90": day(w.finish_p90)}
                          for w in risk.workloads],
            "p_all_deadlines": r4(risk.p_all),
            "end": {"planned": day(risk.end_planned), "p50": day(risk.end_p50), "p90": day(risk.end_p90)},
            "cost_usd": {"planned": round(risk.cost_planned), "expected": round(risk.cost_expected),
                         "p90": round(risk.cost_p90), "cvar95": round(risk.cvar95)},
            "histogram": {"end": [{"from": day(a), "to": day(b), "share": round(w, 4)} for a, b, w in risk.end_bins],
                          "cost": [{"from_usd": round(a), "to_usd": round(b), "share": round(w, 4)}
                                   for a, b, w in risk.cost_bins]},
            "tornado": [{"uncertainty": s.group, "label": s.label, "p_all_deadlines": [r4(p) for p in s.p_all],
                         "cost_expected_usd": [round(c) for c in s.cost_expected]} for s in risk.swings]}


def program_risk_chart(as_of: date, risk: ProgramRisk, path: str) -> None:
    """`plan risk PROGRAM --chart`: the program's end and cost histograms and the tornado of P(every deadline)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .chart import draw_tornado

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    ax = axes[0]
    ax.bar([as_of + timedelta(days=(a + b) / 2) for a, b, _w in risk.end_bins],
           [w for _a, _b, w in risk.end_bins], width=max(1.0, risk.end_bins[0][1] - risk.end_bins[0][0]))
    ax.axvline(as_of + timedelta(days=risk.end_planned), color="tab:red", linestyle="--", linewidth=1)
    ax.set_title("program end (dashed: planned)", fontsize=9)
    fig.autofmt_xdate()
    ax = axes[1]
    ax.bar([(a + b) / 2e6 for a, b, _w in risk.cost_bins], [w for _a, _b, w in risk.cost_bins],
           width=max(1e-9, (risk.cost_bins[0][1] - risk.cost_bins[0][0]) / 1e6))
    ax.axvline(risk.cost_planned / 1e6, color="tab:red", linestyle="--", linewidth=1)
    ax.set_title("cost, $M (dashed: planned)", fontsize=9)
    bars: list[tuple[str, float, float]] = []
    for s in risk.swings:
        a, b = s.p_all
        if a is not None and b is not None:
            bars.append((s.label, min(a, b), max(a, b)))
    draw_tornado(axes[2], bars, "P(every deadline): each uncertainty at its deciles")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


__all__ = ["render_program_risk", "program_risk_dict", "program_risk_chart"]
