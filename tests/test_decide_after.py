"""Decision gates (`decide_after`) and the uncapped-quarter warning, on small programs written here.

A gated workload's hardware is ordered (bought) or committed (rented) only once its gates have finished: read from
the JSON output, every order of its system is on or after the gates' finish, a rented run starts no sooner than its
quote's lead time after it, and the same program without the gate orders earlier and costs no more (it has every
plan the gated one has). Bad names and cycles are one-line errors (exit 2). On small random programs the model
agrees with an enumeration that applies the gate in its own code, and the independent checker refuses a plan that
orders early. A plan whose spend lands in a quarter without a cap, beside capped ones, warns (text and JSON).
"""

from __future__ import annotations

import itertools
import json
import math
import random
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli import main
from solver.estimate.program import Candidate, ProgramData
from solver.inputs.catalog import load_catalog
from solver.solve.engine import INFEASIBLE, OPTIMAL, Limits
from solver.solve.program import optimise
from test_program_model import T, _feasible, _lot_options, _money, random_program

CAT = load_catalog([])
AS_OF = date(2026, 12, 1)

PROGRAM = """\
name: gate-test
as_of: 2026-12-01
workloads:
  - id: probe
    workload: {{method: pretrain, params: 7B, tokens: 50B, seq_len: 4096}}
    schedule: {{earliest_start: 2027-01-04}}
    policy: {{modes: [cloud], accelerators: {{include: [b200]}}}}
  - id: main
    workload: {{method: pretrain, params: 70B, tokens: 1.4T, seq_len: 4096}}
{gate}    policy: {{modes: [{mode}]}}
schedule: {{earliest_start: 2027-01-04, deadline: 2028-06-30}}
site: {{it_power_kw: 3000, cooling: [air, liquid], racks: 200, rack_power_kw: 40, electricity_usd_per_kwh: 0.08,
        pue: 1.3}}
budget: {{per_quarter_usd: {caps}}}
policy: {{modes: [buy, cloud], accelerators: {{include: [b200]}}, after_run: reuse}}
"""
GATE = "    decide_after: [probe]\n"


def _file(tmp_path: Path, name: str, gate: str = GATE, mode: str = "buy", caps: str = "{2027-Q1: 100M}") -> Path:
    f = tmp_path / name
    f.write_text(PROGRAM.format(gate=gate, mode=mode, caps=caps))
    return f


def _solve(f: Path, *args: str) -> dict[str, Any]:
    r = CliRunner().invoke(main, ["solve", str(f), "--format", "json", *args])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _run(d: dict[str, Any], wid: str) -> dict[str, Any]:
    return next(w for w in d["program"]["workloads"] if w["id"] == wid)


def _day(text: str) -> date:
    return date.fromisoformat(text)


def test_bought_hardware_is_ordered_after_the_gate_and_the_ungated_program_orders_sooner(tmp_path: Path) -> None:
    """Owned main: every lot of its system is ordered on or after the probe's finish (the JSON's purchases and its
    `decision_gate`), delivered its lead time later; without the gate the first order is earlier (the 200-day list
    lead time makes waiting worth nothing) and the program costs no more — it may choose any plan the gated one
    has."""
    gated = _solve(_file(tmp_path, "gated.yaml"))
    assert gated["status"] == "optimal"
    probe_finish = _day(_run(gated, "probe")["finish"])
    main_run = _run(gated, "main")
    assert main_run["owned"] and main_run["decision_gate"]["after"] == ["probe"]
    assert _day(main_run["decision_gate"]["gates_finish"]) == probe_finish
    buys = [p for p in gated["program"]["purchases"] if p["system"] == main_run["option"].split("/")[0]]
    assert buys, "the gated workload runs on bought nodes"
    for p in buys:
        assert _day(p["order"]) >= probe_finish
        lead = math.ceil(CAT.quotes[p["quote"]].lead_days("p90"))
        assert (_day(p["delivered"]) - _day(p["order"])).days == lead
    assert _day(main_run["decision_gate"]["ordered"]) == min(_day(p["order"]) for p in buys)
    assert _day(main_run["start"]) >= probe_finish

    free = _solve(_file(tmp_path, "free.yaml", gate=""))
    assert "decision_gate" not in _run(free, "main")
    assert min(_day(p["order"]) for p in free["program"]["purchases"]) < probe_finish
    assert min(_day(p["order"]) for p in free["program"]["purchases"]) < min(_day(p["order"]) for p in buys)
    assert free["program"]["cost_usd"] <= gated["program"]["cost_usd"]


