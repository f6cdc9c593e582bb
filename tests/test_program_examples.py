"""The program examples and the `plan solve PROGRAM.yaml` command: answer classes from the source article's path,
money recomputed here from catalog numbers, explanations whose relaxations are exact, bad input.

Expected classes (seed 000's program): each bake-off runs in the cloud on its own platform before the main run; the
200B run is a datacenter-class cluster of hundreds of GPUs finishing by its deadline; the fine-tune follows it on the
same accelerator; the hall's power is never exceeded on any day, including before the July step.
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from cli import main
from solver.answers.program import solve_program
from solver.inputs.catalog import load_catalog
from solver.inputs.program import load_program
from solver.solve.engine import Limits

ROOT = Path(__file__).resolve().parent.parent
TODAY = date(2026, 12, 1)
CAT = load_catalog([])


def _report(name: str, *sets: str):
    return solve_program(load_program(str(ROOT / "constraints" / name), sets, today=TODAY), Limits(time_limit=30))


UNGATED = "workloads.main.decide_after=[]"
"""The example without its decision gate: the 200B run's hardware may be ordered at once, and is bought (what the
tests of purchases, power and lot money read)."""


@pytest.fixture(scope="module")
def main_report():
    return _report("program-200b.yaml")


@pytest.fixture(scope="module")
def bought_report():
    return _report("program-200b.yaml", UNGATED)


def test_program_200b_follows_the_article(main_report) -> None:
    rep = main_report
    assert rep.outcome.status == "optimal"
    plan = rep.outcome.plan
    runs = {r.workload: r for r in plan.runs}
    for bake, accel in (("bakeoff-b200", "b200"), ("bakeoff-mi355x", "mi355x"), ("bakeoff-tpu7x", "tpu7x")):
        assert runs[bake].candidate.accelerator == accel and runs[bake].candidate.mode == "cloud"
        assert runs[bake].end_day <= runs["main"].start_day
    main_run = runs["main"].candidate
    assert CAT.accelerators[main_run.accelerator].cls == "datacenter" and main_run.gpus >= 100
    assert TODAY + timedelta(days=runs["main"].end_day) <= date(2027, 10, 31)
    assert runs["sft"].start_day >= runs["main"].end_day
    assert runs["sft"].candidate.accelerator == main_run.accelerator
    gates = max(runs[b].end_day for b in ("bakeoff-b200", "bakeoff-mi355x", "bakeoff-tpu7x"))
    assert all(p.order_day >= gates for p in plan.purchases), "decide_after: nothing ordered before the bake-offs"


def test_program_200b_power_never_exceeds_the_hall(bought_report) -> None:
    """Day by day, from the file: 2,000 kW before 2027-07-01, 6,000 kW after; every bought node draws its system's
    catalog kW from delivery (lead time p90 + order day)."""
    plan = bought_report.outcome.plan
    assert plan.purchases, "the example keeps its cluster (after_run: reuse): buying it is part of the answer"
    for day in range(plan.end_day + 1):
        today = TODAY + timedelta(days=day)
        limit = 6000 if today >= date(2027, 7, 1) else 2000
        kw = 0.0
        for p in plan.purchases:
            q = CAT.quotes[p.quote.quote]
            delivered = p.order_day + int(q.lead_time_p90_days or q.lead_time_days)
            if delivered <= day:
                kw += float(CAT.systems[q.system].node_kw.value) * p.quote.lot_nodes
        assert kw <= limit, (today, kw)


def test_program_200b_lot_costs_from_catalog_numbers(bought_report) -> None:
    """A bought lot kept for the next models (reuse) is charged straight-line depreciation for the days it is held,
    plus capital, support and the hall: recomputed from catalogs/assumptions.yaml's figures."""
    plan = bought_report.outcome.plan
    assert plan.purchases
    for p in plan.purchases:
        q = CAT.quotes[p.quote.quote]
        hw = q.price_usd * p.quote.lot_nodes * (1 + 0.25)                 # network 25% of capex (storage: a line)
        years = p.held_days / 365
        kw = float(CAT.systems[q.system].node_kw.value) * p.quote.lot_nodes
        carry = hw * (0.10 + 0.10) * years                                  # capital 10%/yr, support 10%/yr
        expected = hw * years / 5 + carry + kw * 120 * p.held_days * 24 / 730  # 5-year life, hall $120/kW-month
        if q.kind == "estimate":
            expected += (hw * years / 5 + carry) * 0.15                     # estimated price: +15% of what it drives
        assert p.cost_usd == pytest.approx(expected, rel=1e-9), q.id


