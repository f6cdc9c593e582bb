"""Rules on named quotes and on a run's cost in program files.

Each rule is checked against an independent way of saying the same thing: forbidding a quote gives the program of
a catalog where that quote has expired; an add_usd on the quote one run uses adds exactly that amount (hand
calculation); a cost condition holds at every run of the plan, and did not hold without it. A rule the program
cannot honour exactly (an adjustment on a bought quote, whose lots serve several workloads) is one error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli import main
from solver.answers.program import headline, solve_program
from solver.inputs.program import load_program
from solver.solve.engine import Limits

ROOT = Path(__file__).resolve().parent.parent
SMALL = str(ROOT / "tests" / "programs" / "small.yaml")
PROGRAM = str(ROOT / "constraints" / "program-200b.yaml")
LIMITS = Limits(time_limit=60)


def solved(file: str, *sets: str) -> dict[str, Any]:
    return headline(solve_program(load_program(file, list(sets)), LIMITS))


def rule(name: str, when: str, then: str) -> str:
    return f"rules=[{{name: {name}, when: {when}, then: {then}}}]"


def quotes_of(row: dict[str, Any]) -> set[str]:
    return {q for w in row["workloads"] for q in w["quotes"]} | {b["quote"] for b in row["bought"]}


def test_forbidding_a_rented_quote_is_the_program_without_it() -> None:
    base = solved(SMALL)
    used = next(w["quotes"][0] for w in base["workloads"] if w["id"] == "pre")
    forbidden = solved(SMALL, rule("no-q", f"{{quote: {used}}}", "forbid"))
    expired = solved(SMALL, f"quotes.{used}.valid_until=2026-11-01")
    assert used not in quotes_of(forbidden)
    assert forbidden["status"] == expired["status"] == "optimal"
    assert (forbidden["cost_usd"], forbidden["workloads"]) == (expired["cost_usd"], expired["workloads"])
    assert forbidden["cost_usd"] > base["cost_usd"], "the forbidden quote was the cheapest way"


def test_forbidding_a_bought_quote_is_the_program_without_it() -> None:
    ungated = "workloads.main.decide_after=[]"   # the example without its decision gate buys its cluster
    base = solved(PROGRAM, ungated)
    bought = base["bought"][-1]["quote"]
    forbidden = solved(PROGRAM, ungated, rule("no-q", f"{{quote: {bought}}}", "forbid"))
    expired = solved(PROGRAM, ungated, f"quotes.{bought}.valid_until=2026-11-01")
    assert bought not in quotes_of(forbidden)
    assert (forbidden["status"], forbidden["cost_usd"], forbidden["bought"]) == \
        (expired["status"], expired["cost_usd"], expired["bought"])


def test_add_usd_on_a_rented_quote_is_charged_to_each_run_on_it() -> None:
    """Hand calculation: $1 on the quote only the fine-tune uses raises the program's cost by exactly $1 (too
    little to move any run)."""
    base = solved(SMALL)
    on = [w for w in base["workloads"] if w["quotes"]]
    quote = on[-1]["quotes"][0]
    runs = sum(quote in w["quotes"] for w in base["workloads"])
    fee = solved(SMALL, rule("fee", f"{{quote: {quote}}}", "{add_usd: 1}"))
    assert fee["workloads"] == base["workloads"]
    assert fee["cost_usd"] == base["cost_usd"] + runs


def test_a_cost_condition_holds_at_every_run_and_is_named_when_it_cannot() -> None:
    """`forbid` a run costing over $1M, on the small program with its deadlines moved out: without the rule the
    pretraining run costs more; with it and a $40M budget every run costs at most $1M (the pretraining moves onto
    bought nodes, whose hardware is the program's purchases, not the run's); with the file's $30M budget no plan
    exists, and the conflict is the budget, the rule and the policy sections that keep the cheaper runs out (the
    accelerator list; the ban on preemptible capacity when spot runs could be fast enough), each needed."""
    loose = ["schedule.deadline=2028-06-30", "workloads.pre.schedule.deadline=2028-06-30", "site.racks=200"]
    cap = rule("cap", "{cost: {gt: 1000000}}", "forbid")
    base = solve_program(load_program(SMALL, loose + ["budget.max_usd=40M"]), LIMITS).outcome.plan
    assert base is not None and max(r.candidate.cost_usd for r in base.runs) > 1e6
    capped = solve_program(load_program(SMALL, loose + ["budget.max_usd=40M", cap]), LIMITS).outcome.plan
    assert capped is not None and max(r.candidate.cost_usd for r in capped.runs) <= 1e6
    assert capped.cost_usd >= base.cost_usd
    out = solve_program(load_program(SMALL, loose + [cap]), LIMITS)
    assert out.outcome.plan is None and out.explanation is not None
    drops = {"budget.max_usd": "budget.max_usd=1B", "rules.cap": "rules=[]",
             "policy.accelerators": "policy.accelerators={include: []}",
             "policy.allow_preemptible": "policy.allow_preemptible=true"}
    conflict = set(out.explanation.conflict)
    assert {"budget.max_usd", "rules.cap"} <= conflict <= set(drops), conflict
    for gid in sorted(conflict):  # minimal: the file edited to drop any one of them has a plan
        assert solve_program(load_program(SMALL, loose + [cap, drops[gid]]), LIMITS).outcome.plan is not None, gid


def test_requiring_quotes_keeps_runs_on_them_and_names_the_rule_when_impossible() -> None:
    base = solved(SMALL)
    both = sorted(quotes_of(base))
    same = solved(SMALL, rule("only", f"{{quote: [{', '.join(both)}]}}", "require"))
    assert (same["cost_usd"], same["workloads"]) == (base["cost_usd"], base["workloads"])
    spot = next(q for q in both if "preemptible" in q)
    only_spot = solved(SMALL, rule("only", f"{{quote: {spot}}}", "require"))
    assert only_spot["status"] == "infeasible", "multi-node pretraining on spot capacity is not allowed, so no " \
        "run of `pre` meets the rule"
    assert only_spot["conflict"] == ["policy.allow_preemptible", "rules.only"]


@pytest.mark.parametrize("when, then, field", [
    ("{quote: dgx-b200-reseller-fast}", "{add_usd: 1000}", "rules[0].then"),
    ("{quote: dgx-b200-reseller-fast, nodes: {ge: 8}}", "forbid", "rules[0].when"),
])
def test_rules_a_program_cannot_honour_exactly_are_one_error(when: str, then: str, field: str) -> None:
    r = CliRunner().invoke(main, ["solve", PROGRAM, "--set", rule("x", when, then)])
    text = r.stderr
    assert r.exit_code == 2 and r.stdout == "" and "Traceback" not in text and len(text.strip().splitlines()) == 1
    assert "bought quote 'dgx-b200-reseller-fast'" in text and field in text


INFEASIBLE = str(ROOT / "constraints" / "infeasible-program.yaml")


def test_a_policy_section_is_named_when_it_is_part_of_the_reason() -> None:
    """The bundled infeasible program: the bake-off is narrowed to TPUs, whose porting makes it end late. Its
    accelerator list is one of the four limits, and editing the file to drop any one of them gives a plan."""
    out = solved(INFEASIBLE)
    drops = {"workloads.main.after": "workloads.main.after=[]",
             "workloads.main.schedule.deadline": "workloads.main.schedule.deadline=2029-06-30",
             "budget.per_quarter_usd.2027-Q2": "budget.per_quarter_usd.2027-Q2=1B",
             "workloads.bakeoff-tpu7x.policy.accelerators": "workloads.bakeoff-tpu7x.policy.accelerators={include: []}"}
    assert out["status"] == "infeasible" and sorted(out["conflict"]) == sorted(drops)
    for gid, edit in drops.items():
        assert solved(INFEASIBLE, edit)["status"] == "optimal", gid


def test_a_conflict_the_policy_plays_no_part_in_is_searched_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A budget nothing fits: the conflict found with the policy enforced ({budget.max_usd}) is infeasible in the
    model where the policy is a group too, so it is kept without a second search over that larger model."""
    import solver.answers.program_explain as program_explain
    calls: list[int] = []
    search = program_explain.explain

    def counted(pm: Any, engine: Any) -> Any:
        calls.append(sum(len(w.candidates) for w in pm.data.workloads))
        return search(pm, engine)

    monkeypatch.setattr(program_explain, "explain", counted)
    out = solved(SMALL, "budget.max_usd=100k")
    assert out["conflict"] == ["budget.max_usd"] and len(calls) == 1
    calls.clear()
    assert "workloads.bakeoff-tpu7x.policy.accelerators" in solved(INFEASIBLE)["conflict"]
    assert len(calls) == 2 and calls[1] > calls[0], "searched again over the larger model"
