"""The complete answer of `plan solve` / `plan explain`: the solve, plus why every other pair cannot work, plus —
when nothing works — the minimal conflict and the ways out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from .. import collect
from ..estimate.outlook import reference_day
from ..estimate.scenarios import cvar_weight, late_price
from ..inputs.problem import Problem
from ..model.groups import reason, where
from ..solve.forked import fork_map
from ..solve.pipeline import Context, SolveSettings, prepare, processes_for, solve_problem
from ..solve.plan import ExcludedOption, Reason, Result, exclusion_order
from .conflicts import exclusion_reasons
from .unpriced import break_even
from .relax import explain
from .risk import risk_and_differences
from .steps import confidence_steps
from .tco import tco_by_option


@dataclass(frozen=True)
class Pricing:
    """How the objective prices the risk of this problem (what the report says next to its figures)."""

    late_usd_per_day: float
    cvar_weight: float
    late_after_day: int | None
    """The day from which days are late (your deadline, or `schedule.late_after`), from as_of."""


@collect.paused()
def explained(ctx: Context, result: Result) -> Result:
    """`result` with the reasons of every pair that has no plan and, if the problem is infeasible, its
    explanation; with a plan, the steps up in confidence above it (`steps.py`) and the risk of it and its
    runners-up by scenarios; every plan's total cost over the horizon (`tco.py`); and the break-even price of every
    unpriced quote (a new Result; the solve's is not changed)."""
    if ctx.engine.out_of_time:
        # --max-seconds is spent: every further search would return at once with nothing; say what was found.
        return replace(result, extra={**result.extra, "tco": tco_by_option(ctx.problem, result)})
    excluded = list(result.excluded)
    if result.infeasible_pairs and ctx.settings.alternatives:
        for pair, conflict in exclusion_reasons(ctx, list(result.infeasible_pairs)).items():
            accel, mode = pair.split("/")
            reasons = tuple(Reason(reason(g), g, where(ctx.problem, g)) for g in conflict.groups) or \
                (Reason("no feasible plan (the time limit stopped the search for a reason)"),)
            excluded.append(ExcludedOption(accel, mode, None, reasons, proven=conflict.proven))
    explanation = explain(ctx) if result.status == "infeasible" else None
    out = replace(result, excluded=tuple(sorted(excluded, key=exclusion_order)), explanation=explanation)
    if ctx.engine.out_of_time and out.stopped_by is None:  # the explanation, not the solve, ran out of time
        out = replace(out, stopped_by=ctx.settings.wall_limit)
    extra = dict(result.extra)
    extra["pricing"] = Pricing(late_price(ctx.problem), cvar_weight(ctx.problem), reference_day(ctx.problem))
    extra["tco"] = tco_by_option(ctx.problem, out)
    if not ctx.settings.alternatives:
        return replace(out, extra=extra)
    tasks: dict[str, Callable[[], Any]] = {}
    if out.plan is not None:
        tasks["steps"] = lambda: confidence_steps(ctx, out)
        tasks["risk"] = lambda: risk_and_differences(ctx, out)
    asked = [q for q in ctx.universe.unpriced if _asked(ctx.problem, q)]
    for k, q in enumerate(asked):
        tasks[f"unpriced-{k}"] = partial(break_even, ctx.problem, ctx.settings, ctx, out, q)
    # Without a plan the tasks are the break-evens of unpriced quotes, which have no plan to beat and so no price to
    # search: each costs less than forking a child for it (measured: bench/README.md, "Timings that used to live in
    # docstrings (moved 2026-12-07)").
    done = side_by_side(ctx, tasks, processes_for(ctx, len(tasks)) if out.plan is not None else 1)
    if out.plan is not None:
        extra["steps"] = done["steps"]
        extra["risk"] = done["risk"].stats
        extra["risk_difference_se"] = done["risk"].difference_std_error
    if asked:
        extra["unpriced"] = [done[f"unpriced-{k}"] for k in range(len(asked))]
    return replace(out, extra=extra)


def _asked(problem: Any, q: Any) -> bool:
    """Whether the user's policy lets an unpriced quote be considered at all (its mode, accelerator and vendor):
    one it rules out has no break-even to search, and listing it ("no price wins: policy.modes") is noise."""
    policy = problem.spec.policy
    accel = problem.catalog.systems[q.system].accelerator
    vendor = problem.catalog.accelerators[accel].vendor
    return q.mode in policy.modes and _selected(policy.accelerators, accel) and _selected(policy.vendors, vendor)


def _selected(sel: Any, name: str) -> bool:
    return (not sel.include or name in sel.include) and name not in sel.exclude


def side_by_side(ctx: Context, tasks: dict[str, Callable[[], Any]], processes: int) -> dict[str, Any]:
    """Each task's answer, the tasks run side by side on forked processes (`solve/forked.py`), in the order given
    (the longest first).

    Why it is safe: the tasks are independent answers about one solved problem. Each builds its own contexts for
    the problems it derives (a tighter deadline, none, a priced quote) and reads the solve's context only through
    caches that change no answer (`Screen` memos of point reasons the solve left known, estimates); the one thing a
    task can learn that the command must know, the wall clock running out (`--max-seconds`), comes back with its
    answer. So the answers are those of running them one after the other, byte for byte (tests/test_forked.py)."""
    names = list(tasks)

    def run(name: str) -> tuple[Any, bool]:
        return tasks[name](), ctx.engine.out_of_time

    answers = fork_map(run, names, processes)
    for _value, out_of_time in answers:
        ctx.engine.out_of_time = ctx.engine.out_of_time or out_of_time
    return {name: value for name, (value, _oot) in zip(names, answers, strict=True)}


def solve_and_explain(problem: Problem, settings: SolveSettings | None = None,
                      ctx: Context | None = None) -> tuple[Context, Result]:
    ctx = ctx or prepare(problem, settings)
    return ctx, explained(ctx, solve_problem(problem, ctx.settings, ctx))

