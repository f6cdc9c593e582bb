"""The `plan` command line: every command, every exit code, and the JSON contract of `plan solve`.

Exit codes (README): 0 plan found, 1 infeasible (explanation on stdout), 2 bad input or usage, 3 a limit was
reached without a proof. Full solves take 1-3 s each, so every solve whose output is inspected by several tests
runs once, in a module-scoped fixture.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

import solver.answers.report as report
from cli import main
from solver.inputs.units import parse_quantity

REPO = Path(__file__).resolve().parent.parent
FINETUNE = "constraints/finetune-70b.yaml"
DATACENTER = "constraints/datacenter.yaml"
INFEASIBLE = "constraints/infeasible-budget.yaml"
MONEY_TOL = 2.0  # dollars: JSON money is rounded to whole dollars, each line separately


# --------------------------------------------------------------------------------------------- helpers


def line_of(relpath: str, key: str, parent: str | None = None) -> int:
    """1-based line of `key:` in a problem file (inside the block `parent:` if given), so tests follow edits."""
    lines = (REPO / relpath).read_text(encoding="utf-8").splitlines()
    inside = parent is None
    for no, text in enumerate(lines, start=1):
        stripped = text.split("#", 1)[0]
        if parent is not None and stripped.startswith(f"{parent}:"):
            inside = True
            continue
        if parent is not None and inside and stripped and not stripped.startswith((" ", "\t")):
            inside = False
        if inside and stripped.strip().startswith(f"{key}:"):
            return no
    raise AssertionError(f"{key!r} not found in {relpath}")


def problem_data(relpath: str) -> dict[str, Any]:
    data = yaml.safe_load((REPO / relpath).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def no_traceback(result: Result) -> None:
    assert "Traceback" not in result.output, result.output
    assert "Traceback" not in result.stderr, result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)


def invoke(runner: CliRunner, *args: str) -> Result:
    result = runner.invoke(main, list(args))
    no_traceback(result)
    return result


def money_lines_sum(cost: dict[str, float]) -> float:
    return sum(v for k, v in cost.items() if k != "total")


# --------------------------------------------------------------------------------------------- fixtures

_REAL_SOLVE = report.solve_and_explain


def _memo_solve(cache: dict[Any, Any]) -> Any:
    """`solve_and_explain` that solves each (file, --set, --quotes, settings) once: renderers share one Result."""

    def wrapper(problem: Any, settings: Any = None, ctx: Any = None) -> Any:
        key = (problem.file, problem.sets, problem.quote_files, repr(settings))
        if key not in cache:
            cache[key] = _REAL_SOLVE(problem, settings, ctx)
        return cache[key]

    return wrapper


@pytest.fixture(scope="module", autouse=True)
def background(tmp_path_factory):
    """The subprocess runs, started first so that they overlap with the in-process solves (2-3 s each).

    cross-process: `python cli.py solve constraints/datacenter.yaml --format json` from the repository root.
    elsewhere:     `python /abs/cli.py validate /abs/constraints/datacenter.yaml` from an unrelated directory.
    """
    work = tmp_path_factory.mktemp("cli-subprocess")
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    specs = {
        "cross-process": ([sys.executable, "cli.py", "solve", DATACENTER, "--format", "json"], REPO),
        "elsewhere": ([sys.executable, str(REPO / "cli.py"), "validate", str(REPO / DATACENTER)], elsewhere),
    }
    procs: dict[str, tuple[subprocess.Popen[bytes], Path, Path]] = {}
    for name, (args, cwd) in specs.items():
        out, err = work / f"{name}.out", work / f"{name}.err"
        with out.open("wb") as fo, err.open("wb") as fe:
            procs[name] = (subprocess.Popen(args, cwd=cwd, stdout=fo, stderr=fe), out, err)

    def result(name: str) -> tuple[int, bytes, bytes]:
        proc, out, err = procs[name]
        rc = proc.wait(timeout=180)
        return rc, out.read_bytes(), err.read_bytes()

    yield result
    for proc, _out, _err in procs.values():
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def in_repo():
    """Run every CliRunner invocation from the repository root, as a user following the README would."""
    old = os.getcwd()
    os.chdir(REPO)
    try:
        yield REPO
    finally:
        os.chdir(old)


@pytest.fixture(scope="module")
def runner(in_repo) -> CliRunner:
    return CliRunner()


@pytest.fixture(scope="module")
def solve_cache() -> dict[Any, Any]:
    return {}


@pytest.fixture(scope="module")
def finetune(runner, solve_cache) -> Result:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(report, "solve_and_explain", _memo_solve(solve_cache))
        return invoke(runner, "solve", FINETUNE, "--format", "json")


@pytest.fixture
def memo_solve(monkeypatch, solve_cache) -> None:
    """Reuse the module's solve of a problem for another output format (rendering tests, not solver tests)."""
    monkeypatch.setattr(report, "solve_and_explain", _memo_solve(solve_cache))


