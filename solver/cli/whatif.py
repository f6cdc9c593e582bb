"""The commands that ask what if: `sensitivity`, `frontier`, `sweep`, `risk`, and `report`, which gathers them on
one page."""

from __future__ import annotations

from typing import Any

import click

from .commands import main
from .options import (common, executor_of, executor_options, is_program, load_input, problem_options,
                      process, solve_settings, solver_options)
from .programs import frontier_program, report_program, risk_program, sensitivity_program, sweep_program


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
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
@executor_options
@problem_options
@solver_options
@common
@process
def sensitivity(file: str, top: int | None, sweep_names: tuple[str, ...], no_sweeps: bool, chart_path: str | None,
                fmt: str, executor: str, workers: int | None, address: str | None, sets: tuple[str, ...],
                quotes: tuple[str, ...], allow_expired: bool, time_limit: float, debug_model: str | None, out: Any,
                verbose: bool) -> int:
    """Break-even prices of the top plans, and how the plan moves as uncertain inputs sweep."""
    from solver.answers.executors import Started
    from solver.answers.sensitivity import break_evens_of, ranking, start_sweeps
    from solver.render.jsonout import sensitivity_dict, to_json
    from solver.render.whatif_text import render_sensitivity

    if chart_path:
        from solver.render.chart import check_available
        from solver.render.files import check_target
        check_available(chart_path)
        check_target(chart_path, "--chart")
    run_on = executor_of(executor, workers, address)
    problem = load_input(file, sets, quotes, programs=True)
    if is_program(problem):
        return sensitivity_program(problem, top, sweep_names, no_sweeps, chart_path, fmt, run_on, out,
                                    solve_settings(time_limit, allow_expired, debug_model).limits,
                                    {"--allow-expired": allow_expired or None, "--debug-model": debug_model})
    settings = solve_settings(time_limit, allow_expired, debug_model, exact_places=max(2, top or 3))
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
    out.write(to_json(sensitivity_dict(be, sw, problem.spec.name, problem.as_of.isoformat())) if fmt == "json" else
              render_sensitivity(be, sw, markdown=fmt == "markdown"))
    return 0


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--points", type=click.IntRange(2, 60), default=12, show_default=True,
              help="Finish dates to solve for, from the fastest plan to the cheapest.")
@click.option("--chart", "chart_path", default=None, metavar="FILE.png|svg|pdf",
              help="Also draw the frontier (needs the optional matplotlib extra).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
@problem_options
@solver_options
@common
@process
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
    problem = load_input(file, sets, quotes, programs=True)
    if is_program(problem):
        return frontier_program(problem, points, fmt, chart_path, solve_settings(time_limit, allow_expired).limits, out,
                                 allow_expired)
    found = compute(problem, solve_settings(time_limit, allow_expired, debug_model), points)
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
@executor_options
@problem_options
@solver_options
@common
@process
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
    run_on = executor_of(executor, workers, address)
    axes = [parse_axis(g) for g in grid]
    problem = load_input(file, sets, quotes, programs=True)
    if is_program(problem):
        return sweep_program(problem, axes, run_on, fmt, solve_settings(time_limit, allow_expired).limits, out,
                              allow_expired)
    work = units(problem, axes, solve_settings(time_limit, allow_expired, debug_model))
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
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
@problem_options
@solver_options
@common
@process
def risk(file: str, bins: int, chart_path: str | None, fmt: str, sets: tuple[str, ...], quotes: tuple[str, ...],
         allow_expired: bool, time_limit: float, debug_model: str | None, out: Any, verbose: bool) -> int:
    """The chosen plan's risk in detail: finish-date and cost distributions over the scenarios, and which
    uncertainty moves the chance of the deadline and the cost most (a tornado)."""
    from solver.answers.risk import analyse
    from solver.render.jsonout import risk_report_dict, to_json
    from solver.render.whatif_text import render_risk

    if chart_path:
        from solver.render.chart import check_available
        from solver.render.files import check_target
        check_available(chart_path)
        check_target(chart_path, "--chart")
    problem = load_input(file, sets, quotes, programs=True)
    if is_program(problem):
        limits = solve_settings(time_limit, allow_expired, debug_model).limits
        return risk_program(problem, bins, fmt, chart_path, limits, out, allow_expired)
    report = analyse(problem, solve_settings(time_limit, allow_expired, debug_model), bins)
    if report is None:
        out.write("no plan satisfies the problem: `plan solve` explains why.\n")
        return 1
    if chart_path:
        from solver.render.chart import risk_chart
        risk_chart(report, chart_path)
    out.write(to_json(risk_report_dict(report)) if fmt == "json" else render_risk(report, markdown=fmt == "markdown"))
    return 0


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "output", required=True, metavar="REPORT.html",
              help="The HTML page to write (atomically; checked before any work).")
@click.option("--points", type=click.IntRange(2, 60), default=6, show_default=True,
              help="Finish dates of the time-cost frontier, from the fastest plan to the cheapest.")
@click.option("--bins", type=click.IntRange(3, 60), default=12, show_default=True,
              help="Bars of each risk histogram.")
@problem_options
@solver_options
@common
@process
def report(file: str, output: str, points: int, bins: int, sets: tuple[str, ...], quotes: tuple[str, ...],
           allow_expired: bool, time_limit: float, debug_model: str | None, out: Any, verbose: bool) -> int:
    """One self-contained HTML page to forward (finance, leadership): the decision, the chosen plan, its cost
    waterfall and cash by quarter, its risk, the time-cost frontier, the alternatives, why the other options cannot
    work, and the sources behind it."""
    from solver.render.console import STATUS_EXIT
    from solver.render.files import check_target, write_atomic

    check_target(output, "--output")
    problem = load_input(file, sets, quotes, programs=True)
    if is_program(problem):
        return report_program(problem, output, solve_settings(time_limit, allow_expired, debug_model).limits, out)
    from solver.answers.dossier import gather
    from solver.render.report_html import render_report
    dossier = gather(problem, solve_settings(time_limit, allow_expired, debug_model), points, bins)
    write_atomic(output, render_report(dossier), "--output")
    from solver.render.safe import clean
    from solver.render.text import plural
    plan = dossier.result.plan
    what = (f"{plan.accelerator} · {plan.system} · {plan.offer or plan.mode}, {plural(plan.nodes, 'node')}"
            if plan is not None else "no plan (the conflict)")
    out.write(clean(f"wrote {output}: {what}\n"))
    return STATUS_EXIT[dossier.result.status]

