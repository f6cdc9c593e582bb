"""Pictures (needs the optional `chart` extra): sensitivity sweeps (plan cost against each swept input) and the
time–cost frontier (cost against finish date)."""

from __future__ import annotations

import importlib.util
from typing import Any

from .. import DISTRIBUTION
from ..errors import InputError


def check_available(path: str) -> None:
    """Refuse `--chart` before any work when matplotlib is not installed, or the format is not PNG/SVG/PDF."""
    if importlib.util.find_spec("matplotlib") is None:
        raise InputError(f"charts need matplotlib: pip install '{DISTRIBUTION}[chart]'", origin=f"--chart {path}")
    if not path.lower().endswith((".png", ".svg", ".pdf")):
        raise InputError("expected a .png, .svg or .pdf file name", origin=f"--chart {path}")


MONEY_SCALES = ((1e9, "$B"), (1e6, "$M"), (1e3, "$k"), (1.0, "$"))


def money_scale(values: list[float]) -> tuple[float, str]:
    """(divisor, axis unit) for amounts on a chart: the largest unit in which the largest amount is at least 1 —
    a $21k problem is drawn in $k (21), not as 0.021 $M."""
    top = max((abs(v) for v in values), default=0.0)
    return next(((d, u) for d, u in MONEY_SCALES if top >= d), (1.0, "$"))


def sweep_points(rows: list[dict[str, Any]]) -> tuple[list[Any], list[float], list[Any]]:
    """(x, cost) of the swept values that have a plan, and the values with none: a value with no plan is not a
    plan costing $0, so it is not drawn on the cost line (it is marked apart)."""
    planned = [r for r in rows if r.get("cost_usd") is not None]
    return [r["value"] for r in planned], [float(r["cost_usd"]) for r in planned], \
        [r["value"] for r in rows if r.get("cost_usd") is None]


def chart(sweep_rows: dict[str, list[dict[str, Any]]], path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n, rows in sweep_rows.items() if rows]
    fig, axes = plt.subplots(1, max(1, len(names)), figsize=(4 * max(1, len(names)), 3.4), squeeze=False)
    for ax, name in zip(axes[0], names, strict=False):
        rows = sweep_rows[name]
        xs, costs, none = sweep_points(rows)
        div, unit = money_scale(costs)
        ys = [c / div for c in costs]
        ax.plot(xs, ys, marker="o")
        for x, y, r in zip(xs, ys, [r for r in rows if r.get("cost_usd") is not None], strict=True):
            ax.annotate((r["option"] or "none").split("/")[0], (x, y), fontsize=6, xytext=(3, -9),
                        textcoords="offset points")
        if none:
            ax.scatter(none, [0] * len(none), marker="x", color="tab:red", transform=ax.get_xaxis_transform(),
                       clip_on=False, label="no plan")
            ax.legend(fontsize=6, loc="best")
        ax.margins(x=0.08, y=0.2)   # room for the labels inside the axes, below the title
        ax.set_title(name, pad=8)
        ax.set_ylabel(f"cost ({unit})")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def frontier_chart(points: list[Any], deadline: Any, path: str) -> None:
    """Cost against finish date, one marker per proven frontier point, the deadline as a line."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    xs = [pt.plan.finish for pt in points]
    div, unit = money_scale([pt.plan.total_cost for pt in points])
    ys = [pt.plan.total_cost / div for pt in points]
    ax.step(xs, ys, where="post", color="0.6", linewidth=1)
    ax.scatter(xs, ys, zorder=3)
    for x, y, pt in zip(xs, ys, points, strict=True):
        ax.annotate(f"{pt.plan.accelerator} {pt.plan.offer or pt.plan.mode} x{pt.plan.nodes}", (x, y), fontsize=6,
                    rotation=20, xytext=(3, 3), textcoords="offset points")
    if deadline is not None:
        ax.axvline(deadline, color="tab:red", linestyle="--", linewidth=1, label=f"deadline {deadline}")
        ax.legend(loc="upper right", fontsize=7)
    ax.set_xlabel("finish")
    ax.set_ylabel(f"risk-adjusted completion cost ({unit})")
    ax.margins(x=0.06, y=0.2)   # room for the labels inside the axes, below the title
    ax.set_title("Time-cost frontier (each point proven optimal for its finish date)", pad=8)
    fig.autofmt_xdate()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def draw_tornado(ax: Any, bars: list[tuple[str, float, float]], title: str) -> None:
    """A tornado of probabilities on `ax`: one bar per (label, low, high), the first on top."""
    for i, (_label, lo, hi) in enumerate(reversed(bars)):
        ax.barh(i, max(hi - lo, 0.004), left=lo, color="tab:blue")
    ax.set_yticks(range(len(bars)), [b[0] for b in reversed(bars)], fontsize=7)
    ax.set_xlim(0, 1)
    ax.set_title(title, fontsize=9)


def risk_chart(rep: Any, path: str) -> None:
    """`plan risk --chart`: the finish-date and cost histograms and the tornado of P(deadline)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from datetime import timedelta

    as_of = rep.problem.as_of
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    ax = axes[0]
    ax.bar([as_of + timedelta(days=(a + b) / 2) for a, b, _w in rep.finish_bins],
           [w for _a, _b, w in rep.finish_bins], width=max(1.0, rep.finish_bins[0][1] - rep.finish_bins[0][0]))
    if rep.problem.spec.schedule.deadline is not None:
        ax.axvline(rep.problem.spec.schedule.deadline, color="tab:red", linestyle="--", linewidth=1)
    ax.set_title("finish date")
    fig.autofmt_xdate()
    ax = axes[1]
    div, unit = money_scale([b for _a, b, _w in rep.cost_bins])
    ax.bar([(a + b) / 2 / div for a, b, _w in rep.cost_bins], [w for _a, _b, w in rep.cost_bins],
           width=max(1e-9, (rep.cost_bins[0][1] - rep.cost_bins[0][0]) / div))
    ax.set_title(f"cost ({unit})")
    draw_tornado(axes[2], [(sw.label, *sorted(sw.p_deadline)) for sw in rep.swings if None not in sw.p_deadline],
                 "P(deadline): each uncertainty at its deciles")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
