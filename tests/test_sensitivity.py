"""Sensitivity: the chosen plan's break-even price is exact (chosen at it, not one step above), sweeps move the plan
in the expected direction (more tokens never cost less), and every sweep varies the problem as the user gave it
(their `risk:` overrides, `--set` and `--quotes`), not the bundled defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli import main
from solver.answers.sensitivity import break_evens, sweeps
from solver.inputs.overrides import Change
from solver.inputs.problem import load_problem
from solver.render.jsonout import sensitivity_dict, to_json
from solver.solve.pipeline import SolveSettings, solve_problem

ROOT = Path(__file__).resolve().parent.parent
FINETUNE = ROOT / "constraints" / "finetune-70b.yaml"


@pytest.fixture(scope="module")
def chosen() -> dict:
    return break_evens(load_problem(FINETUNE), SolveSettings(), top=1)[0]


def _with_price(quote: str, price: float, *sets: str) -> object:
    """Re-solve with the quote's price set through `--set quotes.<id>.usd_per_gpu_hour` (a complete re-solve, not
    the break-even search's own re-solves of one pair)."""
    return solve_problem(load_problem(FINETUNE, [*sets, f"quotes.{quote}.usd_per_gpu_hour={price}"]),
                         SolveSettings(alternatives=False))


def test_chosen_break_even_is_exact(chosen: dict) -> None:
    assert chosen["role"] == "chosen" and chosen["break_even"] is not None
    assert chosen["break_even"] >= chosen["current"]
    for price, kept in ((chosen["break_even"], True), (round(chosen["break_even"] + 0.01, 2), False)):
        r = _with_price(chosen["quote"], price)
        uses = r.plan.option == chosen["plan"] and any(x.id == chosen["quote"] for x in r.plan.quotes)
        assert uses == kept, (price, r.plan.option, [x.id for x in r.plan.quotes])


@pytest.fixture(scope="module")
def tokens() -> list[dict]:
    return sweeps(load_problem(FINETUNE), SolveSettings(), ["tokens"])["tokens"]


def test_more_tokens_never_cost_less(tokens: list[dict]) -> None:
    costs = [r["cost_usd"] for r in tokens if r["cost_usd"] is not None]
    assert len(costs) == len(tokens) and costs == sorted(costs)


def test_command_sweeps_on_a_pool_while_it_searches_break_evens(chosen: dict, tokens: list[dict]) -> None:
    """`plan sensitivity` runs the sweeps on a process pool while this process searches the break-even prices: its
    answer is the break-even and the sweep computed one after the other in this process."""
    r = CliRunner().invoke(main, ["sensitivity", str(FINETUNE), "--top", "1", "--sweep", "tokens", "--format", "json",
                                  "--executor", "process", "--workers", "2"])
    assert r.exit_code == 0, r.output
    problem = load_problem(FINETUNE)
    assert json.loads(r.output) == json.loads(to_json(sensitivity_dict([chosen], {"tokens": tokens}, problem.spec.name,
                                                                       problem.as_of.isoformat())))
    assert [row["value"] for row in json.loads(r.output)["sweeps"]["tokens"]] == [0.5, 0.75, 1.0, 1.25, 1.5], \
        "JSON has the factors as numbers (the table their labels, 50% … 150%)"


def test_without_a_plan_the_command_says_so() -> None:
    r = CliRunner().invoke(main, ["sensitivity", str(FINETUNE), "--set", "budget.max_usd=1000", "--executor",
                                  "process", "--workers", "2"])
    assert r.exit_code == 1 and "no plan satisfies the problem" in r.output, r.output


