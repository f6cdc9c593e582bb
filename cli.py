"""`plan`: the command line. Thin by design: parse, call `solver`, render, choose the exit code.

Exit codes: 0 plan found (proven optimal); 1 infeasible (explanation on stdout); 2 bad input or usage;
3 a limit was reached without a proven optimum; 4 internal error (a plan failed the independent check).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import date
from typing import Any

import click

EXIT = {"optimal": 0, "infeasible": 1, "feasible": 3, "unknown": 3}


def _one_run() -> None:
    """`plan solve` and `plan explain` build one universe and exit: cyclic collection of objects that all live
    until the end only costs time (a full scan of the universe's points; bench/README.md), so it is off."""
    import gc
    gc.disable()


def _fail_input(exc: Exception) -> None:
    click.echo(f"error: {exc}", err=True)
    sys.exit(2)


def guarded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn user errors into one line + exit 2, and checker failures into a loud exit 4; never a traceback."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from solver.errors import InputError, PlanCheckError
        try:
            return fn(*args, **kwargs)
        except InputError as exc:
            _fail_input(exc)
        except PlanCheckError as exc:
            click.echo(f"INTERNAL ERROR (please report): {exc}", err=True)
            sys.exit(4)
        except RecursionError:
            _fail_input(Exception("input is nested too deeply"))
    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="plan", message="plan %(version)s")
def main() -> None:
    """Declarative GPU procurement planner: which accelerator, how many nodes, buy / cloud / managed."""


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
@click.option("--top", type=click.IntRange(min=1), default=None,
              help="The N best distinct plans (one per accelerator/mode, each proven optimal on what remains).")
@click.option("--time-limit", type=click.FloatRange(min=0.01), default=20.0, show_default=True,
              help="Deterministic time limit per CP-SAT solve (seconds of deterministic time).")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="CP-SAT workers; more than 1 is faster on big problems but not deterministic.")
@click.option("--set", "sets", multiple=True, metavar="PATH=VALUE", help="Override a problem-file value.")
@click.option("--quotes", "quotes", multiple=True, type=click.Path(exists=False),
              help="Extra quote/catalog file or folder, layered over the bundled catalogs (repeatable).")
@click.option("--allow-expired", is_flag=True, help="Use quotes whose valid_until is before as_of (warns).")
@click.option("--save", "save_to", default=None, metavar="PLAN.json", help="Write the full result (atomically).")
@click.option("--compare-to", "compare_to", default=None, metavar="PLAN.json",
              help="Show what changed since a saved plan, and why.")
@guarded
def solve(file: str, fmt: str, top: int | None, time_limit: float, workers: int, sets: tuple[str, ...],
          quotes: tuple[str, ...], allow_expired: bool, save_to: str | None, compare_to: str | None) -> None:
    """Find the plan with the lowest risk-adjusted completion cost for FILE."""
    _one_run()
    from solver.problem import load_problem
    from solver.render import render_markdown, render_table, result_dict, to_json
    from solver.solve import SolveSettings, prepare, solve_problem

    from solver import history
    lp = load_problem(file, list(sets))
    settings = SolveSettings(time_limit=time_limit, workers=workers, allow_expired=allow_expired,
                             extra_quotes=tuple(quotes))
    old = history.load_saved(compare_to) if compare_to else None
    if old is not None and old["result"].get("plan"):
        prev = old["result"]["plan"]
        settings.hint = {"option": prev["option"], "nodes": prev["nodes"],
                         "quotes": {q["id"]: q["nodes"] for q in prev["quotes"]}}
    prepared = prepare(lp, settings) if (save_to or old is not None) else None  # the snapshot needs the quotes
    result = solve_problem(lp, settings, prepared)
    if top is not None:
        result.alternatives = result.alternatives[: top - 1]
    p = lp.problem
    if prepared is not None:
        snap = history.snapshot(lp, result, prepared[2], list(quotes))
        if save_to:
            history.save(save_to, snap)
        if old is not None:
            d = history.diff(old, snap)
            today = history.old_plan_today(lp, old, settings, prepared) if d["decision_changed"] else None
            if fmt == "json":
                click.echo(to_json({"diff": d, "previous_plan_today": today, **result_dict(result)}), nl=False)
            else:
                click.echo(history.render_diff(d, today), nl=False)
            sys.exit(EXIT[result.status])
    if fmt == "json":
        click.echo(to_json(result_dict(result)), nl=False)
    elif fmt == "markdown":
        click.echo(render_markdown(result, p.schedule.deadline, p.budget.max_usd, p.budget.applies_to, top), nl=False)
    else:
        click.echo(render_table(result, p.schedule.deadline, p.budget.max_usd, p.budget.applies_to, top), nl=False)
        click.echo(f"(solved in {result.solve_seconds:.2f} s; money unit ${result.unit:,} in the model)", err=True)
    sys.exit(EXIT[result.status])


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--why-not", "why_not_id", default=None, metavar="ID",
              help="An accelerator, system, quote, mode or system/mode: why is it not the plan?")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