def test_a_gated_rental_is_committed_after_the_gate_within_its_quote(tmp_path: Path) -> None:
    """Rented main: it starts no sooner than its quote's lead time (p90) after the gate, the quote is still valid on
    the gate's day, and `commit_by` lies between them; without the gate it starts sooner and costs no more."""
    gated = _solve(_file(tmp_path, "gated.yaml", mode="cloud"))
    probe_finish = _day(_run(gated, "probe")["finish"])
    main_run = _run(gated, "main")
    (qid,) = main_run["quotes"]
    q = CAT.quotes[qid]
    assert (_day(main_run["start"]) - probe_finish).days >= math.ceil(q.lead_days("p90"))
    assert q.valid_until >= probe_finish
    commit_by = _day(main_run["decision_gate"]["commit_by"])
    assert probe_finish <= commit_by <= q.valid_until
    free = _solve(_file(tmp_path, "free.yaml", gate="", mode="cloud"))
    assert _day(_run(free, "main")["start"]) < _day(main_run["start"])
    assert free["program"]["cost_usd"] <= gated["program"]["cost_usd"]


def _error(f: Path) -> str:
    r = CliRunner().invoke(main, ["solve", str(f)])
    assert r.exit_code == 2, r.output
    assert r.stderr.count("\n") == 1, r.stderr
    return r.stderr


def test_an_unknown_gate_is_one_line_with_where_and_a_suggestion(tmp_path: Path) -> None:
    f = _file(tmp_path, "typo.yaml", gate="    decide_after: [prob]\n")
    err = _error(f)
    assert f"{f}:10" in err and "workloads[1].decide_after[0]" in err and "did you mean 'probe'" in err
    itself = _file(tmp_path, "self.yaml", gate="    decide_after: [main]\n")
    assert "'main' is not another workload's id" in _error(itself)


def test_a_cycle_through_gates_is_refused(tmp_path: Path) -> None:
    """probe waits for main's finish to decide, main for probe's: no plan can exist, and the file says so at once."""
    f = _file(tmp_path, "cycle.yaml")
    f.write_text(f.read_text().replace("    schedule: {earliest_start: 2027-01-04}\n",
                                       "    schedule: {earliest_start: 2027-01-04}\n    decide_after: [main]\n", 1))
    err = _error(f)
    assert "precedences form a cycle: probe -> main -> probe" in err and "workloads[0].decide_after" in err
    mixed = _file(tmp_path, "mixed.yaml")
    mixed.write_text(mixed.read_text().replace("    schedule: {earliest_start: 2027-01-04}\n",
                                               "    schedule: {earliest_start: 2027-01-04}\n    after: [main]\n", 1))
    assert "precedences form a cycle: probe -> main -> probe" in _error(mixed)


def test_spend_in_an_uncapped_quarter_beside_capped_ones_warns(tmp_path: Path) -> None:
    """The gated plan buys in 2027-Q1 (capped) and 2027-Q2 (the reseller's lots, no cap): one warning, in the JSON
    and in the text. With 2027-Q2 capped too, or with no caps at all, none."""
    d = _solve(_file(tmp_path, "q1.yaml"))
    spend = {q["quarter"]: q for q in d["program"]["quarters"]}
    uncapped = [k for k, q in spend.items() if q["cap_usd"] is None and q["spend_usd"] > 0]
    assert uncapped == ["2027-Q2"]
    assert len(d["warnings"]) == 1 and d["warnings"][0].startswith("UNCAPPED QUARTER:")
    assert "2027-Q2" in d["warnings"][0] and "2027-Q1" in d["warnings"][0]
    text = CliRunner().invoke(main, ["solve", str(tmp_path / "q1.yaml")]).stdout
    assert "WARNINGS" in text and "UNCAPPED QUARTER" in text
    both = _solve(_file(tmp_path, "q12.yaml", caps="{2027-Q1: 100M, 2027-Q2: 100M}"))
    assert both["warnings"] == []
    assert any(q["cap_usd"] is None for q in both["program"]["quarters"]), "a quarter without spend stays quiet"
    none = _solve(_file(tmp_path, "none.yaml", caps="{}"))
    assert none["warnings"] == [] and none["program"]["purchases"]
    assert "WARNINGS" not in CliRunner().invoke(main, ["solve", str(tmp_path / "none.yaml")]).stdout