@pytest.fixture(scope="module")
def finetune_json(finetune) -> dict[str, Any]:
    assert finetune.exit_code == 0, finetune.output
    return json.loads(finetune.stdout)


@pytest.fixture(scope="module")
def systems(runner) -> dict[str, dict[str, Any]]:
    r = invoke(runner, "catalog", "systems", "--format", "json")
    assert r.exit_code == 0, r.output
    return {row["id"]: row for row in json.loads(r.stdout)}


@pytest.fixture(scope="module")
def quotes(runner) -> dict[str, dict[str, Any]]:
    r = invoke(runner, "catalog", "quotes", "--as-of", "2026-12-01", "--format", "json")
    assert r.exit_code == 0, r.output
    return {row["id"]: row for row in json.loads(r.stdout)}


@pytest.fixture(scope="module")
def datacenter_runs(runner) -> list[Result]:
    return [invoke(runner, "solve", DATACENTER, "--format", "json") for _ in range(2)]


# --------------------------------------------------------------------------------------------- solve: JSON


def test_solve_json_exit_0_and_top_level_keys(finetune, finetune_json):
    assert finetune.exit_code == 0
    d = finetune_json
    assert d["status"] == "optimal"
    for key in ("status", "plan", "alternatives", "excluded", "warnings", "problem", "as_of", "schema_version"):
        assert key in d, key
    assert d["problem"] == problem_data(FINETUNE)["name"]


def test_solve_json_plan_fields(finetune_json):
    p = finetune_json["plan"]
    for key in ("accelerator", "system", "mode", "quotes", "nodes", "gpus", "start", "finish", "training_days",
                "memory_per_gpu_gb", "power_kw", "cost_usd"):
        assert key in p, key
    assert set(p["memory_per_gpu_gb"]) >= {"required", "available"}
    assert "total" in p["cost_usd"] and len(p["cost_usd"]) > 1, "cost_usd needs line items besides total"
    assert p["quotes"], "a plan rests on at least one quote"
    for q in p["quotes"]:
        assert isinstance(q["id"], str) and q["id"]
        assert isinstance(q["nodes"], int) and q["nodes"] >= 1
    assert p["power_kw"] > 0
    assert p["training_days"] > 0


def _check_plan_consistency(p: dict[str, Any], systems: dict[str, dict[str, Any]],
                            quotes: dict[str, dict[str, Any]]) -> None:
    # nodes is the sum of the nodes taken from each quote
    assert p["nodes"] == sum(q["nodes"] for q in p["quotes"])
    # gpus = nodes x GPUs per node of the chosen system, as the catalog says
    assert p["system"] in systems, p["system"]
    sysrow = systems[p["system"]]
    assert sysrow["accelerator"] == p["accelerator"]
    assert p["gpus"] == p["nodes"] * sysrow["per_node"]
    # every quote exists, sells this system in this mode
    for q in p["quotes"]:
        assert q["id"] in quotes, q["id"]
        assert quotes[q["id"]]["system"] == p["system"]
        assert quotes[q["id"]]["mode"] == p["mode"]
    assert p["option"] == f"{p['system']}/{p['offer']}" and p["offer"].split("-")[0] == p["mode"]
    offers = {"on_demand": p["mode"], "reserved": f"{p['mode']}-reserved", "spot": f"{p['mode']}-spot"}
    for q in p["quotes"]:       # one offer per plan: its quotes' contracts say which
        assert p["mode"] in ("buy", "managed") or offers[q["contract"]] == p["offer"], (q["contract"], p["offer"])
    # the model fits
    mem = p["memory_per_gpu_gb"]
    assert 0 < mem["required"] <= mem["available"]
    # the money adds up
    assert abs(p["cost_usd"]["total"] - money_lines_sum(p["cost_usd"])) <= MONEY_TOL
    assert abs(p["cash_usd"]["total"] - money_lines_sum(p["cash_usd"])) <= MONEY_TOL
    # the schedule is consistent: training fits between start and finish
    start, finish = date.fromisoformat(p["start"]), date.fromisoformat(p["finish"])
    assert start <= finish
    assert (finish - start).days >= math.ceil(p["training_days"])


