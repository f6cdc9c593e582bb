"""The program-file (`workloads:`) side of `plan solve`, `explain`, `sensitivity`, `sweep`, `risk` and `frontier`:
the same commands on a program, called by the command bodies once the file is known to be one."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from .options import refuse_for_programs, solve_settings


def explain_program(program: Any, why_not_id: str | None, fmt: str, limits: Any, out: Any) -> int:
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


def solve_program_file(program: Any, fmt: str, time_limit: float, debug_model: str | None, workers: int, out: Any,
                   chart_path: str | None, files: tuple[str | None, str | None], unsupported: dict[str, Any]) -> int:
    """`plan solve` of a program file (`workloads:`): its plan, purchases, quarters, power and Gantt chart; with
    `--save` the answer is written, with `--compare-to` what changed since a saved one is shown."""
    from solver.answers.program import program_diff, solve_program
    from solver.render.console import STATUS_EXIT
    from solver.render.jsonout import to_json
    from solver.render.program import program_dict, render_program, render_program_diff, saved_program
    refuse_for_programs(unsupported)
    save_to, compare_to = files
    old = None
    if compare_to:
        from solver.inputs.saved import load_saved_program
        old = load_saved_program(compare_to)
    limits = solve_settings(time_limit, False, debug_model, workers=workers).limits
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


def sensitivity_program(program: Any, top: int | None, sweep_names: tuple[str, ...], no_sweeps: bool,
                         chart_path: str | None, fmt: str, run_on: Any, out: Any, limits: Any,
                         unsupported: dict[str, Any]) -> int:
    """`plan sensitivity` of a program: today's plan, the break-even price of its main quote, and the program's
    plan at each swept value (`answers.program_whatif`)."""
    from solver.answers.program import headline, solve_program
    from solver.answers.executors import Started
    from solver.answers.program_whatif import program_break_even, start_program_sweeps
    from solver.render.jsonout import to_json
    from solver.render.program_whatif import program_sensitivity_dict, render_program_sensitivity
    refuse_for_programs({"--top": top, **unsupported})
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
    text = render_program_sensitivity(name, today, be, sw)
    out.write(to_json(program_sensitivity_dict(name, as_of, today, be, sw)) if fmt == "json"
              else f"```\n{text}```\n" if fmt == "markdown" else text)
    if chart_path and sw:
        from solver.render.program_whatif import program_sensitivity_chart
        program_sensitivity_chart(today, sw, chart_path)
    return 0


def sweep_program(program: Any, axes: Any, run_on: Any, fmt: str, limits: Any, out: Any, allow_expired: bool) -> int:
    """`plan sweep` of a program: every grid point solved as its own program, on the executor."""
    from solver.answers.program_whatif import grid_units, run_unit
    from solver.render.jsonout import to_json
    from solver.render.program_whatif import program_sweep_dict, render_program_sweep
    refuse_for_programs({"--allow-expired": allow_expired})
    rows = run_on.map(run_unit, grid_units(program, axes, limits))
    if fmt == "json":
        out.write(to_json(program_sweep_dict(program.spec.name, program.as_of.isoformat(), axes, rows)))
    else:
        out.write(render_program_sweep(axes, rows, "github" if fmt == "markdown" else "simple"))
    return 0


def risk_program(program: Any, bins: int, fmt: str, chart_path: str | None, limits: Any, out: Any,
                  allow_expired: bool) -> int:
    """`plan risk` of a program: the plan `plan solve` chooses, taken apart by scenarios."""
    from solver.answers.program import solve_program
    from solver.answers.program_risk import program_risk
    from solver.render.jsonout import to_json
    from solver.render.program_risk import program_risk_dict, render_program_risk
    refuse_for_programs({"--allow-expired": allow_expired})
    risk = program_risk(program, solve_program(program, limits), bins)
    if risk is None:
        out.write("no plan satisfies the program: `plan solve` explains why.\n")
        return 1
    name, as_of = program.spec.name, program.as_of
    if chart_path:
        from solver.render.program_risk import program_risk_chart
        program_risk_chart(as_of, risk, chart_path)
    text = render_program_risk(name, as_of, risk)
    out.write(to_json(program_risk_dict(name, as_of, risk)) if fmt == "json"
              else f"```\n{text}```\n" if fmt == "markdown" else text)
    return 0


def frontier_program(program: Any, points: int, fmt: str, chart_path: str | None, limits: Any, out: Any,
                      allow_expired: bool) -> int:
    """`plan frontier` of a program: the cheapest program ending by each date (`answers.program_frontier`)."""
    from solver.answers.program import headline
    from solver.answers.program_frontier import program_frontier
    from solver.render.jsonout import to_json
    from solver.render.program_whatif import program_frontier_dict, render_program_frontier
    refuse_for_programs({"--allow-expired": allow_expired})
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


def report_program(program: Any, output: str, limits: Any, out: Any) -> int:
    """`plan report` of a program: its page (`render/program_report.py`), from the same answer as its JSON."""
    from solver.answers.program import solve_program
    from solver.render.console import STATUS_EXIT
    from solver.render.files import write_atomic
    from solver.render.program import program_dict
    from solver.render.program_report import render_program_report
    from solver.render.safe import clean
    report = solve_program(program, limits)
    write_atomic(output, render_program_report(program_dict(report)), "--output")
    plan = report.outcome.plan
    what = f"{len(plan.runs)} workloads" if plan is not None else "no program (the conflict)"
    out.write(clean(f"wrote {output}: {what}\n"))
    return STATUS_EXIT[report.outcome.status]
