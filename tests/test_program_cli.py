"""`plan solve`/`plan explain` on program files: the JSON contract and its determinism, text output and exit codes,
`--why-not WORKLOAD:ID`, and the Gantt chart extra (apart from test_program_examples.py so that the two files run on
the suite's two processes side by side)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli import main
from solver.inputs.program import load_program
from solver.solve.engine import Limits

ROOT = Path(__file__).resolve().parent.parent
TODAY = date(2026, 12, 1)
UNGATED = ["--set", "workloads.main.decide_after=[]"]
"""The example without its decision gate: it buys its cluster at once (a larger search than the rented plan)."""


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


def test_cli_json_contract_and_determinism(runner: CliRunner) -> None:
    args = ["solve", "constraints/program-200b.yaml", "--format", "json"]
    first = runner.invoke(main, args)
    second = runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    assert first.output == second.output, "same inputs, same JSON byte for byte"
    d = json.loads(first.output)
    assert {"status", "explanation", "schema_version", "program"} <= set(d)
    prog = d["program"]
    assert {"workloads", "purchases", "quarters", "power", "cost_usd"} <= set(prog)
    for w in prog["workloads"]:
        assert {"id", "accelerator", "option", "nodes", "start", "finish", "quotes"} <= set(w)
    for q in prog["quarters"]:
        assert {"quarter", "spend_usd", "cap_usd"} <= set(q) and q["quarter"][4:6] == "-Q"
    assert prog["cost_usd"] == pytest.approx(sum(w["cost_usd"] for w in prog["workloads"])
                                             + sum(p["cost_usd"] for p in prog["purchases"])
                                             + sum(p["cost_usd"] for p in prog["porting"]), abs=len(prog) + 10)


def test_a_search_stopped_by_the_time_limit_says_so_with_a_true_bound(runner: CliRunner) -> None:
    """A deterministic time limit too short to prove the optimum: exit 3, the best program found and a bound that
    the proven optimum (solved here without the limit) respects; the text says the answer may change."""
    args = ["solve", "constraints/program-200b.yaml", "--format", "json", *UNGATED]
    stopped = runner.invoke(main, args + ["--time-limit", "0.05"])
    assert stopped.exit_code == 3, stopped.output
    d = json.loads(stopped.output)
    proven = json.loads(runner.invoke(main, args).output)
    assert d["status"] == "feasible" and proven["status"] == "optimal"
    # money is rounded up to $1k per term in the model: the optimum's dollars may exceed a worse plan's by that much
    slack = 1000 * (len(d["program"]["workloads"]) + sum(p["lots"] for p in d["program"]["purchases"]) + 2)
    assert d["program"]["bound_usd"] <= proven["program"]["cost_usd"] <= d["program"]["cost_usd"] + slack
    text = runner.invoke(main, ["solve", "constraints/program-200b.yaml", "--time-limit", "0.05", *UNGATED]).output
    assert "proven bound; gap" in text and "the answer may change" in text


def test_cli_text_and_infeasible_exit(runner: CliRunner) -> None:
    ok = runner.invoke(main, ["solve", "constraints/program-200b.yaml"])
    assert ok.exit_code == 0 and "Decision gates" in ok.output and "per quarter" in ok.output and "|" in ok.output
    bought = runner.invoke(main, ["solve", "constraints/program-200b.yaml", *UNGATED])
    assert bought.exit_code == 0 and "Purchases" in bought.output and "Decision gates" not in bought.output
    bad = runner.invoke(main, ["solve", "constraints/infeasible-program.yaml"])
    assert bad.exit_code == 1
    assert "budget.per_quarter_usd.2027-Q2" in bad.output and "workloads.main.after" in bad.output
    assert "infeasible-program.yaml:14" in bad.output


def _why_not(target: str, *sets: str):
    from solver.answers.program import why_not_program
    pp = load_program(str(ROOT / "constraints" / "program-200b.yaml"), sets, today=TODAY)
    return why_not_program(pp, Limits(time_limit=30), target)


def test_why_not_a_workload_on_another_accelerator() -> None:
    """Forcing the main run onto TPU7x keeps the fine-tune on it too (same_hardware_as) and can only cost more."""
    ans = _why_not("main:tpu7x")
    plan = ans.forced.outcome.plan
    assert ans.forced.outcome.status == "optimal"
    assert plan.run("main").candidate.accelerator == "tpu7x" and plan.run("sft").candidate.accelerator == "tpu7x"
    assert plan.cost_usd >= ans.chosen.outcome.plan.cost_usd


def test_why_not_that_cannot_be_names_the_limits_and_an_exact_relaxation() -> None:
    ans = _why_not("main:dgx-b200/buy", "workloads.main.schedule.deadline=2027-08-15")
    e = ans.forced.explanation
    assert ans.forced.outcome.status == "infeasible" and "workloads.main.schedule.deadline" in e.conflict
    moved = next(r.value for r in e.relaxations if r.group == "workloads.main.schedule.deadline")
    ok = _why_not("main:dgx-b200/buy", f"workloads.main.schedule.deadline={moved}")
    assert ok.forced.outcome.status == "optimal"
    assert ok.forced.outcome.plan.run("main").candidate.option == "dgx-b200/buy"


def test_why_not_a_target_the_policy_rules_out_names_the_policy() -> None:
    """The TPU bake-off forced onto B200: its own accelerator list is the conflict; with B200 added to that list
    the forced program has a plan on B200."""
    ans = _why_not("bakeoff-tpu7x:b200")
    assert ans.matched > 0 and ans.forced is not None and ans.forced.outcome.status == "infeasible"
    assert ans.forced.explanation.conflict == ("workloads.bakeoff-tpu7x.policy.accelerators",)
    ok = _why_not("bakeoff-tpu7x:b200", "workloads.bakeoff-tpu7x.policy.accelerators={include: [tpu7x, b200]}")
    assert ok.forced.outcome.status == "optimal"
    assert ok.forced.outcome.plan.run("bakeoff-tpu7x").candidate.accelerator == "b200"


def test_why_not_target_errors(runner: CliRunner) -> None:
    r = runner.invoke(main, ["explain", "constraints/program-200b.yaml", "--why-not", "mian:b300"])
    assert r.exit_code == 2 and "no workload with id 'mian'" in r.output + r.stderr
    r = runner.invoke(main, ["explain", "constraints/program-200b.yaml", "--why-not", "b300"])
    assert r.exit_code == 2 and "WORKLOAD:ID" in r.output + r.stderr


def test_gantt_chart_extra(runner: CliRunner, tmp_path: Path) -> None:
    """Without matplotlib `--chart` is refused before any work (exit 2); with it the Gantt chart is drawn."""
    import importlib.util
    out = tmp_path / "g.svg"
    r = runner.invoke(main, ["solve", "constraints/program-200b.yaml", "--chart", str(out)])
    if importlib.util.find_spec("matplotlib") is None:
        assert r.exit_code == 2 and "matplotlib" in r.output + r.stderr
    else:
        assert r.exit_code == 0 and out.read_text().lstrip().startswith("<?xml") and "main" in out.read_text()


def test_save_and_compare_a_program(runner: CliRunner, tmp_path: Path) -> None:
    """Saved, then rerun with the main run kept off owned hardware: the diff names the workloads that moved, the
    purchases that are no longer made and the cost change; the same inputs show no change; a file that is not a
    saved program is one error."""
    small = tmp_path / "small.json"
    feasible = ["--set", "workloads.main.schedule.deadline=2027-09-30"]
    assert runner.invoke(main, ["solve", "constraints/infeasible-program.yaml", "--save", str(small),
                                *feasible]).exit_code == 0
    same = runner.invoke(main, ["solve", "constraints/infeasible-program.yaml", "--compare-to", str(small),
                                "--format", "json", *feasible])
    assert same.exit_code == 0 and json.loads(same.output)["diff"] == {}
    saved = tmp_path / "p.json"
    assert runner.invoke(main, ["solve", "constraints/program-200b.yaml", "--save", str(saved),
                                *UNGATED]).exit_code == 0
    r = runner.invoke(main, ["solve", "constraints/program-200b.yaml", "--compare-to", str(saved), "--format", "json",
                             *UNGATED, "--set", "workloads.main.policy.modes=[cloud]"])
    d = json.loads(r.output)
    old = json.loads(saved.read_text())["result"]["program"]
    main_change = next(w for w in d["diff"]["workloads"] if w["id"] == "main")
    assert main_change["option"][0].endswith("/buy") and not main_change["option"][1].endswith("/buy")
    assert {p["quote"] for p in d["diff"]["purchases"]} == {p["quote"] for p in old["purchases"]}
    assert all(p["nodes"][1] == 0 for p in d["diff"]["purchases"])
    assert d["diff"]["cost_usd"] == [old["cost_usd"], d["program"]["cost_usd"]]
    bad = tmp_path / "x.json"
    bad.write_text('{"kind": "plan-result"}')
    r = runner.invoke(main, ["solve", "constraints/program-200b.yaml", "--compare-to", str(bad)])
    assert r.exit_code == 2 and "not a saved program" in r.output + r.stderr


def test_why_not_reaches_candidates_the_dominance_would_drop() -> None:
    """Without `same_hardware_as`, the fine-tune's A100 runs are dominated by cheaper runs on the same software
    stack and leave the program's candidates; asking for A100 must still find them (and cost no less)."""
    ans = _why_not("sft:a100-80gb", "workloads.sft.same_hardware_as=null")
    assert ans.matched >= 1 and ans.forced.outcome.status == "optimal"
    assert ans.forced.outcome.plan.run("sft").candidate.accelerator == "a100-80gb"
    assert ans.forced.outcome.plan.cost_usd >= ans.chosen.outcome.plan.cost_usd


def test_the_objective_of_a_program(runner: CliRunner) -> None:
    """`objective: time` ends the program no later than the cheapest program does, costs no less, and says so in
    the output; an unknown objective is one error naming the field."""
    small = str(ROOT / "tests" / "programs" / "small.yaml")
    cheapest = json.loads(runner.invoke(main, ["solve", small, "--format", "json"]).output)["program"]
    fastest = json.loads(runner.invoke(main, ["solve", small, "--format", "json", "--set", "objective=time"]).output)
    fast = fastest["program"]
    assert "objective" not in cheapest and fast["objective"] == "the program's end first, then its cost"
    assert fast["finish"] < cheapest["finish"] and fast["cost_usd"] > cheapest["cost_usd"]
    text = runner.invoke(main, ["solve", small, "--set", "objective={delay_cost_usd_per_day: 20000}"]).output
    assert "Objective: cost plus $20,000 per day until the program ends." in text
    bad = runner.invoke(main, ["solve", small, "--set", "objective=fast"])
    assert bad.exit_code == 2 and "objective" in bad.output + bad.stderr and "Traceback" not in bad.output