def test_solve_json_plan_is_internally_consistent(finetune_json, systems, quotes):
    _check_plan_consistency(finetune_json["plan"], systems, quotes)


def test_solve_json_plan_respects_the_problem(finetune_json):
    prob = problem_data(FINETUNE)
    p = finetune_json["plan"]
    sched = prob.get("schedule", {})
    if sched.get("earliest_start"):
        assert date.fromisoformat(p["start"]) >= sched["earliest_start"]
    if sched.get("deadline"):
        assert date.fromisoformat(p["finish"]) <= sched["deadline"]
    modes = prob.get("policy", {}).get("modes")
    if modes:
        assert p["mode"] in modes
        assert all(a["mode"] in modes for a in finetune_json["alternatives"])
    budget = prob.get("budget", {}).get("max_usd")
    if budget is not None and prob.get("budget", {}).get("applies_to", "cash") == "cash":
        assert p["cash_usd"]["total"] <= parse_quantity(budget) + MONEY_TOL


def test_solve_json_alternatives(finetune_json, systems, quotes):
    plan = finetune_json["plan"]
    alts = finetune_json["alternatives"]
    assert alts, "the fine-tune problem has several workable accelerator/mode pairs"
    chosen_pair = (plan["accelerator"], plan["offer"])
    pairs = [(a["accelerator"], a["offer"]) for a in alts]
    assert chosen_pair not in pairs, "the chosen pair is not repeated as an alternative"
    assert len(set(pairs)) == len(pairs), "one alternative per accelerator and offer (buy, cloud, reserved, spot)"
    totals = [a["cost_usd"]["total"] for a in alts]
    # ranked by the objective: cost in the model's money unit (each term rounded up), then finish
    unit = finetune_json["objective"]["money_unit_usd"]
    assert all(b >= a - unit * 20 for a, b in zip(totals, totals[1:], strict=False)), "alternatives are sorted by cost"
    for a in alts:
        assert "delta_usd" in a
        assert abs(a["delta_usd"] - (a["cost_usd"]["total"] - plan["cost_usd"]["total"])) <= MONEY_TOL, a["option"]
        assert a["delta_usd"] >= -MONEY_TOL, "the chosen plan is optimal: no alternative is cheaper"
        _check_plan_consistency(a, systems, quotes)


def test_solve_json_excluded(finetune_json):
    d = finetune_json
    excluded = d["excluded"]
    assert excluded
    keys = [(e["accelerator"], e["mode"] or "", e["system"] or "") for e in excluded]
    assert keys == sorted(keys)
    for e in excluded:
        assert isinstance(e["accelerator"], str) and e["accelerator"]
        assert e["reasons"] and all(isinstance(r["text"], str) and r["text"] for r in e["reasons"]), e
        for r in e["reasons"]:  # a group reason says where the user stated it
            assert (r["group"] is None) == (r["where"] is None), r
    plan = d["plan"]
    assert (plan["accelerator"], plan["mode"]) not in {(e["accelerator"], e["mode"]) for e in excluded
                                                       if e["system"] is None}
    if "site" not in problem_data(FINETUNE):
        buys = [e for e in excluded if e["mode"] == "buy"]
        assert buys, "with no site every buy option is excluded"
        assert all(any("site" in r["text"] for r in e["reasons"]) for e in buys)


# --------------------------------------------------------------------------------------------- solve: text formats


