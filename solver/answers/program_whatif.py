"""What-ifs of a program: how its plan moves when an uncertain input moves (`plan sensitivity PROGRAM`), the
price of its main quote at which the plan stops using it as it does, and grids of `--set` values
(`plan sweep PROGRAM --set-grid`).

Every variant is the validated program with changes applied (`ProgramProblem.with_changes`), so it keeps the
user's catalogs, `--quotes`, `--set` and `risk:` overrides, and is validated like the file. A re-solve is a unit of
plain data (`ProgramUnit`: the program as `PortableProgram`, the changes, the time limit) that any executor runs:
one CP-SAT worker, a fixed seed, the same answer in this process, a process pool or on Ray.

The sweeps are those of a single run (`sensitivity.SWEEPS`), applied to the whole program: tokens scale every
workload's token budget (one workload's tokens are a `plan sweep --set-grid workloads.<id>.workload.tokens=…`),
achieved MFU scales every platform's base MFU, lead times add days to every quote's p50 and p90, electricity scales
the site's price.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .. import collect
from ..errors import InputError
from ..inputs.catalog import MAX_LEAD_DAYS, PRICE_FIELDS
from ..inputs.overrides import Change
from ..inputs.program import PortableProgram, ProgramProblem, portable_program
from ..solve.engine import Limits
from .executors import Executor, Local, Started
from .program import ProgramReport, headline, solve_program
from .sensitivity import SWEEPS
from .sweep import Axis, grid
from .whynot import BREAK_EVEN_DOUBLINGS, bisect_price, price_step

log = logging.getLogger(__name__)

BREAK_EVEN_RESOLUTION = 0.01
"""A program's break-even price is found to 1% of today's price (or the quote's price step if coarser): each step
of the search is a whole program solve (seconds), and a finance team reads the answer to a percent."""


def sweep_changes(pp: ProgramProblem, name: str, f: float) -> tuple[str, tuple[Change, ...]] | None:
    """(label, the changes that set one swept input to `f`), or None when the input does not apply (no site)."""
    origin = f"sensitivity {name}"
    first = pp.first
    if name == "tokens":
        return f"{f:.0%}", tuple(Change(("workloads", i, "workload", "tokens"), w.workload.tokens * f, origin)
                                 for i, w in enumerate(pp.spec.workloads))
    if name == "mfu":
        mfu = first.assumptions.values.compute.mfu_base
        return f"{f:.0%}", tuple(Change(("risk", "compute", "mfu_base", k), min(1.0, v * f), origin)
                                 for k, v in sorted(mfu.items()))
    if name == "lead_time_days":
        changes: list[Change] = []
        for qid, q in sorted(first.catalog.quotes.items()):
            if f:
                changes.append(Change(("quotes", qid, "lead_time_days"), min(q.lead_time_days + f, MAX_LEAD_DAYS),
                                      origin))
                if q.lead_time_p90_days is not None:
                    changes.append(Change(("quotes", qid, "lead_time_p90_days"),
                                          min(q.lead_time_p90_days + f, MAX_LEAD_DAYS), origin))
        return f"+{f:g} d", tuple(changes)
    if pp.spec.site is None:
        return None
    return f"{f:.0%}", (Change(("site", "electricity_usd_per_kwh"), pp.spec.site.electricity_usd_per_kwh * f,
                               origin),)


@dataclass(frozen=True)
class ProgramUnit:
    """One re-solve of a program as plain data (picklable): which sweep or grid point, its label, the changes."""

    index: int
    program: PortableProgram
    name: str
    label: str
    changes: tuple[Change, ...]
    time_limit: float
    sets: tuple[str, ...] = ()
    """A grid point's `--set` expressions (empty for a sensitivity value)."""


def run_unit(unit: ProgramUnit) -> dict[str, Any]:
    """The program's plan under the unit's changes (`answers.program.headline`), from the unit's data alone."""
    pp = unit.program.program(unit.changes)
    rep = solve_program(pp, Limits(time_limit=unit.time_limit, workers=1))
    log.info("program what-if %s %s: %s", unit.name, unit.label, rep.outcome.status)
    return {"name": unit.name, "value": unit.label, "sets": list(unit.sets), **headline(rep)}


def start_program_sweeps(pp: ProgramProblem, limits: Limits, which: Sequence[str] | None = None,
                         executor: Executor | None = None) -> Started[dict[str, list[dict[str, Any]]]]:
    """The sweeps' program solves handed to `executor` (default: this process), returning at once (every variant
    validated first): `results()` gives what `program_sweeps` returns."""
    names = list(which or SWEEPS)
    data = portable_program(pp)
    work: list[ProgramUnit] = []
    swept: list[float] = []
    for name in names:
        for f in SWEEPS[name]:
            got = sweep_changes(pp, name, f)
            if got is not None:
                pp.with_changes(got[1])  # validated here, before any unit is sent anywhere
                work.append(ProgramUnit(len(work), data, name, got[0], got[1], limits.time_limit))
                swept.append(f)

    def by_sweep(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        """Rows by sweep; `swept` is the value as a number (the factor, or the days added), `value` its label."""
        out: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        for unit, f, row in zip(work, swept, rows, strict=True):
            out[unit.name].append({**row, "swept": f})
        return {k: v for k, v in out.items() if v}

    return (executor or Local()).start(run_unit, work).then(by_sweep)


@collect.paused()
def program_sweeps(pp: ProgramProblem, limits: Limits, which: Sequence[str] | None = None,
                   executor: Executor | None = None) -> dict[str, list[dict[str, Any]]]:
    """One program solve per swept value (see module docstring), on `executor` (default: this process)."""
    with start_program_sweeps(pp, limits, which, executor) as started:
        return started.results()


def grid_units(pp: ProgramProblem, axes: Sequence[Axis], limits: Limits) -> list[ProgramUnit]:
    """The units of `plan sweep PROGRAM --set-grid …`, every point validated first (an `InputError` naming the
    `--set-grid` of a bad value, before any solve)."""
    by_origin = {f"--set {a.path}={v}": a.origin for a in axes for v in a.values}
    data = portable_program(pp)
    out = []
    for i, sets in enumerate(grid(axes)):
        try:
            varied = pp.with_sets(sets)
        except InputError as exc:
            if exc.origin in by_origin:
                exc = InputError(exc.message, path=exc.path, origin=by_origin[exc.origin])
            raise exc from None
        out.append(ProgramUnit(i, data, "grid", ", ".join(sets), varied.changes[len(pp.changes):],
                               limits.time_limit, tuple(sets)))
    return out


def main_quote(rep: ProgramReport) -> str | None:
    """The quote the chosen program pays most to (bought lots' capex, or a rented quote's rent), ties by id."""
    plan = rep.outcome.plan
    if plan is None:
        return None
    cash: dict[str, float] = {}
    for p in plan.purchases:
        cash[p.quote.quote] = cash.get(p.quote.quote, 0.0) + p.capex_usd
    for r in plan.runs:
        if r.candidate.quote:
            cash[r.candidate.quote] = cash.get(r.candidate.quote, 0.0) + r.candidate.cash_usd
    return max(sorted(cash), key=lambda q: cash[q]) if cash else None


def quote_use(row: dict[str, Any], qid: str) -> tuple[Any, ...]:
    """How a plan (a `headline` row) uses a quote: the nodes bought from it, and the runs on it."""
    bought = sum(b["nodes"] for b in row.get("bought") or [] if b["quote"] == qid)
    runs = tuple((w["id"], w["nodes"]) for w in row.get("workloads") or [] if qid in w["quotes"])
    return bought, runs


@collect.paused()
def program_break_even(pp: ProgramProblem, base: ProgramReport, limits: Limits) -> dict[str, Any] | None:
    """The price of the chosen program's main quote (`main_quote`) above which the optimal program no longer uses
    it as it does (the same nodes bought from it, the same runs on it), by bisection on whole-program re-solves to
    `BREAK_EVEN_RESOLUTION`; with the plan just above that price. None when there is no plan."""
    qid = main_quote(base)
    if qid is None:
        return None
    q = pp.first.catalog.quotes[qid]
    field = PRICE_FIELDS[q.mode]
    price = float(getattr(q, field))
    today = headline(base)
    use = quote_use(today, qid)
    step = max(price_step(q.mode), price * BREAK_EVEN_RESOLUTION)
    above: dict[str, Any] = {}

    def holds(p: float) -> bool:
        log.info("program break-even: %s at %.2f", qid, p)
        row = headline(solve_program(pp.with_changes([Change(("quotes", qid, field), p, "break-even search")]), limits))
        if quote_use(row, qid) == use:
            return True
        above[f"{p:.6f}"] = row
        return False

    out: dict[str, Any] = {"quote": qid, "field": field, "current": price, "use": _use_text(use), "break_even": None,
                           "resolution": step}
    lo, hi = price, price * 2
    for _ in range(BREAK_EVEN_DOUBLINGS):
        if not holds(hi):
            lo, hi = bisect_price(lo, hi, step, holds)
            out.update(break_even=round(lo, 2), next_price=round(hi, 2), plan_above=above[f"{hi:.6f}"],
                       note=f"the program {_use_text(use)} up to {lo:,.2f}; at {hi:,.2f} it changes")
            return out
        lo, hi = hi, hi * 2
    out["note"] = f"the program keeps this use even at {2 ** BREAK_EVEN_DOUBLINGS}x today's price"
    return out


def _use_text(use: tuple[Any, ...]) -> str:
    bought, runs = use
    parts = [f"buys {bought} nodes"] if bought else []
    parts += [f"runs {wid} on {n} nodes" for wid, n in runs]
    return " and ".join(parts) or "does not use it"


__all__ = ["program_sweeps", "start_program_sweeps", "program_break_even", "grid_units", "run_unit", "ProgramUnit",
           "sweep_changes", "main_quote", "quote_use", "BREAK_EVEN_RESOLUTION"]
