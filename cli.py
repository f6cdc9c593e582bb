"""`plan`: the command line. Thin by design: parse the options, call the solver, render, return the exit code.

Process behaviour (exit codes, Ctrl-C, pipes, logging, progress) is `solver/render/console.py`; every command
body below only loads, calls and renders. Exit codes: 0 a proven plan; 1 infeasible; 2 bad input, usage or an
unwritable output; 3 a time limit reached without a proof; 4 internal error; 130 interrupted; 143 terminated.
Shell completion (click): `eval "$(_PLAN_COMPLETE=bash_source plan)"` (zsh: zsh_source, fish: fish_source).
"""

from __future__ import annotations

import os
import signal
import sys


def _interrupted_while_starting(signum: int, frame: object) -> None:
    """Ctrl-C before a command runs (while Python imports): the same quiet exit 130 as during one."""
    os.write(2, b"interrupted\n")
    os._exit(130)


def _terminated_while_starting(signum: int, frame: object) -> None:
    """SIGTERM before a command runs: no worker exists yet, so the line and exit 143 of one terminated during a
    command (`console.stopped`; spelled out here because importing the package is what is still under way)."""
    os.write(2, b"plan: terminated (SIGTERM); no answer was written\n")
    os._exit(143)


REQUIRED = ("ortools", "pydantic", "yaml", "click", "tabulate", "numpy")
"""The modules of pyproject.toml's dependencies (`yaml` is pyyaml's)."""
EXIT_NOT_INSTALLED = 2


def missing_dependencies(names: tuple[str, ...] = REQUIRED) -> list[str]:
    """The required modules Python cannot find, looked up without importing them (a few ms at start-up)."""
    import importlib.util
    missing = []
    for name in names:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


def _check_installed() -> None:
    """`python3 cli.py ...` with an interpreter that lacks the dependencies: say how to install them (one line,
    exit 2) instead of a traceback or an "internal error"."""
    missing = missing_dependencies()
    if missing:
        os.write(2, (f"error: plan's dependencies are not installed for {sys.executable} (missing: "
                     f"{', '.join(missing)}); install the project first, as the README's first line does: "
                     "python3 -m venv .venv && . .venv/bin/activate && pip install -e .\n").encode())
        os._exit(EXIT_NOT_INSTALLED)


if os.path.basename(sys.argv[0]) in ("plan", "cli.py"):  # the console script, not a library or test import
    signal.signal(signal.SIGINT, _interrupted_while_starting)
    signal.signal(signal.SIGTERM, _terminated_while_starting)
    _check_installed()

import math  # noqa: E402
from collections.abc import Callable  # noqa: E402
from datetime import date, timedelta  # noqa: E402
from functools import wraps  # noqa: E402
from typing import Any  # noqa: E402

import click  # noqa: E402

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


_CONSOLE_SCRIPT = False
"""True when `entry` runs the command: the process ends with `os._exit` right after it."""


