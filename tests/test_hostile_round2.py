"""Hostile input, round 2 (issue 43): bombs through `--set`, values that would make impossible plans, folders that
are not catalog folders, files that are not problem files, paths that are folders, and what a plan cannot be
whatever the inputs say.

Every refusal is one line on stderr, exit 2, nothing on stdout, no traceback (`one_line_error`), before any long
work; the checker's refusals are called on a real plan changed by hand.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli import main
from solver.inputs.assumptions import MAX_SCENARIOS
from solver.inputs.catalog import MAX_FOLDER_ENTRIES
from solver.inputs.overrides import MAX_SET_VALUES
from solver.inputs.problem import load_problem
from solver.solve.checker import violations
from solver.solve.pipeline import SolveSettings, prepare, solve_problem

from test_hostile_inputs import one_line_error

REPO = Path(__file__).resolve().parent.parent
LORA = str(REPO / "constraints" / "lora-small.yaml")
DATACENTER = str(REPO / "constraints" / "datacenter.yaml")
PROGRAM = str(REPO / "constraints" / "program-200b.yaml")


def _bomb(levels: int) -> str:
    """Anchors and aliases: level k is ten copies of level k-1, so the value stands for 10^levels items."""
    parts = ["&a0 [x,x,x,x,x,x,x,x,x,x]"] + [f"&a{i} [{','.join([f'*a{i - 1}'] * 10)}]" for i in range(1, levels)]
    return "[" + ", ".join(parts) + "]"


# ---------------------------------------------------------------------------------------------- alias bombs

@pytest.mark.parametrize("args", [
    ["solve", LORA, "--set", "rules=" + _bomb(9)],
    ["solve", PROGRAM, "--set", "workloads.main.after=" + _bomb(9)],
    ["sweep", LORA, "--set-grid", "rules=" + _bomb(9)],
])
def test_an_alias_bomb_through_set_is_refused_at_once(args: list[str]) -> None:
    err = one_line_error(args)
    assert f"{MAX_SET_VALUES:,} values" in err and "alias" in err


def test_a_set_value_with_honest_aliases_is_still_read(tmp_path: Path) -> None:
    """Aliases below the cap are YAML like any other: the value is read and validated as usual."""
    r = CliRunner().invoke(main, ["validate", LORA, "--set", "policy.modes=[&m cloud, *m]"])
    assert r.exit_code in (0, 2), r.output
    assert "alias" not in r.output


# ---------------------------------------------------------------------------------------- impossible values

@pytest.mark.parametrize("expr, field", [
    ("risk.install_days.datacenter=-1000", "risk.install_days.datacenter"),
    ("risk.install_days.consumer=-1", "risk.install_days.consumer"),
    ("risk.memory.states_bytes_per_param.adamw=-100", "risk.memory.states_bytes_per_param.adamw"),
    ("risk.memory.states_bytes_per_param.sgd_momentum=-1", "risk.memory.states_bytes_per_param.sgd_momentum"),
    ("risk.money.resale_value_by_age_years={1: -0.5}", "resale_value_by_age_years"),
    ("risk.money.resale_value_by_age_years={1: 3}", "resale_value_by_age_years"),
])
def test_a_negative_or_absurd_assumption_is_refused(expr: str, field: str) -> None:
    err = one_line_error(["solve", DATACENTER, "--set", expr])
    assert expr.split("=")[0] in err and field.split(".")[-1] in err


def test_an_override_of_a_resale_age_reads_the_age_as_a_number() -> None:
    """`{1: 0.7}` names the catalog's age 1 (its keys are read as text): accepted, same plan as without it."""
    r = CliRunner().invoke(main, ["validate", DATACENTER, "--set", "risk.money.resale_value_by_age_years={1: 0.7}"])
    assert r.exit_code == 0, r.output
    err = one_line_error(["validate", DATACENTER, "--set", "risk.money.resale_value_by_age_years={x: 0.5}"])
    assert "unknown key 'x'" in err


@pytest.fixture(scope="module")
def bought() -> tuple:
    problem = load_problem(DATACENTER, ["policy.modes=[buy]"])
    ctx = prepare(problem, SolveSettings(processes=1, alternatives=False))
    result = solve_problem(problem, ctx.settings, ctx)
    assert result.plan is not None and result.plan.mode == "buy"
    assert violations(problem, ctx.universe, result.plan) == []
    return problem, ctx, result.plan


def test_the_checker_refuses_a_run_before_its_hardware_is_ready(bought: tuple) -> None:
    problem, ctx, plan = bought
    q = plan.quotes[0]
    early = dataclasses.replace(q, ready=plan.start + timedelta(days=30))
    bad = violations(problem, ctx.universe, dataclasses.replace(plan, quotes=(early,) + plan.quotes[1:]))
    assert any("before its hardware is ready" in v for v in bad), bad
    assert q.delivered is not None and q.ordered is not None
    before = dataclasses.replace(q, ready=q.delivered - timedelta(days=1), delivered=q.delivered)
    bad = violations(problem, ctx.universe, dataclasses.replace(plan, quotes=(before,) + plan.quotes[1:]))
    assert any("before it is delivered" in v for v in bad), bad
    reversed_ = dataclasses.replace(q, delivered=q.ordered - timedelta(days=1))
    bad = violations(problem, ctx.universe, dataclasses.replace(plan, quotes=(reversed_,) + plan.quotes[1:]))
    assert any("before it is ordered" in v for v in bad), bad