def test_mfu_sweep_scales_the_problems_own_mfu_not_the_bundled_one() -> None:
    """With `risk.compute.mfu_base.cuda: 0.15` the 100% row of the MFU sweep is the problem's own solve (the bundled
    0.45 gave a third of its cost), and the 80% row is the problem solved at 0.12."""
    override = "risk.compute.mfu_base.cuda=0.15"
    problem = load_problem(FINETUNE, [override])
    base = solve_problem(problem, SolveSettings(alternatives=False))
    rows = {r["value"]: r for r in sweeps(problem, SolveSettings(), ["mfu"])["mfu"]}
    assert rows["100%"]["cost_usd"] == round(base.plan.total_cost)
    assert rows["100%"]["option"] == base.plan.option and rows["100%"]["nodes"] == base.plan.nodes
    at_80 = solve_problem(load_problem(FINETUNE, ["risk.compute.mfu_base.cuda=0.12"]),
                          SolveSettings(alternatives=False))
    assert rows["80%"]["cost_usd"] == round(at_80.plan.total_cost)
    bundled = solve_problem(load_problem(FINETUNE), SolveSettings(alternatives=False))
    assert rows["100%"]["cost_usd"] > bundled.plan.total_cost, "the override must matter for this test to mean much"


def test_lead_time_sweep_keeps_user_quotes(tmp_path: Path) -> None:
    """A quote given with --quotes is still in the problem when every lead time is shifted."""
    q = tmp_path / "q.yaml"
    q.write_text("quotes:\n- {id: lambda-b200-8x-ondemand, usd_per_gpu_hour: 1.0, max_nodes: 4}\n")
    # spot capacity, ready in a day, would win once every lead time is 30 days longer: this test is about quotes
    problem = load_problem(FINETUNE, ["policy.modes=[cloud]", "policy.accelerators.include=[b200]"],
                           quotes=[str(q)])
    problem = problem.with_changes([Change(("rules",), [{"name": "no-spot", "when": {"quote": [
        x for x, v in problem.catalog.quotes.items() if v.contract == "spot"]}, "then": "forbid"}], "test")])
    rows = sweeps(problem, SolveSettings(), ["lead_time_days"])["lead_time_days"]
    planned = [r for r in rows if r["option"] is not None]
    assert len(planned) >= 2 and all(r["option"] == "dgx-b200/cloud" for r in planned), rows
    direct = solve_problem(problem, SolveSettings(alternatives=False))
    assert rows[0]["cost_usd"] == round(direct.plan.total_cost)


def test_chart_extra_is_checked_before_any_work(tmp_path: Path) -> None:
    """Without matplotlib, --chart is refused at once (exit 2, one line); with it, the sweeps are drawn."""
    import importlib.util
    out = tmp_path / "s.svg"
    r = CliRunner().invoke(main, ["sensitivity", str(FINETUNE), "--chart", str(out), "--sweep", "tokens",
                                  "--top", "1"])
    if importlib.util.find_spec("matplotlib") is None:
        assert r.exit_code == 2 and "matplotlib" in r.stderr and r.stdout == ""
    else:
        assert r.exit_code == 0 and out.read_text().lstrip().startswith("<?xml")
    r = CliRunner().invoke(main, ["sensitivity", str(FINETUNE), "--chart", str(tmp_path / "no-such-dir" / "s.svg")])
    assert r.exit_code == 2 and r.stdout == ""


def test_price_past_break_even_flips_and_the_diff_names_the_quote(chosen: dict, tmp_path: Path) -> None:
    """Past the break-even price the plan changes and `--compare-to` names the quote; at it, nothing changes."""
    base = tmp_path / "base.json"
    assert CliRunner().invoke(main, ["solve", str(FINETUNE), "--save", str(base)]).exit_code == 0
    for price, flips in ((round(chosen["break_even"] + 0.01, 2), True), (chosen["break_even"], False)):
        r = CliRunner().invoke(main, ["solve", str(FINETUNE), "--set",
                                      f"quotes.{chosen['quote']}.usd_per_gpu_hour={price}", "--compare-to",
                                      str(base), "--format", "json"])
        d = json.loads(r.stdout)["diff"]
        assert any(c["kind"] == "quote" and c["id"] == chosen["quote"] for c in d["causes"])
        moved = d["decision_changed"] and any(c["field"].startswith("quote ") for c in d["changes"])
        assert moved == flips, (price, d["changes"])
