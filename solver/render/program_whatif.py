"""A program's what-ifs as text and JSON: `plan sensitivity PROGRAM` and `plan sweep PROGRAM --set-grid`.

A row is `answers.program.headline`: status, cost (what the program consumes), cash (what is paid), the end of
the program, each workload's run, the nodes bought per quote. Tables show one column per workload whose run
differs between the rows (or from today's plan); the runs that never change are listed once under the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tabulate import tabulate

from ..inputs.saved import SCHEMA_VERSION
from ..inputs.units import usd
from .jsonout import swept_row
from .safe import clean


def _m(amount: float | None) -> str:
    """Compact dollars with their unit ($1.21M, $410k, $2.4k): a $2,400 bake-off is not "$0.00M"."""
    return "-" if amount is None else usd(amount)


def _run(w: dict[str, Any]) -> str:
    on = f" on {w['quotes'][0]}" if w["quotes"] else ""
    return f"{w['option']} x{w['nodes']}{on}"


def _runs(row: dict[str, Any]) -> dict[str, str]:
    return {w["id"]: _run(w) for w in row.get("workloads") or []}


def _bought(row: dict[str, Any]) -> str:
    return ", ".join(f"{b['nodes']} {b['quote']}" for b in row.get("bought") or []) or "nothing"


def _varying(rows: Sequence[dict[str, Any]], base: dict[str, Any] | None) -> list[str]:
    """Workloads whose run is not the same in every row (and in `base`), in program order."""
    seen = [_runs(r) for r in ([base] if base else []) + list(rows) if r.get("workloads")]
    order = [w["id"] for w in next((r["workloads"] for r in ([base] if base else []) + list(rows)
                                    if r.get("workloads")), [])]
    return [wid for wid in order if len({s.get(wid) for s in seen}) > 1]


def _table(rows: Sequence[dict[str, Any]], lead: list[list[str]], lead_heads: list[str],
           base: dict[str, Any] | None, fmt: str) -> tuple[str, list[str]]:
    varying = _varying(rows, base)
    table = []
    for first, r in zip(lead, rows, strict=True):
        if r["workloads"] is None:
            why = "; ".join(r["conflict"] or []) or ("time limit" if r["status"] != "infeasible" else "")
            table.append([*first, r["status"].upper(), "-", "-", "-", "-"] + ["-"] * len(varying) + [why])
            continue
        runs = _runs(r)
        table.append([*first, "" if r["status"] == "optimal" else r["status"], _m(r["cost_usd"]), _m(r["cash_usd"]),
                      r["finish"], _bought(r)] + [runs.get(w, "-") for w in varying] + [""])
    heads = lead_heads + ["status", "cost", "cash", "ends", "bought (nodes)"] + varying + ["why no plan"]
    return tabulate(table, headers=heads, tablefmt=fmt), varying


def _fixed(rows: Sequence[dict[str, Any]], base: dict[str, Any] | None, varying: list[str]) -> str:
    ref = next((r for r in ([base] if base else []) + list(rows) if r.get("workloads")), None)
    if ref is None:
        return ""
    same = [f"{wid} {run}" for wid, run in _runs(ref).items() if wid not in varying]
    return f"  same in every row: {'; '.join(same)}" if same else ""


def render_program_sensitivity(name: str, base: dict[str, Any], be: dict[str, Any] | None,
                               sweeps: dict[str, list[dict[str, Any]]]) -> str:
    lines = [f"Program {name} today: cost {_m(base['cost_usd'])} (what it consumes), cash {_m(base['cash_usd'])} "
             f"(what is paid), ends {base['finish']}; buys {_bought(base)}."]
    if be is not None:
        above = be.get("plan_above")
        lines += ["", f"Break-even price of the quote the program pays most to (by bisection on whole-program "
                      f"re-solves, to {be['resolution']:,.2f}, 1% of today's price):",
                  tabulate([[be["quote"], be["field"], f"{be['current']:,.2f}",
                             "-" if be["break_even"] is None else f"{be['break_even']:,.2f}", be["note"]]],
                           headers=["quote", "price field", "today", "break-even", "note"], disable_numparse=True)]
        if above is not None and above["workloads"] is None:
            lines.append(f"  above it: {above['status'].upper()}"
                         + (f" ({'; '.join(above['conflict'])})" if above.get("conflict") else ""))
        elif above is not None:
            changed = {wid: run for wid, run in _runs(above).items() if _runs(base).get(wid) != run}
            lines += [f"  above it: cost {_m(above['cost_usd'])}, cash {_m(above['cash_usd'])}, ends "
                      f"{above['finish']}; buys {_bought(above)}"
                      + "".join(f"; {wid} {run}" for wid, run in changed.items())]
    for sweep_name, rows in sweeps.items():
        table, varying = _table(rows, [[r["value"]] for r in rows], ["value"], base, "simple")
        lines += ["", f"Sweep {sweep_name} (whole program):", table]
        fixed = _fixed(rows, base, varying)
        if fixed:
            lines.append(fixed)
    return clean("\n".join(lines) + "\n")


def program_sensitivity_dict(name: str, as_of: str, base: dict[str, Any], be: dict[str, Any] | None,
                             sweeps: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "problem": name, "as_of": as_of, "kind": "program", "today": base,
            "break_even": be, "sweeps": {k: [swept_row(k, r) for r in rows] for k, rows in sweeps.items()}}


def render_program_sweep(axes: Sequence[Any], rows: Sequence[dict[str, Any]], fmt: str = "simple") -> str:
    lead = [[s.partition("=")[2] for s in r["sets"]] for r in rows]
    table, varying = _table(rows, lead, [a.path for a in axes], None, fmt)
    title = (f"{len(rows)} what-if{'s' if len(rows) != 1 else ''} of the program, each solved on its own "
             "(blank status = proven optimal over the candidates):")
    fixed = _fixed(rows, None, varying)
    return clean(title + "\n" + table + ("\n" + fixed if fixed else "")) + "\n"


def program_sweep_dict(name: str, as_of: str, axes: Sequence[Any], rows: Sequence[dict[str, Any]]
                       ) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "problem": name, "as_of": as_of, "kind": "program",
            "axes": [{"path": a.path, "values": list(a.values)} for a in axes],
            "points": [{"index": i, "set": {s.partition("=")[0]: s.partition("=")[2] for s in r["sets"]},
                        **{k: v for k, v in r.items() if k not in ("name", "value", "sets")}}
                       for i, r in enumerate(rows)]}


def render_program_frontier(name: str, rows: Sequence[dict[str, Any]], fmt: str = "simple") -> str:
    """`plan frontier PROGRAM`: one row per date, fastest first (rows: `headline` plus `end_by` and `chosen`)."""
    lead = [[r["end_by"], "plan solve's" if r["chosen"] else ""] for r in rows]
    table, varying = _table(rows, lead, ["ends by", ""], None, fmt)
    title = (f"Time-cost frontier of program {name}: each row is the cheapest program ending by its date (blank status "
             "= proven optimal over the candidates), fastest first:")
    fixed = _fixed(rows, None, varying)
    note = ("\n  the first date is the earliest end found, not proven the earliest: the search for it reached its time "
            "limit" if rows and not rows[0].get("fastest_proven", True) else "")
    return clean(title + "\n" + table + ("\n" + fixed if fixed else "") + note) + "\n"


def program_frontier_dict(name: str, as_of: str, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "problem": name, "as_of": as_of, "kind": "program",
            "frontier": list(rows)}


def program_frontier_chart(rows: Sequence[dict[str, Any]], path: str) -> None:
    """`plan frontier PROGRAM --chart`: cost (and cash) of the cheapest program against the date it ends by; the
    program `plan solve` chooses marked."""
    from datetime import date as _date

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    days: Any = [_date.fromisoformat(r["end_by"]) for r in rows]
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.step(days, [r["cost_usd"] / 1e6 for r in rows], where="post", marker="o", label="cost")
    ax.step(days, [r["cash_usd"] / 1e6 for r in rows], where="post", marker=".", linestyle=":", label="cash")
    for d, r in zip(days, rows, strict=True):
        if r["chosen"]:
            ax.annotate("plan solve's", (d, r["cost_usd"] / 1e6), fontsize=8, xytext=(-60, 12),
                        textcoords="offset points", arrowprops={"arrowstyle": "->"})
    ax.set_ylabel("$M")
    ax.set_title("cheapest program ending by each date", fontsize=10)
    ax.legend(fontsize=8)
    fig.autofmt_xdate()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def program_sensitivity_chart(today: dict[str, Any], sweeps: dict[str, list[dict[str, Any]]], path: str) -> None:
    """`plan sensitivity PROGRAM --chart`: one panel per swept input, the program's cost and cash at each swept
    value (in the sweep's order, labelled as in the table), today's cost as a line; a value with no plan is marked
    on the axis, and a value whose runs or purchases differ from today's is annotated with what moved."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(sweeps)
    fig, axes = plt.subplots(1, max(1, len(names)), figsize=(4.2 * max(1, len(names)), 3.4), squeeze=False)
    for ax, name in zip(axes[0], names, strict=False):
        rows = sweeps[name]
        xs = list(range(len(rows)))
        cost = [r["cost_usd"] / 1e6 if r["cost_usd"] is not None else None for r in rows]
        cash = [r["cash_usd"] / 1e6 if r["cash_usd"] is not None else None for r in rows]
        ax.plot([x for x, c in zip(xs, cost, strict=True) if c is not None], [c for c in cost if c is not None],
                marker="o", label="cost")
        ax.plot([x for x, c in zip(xs, cash, strict=True) if c is not None], [c for c in cash if c is not None],
                marker=".", linestyle=":", label="cash")
        if today.get("cost_usd") is not None:
            ax.axhline(today["cost_usd"] / 1e6, color="0.6", linewidth=1, label="today")
        for x, r, c in zip(xs, rows, cost, strict=True):
            if c is None:
                ax.annotate("no plan", (x, 0), fontsize=7, color="tab:red", rotation=90, xytext=(0, 4),
                            textcoords="offset points", annotation_clip=False)
            elif moved(today, r):
                right = x > (len(xs) - 1) / 2
                ax.annotate(moved(today, r), (x, c), fontsize=6, xytext=(-4 if right else 4, -10),
                            textcoords="offset points", ha="right" if right else "left")
        ax.set_xticks(xs, [str(r["value"]) for r in rows], fontsize=7)
        ax.set_title(name, fontsize=9)
        ax.set_ylabel("$M")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def moved(today: dict[str, Any], row: dict[str, Any]) -> str:
    """The workloads whose option changed from today's plan, and whether the purchases did (empty when neither)."""
    was = {w["id"]: w["option"] for w in today.get("workloads") or []}
    now = {w["id"]: w["option"] for w in row.get("workloads") or []}
    parts = [f"{wid}: {now[wid]}" for wid in sorted(now) if was.get(wid) != now[wid]]
    if (row.get("bought") or []) != (today.get("bought") or []):
        parts.append("purchases")
    return "; ".join(parts)


__all__ = ["program_sensitivity_chart", "moved",
           "program_frontier_chart", "render_program_sensitivity", "program_sensitivity_dict", "render_program_sweep",
           "program_sweep_dict", "render_program_frontier", "program_frontier_dict"]