def test_the_checker_refuses_negative_memory_whatever_the_assumptions_say(bought: tuple) -> None:
    """Validation refuses negative bytes; an assumptions object built around it (a bug, another front end) is
    still refused by the checker."""
    problem, ctx, plan = bought
    a = problem.assumptions.values
    memory = a.memory.model_copy(update={"states_bytes_per_param": {**a.memory.states_bytes_per_param,
                                                                      "adamw": -100.0}})
    values = a.model_copy(update={"memory": memory})
    broken = dataclasses.replace(problem, assumptions=dataclasses.replace(problem.assumptions, values=values))
    bad = violations(broken, ctx.universe, plan)
    assert any("negative memory" in v for v in bad), bad


# ------------------------------------------------------------------------------------------- scenario counts

def test_a_scenario_count_that_cannot_fit_is_refused_up_front() -> None:
    r = CliRunner().invoke(main, ["solve", DATACENTER, "--scenarios", "1000000", "--set",
                                  "policy.deadline_confidence=0.9"])
    assert r.exit_code == 2 and "Traceback" not in r.output and f"{MAX_SCENARIOS}" in r.output.replace(",", "")
    err = one_line_error(["solve", DATACENTER, "--set", "risk.uncertainty.scenarios=1000000"])
    assert f"{MAX_SCENARIOS}" in err


def test_the_option_and_the_assumption_share_one_limit() -> None:
    import solver.cli.options as options
    text = Path(options.__file__).read_text()
    assert f"click.IntRange(100, {MAX_SCENARIOS:_})" in text


# -------------------------------------------------------------------------------------------- catalog folders

def test_a_folder_too_big_to_be_a_catalog_folder_is_refused(tmp_path: Path) -> None:
    many = tmp_path / "many"
    many.mkdir()
    for i in range(MAX_FOLDER_ENTRIES + 1):
        (many / f"f{i}").touch()
    for command in ("solve", "validate"):
        err = one_line_error([command, LORA, "--quotes", str(many)])
        assert "entries under this folder" in err and str(many) in err


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs /proc")
def test_proc_as_a_quote_folder_is_refused_at_once() -> None:
    err = one_line_error(["validate", LORA, "--quotes", "/proc"])
    assert "/proc" in err


@pytest.mark.parametrize("kind", ["fifo", "devlink", "broken"])
def test_a_special_file_inside_a_quote_folder_is_named(tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "quotes"
    folder.mkdir()
    entry = folder / "odd.yaml"
    if kind == "fifo":
        os.mkfifo(entry)
    elif kind == "devlink":
        entry.symlink_to("/dev/zero")
    else:
        entry.symlink_to(folder / "gone.yaml")
    err = one_line_error(["solve", LORA, "--quotes", str(folder)])
    assert "odd.yaml" in err and "not a regular file" in err


def test_a_quote_folder_with_ordinary_entries_still_reads(tmp_path: Path) -> None:
    folder = tmp_path / "quotes"
    (folder / "sub").mkdir(parents=True)
    (folder / "notes.txt").write_text("not a catalog")
    (folder / "sub" / "q.yaml").write_text(
        "quotes:\n- {id: my-h100, system: dgx-h100, mode: cloud, vendor: me, usd_per_gpu_hour: 0.5, max_nodes: 4,"
        " lead_time_days: 1, quoted_on: 2026-11-20, valid_until: 2027-12-31, kind: list, source: test}\n")
    r = CliRunner().invoke(main, ["validate", LORA, "--quotes", str(folder)])
    assert r.exit_code == 0, r.output


# ---------------------------------------------------------------------------------------- not a problem file

@pytest.mark.parametrize("text", [
    "root:$6$saltsalt$hashhashhash:20228:0:99999:7:::\ndaemon:*:20228:0:99999:7:::\n",
    "just some words\n",
    "",
    "- a\n- b\n",
])
def test_a_file_that_is_not_a_problem_is_never_quoted(tmp_path: Path, text: str) -> None:
    f = tmp_path / "shadow"
    f.write_text(text)
    err = one_line_error(["solve", str(f)])
    assert any(w in err for w in ("not a problem file", "expected a mapping", "file is empty")) and str(f) in err
    said = err.replace(str(f), "")
    for word in ("root", "hashhash", "words", "daemon"):
        assert word not in said


# ------------------------------------------------------------------------------------- every quote expired

@pytest.mark.parametrize("as_of", ["2028-06-01", "2100-12-31"])
def test_every_quote_expired_is_named_not_a_memory_conflict(as_of: str) -> None:
    r = CliRunner().invoke(main, ["solve", LORA, "--set", f"as_of={as_of}"])
    assert r.exit_code == 1, r.output
    assert "workload.memory" not in r.stdout
    assert "expired" in r.stdout and "--allow-expired" in r.stdout
    assert "Cause: no quote can be used" in r.stdout


# ---------------------------------------------------------------------------------------------- --save paths

def test_save_to_a_path_ending_in_a_slash_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "missing-folder"
    err = one_line_error(["solve", LORA, "--save", str(target) + "/"])
    assert "slash" in err and not target.exists()


def test_save_does_not_replace_a_read_only_file(tmp_path: Path) -> None:
    target = tmp_path / "plan.json"
    target.write_text("{}")
    target.chmod(0o444)
    try:
        err = one_line_error(["solve", LORA, "--save", str(target)])
        assert "read-only" in err and target.read_text() == "{}"
    finally:
        target.chmod(stat.S_IWUSR | stat.S_IRUSR)