@click.option("--time-limit", type=click.FloatRange(min=0.01), default=20.0, show_default=True)
@click.option("--set", "sets", multiple=True, metavar="PATH=VALUE", help="Override a problem-file value.")
@click.option("--quotes", "quotes", multiple=True, help="Extra quote/catalog file or folder (repeatable).")
@click.option("--allow-expired", is_flag=True)
@guarded
def explain(file: str, why_not_id: str | None, fmt: str, time_limit: float, sets: tuple[str, ...],
            quotes: tuple[str, ...], allow_expired: bool) -> None:
    """Explain FILE: with --why-not, why an option is not chosen; otherwise why there is (no) plan."""
    from solver.problem import load_problem
    from solver.render import render_markdown, render_table, render_why_not, result_dict, to_json, why_not_dict
    from solver.solve import SolveSettings, solve_problem
    from solver.whynot import why_not

    lp = load_problem(file, list(sets))
    settings = SolveSettings(time_limit=time_limit, allow_expired=allow_expired, extra_quotes=tuple(quotes))
    if why_not_id is None:
        result = solve_problem(lp, settings)
        p = lp.problem
        args = (p.schedule.deadline, p.budget.max_usd, p.budget.applies_to)
        text = (to_json(result_dict(result)) if fmt == "json" else
                render_markdown(result, *args) if fmt == "markdown" else render_table(result, *args))
        click.echo(text, nl=False)
        sys.exit(EXIT[result.status])
    out = why_not(lp, why_not_id, settings)
    if fmt == "json":
        click.echo(to_json(why_not_dict(out)), nl=False)
    else:
        text = render_why_not(out)
        click.echo(("```\n" + text + "```\n") if fmt == "markdown" else text, nl=False)


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--top", type=click.IntRange(1, 10), default=3, show_default=True,
              help="Break-even prices for the chosen plan and the next N-1 plans.")
@click.option("--sweep", "sweep_names", multiple=True,
              type=click.Choice(["tokens", "mfu", "lead_time_days", "electricity"]),
              help="Which inputs to sweep (default: all).")
@click.option("--no-sweeps", is_flag=True, help="Only the break-even prices.")
@click.option("--chart", "chart_path", default=None, metavar="FILE.png|svg",
              help="Also draw the sweeps (needs the optional matplotlib extra).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--set", "sets", multiple=True, metavar="PATH=VALUE")