@pytest.mark.parametrize("fmt", ["markdown", "table"])
def test_solve_text_formats_show_the_chosen_plan(runner, finetune_json, memo_solve, fmt):
    r = invoke(runner, "solve", FINETUNE, "--format", fmt, *(["--verbose"] if fmt == "table" else []))
    assert r.exit_code == 0, r.output  # the full report (the default view: tests/test_brief.py)
    plan = finetune_json["plan"]
    out = r.stdout
    assert "CHOSEN" in out
    chosen = [line for line in out.splitlines() if "CHOSEN" in line]
    assert any(plan["system"] in line and plan["accelerator"] in line for line in chosen), chosen
    offer = {"buy": "buy", "cloud": "on demand", "cloud-reserved": "reserved", "cloud-spot": "spot",
             "managed": "managed"}[plan["offer"]]   # the offer as a buyer names it, in the table
    row = [line for line in chosen if plan["system"] in line and offer in line and "·" not in line]
    assert row and re.search(rf"\b{re.escape(plan['accelerator'])}\b.*\b{offer}\b", row[0]), chosen
    for q in plan["quotes"]:
        assert q["id"] in out
    if fmt == "markdown":
        assert out.startswith("# Plan: ")
        assert "## Chosen plan" in out
    else:
        assert "OPTIMAL" in out.splitlines()[0]


# --------------------------------------------------------------------------------------------- infeasible


def test_solve_infeasible_budget_exit_1_names_budget_with_file_line(runner):
    r = invoke(runner, "solve", INFEASIBLE)
    assert r.exit_code == 1, r.output
    out = r.stdout
    assert "INFEASIBLE" in out
    assert "budget.max_usd" in out
    where = f"{INFEASIBLE}:{line_of(INFEASIBLE, 'max_usd', parent='budget')}"
    conflict = [line for line in out.splitlines() if "budget.max_usd" in line and where in line]
    assert conflict, f"expected budget.max_usd with {where} in:\n{out}"


def test_solve_set_tiny_budget_makes_feasible_file_infeasible(runner):
    r = invoke(runner, "solve", FINETUNE, "--set", "budget.max_usd=1k", "--format", "json")
    assert r.exit_code == 1, r.output
    d = json.loads(r.stdout)
    assert d["status"] == "infeasible"
    assert d["plan"] is None
    assert "budget.max_usd" in d["explanation"]["conflict"]
    detail = {c["group"]: c for c in d["explanation"]["conflict_detail"]}
    assert detail["budget.max_usd"]["where"] == "--set budget.max_usd=1k", "the limit came from --set, not the file"


# --------------------------------------------------------------------------------------------- solve: exit 2 / 3


def test_solve_set_bad_value_exit_2_names_the_set_not_the_file(runner):
    r = invoke(runner, "solve", FINETUNE, "--set", "workload.params=seventy")
    assert r.exit_code == 2
    assert r.stdout == ""
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert err == "error: --set workload.params=seventy: expected a number like 70B, got 'seventy'"
    assert FINETUNE not in err, "a value given with --set is not the file's fault"


def test_solve_set_unknown_path_exit_2(runner):
    r = invoke(runner, "solve", FINETUNE, "--set", "nosuch.key=1")
    assert r.exit_code == 2
    assert "nosuch" in r.stderr and "unknown key" in r.stderr
    assert "--set nosuch.key=1" in r.stderr


def test_solve_set_typo_suggests(runner):
    r = invoke(runner, "solve", FINETUNE, "--set", "budjet.max_usd=1M")
    assert r.exit_code == 2
    assert "did you mean 'budget'" in r.stderr


@pytest.mark.parametrize("expr", ["workload.params", "=5", "rules[3].name=x"])
def test_solve_set_malformed_exit_2(runner, expr):
    r = invoke(runner, "solve", FINETUNE, "--set", expr)
    assert r.exit_code == 2
    assert r.stderr.startswith("error: ")
    assert expr in r.stderr


def test_solve_time_limit_without_proof_exit_3(runner):
    """A deterministic time limit (CP-SAT's deterministic clock) too small to prove anything: the same unproven
    answer every run, exit 3, and it never calls itself optimal. Jobs may span three fabrics: the presolve leaves
    the one-fabric models too small for any limit to stop."""
    runs = [invoke(runner, "solve", DATACENTER, "--time-limit", "0.0001", "--set", "policy.max_fabrics=3",
                   "--format", "json") for _ in range(2)]
    assert runs[0].stdout_bytes == runs[1].stdout_bytes
    r = runs[0]
    assert r.exit_code == 3, r.output
    d = json.loads(r.stdout)
    assert d["status"] == "feasible"
    assert d["plan"] is not None
    assert any("time limit reached" in w for w in d["warnings"])
    assert d["objective"]["bound_units"] is None or d["objective"]["bound_units"] <= d["objective"]["value_units"]
    text = invoke(runner, "solve", DATACENTER, "--time-limit", "0.0001", "--set", "policy.max_fabrics=3")
    assert text.exit_code == 3
    status = " ".join(text.stdout.split("\n\n")[0].split())  # the status paragraph, wrapped at the terminal
    assert "not proven optimal" in status and "OPTIMAL (proven)" not in text.stdout