def _process(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run a command body under `console.run` (it receives the output buffer as `out`) and exit with its code."""

    @wraps(fn)
    def wrapper(*args: Any, verbose: bool = False, debug: bool = False, **kwargs: Any) -> None:
        from solver.render.console import run
        sys.exit(run(lambda out: fn(*args, out=out, verbose=verbose, **kwargs), verbose=verbose, debug=debug,
                     process_ends=_CONSOLE_SCRIPT))
    return wrapper


def _common(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--debug", is_flag=True, help="Log everything and show tracebacks of internal errors.")(fn)
    return click.option("-v", "--verbose", is_flag=True,
                        help="Every detail in the tables, and the solver's steps on stderr.")(fn)


def _risk_set(path: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    """An option that is a shorthand for `--set risk.<path>=VALUE` (kept in the context for `_load`)."""
    def remember(ctx: click.Context, _param: click.Parameter, value: Any) -> None:
        if value is not None:
            ctx.meta.setdefault("risk_sets", []).append(f"risk.{path}={value}")
    return remember


def _problem_options(fn: Callable[..., Any]) -> Callable[..., Any]:
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


def _solver_options(fn: Callable[..., Any]) -> Callable[..., Any]:
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


def _executor_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--executor", type=click.Choice(["process", "local", "ray"]), default="process",
                      show_default=True,
                      help="Where the re-solves run: a local process pool, this process, or Ray "
                           "(pip install 'plan[ray]').")(fn)
    fn = click.option("--address", default=None, metavar="ADDR",
                      help="Ray cluster for --executor ray: auto (the cluster this machine belongs to) or "
                           "ray://HEAD:10001 [default: a local Ray].")(fn)
    return click.option("--workers", type=click.IntRange(1, 4096), default=None,
                        help="Processes (process) or CPUs of a local Ray (ray) [default: the CPUs this process "
                             "may use].")(fn)


def _executor(name: str, workers: int | None, address: str | None) -> Any:
    from solver.answers.executors import make_executor
    return make_executor(name, workers, address)


def _program(problem: Any) -> bool:
    """A program (several workloads) rather than a single run (`inputs.loading.is_program`)."""
    from solver.inputs.loading import is_program
    return is_program(problem)


def _load(file: str, sets: tuple[str, ...], quotes: tuple[str, ...], programs: bool = False) -> Any:
    from solver.inputs.loading import load_any
    from solver.inputs.problem import load_problem
    ctx = click.get_current_context(silent=True)
    risk_sets = list(ctx.meta.get("risk_sets", [])) if ctx is not None else []
    return (load_any if programs else load_problem)(file, list(sets) + risk_sets, quotes=list(quotes))


def _refuse_for_programs(options: dict[str, Any]) -> None:
    """One line naming the first option given that a program file does not take yet."""
    from solver.errors import InputError
    given = [k for k, v in options.items() if v]
    if given:
        raise InputError("not supported for program files yet", origin=given[0])


def _explain_program(program: Any, why_not_id: str | None, fmt: str, limits: Any, out: Any) -> int:
    """`plan explain` of a program file: its plan or conflict; with --why-not WORKLOAD:ID, the program with that
    workload there."""
    from solver.answers.program import solve_program, why_not_program
    from solver.render.console import STATUS_EXIT
    from solver.render.jsonout import to_json
    from solver.render.program import program_dict, render_program, render_why_not, why_not_dict
    if why_not_id is None:
        report = solve_program(program, limits)
        out.write(to_json(program_dict(report)) if fmt == "json" else render_program(report))
        return STATUS_EXIT[report.outcome.status]
    answer = why_not_program(program, limits, why_not_id)
    out.write(to_json(why_not_dict(answer)) if fmt == "json" else render_why_not(answer))
    return 0


def _solve_program(program: Any, fmt: str, time_limit: float, debug_model: str | None, workers: int, out: Any,
                   chart_path: str | None, files: tuple[str | None, str | None], unsupported: dict[str, Any]) -> int:
    """`plan solve` of a program file (`workloads:`): its plan, purchases, quarters, power and Gantt chart; with
    `--save` the answer is written, with `--compare-to` what changed since a saved one is shown."""
    from solver.answers.program import program_diff, solve_program
    from solver.render.console import STATUS_EXIT
    from solver.render.jsonout import to_json
    from solver.render.program import program_dict, render_program, render_program_diff, saved_program
    _refuse_for_programs(unsupported)
    save_to, compare_to = files
    old = None
    if compare_to:
        from solver.inputs.saved import load_saved_program
        old = load_saved_program(compare_to)
    limits = _settings(time_limit, False, debug_model, workers=workers).limits
    report = solve_program(program, limits)
    data = program_dict(report)
    saved = saved_program(report)
    diff = program_diff(old, saved) if old is not None else None
    if save_to:
        from solver.render.files import write_atomic
        write_atomic(save_to, to_json(saved))
    if fmt == "json":
        out.write(to_json({**data, "diff": diff} if diff is not None else data))
    else:
        out.write(render_program(report))
        if diff is not None:
            out.write("\n" + render_program_diff(diff, f"Changes since {compare_to}:"))
        out.note(f"(solved in {report.seconds:.2f} s)")
    if chart_path and report.outcome.plan is not None:
        from solver.render.program import gantt_chart
        gantt_chart(report, chart_path)
    return STATUS_EXIT[report.outcome.status]


def _sensitivity_program(program: Any, top: int | None, sweep_names: tuple[str, ...], no_sweeps: bool,
                         chart_path: str | None, fmt: str, run_on: Any, out: Any, limits: Any,
                         unsupported: dict[str, Any]) -> int:
    """`plan sensitivity` of a program: today's plan, the break-even price of its main quote, and the program's
    plan at each swept value (`answers.program_whatif`)."""
    from solver.answers.program import headline, solve_program
    from solver.answers.executors import Started
    from solver.answers.program_whatif import program_break_even, start_program_sweeps
    from solver.render.jsonout import to_json
    from solver.render.program_whatif import program_sensitivity_dict, render_program_sensitivity
    _refuse_for_programs({"--top": top, **unsupported})
    base = solve_program(program, limits)
    if base.outcome.plan is None:
        out.write("no plan satisfies the program, so there is nothing to test; `plan solve` explains why.\n")
        return 1
    today = headline(base)
    # As for one run: the sweeps run on the executor while this process searches the break-even price.
    with start_program_sweeps(program, limits, list(sweep_names) or None, run_on) if not no_sweeps else \
            Started(dict) as swept:
        be = program_break_even(program, base, limits)
        sw = swept.results()
    name, as_of = program.spec.name, program.as_of.isoformat()
    out.write(to_json(program_sensitivity_dict(name, as_of, today, be, sw)) if fmt == "json"
              else render_program_sensitivity(name, today, be, sw))
    if chart_path and sw:
        from solver.render.program_whatif import program_sensitivity_chart
        program_sensitivity_chart(today, sw, chart_path)
    return 0


def _sweep_program(program: Any, axes: Any, run_on: Any, fmt: str, limits: Any, out: Any, allow_expired: bool) -> int:
    """`plan sweep` of a program: every grid point solved as its own program, on the executor."""
    from solver.answers.program_whatif import grid_units, run_unit
    from solver.render.jsonout import to_json
    from solver.render.program_whatif import program_sweep_dict, render_program_sweep
    _refuse_for_programs({"--allow-expired": allow_expired})
    rows = run_on.map(run_unit, grid_units(program, axes, limits))
    if fmt == "json":
        out.write(to_json(program_sweep_dict(program.spec.name, program.as_of.isoformat(), axes, rows)))
    else:
        out.write(render_program_sweep(axes, rows, "github" if fmt == "markdown" else "simple"))
    return 0


def _risk_program(program: Any, bins: int, fmt: str, chart_path: str | None, limits: Any, out: Any,
                  allow_expired: bool) -> int:
    """`plan risk` of a program: the plan `plan solve` chooses, taken apart by scenarios."""
    from solver.answers.program import solve_program
    from solver.answers.program_risk import program_risk
    from solver.render.jsonout import to_json
    from solver.render.program_risk import program_risk_dict, render_program_risk
    _refuse_for_programs({"--allow-expired": allow_expired})
    risk = program_risk(program, solve_program(program, limits), bins)
    if risk is None:
        out.write("no plan satisfies the program: `plan solve` explains why.\n")
        return 1
    name, as_of = program.spec.name, program.as_of
    if chart_path:
        from solver.render.program_risk import program_risk_chart
        program_risk_chart(as_of, risk, chart_path)
    out.write(to_json(program_risk_dict(name, as_of, risk)) if fmt == "json"
              else render_program_risk(name, as_of, risk))
    return 0


def _frontier_program(program: Any, points: int, fmt: str, chart_path: str | None, limits: Any, out: Any,
                      allow_expired: bool) -> int:
    """`plan frontier` of a program: the cheapest program ending by each date (`answers.program_frontier`)."""
    from solver.answers.program import headline
    from solver.answers.program_frontier import program_frontier
    from solver.render.jsonout import to_json
    from solver.render.program_whatif import program_frontier_dict, render_program_frontier
    _refuse_for_programs({"--allow-expired": allow_expired})
    found = program_frontier(program, limits, points)
    if not found:
        out.write("no plan satisfies the program at any end date; `plan solve` explains why.\n")
        return 1
    rows = [{"end_by": (program.as_of + timedelta(days=pt.end_by)).isoformat(), "chosen": pt.chosen,
             "fastest_proven": pt.fastest_proven, **headline(pt.report)} for pt in found]
    if chart_path:
        from solver.render.program_whatif import program_frontier_chart
        program_frontier_chart(rows, chart_path)
    name = program.spec.name
    out.write(to_json(program_frontier_dict(name, program.as_of.isoformat(), rows)) if fmt == "json"
              else render_program_frontier(name, rows, "github" if fmt == "markdown" else "simple"))
    return 0


def _settings(time_limit: float = 20.0, allow_expired: bool = False, debug_model: str | None = None,
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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="plan", message="plan %(version)s")
def main() -> None:
    """Declarative GPU procurement planner: which accelerator, how many nodes, buy / cloud / managed."""


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
@click.option("--top", type=click.IntRange(min=1), default=None,
              help="The N best distinct plans (one per accelerator/mode, each proven optimal on what remains).")
@click.option("--exact-alternatives", is_flag=True,
              help="Search every other accelerator/mode to its proven best plan [default: only those that could "
                   "rank first or second (or in the --top N); the others to within 5%, and the answer says so].")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="CP-SAT workers; more than 1 is faster on big problems but not deterministic.")
@click.option("--save", "save_to", default=None, metavar="PLAN.json", help="Write the full result (atomically).")
@click.option("--compare-to", "compare_to", default=None, metavar="PLAN.json",
              help="Also show what changed since a saved plan, and why.")
@click.option("--chart", "chart_path", default=None, metavar="FILE.png|svg|pdf",
              help="A program file: also draw its Gantt chart (needs the chart extra).")
@_problem_options
@_solver_options
@_common
@_process
def solve(file: str, fmt: str, top: int | None, exact_alternatives: bool, workers: int, save_to: str | None,
          compare_to: str | None, chart_path: str | None, sets: tuple[str, ...], quotes: tuple[str, ...], allow_expired: bool,
          time_limit: float, debug_model: str | None, out: Any, verbose: bool) -> int:
    """Find the plan with the lowest risk-adjusted completion cost for FILE."""
    import time
    started = time.perf_counter()
    from dataclasses import replace

    if save_to:
        from solver.render.files import check_target
        check_target(save_to, "--save")
    if chart_path:
        from solver.render.chart import check_available
        from solver.render.files import check_target
        check_available(chart_path)
        check_target(chart_path, "--chart")
    old = None
    problem = _load(file, sets, quotes, programs=True)
    if compare_to and not _program(problem):
        from solver.inputs.saved import load_saved
        old = load_saved(compare_to)
    if _program(problem):
        return _solve_program(problem, fmt, time_limit, debug_model, workers, out, chart_path, (save_to, compare_to),
                              unsupported={"--top": top, "--allow-expired": allow_expired or None,
                                           "--exact-alternatives": exact_alternatives or None})
    if chart_path:
        from solver.errors import InputError
        raise InputError("draws a program's Gantt chart; for a single run use plan frontier or plan sensitivity "
                         "--chart", origin=f"--chart {chart_path}")
    from solver.answers.report import solve_and_explain  # after the program check: a program does not need it
    from solver.render.console import STATUS_EXIT
    from solver.render.jsonout import result_dict, to_json
    from solver.render.text import render_result
    settings = _settings(time_limit, allow_expired, debug_model, workers=workers,
                         exact_places=max(2, top or 0), **({"settle": 0.0} if exact_alternatives else {}))
    if old is not None and old["result"].get("plan"):
        from solver.solve.pipeline import Hint
        prev = old["result"]["plan"]
        settings = replace(settings, hint=Hint(prev["option"], prev["nodes"],
                                               tuple((q["id"], q["nodes"]) for q in prev["quotes"])))
    ctx, result = solve_and_explain(problem, settings)
    if top is not None:
        result = replace(result, alternatives=result.alternatives[: top - 1])
    spec = problem.spec
    data = result_dict(result)
    if save_to or old is not None:
        from solver.answers import history
        from solver.render.jsonout import snapshot
        snap = snapshot(problem, result, ctx.universe)
        if save_to:
            from solver.render.files import write_atomic
            write_atomic(save_to, to_json(snap))
        if old is not None:
            d = history.diff(old, snap)
            today = history.old_plan_today(ctx, old) if d.decision_changed else None
            data = {**data, "diff": d.as_dict(), "previous_plan_today": today.as_dict() if today else None}
    if fmt == "json":
        out.write(to_json(data))
    else:
        if fmt == "table" and not verbose:
            from solver.render.brief import render_brief
            out.write(render_brief(result, deadline=spec.schedule.deadline, budget=spec.budget.max_usd,
                                   applies_to=spec.budget.applies_to, top=top))
        else:
            out.write(render_result(result, deadline=spec.schedule.deadline, budget=spec.budget.max_usd,
                                    applies_to=spec.budget.applies_to, modes=spec.policy.modes, top=top,
                                    markdown=fmt == "markdown", verbose=verbose))
        if old is not None:
            from solver.render.diff import render_diff
            text = render_diff(d, today, title=f"Changes since {compare_to}:")
            out.write("\n" + (f"## Changes since `{compare_to}`\n\n```\n{text}```\n" if fmt == "markdown" else text))
        out.note(f"(answered in {time.perf_counter() - started:.2f} s, the search for the plan "
                 f"{result.solve_seconds:.2f} s of it; money unit ${result.unit:,} in the model)")
    return STATUS_EXIT[result.status]


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--why-not", "why_not_id", default=None, metavar="ID",
              help="An accelerator, system, quote, mode or system/mode: why is it not the plan?")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
@_problem_options
@_solver_options
@_common
@_process
def explain(file: str, why_not_id: str | None, fmt: str, sets: tuple[str, ...], quotes: tuple[str, ...],
            allow_expired: bool, time_limit: float, debug_model: str | None, out: Any, verbose: bool) -> int:
    """Explain FILE: with --why-not, why an option is not chosen; otherwise why there is (no) plan."""
    from solver.answers.report import solve_and_explain
    from solver.answers.unpriced import ask as why_not_answer
    from solver.render.console import STATUS_EXIT
    from solver.render.jsonout import result_dict, to_json, why_not_dict
    from solver.render.text import render_result, render_why_not

    problem = _load(file, sets, quotes, programs=True)
    settings = _settings(time_limit, allow_expired, debug_model)
    if _program(problem):
        return _explain_program(problem, why_not_id, fmt, settings.limits, out)
    if why_not_id is None:
        _ctx, result = solve_and_explain(problem, settings)
        spec = problem.spec
        out.write(to_json(result_dict(result)) if fmt == "json" else render_result(
            result, deadline=spec.schedule.deadline, budget=spec.budget.max_usd, applies_to=spec.budget.applies_to,
            modes=spec.policy.modes, markdown=fmt == "markdown", verbose=verbose))
        return STATUS_EXIT[result.status]
    answer = why_not_answer(problem, why_not_id, settings)
    if fmt == "json":
        out.write(to_json(why_not_dict(answer)))
    else:
        text = render_why_not(answer, verbose)
        out.write(("```\n" + text + "```\n") if fmt == "markdown" else text)
    return 0


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--top", type=click.IntRange(1, 10), default=None,
              help="Break-even prices for the chosen plan and the next N-1 plans [default: 3; a program's: its "
                   "main quote].")
@click.option("--sweep", "sweep_names", multiple=True,
              type=click.Choice(["tokens", "mfu", "lead_time_days", "electricity"]),
              help="Which inputs to sweep (default: all).")
@click.option("--no-sweeps", is_flag=True, help="Only the break-even prices.")
@click.option("--chart", "chart_path", default=None, metavar="FILE.png|svg|pdf",
              help="Also draw the sweeps (needs the optional matplotlib extra).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@_executor_options
@_problem_options
@_solver_options
@_common
@_process
def sensitivity(file: str, top: int | None, sweep_names: tuple[str, ...], no_sweeps: bool, chart_path: str | None,
                fmt: str, executor: str, workers: int | None, address: str | None, sets: tuple[str, ...],
                quotes: tuple[str, ...], allow_expired: bool, time_limit: float, debug_model: str | None, out: Any,
                verbose: bool) -> int:
    """Break-even prices of the top plans, and how the plan moves as uncertain inputs sweep."""
    from solver.answers.executors import Started
    from solver.answers.sensitivity import break_evens_of, ranking, start_sweeps
    from solver.render.jsonout import to_json
    from solver.render.text import render_sensitivity

    if chart_path:
        from solver.render.chart import check_available
        from solver.render.files import check_target
        check_available(chart_path)
        check_target(chart_path, "--chart")
    run_on = _executor(executor, workers, address)
    problem = _load(file, sets, quotes, programs=True)
    if _program(problem):
        return _sensitivity_program(problem, top, sweep_names, no_sweeps, chart_path, fmt, run_on, out,
                                    _settings(time_limit, allow_expired, debug_model).limits,
                                    {"--allow-expired": allow_expired or None, "--debug-model": debug_model})
    settings = _settings(time_limit, allow_expired, debug_model, exact_places=max(2, top or 3))
    ranked = ranking(problem, settings)
    if ranked.main.plan is None:  # before the sweeps start: a pool that starts only to stop costs a second
        out.write("no plan satisfies the problem, so there is no ranking to test; `plan solve` explains why.\n")
        return 1
    # The sweeps run on the executor while this process searches the break-even prices.
    with start_sweeps(problem, settings, list(sweep_names) or None, run_on) if not no_sweeps else \
            Started(dict) as swept:
        be = break_evens_of(ranked, top or 3)
        sw = swept.results()
    if chart_path:
        from solver.render.chart import chart
        chart(sw, chart_path)
    out.write(to_json({"break_even": be, "sweeps": sw}) if fmt == "json" else render_sensitivity(be, sw))
    return 0


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--points", type=click.IntRange(2, 60), default=12, show_default=True,
              help="Finish dates to solve for, from the fastest plan to the cheapest.")
@click.option("--chart", "chart_path", default=None, metavar="FILE.png|svg|pdf",
              help="Also draw the frontier (needs the optional matplotlib extra).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
@_problem_options
@_solver_options
@_common
@_process
def frontier(file: str, points: int, chart_path: str | None, fmt: str, sets: tuple[str, ...],
             quotes: tuple[str, ...], allow_expired: bool, time_limit: float, debug_model: str | None, out: Any,
             verbose: bool) -> int:
    """The time-cost frontier: the cheapest plan for each finish date, each proven optimal (the deadline is the
    axis; every other limit stays)."""
    from solver.answers.frontier import frontier as compute
    from solver.render.jsonout import SCHEMA_VERSION, frontier_dict, to_json
    from solver.render.text import render_frontier

    if chart_path:
        from solver.render.chart import check_available
        from solver.render.files import check_target
        check_available(chart_path)
        check_target(chart_path, "--chart")
    problem = _load(file, sets, quotes, programs=True)
    if _program(problem):
        return _frontier_program(problem, points, fmt, chart_path, _settings(time_limit, allow_expired).limits, out,
                                 allow_expired)
    found = compute(problem, _settings(time_limit, allow_expired, debug_model), points)
    if not found:
        out.write("no plan satisfies the problem at any finish date; `plan solve` explains why.\n")
        return 1
    if chart_path:
        from solver.render.chart import frontier_chart
        frontier_chart(found, problem.spec.schedule.deadline, chart_path)
    if fmt == "json":
        out.write(to_json({"schema_version": SCHEMA_VERSION, "problem": problem.spec.name,
                           "as_of": problem.as_of.isoformat(),
                           "deadline": problem.spec.schedule.deadline.isoformat() if problem.spec.schedule.deadline
                           else None, "frontier": [frontier_dict(pt) for pt in found]}))
    else:
        out.write(render_frontier(found, problem.spec.schedule.deadline, "github" if fmt == "markdown" else "simple"))
    return 0


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--set-grid", "grid", multiple=True, required=True, metavar="PATH=V1,V2,...",
              help="A problem value and the values it takes (repeatable: every combination is solved), e.g. "
                   "budget.max_usd=50M,100M,150M.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table",
              show_default=True)
@_executor_options
@_problem_options
@_solver_options
@_common
@_process
def sweep(file: str, grid: tuple[str, ...], executor: str, workers: int | None, address: str | None, fmt: str,
          sets: tuple[str, ...], quotes: tuple[str, ...], allow_expired: bool, time_limit: float,
          debug_model: str | None, out: Any, verbose: bool) -> int:
    """Solve every combination of what-if values (each point optimal on its own) on a process pool or Ray; the
    answers are identical on every executor."""
    from solver.answers.sweep import parse_axis, run_unit, units
    from solver.render.jsonout import sweep_dict, to_json
    from solver.render.text import render_sweep

    from solver.errors import InputError
    if click.get_current_context().meta.get("max_seconds") is not None:
        raise InputError("not for plan sweep: each point is solved to a deterministic --time-limit, so that every "
                         "executor gives the same answer", origin="--max-seconds")
    if debug_model:
        raise InputError("not for plan sweep (its points may run in other processes or on other machines): run "
                         "plan solve with the point's --set values", origin=f"--debug-model {debug_model}")
    run_on = _executor(executor, workers, address)
    axes = [parse_axis(g) for g in grid]
    problem = _load(file, sets, quotes, programs=True)
    if _program(problem):
        return _sweep_program(problem, axes, run_on, fmt, _settings(time_limit, allow_expired).limits, out,
                              allow_expired)
    work = units(problem, axes, _settings(time_limit, allow_expired, debug_model))
    rows = run_on.map(run_unit, work)
    if fmt == "json":
        out.write(to_json(sweep_dict(problem, axes, rows)))
    else:
        out.write(render_sweep(axes, rows, "github" if fmt == "markdown" else "simple"))
    return 0


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--bins", type=click.IntRange(3, 60), default=12, show_default=True,
              help="Bars of each histogram.")
@click.option("--chart", "chart_path", default=None, metavar="FILE.png|svg|pdf",
              help="Also draw the distributions and the tornado (needs the optional matplotlib extra).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@_problem_options
@_solver_options
@_common
@_process
def risk(file: str, bins: int, chart_path: str | None, fmt: str, sets: tuple[str, ...], quotes: tuple[str, ...],
         allow_expired: bool, time_limit: float, debug_model: str | None, out: Any, verbose: bool) -> int:
    """The chosen plan's risk in detail: finish-date and cost distributions over the scenarios, and which
    uncertainty moves the chance of the deadline and the cost most (a tornado)."""
    from solver.answers.risk import analyse
    from solver.render.jsonout import risk_report_dict, to_json
    from solver.render.text import render_risk

    if chart_path:
        from solver.render.chart import check_available
        from solver.render.files import check_target
        check_available(chart_path)
        check_target(chart_path, "--chart")
    problem = _load(file, sets, quotes, programs=True)
    if _program(problem):
        return _risk_program(problem, bins, fmt, chart_path, _settings(time_limit, allow_expired, debug_model).limits,
                             out, allow_expired)
    report = analyse(problem, _settings(time_limit, allow_expired, debug_model), bins)
    if report is None:
        out.write("no plan satisfies the problem: `plan solve` explains why.\n")
        return 1
    if chart_path:
        from solver.render.chart import risk_chart
        risk_chart(report, chart_path)
    out.write(to_json(risk_report_dict(report)) if fmt == "json" else render_risk(report))
    return 0


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "output", required=True, metavar="REPORT.html",
              help="The HTML page to write (atomically; checked before any work).")
@click.option("--points", type=click.IntRange(2, 60), default=6, show_default=True,
              help="Finish dates of the time-cost frontier, from the fastest plan to the cheapest.")
@click.option("--bins", type=click.IntRange(3, 60), default=12, show_default=True,
              help="Bars of each risk histogram.")
@_problem_options
@_solver_options
@_common
@_process
def report(file: str, output: str, points: int, bins: int, sets: tuple[str, ...], quotes: tuple[str, ...],
           allow_expired: bool, time_limit: float, debug_model: str | None, out: Any, verbose: bool) -> int:
    """One self-contained HTML page to forward (finance, leadership): the decision, the chosen plan, its cost
    waterfall and cash by quarter, its risk, the time-cost frontier, the alternatives, why the other options cannot
    work, and the sources behind it."""
    from solver.errors import InputError
    from solver.render.console import STATUS_EXIT
    from solver.render.files import check_target, write_atomic

    check_target(output, "--output")
    problem = _load(file, sets, quotes, programs=True)
    if _program(problem):
        raise InputError("program reports are not supported yet: plan solve, plan risk and plan frontier take "
                         "program files", file=file)
    from solver.answers.dossier import gather
    from solver.render.report_html import render_report
    dossier = gather(problem, _settings(time_limit, allow_expired, debug_model), points, bins)
    write_atomic(output, render_report(dossier), "--output")
    from solver.render.safe import clean
    from solver.render.text import plural
    plan = dossier.result.plan
    what = (f"{plan.accelerator} · {plan.system} · {plan.offer or plan.mode}, {plural(plan.nodes, 'node')}"
            if plan is not None else "no plan (the conflict)")
    out.write(clean(f"wrote {output}: {what}\n"))
    return STATUS_EXIT[dossier.result.status]


@main.command()
@click.argument("old", type=click.Path(dir_okay=False))
@click.argument("new", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@_common
@_process
def diff(old: str, new: str, fmt: str, out: Any, verbose: bool) -> int:
    """What changed between two saved plans or two saved programs (`plan solve --save`), and which inputs
    caused it. Exit status as diff(1): 0 no change, 1 changed, 2 bad input."""
    from solver.answers import history
    from solver.errors import InputError
    from solver.inputs.saved import load_saved_any
    from solver.render.diff import render_diff
    from solver.render.jsonout import to_json
    a, b = load_saved_any(old), load_saved_any(new)
    if a["kind"] != b["kind"]:
        raise InputError(f"is a {b['kind']}, {old} a {a['kind']}: compare a saved plan with a saved plan, a "
                         "saved program with a saved program", file=new)
    if a["kind"] == "program-result":
        from solver.answers.program import program_diff
        from solver.render.program import render_program_diff
        d = program_diff(a, b)
        out.write(to_json(d) if fmt == "json" else render_program_diff(d, f"Changes from {old} to {new}:"))
        return DIFF_CHANGED if any(k != "causes" for k in d) else 0
    d = history.diff(a, b)
    out.write(to_json(d.as_dict()) if fmt == "json" else render_diff(d))
    return DIFF_CHANGED if d.summary.changed else 0


DIFF_CHANGED = 1
"""`plan diff`'s exit status when the plans differ, as diff(1) and `git diff --exit-code` have it: 0 the same plan,
1 a change (in the decision, a cost line or the status; input changes alone that move nothing are 0), 2 bad
input."""


@main.command()
@click.option("--accelerator", required=True, help="Accelerator id, e.g. h100-sxm (see `plan catalog`).")
@click.option("--gpus", required=True, type=click.IntRange(min=1), help="Number of accelerators.")
@click.option("--params", required=True, help="Parameters, e.g. 70B.")
@click.option("--tokens", required=True, help="Training tokens, e.g. 15T.")
@click.option("--seq-len", type=click.IntRange(16, 4_194_304), default=4096, show_default=True)
@click.option("--method", type=click.Choice(["pretrain", "continued_pretrain", "full_finetune", "lora", "qlora"]),
              default="pretrain", show_default=True)
@click.option("--precision", type=click.Choice(["bf16", "fp8"]), default="bf16", show_default=True)
@click.option("--optimizer", type=click.Choice(["adamw", "adamw_8bit", "sgd_momentum"]), default="adamw",
              show_default=True)
@click.option("--recompute", type=click.Choice(["none", "selective", "full", "auto"]), default="selective",
              show_default=True)
@click.option("--system", default=None, help="System id carrying the accelerator (default: chosen by GPU count).")
@click.option("--layers", type=click.IntRange(1, 10_000), default=None)
@click.option("--hidden", type=click.IntRange(64, 1_000_000), default=None)
@click.option("--lora-rank", type=click.IntRange(1, 65_536), default=None)
@click.option("--measured-mfu", type=click.FloatRange(0, 1, min_open=True), default=None,
              help="MFU you measured on this accelerator (0-1): replaces the model's, and narrows the band.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@_common
@_process
def estimate(accelerator: str, gpus: int, params: str, tokens: str, seq_len: int, method: str, precision: str,
             optimizer: str, recompute: str, system: str | None, layers: int | None, hidden: int | None,
             lora_rank: int | None, measured_mfu: float | None, fmt: str, out: Any, verbose: bool) -> int:
    """Memory, minimum GPUs, FLOPs, MFU, GPU-hours and days for one configuration, without solving."""
    from solver.estimate.calculator import EstimateInput, parse_count, run_estimate
    from solver.inputs.assumptions import load_assumptions
    from solver.inputs.catalog import load_catalog
    from solver.render.jsonout import to_json
    from solver.render.text import render_estimate

    inp = EstimateInput(accelerator=accelerator, gpus=gpus, params=parse_count(params, "--params", "70B"),
                        tokens=parse_count(tokens, "--tokens", "15T"), seq_len=seq_len, method=method,
                        precision=precision, optimizer=optimizer, recompute=recompute, system=system, layers=layers,
                        hidden=hidden, lora_rank=lora_rank, measured_mfu=measured_mfu)
    result = run_estimate(inp, load_catalog(), load_assumptions().values)
    out.write(to_json(result) if fmt == "json" else render_estimate(result))
    return 0


@main.command()
@click.argument("what", type=click.Choice(["accelerators", "systems", "quotes", "sources"]), default="accelerators")
@click.option("--as-of", "as_of", default=None, help="Date for flagging expired quotes (default today).")
@click.option("--id", "item_id", default=None, help="Only this entry (with --format yaml: a quote as a template).")
@click.option("--quotes", "quotes", multiple=True, help="Extra catalog file or folder (repeatable).")
@click.option("--wide", is_flag=True, help="Every column, with full source texts.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "yaml"]), default="table", show_default=True)
@_common
@_process
def catalog(what: str, as_of: str | None, item_id: str | None, quotes: tuple[str, ...], wide: bool, fmt: str,
            out: Any, verbose: bool) -> int:
    """What the tool knows, with sources; estimates (~) and expired quotes flagged."""
    from tabulate import tabulate

    from solver.errors import InputError
    from solver.inputs.bibliography import load_bibliography
    from solver.inputs.catalog import load_catalog
    from solver.inputs.names import did_you_mean
    from solver.render.catalog_view import (bibliography_records, bibliography_rows, catalog_records, catalog_rows,
                                            quote_template)
    from solver.render.jsonout import to_json
    from solver.render.safe import clean

    try:
        day = date.fromisoformat(as_of) if as_of else date.today()
    except ValueError:
        raise InputError(f"expected a date like 2026-12-01, got {as_of!r}", origin="--as-of") from None
    cat = load_catalog(list(quotes))
    if fmt == "yaml":
        if what != "quotes" or item_id is None:
            raise InputError("--format yaml prints one quote as a template: plan catalog quotes --id ID --format yaml",
                             origin="--format yaml")
        if item_id not in cat.quotes:
            raise InputError(f"unknown quote '{item_id}'" + did_you_mean(item_id, cat.quotes), origin="--id")
        out.write(quote_template(cat.quotes[item_id]))
        return 0
    if fmt == "json":
        records = bibliography_records(load_bibliography(), {item_id} if item_id else None) if what == "sources" \
            else catalog_records(cat, what, day)
        if item_id is not None and what != "sources":
            known = [r["id"] for r in records]
            records = [r for r in records if r["id"] == item_id]
            if not records:
                raise InputError(f"unknown {what[:-1]} '{item_id}'" + did_you_mean(item_id, known), origin="--id")
        out.write(to_json(records))
        return 0
    if what == "sources":
        headers, rows = bibliography_rows(load_bibliography(), {item_id} if item_id else None)
    else:
        headers, rows = catalog_rows(cat, what, day, wide=wide or verbose)
        if item_id is not None:
            known = [r[0] for r in rows]
            rows = [r for r in rows if r[0] == item_id]
            if not rows:
                raise InputError(f"unknown {what[:-1]} '{item_id}'" + did_you_mean(item_id, known), origin="--id")
    widths = [None] * (len(headers) - 1) + [None if (wide or verbose) else 60]
    out.write(clean(tabulate(rows, headers=headers, tablefmt="simple", maxcolwidths=widths)) + "\n")
    return 0


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@_problem_options
@_common
@_process
def validate(file: str, sets: tuple[str, ...], quotes: tuple[str, ...], allow_expired: bool, out: Any,
             verbose: bool) -> int:
    """Check a problem file (and the catalogs it uses) without solving."""
    from solver.render.safe import clean
    from solver.solve.pipeline import prepare

    problem = _load(file, sets, quotes, programs=True)
    if _program(problem):
        from solver.estimate.program import program_data
        data = program_data(problem)
        counts = ", ".join(f"{w.id} {len(w.candidates)}" for w in data.workloads)
        out.write(clean(f"OK: {file}: program '{problem.spec.name}' as of {problem.as_of}; candidate runs per "
                        f"workload: {counts}; {len(data.lots)} bought quotes as lots\n"))
        return 0
    ctx = prepare(problem, _settings(allow_expired=allow_expired))
    u = ctx.universe
    n_quotes = sum(len(o.quotes) for o in u.options)
    out.write(clean(f"OK: {file}: '{problem.spec.name}' as of {problem.as_of}; {len(u.options)} options from "
                    f"{n_quotes} usable quotes ({len(u.expired)} expired, {len(u.not_yet_quoted)} dated after as_of); "
                    f"{len(problem.assumptions.overridden())} assumptions overridden\n"))
    return 0


def entry() -> None:
    """The `plan` console script: run the command, flush, and leave without tearing the interpreter down.

    A solve leaves hundreds of thousands of small objects (points, cost lines) alive at exit; freeing them one by one
    at interpreter shutdown took ~0.13 s of `plan solve constraints/datacenter.yaml`'s ~1.1 s (bench/startup.py).
    Commands write their output before they return (`console.run`), so after flushing the two standard streams
    nothing is lost by `os._exit`. Usage errors, Ctrl-C and SIGTERM outside a command are handled here with the
    same codes.
    """
    global _CONSOLE_SCRIPT
    from solver.render.console import on_sigint, on_sigterm, quiet_unraisable, stopped
    signal.signal(signal.SIGINT, on_sigint)  # from here on Ctrl-C is KeyboardInterrupt (console.py)
    signal.signal(signal.SIGTERM, on_sigterm)  # and SIGTERM its subclass Terminated, unwound the same way
    sys.unraisablehook = quiet_unraisable(sys.unraisablehook)
    _CONSOLE_SCRIPT = True
    try:
        main.main(standalone_mode=False)
        code: Any = 0
    except SystemExit as exc:
        code = exc.code
    except (click.exceptions.Abort, KeyboardInterrupt):
        code = stopped()
    except click.ClickException as exc:
        exc.show()
        code = exc.exit_code
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code or 0)


if __name__ == "__main__":
    entry()
