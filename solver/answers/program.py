"""A program solved and explained: what `plan solve PROGRAM.yaml` reports.

Estimates (`estimate/program.py`), the model's optimum over the candidates (`solve/program.py`), the independent
check of the plan (`solve/program_check.py`), and for an infeasible program the minimal conflict with exact
relaxations (`program_explain.py`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..estimate.program import ProgramData, program_data
from ..inputs.program import ProgramProblem
from ..solve.engine import INFEASIBLE, Limits
from ..solve.program import ProgramOutcome, optimise
from ..solve.program_check import check_program
from .program_explain import ProgramExplanation, explain


@dataclass(frozen=True)
class ProgramReport:
    program: ProgramProblem
    data: ProgramData
    outcome: ProgramOutcome
    explanation: ProgramExplanation | None
    groups: tuple[tuple[str, str], ...]
    """(group id, what it says) of every limit the model enforced."""
    seconds: float
    out_of_time: bool


def solve_program(pp: ProgramProblem, limits: Limits) -> ProgramReport:
    t0 = time.monotonic()
    data = program_data(pp)
    outcome, pm, engine = optimise(data, limits)
    if outcome.plan is not None:
        check_program(pp, outcome.plan)
    expl = explain(pm, engine) if outcome.status == INFEASIBLE else None
    groups = tuple(sorted((g.id, g.text) for g in pm.groups.values()))
    return ProgramReport(pp, data, outcome, expl, groups, time.monotonic() - t0, engine.out_of_time)


__all__ = ["ProgramReport", "solve_program"]