@pytest.mark.parametrize("args", [
    ["solve"],                                         # missing FILE
    ["solve", FINETUNE, "--format", "xml"],            # bad choice
    ["solve", FINETUNE, "--top", "0"],                 # out of range
    ["solve", FINETUNE, "--workers", "0"],
    ["frobnicate"],                                    # unknown command
    ["estimate", "--accelerator", "h100-sxm"],        # missing required options
])
def test_usage_errors_exit_2(runner, args):
    r = invoke(runner, *args)
    assert r.exit_code == 2, r.output


def test_solve_missing_file_exit_2(runner):
    r = invoke(runner, "solve", "constraints/no-such-file.yaml")
    assert r.exit_code == 2
    assert "constraints/no-such-file.yaml" in r.stderr and "not found" in r.stderr


def test_version_and_help(runner):
    r = invoke(runner, "--version")
    assert r.exit_code == 0 and r.stdout.startswith("plan ")
    r = invoke(runner, "--help")
    assert r.exit_code == 0
    for cmd in ("solve", "estimate", "catalog", "validate"):
        assert cmd in r.stdout


def test_the_processes_help_states_the_defaults_the_pipeline_uses(runner):
    """`cli.py` does not import the pipeline to print its help, so the defaults are written out there."""
    from solver.solve.pipeline import FORK_AFTER_SECONDS, PARALLEL_MAX_QUOTES
    r = invoke(runner, "solve", "--help")
    text = " ".join(r.stdout.split())
    assert f"after {FORK_AFTER_SECONDS:g} s" in text and f"up to {PARALLEL_MAX_QUOTES:,} quotes" in text


# --------------------------------------------------------------------------------------------- estimate