def test_the_checker_refuses_an_order_before_the_gate(tmp_path: Path) -> None:
    """The independent checker reads the gate from the file: the gated plan passes; the same plan with a lot
    ordered a day before the probe finishes, or with the main run started before it, does not."""
    from solver.answers.program import solve_program
    from solver.inputs.program import load_program
    from solver.solve.program_check import program_violations

    pp = load_program(str(_file(tmp_path, "gated.yaml")))
    plan = solve_program(pp, Limits(time_limit=30)).outcome.plan
    assert program_violations(pp, plan) == []
    gate = plan.run("probe").end_day
    p0 = plan.purchases[0]
    early = replace(plan, purchases=(replace(p0, order_day=gate - 1, delivered_day=gate - 1 + p0.quote.lead_days,
                                             usable_day=gate - 1 + p0.quote.lead_days + p0.quote.install_days),)
                    + plan.purchases[1:])
    assert any("ordered before its decision gates" in v for v in program_violations(pp, early))
    main_run = plan.run("main")
    days = main_run.end_day - main_run.start_day
    sooner = replace(plan, runs=tuple(replace(r, start_day=gate - 1, end_day=gate - 1 + days) if r.workload == "main"
                                      else r for r in plan.runs))
    assert any("starts before its decision gates" in v for v in program_violations(pp, sooner))


# --- the model against an enumeration -----------------------------------------------------------------------------

def gated_program(seed: int) -> ProgramData:
    """A random program (`test_program_model.random_program`) whose last workload decides after the first: its
    rented candidates commit 0–2 days ahead of their start, on quotes valid until a day in [1, T]."""
    d = random_program(seed)
    rng = random.Random(50_000 + seed)
    last = d.workloads[-1]
    cands = tuple(c if c.owned else replace(c, commit_days=rng.randint(0, 2), commit_by=rng.randint(1, T))
                  for c in last.candidates)
    gated = replace(last, decide_after=(d.workloads[0].id,), candidates=cands)
    return replace(d, workloads=d.workloads[:-1] + (gated,))


def _gate_holds(d: ProgramData, picks: tuple[Candidate, ...], starts: tuple[int, ...], orders: tuple[int, ...]
                ) -> bool:
    """`decide_after` in the enumeration's own words: with G the gates' latest end, a gated run starts on or after
    G; on a rented quote G + its commitment days at the soonest and G no later than the quote's last day; on owned
    nodes every lot (all of the one system here) ordered on or after G."""
    ids = [w.id for w in d.workloads]
    for w, c, s in zip(d.workloads, picks, starts, strict=True):
        if not w.decide_after:
            continue
        gate = max(starts[ids.index(g)] + picks[ids.index(g)].days for g in w.decide_after)
        if s < gate or (not c.owned and (s < gate + c.commit_days or gate > (c.commit_by or 0))):
            return False
        if c.owned and any(o < gate for o in orders):
            return False
    return True


def least_cost(d: ProgramData) -> float | None:
    best: float | None = None
    lot_opts = _lot_options(d.lots[0]) if d.lots else [()]
    for picks in itertools.product(*([c for c in w.candidates if not c.barred_by] for w in d.workloads)):
        for starts in itertools.product(*(range(0, T + 1 - c.days) for c in picks)):
            for orders in lot_opts:
                cost, cash, spend = _money(d, picks, starts, orders)
                if cost == math.inf or (best is not None and cost >= best):
                    continue
                if spend > d.quarters[0].limit or (d.budget_usd is not None and cash > d.budget_usd):
                    continue
                if _gate_holds(d, picks, starts, orders) and _feasible(d, picks, starts, orders):
                    best = cost
    return best


@pytest.mark.parametrize("seed", range(24))
def test_gated_programs_agree_with_enumeration(seed: int) -> None:
    d = gated_program(seed)
    expected = least_cost(d)
    out, _engine = optimise(d, Limits(time_limit=30))
    if expected is None:
        assert out.status == INFEASIBLE
        return
    assert out.status == OPTIMAL and out.plan is not None
    assert out.plan.cost_usd == pytest.approx(expected, abs=1e-6)


def test_random_gated_programs_cover_gates_that_bind() -> None:
    """The enumeration above is not vacuous: the gate changes the optimum (or feasibility) of some programs, on
    owned and on rented picks."""
    moved = 0
    for seed in range(24):
        d = gated_program(seed)
        free = replace(d, workloads=d.workloads[:-1] + (replace(d.workloads[-1], decide_after=()),))
        moved += least_cost(d) != least_cost(free)
    assert moved >= 3
