"""The independent checker catches what the rest of `plan` gets wrong, and such a failure is exit 4, not a plan.

The checker re-derives every cost line from catalog fields with its own formulas (it does not call
`estimate/cost.py`), so a formula bug in the cost model — the model and the enumeration would both agree with it —
is caught. These tests plant such bugs and require the solve to refuse its answer.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from click.testing import CliRunner

import solver.estimate.options as options
from cli import main
from solver.errors import PlanCheckError
from solver.inputs.problem import load_problem
from solver.solve.checker import check_plan, violations
from solver.solve.pipeline import SolveSettings, prepare, solve_problem

ROOT = Path(__file__).resolve().parent.parent
FINETUNE = ROOT / "constraints" / "finetune-70b.yaml"
LORA = ROOT / "constraints" / "lora-small.yaml"


def test_a_halved_cloud_price_in_the_cost_model_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    real = options.cloud_node_lines

    def halved(**kw):  # the planted bug: half the rate reaches the cost lines
        return real(**{**kw, "usd_per_gpu_hour": kw["usd_per_gpu_hour"] / 2})

    monkeypatch.setattr(options, "cloud_node_lines", halved)
    with pytest.raises(PlanCheckError, match="cost line compute"):
        solve_problem(load_problem(FINETUNE), SolveSettings(alternatives=False))
    r = CliRunner().invoke(main, ["solve", str(FINETUNE)])
    assert r.exit_code == 4 and r.stdout == ""
    assert r.stderr.startswith("INTERNAL ERROR (please report)") and r.stderr.count("\n") == 1


def test_a_wrong_holding_period_of_bought_hardware_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    real = options.buy_node_terms

    def no_install(**kw):  # the planted bug: installation time not held
        return real(**{**kw, "install_days": 0.0})

    monkeypatch.setattr(options, "buy_node_terms", no_install)
    with pytest.raises(PlanCheckError):
        solve_problem(load_problem(LORA, ["policy.modes=[buy]"]), SolveSettings(alternatives=False))


def test_the_checker_names_each_violation_of_a_tampered_plan() -> None:
    problem = load_problem(FINETUNE)
    ctx = prepare(problem)
    plan = solve_problem(problem, SolveSettings(alternatives=False), ctx).plan
    assert plan is not None and violations(problem, ctx.universe, plan) == []
    q = plan.quotes[0]
    limit = problem.catalog.quotes[q.id].max_nodes
    tampered = dataclasses.replace(plan, quotes=(dataclasses.replace(q, nodes=limit + 1),))
    found = violations(problem, ctx.universe, tampered)
    assert any(f"quotes.{q.id}.max_nodes" in v for v in found)
    assert any("does not add up" in v for v in found)
    late = dataclasses.replace(plan, finish=problem.spec.schedule.deadline + (plan.finish - plan.start),
                               start=problem.spec.schedule.deadline)
    assert any(v.startswith("schedule.deadline") for v in violations(problem, ctx.universe, late))
    with pytest.raises(PlanCheckError):
        check_plan(problem, ctx.universe, tampered)


def test_an_unexpected_error_is_one_line_and_exit_4(monkeypatch: pytest.MonkeyPatch) -> None:
    import solver.answers.report as report

    def boom(*args, **kwargs):
        raise RuntimeError("planted")

    monkeypatch.setattr(report, "solve_and_explain", boom)
    r = CliRunner().invoke(main, ["solve", str(FINETUNE)])
    assert r.exit_code == 4, "a crash must never exit 1, which means infeasible"
    assert r.stdout == "" and r.stderr.count("\n") == 1 and "RuntimeError: planted" in r.stderr
    r = CliRunner().invoke(main, ["solve", str(FINETUNE), "--debug"])
    assert r.exit_code == 4 and "Traceback" in r.stderr