@pytest.fixture(scope="module")
def estimate_json(runner) -> dict[str, Any]:
    r = invoke(runner, "estimate", "--accelerator", "h100-sxm", "--gpus", "8", "--params", "7B",
               "--tokens", "100B", "--format", "json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_estimate_json_keys(estimate_json):
    e = estimate_json
    for key in ("memory_per_gpu_gb", "fits", "min_gpus", "flops", "mfu", "gpu_hours", "days"):
        assert key in e, key
    assert set(e["memory_per_gpu_gb"]) >= {"required", "available"}
    assert e["accelerator"] == "h100-sxm" and e["gpus"] == 8


def test_estimate_json_values_are_consistent(estimate_json, systems):
    e = estimate_json
    mem = e["memory_per_gpu_gb"]
    assert e["fits"] is True
    assert mem["required"] <= mem["available"]
    assert 1 <= e["min_gpus"] <= 8
    assert 0 < e["mfu"] < 1
    assert e["system"] in systems and systems[e["system"]]["accelerator"] == "h100-sxm"
    assert e["days"] > 0 and e["gpu_hours"] > 0
    assert e["gpu_hours"] == pytest.approx(e["days"] * 24 * e["gpus"], rel=5e-3)


def test_estimate_flops_formula(estimate_json):
    # 6·P·T for the weights plus the attention term 12·L·h·s per token (selective recompute: no extra pass)
    P, T, s = 7e9, 100e9, 4096
    L, h = estimate_json["shape"]["layers"], estimate_json["shape"]["hidden"]
    expected = (6 * P + 12 * L * h * s) * T
    assert estimate_json["flops"] == pytest.approx(expected, rel=1e-5)


def test_estimate_table_output(runner):
    r = invoke(runner, "estimate", "--accelerator", "h100-sxm", "--gpus", "8", "--params", "7B", "--tokens", "100B")
    assert r.exit_code == 0, r.output
    assert "training FLOPs" in r.stdout and "fits" in r.stdout


def test_estimate_unknown_accelerator_exit_2_did_you_mean(runner):
    r = invoke(runner, "estimate", "--accelerator", "h100-sxn", "--gpus", "8", "--params", "7B", "--tokens", "100B")
    assert r.exit_code == 2
    assert r.stdout == ""
    assert "did you mean 'h100-sxm'" in r.stderr
    assert "--accelerator" in r.stderr


@pytest.mark.parametrize("opt,value", [("--params", "seventy"), ("--params", "0"), ("--tokens", "1e30"),
                                       ("--tokens", "-5B")])
def test_estimate_bad_quantity_exit_2(runner, opt, value):
    args = {"--params": "7B", "--tokens": "100B", opt: value}
    r = invoke(runner, "estimate", "--accelerator", "h100-sxm", "--gpus", "8",
               "--params", args["--params"], "--tokens", args["--tokens"])
    assert r.exit_code == 2
    assert opt in r.stderr


# --------------------------------------------------------------------------------------------- catalog


@pytest.mark.parametrize("what,expect", [("accelerators", ["b200", "h100-sxm"]),
                                         ("systems", ["dgx-b200", "dgx-h100"]),
                                         ("quotes", ["lambda-b200-8x-ondemand", "dgx-a100-40gb-nvidia-list-2020"])])
def test_catalog_lists(runner, what, expect):
    r = invoke(runner, "catalog", what)
    assert r.exit_code == 0, r.output
    ids = {line.split()[0] for line in r.stdout.splitlines() if line.strip()}
    for x in expect:
        assert x in ids, x


def test_catalog_quotes_flags_expired(runner, quotes):
    old = "dgx-a100-40gb-nvidia-list-2020"
    assert quotes[old]["status"] == "expired"
    assert quotes["lambda-b200-8x-ondemand"]["valid_until"] == "2027-03-19"
    assert quotes["lambda-b200-8x-ondemand"]["status"] == "valid"
    r = invoke(runner, "catalog", "quotes", "--as-of", "2026-12-01")
    assert r.exit_code == 0
    row = [line for line in r.stdout.splitlines() if line.startswith(old)]
    assert row and "EXPIRED" in row[0]
    # before its valid_until date the same quote is not flagged
    r = invoke(runner, "catalog", "quotes", "--as-of", "2020-06-01", "--format", "json")
    assert r.exit_code == 0
    rows = {q["id"]: q for q in json.loads(r.stdout)}
    assert rows[old]["status"] != "expired"


def test_catalog_bad_date_exit_2(runner):
    r = invoke(runner, "catalog", "quotes", "--as-of", "2026-13-01")
    assert r.exit_code == 2
    assert "--as-of" in r.stderr


# --------------------------------------------------------------------------------------------- validate


@pytest.fixture(scope="module")
def validate_datacenter(runner) -> Result:
    return invoke(runner, "validate", DATACENTER)


def test_validate_ok(validate_datacenter):
    r = validate_datacenter
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("OK")
    assert DATACENTER in r.stdout


def test_validate_bad_file_exit_2(runner):
    bad = "tests/bad_inputs/unknown_top_key.yaml"
    r = invoke(runner, "validate", bad)
    assert r.exit_code == 2
    assert r.stdout == ""
    assert bad in r.stderr and "did you mean 'budget'" in r.stderr


def test_validate_set_bad_value_exit_2(runner):
    r = invoke(runner, "validate", DATACENTER, "--set", "site.racks=0")
    assert r.exit_code == 2
    assert "site.racks" in r.stderr


# --------------------------------------------------------------------------------------------- determinism, cwd


def test_solve_json_is_deterministic_in_process(datacenter_runs):
    a, b = datacenter_runs
    assert a.exit_code == 0, a.output
    assert a.stdout_bytes == b.stdout_bytes


def test_solve_json_is_deterministic_across_processes(datacenter_runs, background):
    rc, out, err = background("cross-process")
    assert rc == 0, err.decode()
    assert b"Traceback" not in err
    assert out == datacenter_runs[0].stdout_bytes


def test_bundled_catalogs_found_from_another_directory(validate_datacenter, background):
    """From an unrelated directory, with an absolute problem path, the same catalogs and quotes are used."""
    rc, out_b, err = background("elsewhere")
    assert rc == 0, err.decode()
    out = out_b.decode()
    m = re.search(r"(\d+) options from (\d+) usable quotes", out)
    assert m and int(m.group(1)) > 0 and int(m.group(2)) > 0, out
    # identical to the run from the repository root, except for the path of the problem file
    assert out.replace(str(REPO / DATACENTER), DATACENTER) == validate_datacenter.stdout