@click.option("--quotes", "quotes", multiple=True)
@guarded
def sensitivity(file: str, top: int, sweep_names: tuple[str, ...], no_sweeps: bool, chart_path: str | None,
                fmt: str, sets: tuple[str, ...], quotes: tuple[str, ...]) -> None:
    """Break-even prices of the top plans, and how the plan moves as uncertain inputs sweep."""
    from tabulate import tabulate

    from solver.problem import load_problem
    from solver.render import to_json
    from solver.sensitivity import break_evens, sweeps
    from solver.solve import SolveSettings
    from solver.units import usd

    lp = load_problem(file, list(sets))
    settings = SolveSettings(extra_quotes=tuple(quotes))
    be = break_evens(lp, settings, top)
    if not be:
        click.echo("no plan satisfies the problem, so there is no ranking to test; `plan solve` explains why.")
        sys.exit(1)
    sw = {} if no_sweeps else sweeps(lp, settings, list(sweep_names) or None)
    if chart_path:
        from solver.sensitivity import chart
        chart(sw, chart_path)
    if fmt == "json":
        click.echo(to_json({"break_even": be, "sweeps": sw}), nl=False)
        return
    click.echo("Break-even prices (the quote price at which the ranking flips):")
    click.echo(tabulate([[b["role"], b["plan"], usd(b["cost_usd"]), b["quote"], b["current"],
                          b.get("break_even") if b.get("break_even") is not None else "-", b.get("note") or ""]
                         for b in be],
                        headers=["", "plan", "cost", "quote", "price today", "break-even", "note"]))
    for name, rows in sw.items():
        click.echo(f"\nSweep {name}:")
        click.echo(tabulate([[r["value"], r["status"], r["option"], r["nodes"],
                              usd(r["cost_usd"]) if r["cost_usd"] is not None else "-", r["finish"]] for r in rows],
                            headers=["value", "status", "plan", "nodes", "cost", "finish"]))


