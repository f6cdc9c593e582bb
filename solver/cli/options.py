"""What the commands share: option groups, the way a command body runs (`process`), loading a problem or program
file with the options that change it, and the solve settings the options make."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from solver import DISTRIBUTION

MAX_TIME_LIMIT = 86_400.0
"""Longest `--time-limit` accepted: a day of deterministic time per CP-SAT call is already far beyond any use."""


class Seconds(click.ParamType):
    """A positive, finite number of (deterministic) seconds: `nan`, `inf`, 0 and negatives are usage errors."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            v = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(v) or v <= 0 or v > MAX_TIME_LIMIT:
            self.fail(f"expected a number of seconds in (0, {MAX_TIME_LIMIT:g}], got {value!r}", param, ctx)
        return v


class _State:
    console_script = False
    """True when `entry` runs the command: the process ends with `os._exit` right after it."""


STATE = _State()


def process(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run a command body under `console.run` (it receives the output buffer as `out`) and exit with its code."""

    @wraps(fn)
    def wrapper(*args: Any, verbose: bool = False, debug: bool = False, **kwargs: Any) -> None:
        from solver.render.console import run
        sys.exit(run(lambda out: fn(*args, out=out, verbose=verbose, **kwargs), verbose=verbose, debug=debug,
                     process_ends=STATE.console_script))
    return wrapper


def common(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--debug", is_flag=True, help="Log everything and show tracebacks of internal errors.")(fn)
    return click.option("-v", "--verbose", is_flag=True,
                        help="Every detail in the tables, and the solver's steps on stderr.")(fn)


def _risk_set(path: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    """An option that is a shorthand for `--set risk.<path>=VALUE` (kept in the context for `load_input`)."""
    def remember(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
        if value is not None:
            ctx.meta.setdefault("risk_sets", []).append(f"risk.{path}={value}")
    return remember


def problem_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=None, expose_value=False,
                      callback=_risk_set("uncertainty.seed"),
                      help="Seed of the risk scenarios (default: assumptions.uncertainty.seed).")(fn)
    # 200,000: assumptions.MAX_SCENARIOS (not imported here: the command starts without pydantic; a test ties them)
    fn = click.option("--scenarios", type=click.IntRange(100, 200_000), default=None, expose_value=False,
                      callback=_risk_set("uncertainty.scenarios"),
                      help="Risk scenarios per plan (default: assumptions.uncertainty.scenarios, 10,000).")(fn)
    fn = click.option("--allow-expired", is_flag=True, help="Use quotes whose valid_until is before as_of (warns).")(fn)
    fn = click.option("--quotes", "quotes", multiple=True, metavar="PATH",
                      help="Extra quote/catalog file or folder, layered over the bundled catalogs (repeatable); an "
                           "entry with a known id changes only the fields it gives.")(fn)
    return click.option("--set", "sets", multiple=True, metavar="PATH=VALUE",
                        help="Override a problem value (budget.max_usd=80M) or a quote field "
                             "(quotes.<id>.usd_per_gpu_hour=5.5); repeatable.")(fn)


def _wall_deadline(ctx: click.Context, _param: click.Parameter, value: float | None) -> None:
    """--max-seconds: the wall-clock deadline of the whole command, counted from when its options are read."""
    if value is not None:
        import time
        ctx.meta["max_seconds"] = value
        ctx.meta["wall_deadline"] = time.monotonic() + value


def _processes(ctx: click.Context, _param: click.Parameter, value: int | None) -> None:
    if value is not None:
        ctx.meta["processes"] = value


def solver_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--processes", type=click.IntRange(1, 256), default=None, expose_value=False,
                      callback=_processes,
                      help="Processes that solve accelerator/mode pairs side by side (Linux) [default: the pairs "
                           "still unsolved after 0.1 s go to every CPU this process may use, up to 30,000 quotes]. "
                           "The answer is the same.")(fn)
    fn = click.option("--max-seconds", type=Seconds(), default=None, expose_value=False, callback=_wall_deadline,
                      help="Wall-clock limit for the whole command: when it stops the search, the best plan found "
                           "is printed with the proven bound and the gap (exit 3). Not deterministic; off by "
                           "default.")(fn)
    fn = click.option("--debug-model", "debug_model", default=None, metavar="DIR",
                      help="Write every CP-SAT model (text proto) and its solver log into DIR.")(fn)
    return click.option("--time-limit", type=Seconds(), default=20.0, show_default=True,
                        help="Deterministic time limit per CP-SAT call (seconds of CP-SAT's deterministic clock: "
                             "the same on every machine).")(fn)


def executor_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--executor", type=click.Choice(["process", "local", "ray"]), default="process",
                      show_default=True,
                      help="Where the re-solves run: a local process pool, this process, or Ray "
                           f"(pip install '{DISTRIBUTION}[ray]').")(fn)
    fn = click.option("--address", default=None, metavar="ADDR",
                      help="Ray cluster for --executor ray: auto (the cluster this machine belongs to) or "
                           "ray://HEAD:10001 [default: a local Ray].")(fn)
    return click.option("--workers", type=click.IntRange(1, 4096), default=None,
                        help="Processes (process) or CPUs of a local Ray (ray) [default: the CPUs this process "
                             "may use].")(fn)


def executor_of(name: str, workers: int | None, address: str | None) -> Any:
    from solver.answers.executors import make_executor
    return make_executor(name, workers, address)


def is_program(problem: Any) -> bool:
    """A program (several workloads) rather than a single run (`inputs.loading.is_program`)."""
    from solver.inputs import loading
    return loading.is_program(problem)


def load_input(file: str, sets: tuple[str, ...], quotes: tuple[str, ...], programs: bool = False) -> Any:
    from solver.inputs.loading import load_any
    from solver.inputs.problem import load_problem
    ctx = click.get_current_context(silent=True)
    risk_sets = list(ctx.meta.get("risk_sets", [])) if ctx is not None else []
    return (load_any if programs else load_problem)(file, list(sets) + risk_sets, quotes=list(quotes))


def refuse_for_programs(options: dict[str, Any]) -> None:
    """One line naming the first option given that a program file does not take yet."""
    from solver.errors import InputError
    given = [k for k, v in options.items() if v]
    if given:
        raise InputError("not supported for program files yet", origin=given[0])



def solve_settings(time_limit: float = 20.0, allow_expired: bool = False, debug_model: str | None = None,
              **kw: Any) -> Any:
    from solver.solve.pipeline import SolveSettings
    if debug_model:
        from pathlib import Path

        from solver.errors import InputError
        folder = Path(debug_model)
        try:
            folder.mkdir(exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create the folder: {exc.strerror or exc}",
                             origin=f"--debug-model {debug_model}") from None
    ctx = click.get_current_context(silent=True)
    meta = ctx.meta if ctx is not None else {}
    return SolveSettings(time_limit=time_limit, allow_expired=allow_expired, debug_model=debug_model,
                         wall_deadline=meta.get("wall_deadline"), max_seconds=meta.get("max_seconds"),
                         processes=meta.get("processes"), **kw)

