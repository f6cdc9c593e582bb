"""Reading a file that may be a problem or a program: what `plan solve`, `validate` and `explain` accept."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

from .overrides import parse_sets
from .problem import Problem, load_problem_source
from .yamlsrc import load_file


def load_any(file: str | Path, sets: Sequence[str] = (), *, quotes: Sequence[str] = (),
             today: date | None = None) -> Any:
    """A problem file (`Problem`) or a program file (`workloads:`, `program.ProgramProblem`), validated. The file
    is read once, and the program module (defining its pydantic models is import-time work a single run never
    uses) is imported only for a program, so a single-workload solve starts as fast as before programs existed
    (measured: bench/README.md, "Timings that used to live in docstrings (moved 2026-12-07)"). A program of one
    workload that uses nothing a single run lacks is that single run (`program.single_run`): one pricing path."""
    src = load_file(file)
    if isinstance(src.data, dict) and "workloads" in src.data:
        from .program import build_program, single_run
        program = build_program(src, parse_sets(sets), quotes=quotes, today=today or date.today())
        return single_run(program) or program
    return load_problem_source(src, sets, quotes=quotes, today=today)


def is_program(problem: Any) -> bool:
    """Whether `load_any` gave a program (several workloads on one calendar) rather than a single run's `Problem`:
    the one test every command that takes both makes, by type."""
    return not isinstance(problem, Problem)


__all__ = ["load_any", "is_program"]