@main.command()
@click.argument("old", type=click.Path(dir_okay=False))
@click.argument("new", type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@guarded
def diff(old: str, new: str, fmt: str) -> None:
    """What changed between two saved plans (`plan solve --save`), and which inputs caused it."""
    from solver import history
    from solver.render import to_json
    d = history.diff(history.load_saved(old), history.load_saved(new))
    click.echo(to_json(d) if fmt == "json" else history.render_diff(d), nl=False)


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
@click.option("--layers", type=click.IntRange(min=1), default=None)
@click.option("--hidden", type=click.IntRange(min=64), default=None)
@click.option("--lora-rank", type=click.IntRange(min=1), default=None)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@guarded
def estimate(accelerator: str, gpus: int, params: str, tokens: str, seq_len: int, method: str, precision: str,
             optimizer: str, recompute: str, system: str | None, layers: int | None, hidden: int | None,
             lora_rank: int | None, fmt: str) -> None:
    """Memory, minimum GPUs, FLOPs, MFU, GPU-hours and days for one configuration, without solving."""
    from solver.assumptions import load_assumptions
    from solver.catalog import load_catalog
    from solver.errors import InputError
    from solver.estimate import EstimateInput, run_estimate
    from solver.render import to_json
    from solver.units import parse_quantity

    def qty(v: str, name: str, ex: str) -> float:
        try:
            x = parse_quantity(v, ex)
        except ValueError as exc:
            raise InputError(str(exc), path=name) from None
        if x <= 0:
            raise InputError(f"expected a positive number like {ex}", path=name)
        return x

    inp = EstimateInput(accelerator=accelerator, gpus=gpus, params=qty(params, "--params", "70B"),
                        tokens=qty(tokens, "--tokens", "15T"), seq_len=seq_len, method=method, precision=precision,
                        optimizer=optimizer, recompute=recompute, system=system, layers=layers, hidden=hidden,
                        lora_rank=lora_rank)
    out = run_estimate(inp, load_catalog([]), load_assumptions().values)
    if fmt == "json":
        click.echo(to_json(out), nl=False)
        return
    m = out["memory_per_gpu_gb"]
    rows = [
        ["system", f"{out['system']} ({out['nodes']} nodes)"],
        ["model shape", f"{out['shape']['layers']} layers x {out['shape']['hidden']} hidden"],
        ["memory per GPU", f"{m['required']:.1f} GB required of {m['available']:g} GB "
                           f"(states {m['states']:.1f} + activations {m['activations']:.1f} + overhead "
                           f"{m['overhead']:.1f}, +headroom) -> {'fits' if out['fits'] else 'DOES NOT FIT'}"],
        ["recompute / TP", f"{out['recompute']} / {out['tensor_parallel']}"],
        ["min GPUs to fit", out["min_gpus"] if out["min_gpus"] is not None else "never fits"],
        ["cards by raw capacity", f"bf16 weights: {out['capacity_cards']['weights_bf16']}, "
                                  f"model states: {out['capacity_cards']['model_states']}"],
        ["training FLOPs", f"{out['flops']:.3e}"],
        ["MFU used", f"{out['mfu']:.1%}  ({', '.join(f'{k} {v:g}' for k, v in out['mfu_factors'].items())})"],
        ["scale-out efficiency", f"{out['scale_out_efficiency']:.1%}" if out["workable"] else "-"],
        ["GPU-hours (incl. failures)", f"{out['gpu_hours']:,.0f} (ideal {out['gpu_hours_ideal']:,.0f})"
         if out["workable"] else "unworkable: failures dominate"],
        ["days", f"{out['days']:.1f}" if out["workable"] else "-"],
    ]
    from tabulate import tabulate
    click.echo(tabulate(rows, tablefmt="plain"))


@main.command()
@click.argument("what", type=click.Choice(["accelerators", "systems", "quotes"]), default="accelerators")
@click.option("--as-of", "as_of", default=None, help="Date for flagging expired quotes (default today).")
@click.option("--quotes", "quotes", multiple=True, help="Extra catalog file or folder (repeatable).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@guarded
def catalog(what: str, as_of: str | None, quotes: tuple[str, ...], fmt: str) -> None:
    """What the tool knows, with sources; expired quotes are flagged."""
    from solver.catalog_view import catalog_rows
    from solver.catalog import load_catalog
    from solver.errors import InputError
    from solver.render import to_json
    try:
        day = date.fromisoformat(as_of) if as_of else date.today()
    except ValueError:
        raise InputError(f"expected a date like 2026-12-01, got {as_of!r}", path="--as-of") from None
    headers, rows = catalog_rows(load_catalog(list(quotes)), what, day)
    if fmt == "json":
        click.echo(to_json([dict(zip(headers, r)) for r in rows]), nl=False)
        return
    from tabulate import tabulate
    click.echo(tabulate(rows, headers=headers, tablefmt="simple", maxcolwidths=[None] * (len(headers) - 1) + [60]))


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--set", "sets", multiple=True, metavar="PATH=VALUE")
@click.option("--quotes", "quotes", multiple=True)
@guarded
def validate(file: str, sets: tuple[str, ...], quotes: tuple[str, ...]) -> None:
    """Check a problem file (and the catalogs it uses) without solving."""
    from solver.problem import load_problem
    from solver.solve import SolveSettings, prepare
    lp = load_problem(file, list(sets))
    _cat, aset, universe = prepare(lp, SolveSettings(extra_quotes=tuple(quotes)))
    n_quotes = sum(len(o.quotes) for o in universe.options)
    click.echo(f"OK: {file}: '{lp.problem.name}' as of {lp.as_of}; {len(universe.options)} options from "
               f"{n_quotes} usable quotes ({len(universe.expired)} expired); "
               f"{len(aset.overridden())} assumptions overridden")


def entry() -> None:
    """The `plan` console script: run the command, flush, and leave without tearing the interpreter down.

    A solve leaves hundreds of thousands of small objects (points, cost lines) alive at exit; freeing them one by
    one at interpreter shutdown took ~0.13 s of `plan solve constraints/datacenter.yaml`'s ~1.1 s
    (bench/startup.py). Everything the commands write is closed before they return, so after flushing the two
    standard streams nothing is lost by `os._exit`. Tests call `main` in-process and are unaffected.
    """
    import os
    try:
        main()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):
            pass
    os._exit(code or 0)


if __name__ == "__main__":
    entry()
