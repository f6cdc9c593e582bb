"""The complete answer of `plan solve` / `plan explain`: the solve, plus why every other pair cannot work, plus —
when nothing works — the minimal conflict and the ways out."""

from __future__ import annotations

from dataclasses import replace

from .. import collect
from ..inputs.problem import Problem
from ..model.groups import reason, where
from ..solve.pipeline import Context, SolveSettings, prepare, solve_problem
from ..solve.plan import ExcludedOption, Reason, Result, exclusion_order
from .conflicts import exclusion_reasons
from .frontier import neighbours
from .unpriced import break_evens as unpriced_break_evens
from .relax import explain
from .risk import risk_table


@collect.paused()
def explained(ctx: Context, result: Result) -> Result:
    """`result` with the reasons of every pair that has no plan and, if the problem is infeasible, its
    explanation; with a plan, its neighbours on the time–cost frontier and the risk of it and its runners-up by
    scenarios; and the break-even price of every unpriced quote (a new Result; the solve's is not changed)."""
    if ctx.engine.out_of_time:
        # --max-seconds is spent: every further search would return at once with nothing; say what was found.
        return result
    excluded = list(result.excluded)
    if result.infeasible_pairs and ctx.settings.alternatives:
        for pair, conflict in exclusion_reasons(ctx, list(result.infeasible_pairs)).items():
            accel, mode = pair.split("/")
            reasons = tuple(Reason(reason(g), g, where(ctx.problem, g)) for g in conflict.groups) or \
                (Reason("no feasible plan (the time limit stopped the search for a reason)"),)
            excluded.append(ExcludedOption(accel, mode, None, reasons, proven=conflict.proven))
    explanation = explain(ctx) if result.status == "infeasible" else None
    out = replace(result, excluded=tuple(sorted(excluded, key=exclusion_order)), explanation=explanation)
    extra = dict(result.extra)
    if out.plan is not None and ctx.settings.alternatives:
        extra["frontier"] = neighbours(ctx, out)
    if out.plan is not None and ctx.settings.alternatives:
        extra["risk"] = risk_table(ctx, out)
    if ctx.universe.unpriced and ctx.settings.alternatives:
        extra["unpriced"] = unpriced_break_evens(ctx.problem, ctx.settings, ctx, out)
    return replace(out, extra=extra)


def solve_and_explain(problem: Problem, settings: SolveSettings | None = None,
                      ctx: Context | None = None) -> tuple[Context, Result]:
    ctx = ctx or prepare(problem, settings)
    return ctx, explained(ctx, solve_problem(problem, ctx.settings, ctx))

