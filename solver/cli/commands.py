"""The `plan` command group and its commands that answer about one file or the catalog: `solve`, `explain`,
`diff`, `estimate`, `catalog`, `schema`, `validate` (the what-ifs are in `whatif.py`, `init` in `init.py`)."""

from __future__ import annotations

from datetime import date
from typing import Any

import click

from solver import __version__

from .options import (common, is_program, load_input, problem_options, process, solve_settings,
                      solver_options)
from .programs import explain_program, solve_program_file


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, prog_name="plan", message="plan %(version)s")
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
@problem_options
@solver_options
@common
@process
def solve(file: str, fmt: str, top: int | None, exact_alternatives: bool, workers: int, save_to: str | None,
          compare_to: str | None, chart_path: str | None, sets: tuple[str, ...], quotes: tuple[str, ...],
          allow_expired: bool, time_limit: float, debug_model: str | None, out: Any, verbose: bool) -> int:
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
    problem = load_input(file, sets, quotes, programs=True)
    if compare_to and not is_program(problem):
        from solver.inputs.saved import load_saved
        old = load_saved(compare_to)
    if is_program(problem):
        return solve_program_file(problem, fmt, time_limit, debug_model, workers, out, chart_path,
                                  (save_to, compare_to),
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
    settings = solve_settings(time_limit, allow_expired, debug_model, workers=workers,
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
@problem_options
@solver_options
@common
@process
def explain(file: str, why_not_id: str | None, fmt: str, sets: tuple[str, ...], quotes: tuple[str, ...],
            allow_expired: bool, time_limit: float, debug_model: str | None, out: Any, verbose: bool) -> int:
    """Explain FILE: with --why-not, why an option is not chosen; otherwise why there is (no) plan."""
    from solver.answers.report import solve_and_explain
    from solver.answers.unpriced import ask as why_not_answer
    from solver.render.console import STATUS_EXIT
    from solver.render.jsonout import result_dict, to_json, why_not_dict
    from solver.render.text import render_result, render_why_not

    problem = load_input(file, sets, quotes, programs=True)
    settings = solve_settings(time_limit, allow_expired, debug_model)
    if is_program(problem):
        return explain_program(problem, why_not_id, fmt, settings.limits, out)
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
@click.argument("old", type=click.Path(dir_okay=False))
@click.argument("new", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
@common
@process
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
        changes = program_diff(a, b)
        text = render_program_diff(changes, f"Changes from {old} to {new}:")
        out.write(to_json(changes) if fmt == "json" else f"```diff\n{text}```\n" if fmt == "markdown" else text)
        return DIFF_CHANGED if any(k != "causes" for k in changes) else 0
    d = history.diff(a, b)
    if fmt == "markdown":   # a diff block: GitHub colours its + and - lines
        out.write(f"## Changes from `{old}` to `{new}`\n\n```diff\n{render_diff(d)}```\n")
    else:
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
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
@common
@process
def estimate(accelerator: str, gpus: int, params: str, tokens: str, seq_len: int, method: str, precision: str,
             optimizer: str, recompute: str, system: str | None, layers: int | None, hidden: int | None,
             lora_rank: int | None, measured_mfu: float | None, fmt: str, out: Any, verbose: bool) -> int:
    """Memory, minimum GPUs, FLOPs, MFU, GPU-hours and days for one configuration, without solving."""
    from solver.estimate.calculator import EstimateInput, parse_count, run_estimate
    from solver.inputs.assumptions import load_assumptions
    from solver.inputs.catalog import load_catalog
    from solver.render.jsonout import to_json
    from solver.render.whatif_text import render_estimate

    inp = EstimateInput(accelerator=accelerator, gpus=gpus, params=parse_count(params, "--params", "70B"),
                        tokens=parse_count(tokens, "--tokens", "15T"), seq_len=seq_len, method=method,
                        precision=precision, optimizer=optimizer, recompute=recompute, system=system, layers=layers,
                        hidden=hidden, lora_rank=lora_rank, measured_mfu=measured_mfu)
    result = run_estimate(inp, load_catalog(), load_assumptions().values)
    out.write(to_json(result) if fmt == "json" else render_estimate(result, markdown=fmt == "markdown"))
    return 0


@main.command()
@click.argument("what", type=click.Choice(["accelerators", "systems", "quotes", "sources"]), default="accelerators")
@click.option("--as-of", "as_of", default=None, help="Date for flagging expired quotes (default today).")
@click.option("--id", "item_id", default=None, help="Only this entry (with --format yaml: a quote as a template).")
@click.option("--quotes", "quotes", multiple=True, help="Extra catalog file or folder (repeatable).")
@click.option("--wide", is_flag=True, help="Every column, with full source texts.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "yaml", "markdown"]), default="table",
              show_default=True)
@common
@process
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
    if fmt == "markdown":   # every column whole: a Markdown table wraps in the reader, not here
        out.write(clean(f"## Catalog: {what}\n\n" + tabulate(rows, headers=headers, tablefmt="github")) + "\n")
        return 0
    widths = [None] * (len(headers) - 1) + [None if (wide or verbose) else 60]
    out.write(clean(tabulate(rows, headers=headers, tablefmt="simple", maxcolwidths=widths)) + "\n")
    return 0


@main.command()
@click.argument("command", nargs=-1, metavar="[COMMAND]")
@click.option("--list", "list_", is_flag=True, help="List the schemas there are.")
@common
@process
def schema(command: tuple[str, ...], list_: bool, out: Any, verbose: bool) -> int:
    """The JSON Schema (draft 2020-12) of a command's `--format json` answer (default: solve; `program` for a
    program file's solve; `catalog quotes` for a catalog table), self-contained."""
    from solver.errors import InputError
    from solver.inputs.names import did_you_mean
    from solver.render.schemas import listing, names, text

    known = names()
    if list_:
        out.write(listing())
        return 0
    name = "-".join(command) if command else "solve"
    if name not in known:
        parts = [n.partition("-")[2] for n in known if n.startswith(name + "-")]
        hint = (f"; one per table: plan schema {name} {'|'.join(parts)}" if parts else
                did_you_mean(name, known) or f"; the schemas: {', '.join(known)}")
        raise InputError(f"no schema for '{' '.join(command)}'{hint} (plan schema --list)", origin="plan schema")
    out.write(text(name))
    return 0


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@problem_options
@common
@process
def validate(file: str, sets: tuple[str, ...], quotes: tuple[str, ...], allow_expired: bool, out: Any,
             verbose: bool) -> int:
    """Check a problem file (and the catalogs it uses) without solving."""
    from solver.render.safe import clean
    from solver.solve.pipeline import prepare

    problem = load_input(file, sets, quotes, programs=True)
    if is_program(problem):
        from solver.estimate.program import program_data
        data = program_data(problem)
        counts = ", ".join(f"{w.id} {len(w.candidates)}" for w in data.workloads)
        out.write(clean(f"OK: {file}: program '{problem.spec.name}' as of {problem.as_of}; candidate runs per "
                        f"workload: {counts}; {len(data.lots)} bought quotes as lots\n"))
        return 0
    ctx = prepare(problem, solve_settings(allow_expired=allow_expired))
    u = ctx.universe
    n_quotes = sum(len(o.quotes) for o in u.options)
    out.write(clean(f"OK: {file}: '{problem.spec.name}' as of {problem.as_of}; {len(u.options)} options from "
                    f"{n_quotes} usable quotes ({len(u.expired)} expired, {len(u.not_yet_quoted)} dated after as_of); "
                    f"{len(problem.assumptions.overridden())} assumptions overridden\n"))
    return 0

