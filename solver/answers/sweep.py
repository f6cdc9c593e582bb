"""What-if grids (`plan sweep FILE --set-grid PATH=V1,V2 ...`): every combination of the values, each solved as its
own problem, on any executor (`executors.py`).

A grid point is a unit of plain data (`SweepUnit`: the problem as `PortableProblem`, the point's `--set`
expressions, the solve settings) and its answer is plain data too (`SweepRow`), so a unit can run in this process,
in a process pool or on a Ray cluster, and the answers are the same byte for byte: each unit rebuilds its problem
from the data, solves it with one CP-SAT worker and a fixed seed, and evaluates its risk on the problem's own seeded
scenarios. No CP-SAT model, context or cache crosses a process boundary.

Every point is validated here, before any unit is sent anywhere: a bad value is one line naming its `--set-grid`,
as for `--set`, before the long work.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from ..inputs.overrides import parse_set
from ..inputs.problem import PortableProblem, Problem, portable
from ..solve.pipeline import SolveSettings, prepare, solve_problem

log = logging.getLogger(__name__)

MAX_SWEEP_POINTS = 10_000
"""Most grid points one sweep may have: each is a full solve (about a second for the bundled 200B problem)."""
MAX_AXIS_VALUES = 1_000


@dataclass(frozen=True)
class Axis:
    """One `--set-grid PATH=V1,V2,...`: a problem path and the values it takes, as `--set` values."""

    path: str
    values: tuple[str, ...]

    @property
    def origin(self) -> str:
        return f"--set-grid {self.path}={','.join(self.values)}"


def split_values(text: str) -> list[str]:
    """`50M,100M` → ['50M', '100M']; commas inside brackets or braces belong to the value (`[a, b],[c]`)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return out


def parse_axis(expr: str) -> Axis:
    """`budget.max_usd=50M,100M` → Axis('budget.max_usd', ('50M', '100M')); errors name the `--set-grid`."""
    origin = f"--set-grid {expr if len(expr) <= 120 else expr[:117] + '...'}"
    if "=" not in expr:
        raise InputError("expected PATH=VALUE1,VALUE2,... (e.g. budget.max_usd=50M,100M)", origin=origin)
    path, _, rest = expr.partition("=")
    values = split_values(rest)
    if any(not v for v in values):
        raise InputError("empty value in the list (two commas in a row, or one at an end)", origin=origin)
    if len(values) > MAX_AXIS_VALUES:
        raise InputError(f"{len(values):,} values; at most {MAX_AXIS_VALUES:,} per axis", origin=origin)
    if len(set(values)) != len(values):
        dup = next(v for v in values if values.count(v) > 1)
        raise InputError(f"value '{dup}' appears twice", origin=origin)
    for v in values:
        parse_set(f"{path.strip()}={v}")  # the path's syntax, as for --set
    return Axis(path.strip(), tuple(values))


def grid(axes: Sequence[Axis]) -> list[tuple[str, ...]]:
    """Every combination of the axes' values as `--set` expressions, the first axis slowest (row-major order)."""
    paths = [a.path for a in axes]
    if len(set(paths)) != len(paths):
        dup = next(p for p in paths if paths.count(p) > 1)
        raise InputError(f"'{dup}' is given twice; put all its values in one list", origin=f"--set-grid {dup}=...")
    size = 1
    for a in axes:
        size *= len(a.values)
    if size > MAX_SWEEP_POINTS:
        raise InputError(f"{size:,} grid points; at most {MAX_SWEEP_POINTS:,} per sweep", origin="--set-grid")
    return [tuple(f"{a.path}={v}" for a, v in zip(axes, combo, strict=True))
            for combo in itertools.product(*(a.values for a in axes))]


@dataclass(frozen=True)
class SweepUnit:
    """One grid point as plain data (picklable, JSON-able parts only)."""

    index: int
    problem: PortableProblem
    sets: tuple[str, ...]
    time_limit: float
    allow_expired: bool


@dataclass(frozen=True)
class SweepRow:
    """One grid point's answer: its values, the status, the plan's headline and its risk (None where there is no
    plan), and for an infeasible point the constraint groups of the minimal conflict."""

    index: int
    sets: tuple[str, ...]
    status: str
    plan: dict[str, Any] | None
    risk: dict[str, Any] | None
    conflict: tuple[str, ...] | None


def units(problem: Problem, axes: Sequence[Axis], settings: SolveSettings) -> list[SweepUnit]:
    """The grid's units, every point validated first (`InputError` naming the `--set-grid` of the bad value)."""
    points = grid(axes)
    by_origin = {f"--set {a.path}={v}": a.origin for a in axes for v in a.values}
    for sets in points:
        try:
            problem.with_sets(sets)
        except InputError as exc:
            if exc.origin in by_origin:
                exc = InputError(exc.message, path=exc.path, origin=by_origin[exc.origin])
            raise exc from None
    data = portable(problem)
    return [SweepUnit(i, data, sets, settings.time_limit, settings.allow_expired) for i, sets in enumerate(points)]


def run_unit(unit: SweepUnit) -> SweepRow:
    """Solve one grid point from its data alone (see module docstring): the function every executor runs."""
    from .relax import conflict_of
    from .risk import draws_for, plan_risk

    problem = unit.problem.problem(unit.sets)
    settings = SolveSettings(time_limit=unit.time_limit, workers=1, processes=1, allow_expired=unit.allow_expired,
                             alternatives=False)
    ctx = prepare(problem, settings)
    result = solve_problem(problem, settings, ctx)
    plan, risk, conflict = None, None, None
    if result.plan is not None:
        p = result.plan
        plan = {"option": p.option, "accelerator": p.accelerator, "offer": p.offer, "nodes": p.nodes,
                "gpus": p.gpus, "start": p.start.isoformat(), "finish": p.finish.isoformat(),
                "cost_usd": round(p.total_cost), "cash_usd": round(p.total_cash),
                "quotes": [q.id for q in p.quotes]}
        st = plan_risk(ctx, p, draws_for(problem))
        base = problem.as_of
        risk = {"p_deadline": None if st.p_deadline is None else round(st.p_deadline, 4),
                "finish_p50": _day(base, st.finish_p50), "finish_p90": _day(base, st.finish_p90),
                "late_days_expected": round(st.late_days_expected, 4),
                "objective_usd": round(st.objective), "objective_std_error_usd": round(st.objective_std_error),
                "cost_expected_usd": round(st.cost_expected),
                "cost_p90_usd": round(st.cost_p90), "cvar95_usd": round(st.cvar95), "scenarios": st.scenarios,
                "seed": st.seed}
    elif result.status == "infeasible":
        found = conflict_of(ctx)
        conflict = tuple(found[0]) if found else ()
    log.info("sweep point %d (%s): %s", unit.index, ", ".join(unit.sets), result.status)
    return SweepRow(unit.index, unit.sets, result.status, plan, risk, conflict)


def _day(base: Any, days: int) -> str:
    from datetime import timedelta
    return (base + timedelta(days=days)).isoformat()


__all__ = ["Axis", "SweepUnit", "SweepRow", "parse_axis", "grid", "units", "run_unit", "split_values",
           "MAX_SWEEP_POINTS"]