@pytest.mark.parametrize("which", ["main_report", "bought_report"])
def test_program_200b_quarters_from_the_plan(which: str, request: pytest.FixtureRequest) -> None:
    """Cash committed in 2027-Q2: lots ordered in it at capex, plus each rental's cash spread over its days."""
    main_report = request.getfixturevalue(which)
    plan = main_report.outcome.plan
    q2 = (date(2027, 4, 1), date(2027, 7, 1))
    capex = sum(CAT.quotes[p.quote.quote].price_usd * p.quote.lot_nodes * 1.25 for p in plan.purchases
                if q2[0] <= TODAY + timedelta(days=p.order_day) < q2[1])
    rent = 0.0
    for r in plan.runs:
        if r.candidate.owned:
            continue
        days = [TODAY + timedelta(days=d) for d in range(r.start_day, r.end_day)]
        rent += -(-r.candidate.cash_usd // r.candidate.days) * sum(q2[0] <= d < q2[1] for d in days)
    row = next(x for x in __import__("solver.render.program", fromlist=["all_quarters"]).all_quarters(
        main_report.program, plan) if x["quarter"] == "2027-Q2")
    assert row["spend_usd"] == pytest.approx(capex + rent, abs=1.0)
    assert row["spend_usd"] <= 60e6


def test_owned_hardware_is_bought_once_for_two_workloads() -> None:
    """Main and fine-tune both on owned nodes: the lots serve both, so the program buys for the larger run, not for
    the sum of the two."""
    rep = _report("program-200b.yaml", UNGATED, "workloads.main.policy.modes=[buy]",
                  "workloads.sft.policy.modes=[buy]")
    plan = rep.outcome.plan
    runs = {r.workload: r.candidate for r in plan.runs}
    assert runs["main"].owned and runs["sft"].owned and runs["main"].system == runs["sft"].system
    bought = sum(p.quote.lot_nodes for p in plan.purchases if p.quote.system == runs["main"].system)
    assert max(runs["main"].nodes, runs["sft"].nodes) <= bought < runs["main"].nodes + runs["sft"].nodes


@pytest.fixture(scope="module")
def infeasible():
    return _report("infeasible-program.yaml")


def test_infeasible_program_names_a_quarterly_cap_and_a_precedence(infeasible) -> None:
    e = infeasible.explanation
    assert infeasible.outcome.status == "infeasible" and e is not None and e.proven
    assert "budget.per_quarter_usd.2027-Q2" in e.conflict and "workloads.main.after" in e.conflict


def test_infeasible_program_relaxations_are_exact(infeasible) -> None:
    """At the relaxed value the program has a plan; one step tighter it has none."""
    rel = {r.group: r.value for r in infeasible.explanation.relaxations}
    cap = int(rel["budget.per_quarter_usd.2027-Q2"].replace("$", "").replace(",", ""))
    assert _report("infeasible-program.yaml", f"budget.per_quarter_usd.2027-Q2={cap}").outcome.status == "optimal"
    assert _report("infeasible-program.yaml",
                   f"budget.per_quarter_usd.2027-Q2={cap - 1}").outcome.status == "infeasible"
    deadline = date.fromisoformat(rel["workloads.main.schedule.deadline"])
    ok = _report("infeasible-program.yaml", f"workloads.main.schedule.deadline={deadline}")
    assert ok.outcome.status == "optimal"
    tight = deadline - timedelta(days=1)
    assert _report("infeasible-program.yaml",
                   f"workloads.main.schedule.deadline={tight}").outcome.status == "infeasible"


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


BAD = [
    ("workloads:\n  - id: a\n    workload: {method: pretrain, params: 1B, tokens: 10B, sq_len: 2048}\n",
     ":3", "workloads[0].workload.sq_len"),
    ("workloads:\n  - id: a\n    workload: {method: pretrain, params: 1B, tokens: 10B}\n    after: [b]\n"
     "  - id: b\n    workload: {method: pretrain, params: 1B, tokens: 10B}\n    after: [a]\n", "", "cycle"),
    ("workloads:\n  - id: a\n    workload: {method: pretrain, params: 1B, tokens: 10B}\n    after: [zz]\n",
     ":4", "not another workload"),
    ("workloads:\n  - id: a\n    workload: {method: pretrain, params: 1B, tokens: 10B}\n"
     "budget: {per_quarter_usd: {2027-Q5: 1M}}\n", ":4", "not like 2027-Q1"),
]


@pytest.mark.parametrize("body,line,message", BAD)
def test_bad_program_files(runner: CliRunner, tmp_path: Path, body: str, line: str, message: str) -> None:
    f = tmp_path / "p.yaml"
    f.write_text("name: p\nas_of: 2026-12-01\n" + body.replace("workloads:\n", "workloads:\n", 1))
    text = f.read_text().splitlines()
    r = runner.invoke(main, ["solve", str(f)])
    assert r.exit_code == 2, r.output
    out = r.output + (r.stderr if r.stderr_bytes is not None else "")
    assert message in out and "Traceback" not in out
    if line:
        shown = int(line[1:]) + 2
        assert f"p.yaml:{shown}" in out, (out, text)


def test_set_names_a_workload_by_id(runner: CliRunner) -> None:
    r = runner.invoke(main, ["solve", "constraints/program-200b.yaml", "--set", "workloads.mian.after=[]"])
    assert r.exit_code == 2 and "no workload with id 'mian'" in r.output + r.stderr and "main" in r.output + r.stderr


def test_checker_catches_what_the_model_must_guarantee(bought_report) -> None:
    """The independent checker is not a rubber stamp: a run moved before its predecessor ends, a lot held a day
    less than it is, a lot usable only when the program has ended, a purchase beyond the quote and a run squeezed
    before the hardware arrives are all caught."""
    from dataclasses import replace

    from solver.solve.program_check import program_violations
    pp, plan = bought_report.program, bought_report.outcome.plan
    assert program_violations(pp, plan) == []
    main_run = plan.run("main")
    early = replace(main_run, start_day=main_run.start_day - 100, end_day=main_run.end_day - 100)
    moved = replace(plan, runs=tuple(early if r.workload == "main" else r for r in plan.runs))
    found = " ".join(program_violations(pp, moved))
    assert "starts before bakeoff" not in found  # the bake-offs end in March, 100 days before is April
    assert "owned" in found and "usable" in found and "sft" not in found
    p0 = plan.purchases[0]
    shorter = replace(plan, purchases=(replace(p0, held_days=p0.held_days - 1),) + plan.purchases[1:])
    assert any("held" in v for v in program_violations(pp, shorter))
    useless = replace(plan, purchases=(replace(p0, usable_day=plan.end_day),) + plan.purchases[1:])
    assert any("serves nothing" in v for v in program_violations(pp, useless))
    extra = replace(plan, purchases=plan.purchases + plan.purchases[:1] * 20)
    assert any("nodes bought, quote offers" in v for v in program_violations(pp, extra))
    sft = plan.run("sft")
    before = replace(sft, start_day=main_run.start_day, end_day=main_run.start_day + sft.candidate.days)
    overlap = replace(plan, runs=tuple(before if r.workload == "sft" else r for r in plan.runs))
    assert any("sft starts before main ends" in v for v in program_violations(pp, overlap))


def test_program_work_is_bounded_before_estimating(runner: CliRunner, tmp_path: Path) -> None:
    """Fifty workloads on a fine node grid ask for more estimates than a program may make: refused at once."""
    items = "".join(f"  - id: w{i}\n    workload: {{method: lora, params: 1B, tokens: 1B}}\n" for i in range(50))
    f = tmp_path / "big.yaml"
    f.write_text("name: big\nas_of: 2026-12-01\nrisk: {node_grid: {fine_until: 512}}\nworkloads:\n" + items)
    r = runner.invoke(main, ["validate", str(f)])
    assert r.exit_code == 2 and "estimates; at most 1,000,000" in r.output + r.stderr


def test_a_workload_that_cannot_finish_by_the_last_deadline_says_when_it_could() -> None:
    """The main run (70B, 10T tokens) cannot finish by 2027-04-01 on any option: the report names that deadline and
    the earliest day it could finish, not a memory or policy reason; with that deadline (and no precedence, caps or
    budget, which the day does not account for) it has a plan."""
    rep = _report("infeasible-program.yaml", "schedule.deadline=2027-04-01", "workloads.main.schedule={}")
    (wid, why), = rep.explanation.unplannable
    assert wid == "main" and "2027-04-01" in why and "memory" not in why
    could = date.fromisoformat(why.split("finish, alone, is ")[1][:10])
    assert could > date(2027, 4, 1)
    ok = _report("infeasible-program.yaml", f"schedule.deadline={could}", "workloads.main.schedule={}",
                 "workloads.main.after=[]", "budget={}")
    assert ok.outcome.status == "optimal"
