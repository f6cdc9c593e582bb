"""Explanations: minimal conflicts, exact relaxations, alternatives, why-not — each claim checked by complete solves
of edited problems, not by the explanation's own machinery.

An explanation is computed with assumption literals over per-pair models (`answers/conflicts.py`). The checks here
go another way: a group is *dropped* by editing the problem (`--set` a deadline to null, a capacity to a million,
a rule out of the list) and the edited problem is solved by the ordinary pipeline (`solve_problem`: bound-pruned
optimisation, the plan re-checked by the independent checker). A conflict must be infeasible with every other
group dropped, and feasible when one of its groups is dropped as well; a relaxation must be feasible at its value
and infeasible one unit short.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

from cli import main
from solver.answers import conflicts
from solver.answers.relax import combined_relaxation
from solver.answers.report import solve_and_explain
from solver.answers.whynot import WhyNot, why_not
from solver.inputs.catalog import load_catalog
from solver.inputs.overrides import Change
from solver.inputs.problem import Problem, load_problem
from solver.render.text import render_result, render_why_not
from solver.render.jsonout import result_dict, to_json
from solver.solve.pipeline import SolveSettings, prepare, solve_problem

ROOT = Path(__file__).resolve().parent.parent
INF = ROOT / "tests" / "infeasible"

# Conflicts known by construction (see each file's header comment); "superset" cases must contain the set.
EXPECTED: dict[str, tuple[set[str], bool]] = {
    "deadline_only.yaml": ({"schedule.deadline"}, True),
    "power_and_modes.yaml": ({"site.it_power_kw", "policy.modes"}, True),
    "rule_forbids_only_option.yaml": ({"rules.no-5090", "policy.accelerators"}, True),
    "ecc_with_consumer_cards.yaml": ({"policy.require_ecc", "policy.accelerators"}, True),
    "budget_and_deadline.yaml": ({"budget.max_usd", "schedule.deadline"}, False),
}
QUICK = SolveSettings(alternatives=False)


def _path(name: str) -> Path:
    return INF / name if (INF / name).exists() else ROOT / "constraints" / name


def drop(problem: Problem, group: str) -> list[Change]:
    """Edits that make `group` say nothing (None: a physical fact, `workload.memory`, that no edit can drop)."""
    spec = problem.spec
    simple: dict[str, Any] = {
        "schedule.deadline": None, "schedule.earliest_start": None, "budget.max_usd": None,
        "site.it_power_kw": 10_000_000, "site.racks": 1_000_000, "site.rack_power_kw": 10_000,
        "site.cooling": ["air", "liquid"], "policy.modes": ["buy", "cloud", "managed"], "policy.require_ecc": False,
        "policy.accelerators": {"include": [], "exclude": []}, "policy.vendors": {"include": [], "exclude": []},
        "policy.allow_estimates": True, "policy.max_fabrics": 64, "policy.allow_preemptible": True}
    if group == "schedule.deadline" and spec.schedule.deadline is not None and spec.schedule.late_after is None:
        # The deadline group is the hard limit; its date still prices late days (`schedule.late_after`), as an
        # explanation (and `plan frontier`) keeps it when the limit is dropped or moved.
        return [Change(("schedule", "deadline"), None, "test: drop schedule.deadline"),
                Change(("schedule", "late_after"), spec.schedule.deadline.isoformat(), "test: keep its lateness")]
    if group in simple:
        return [Change(tuple(group.split(".")), simple[group], f"test: drop {group}")]
    if group.startswith("quotes.") and group.endswith(".max_nodes"):
        qid = group[len("quotes."):-len(".max_nodes")]
        return [Change(("quotes", qid, "max_nodes"), 1_000_000, f"test: drop {group}")]
    if group.startswith("rules."):
        raw = problem.raw["rules"]
        kept = [r for r, parsed in zip(raw, spec.rules, strict=True) if f"rules.{parsed.name}" != group]
        return [Change(("rules",), kept, f"test: drop {group}")]
    assert group == "workload.memory", group
    return []


def feasible(problem: Problem, dropped: list[str] = ()) -> bool:  # type: ignore[assignment]
    """Whether the problem, with these groups dropped by editing it, has a plan (a complete solve). Rules are
    dropped together, in one edit of the rule list (one edit per rule would put the others back)."""
    rules = [g for g in dropped if g.startswith("rules.")]
    edits = [c for g in dropped if not g.startswith("rules.") for c in drop(problem, g)]
    if rules:
        kept = [r for r, parsed in zip(problem.raw.get("rules", []), problem.spec.rules, strict=True)
                if f"rules.{parsed.name}" not in rules]
        edits.append(Change(("rules",), kept, "test: drop " + ", ".join(rules)))
    status = solve_problem(problem.with_changes(edits), QUICK).status
    assert status in ("optimal", "infeasible"), status
    return status == "optimal"


def every_group(problem: Problem) -> list[str]:
    """Every group a problem can state (those not in its file are dropped already and dropping them is a no-op)."""
    spec = problem.spec
    groups = ["schedule.deadline", "schedule.earliest_start", "budget.max_usd", "policy.modes", "policy.require_ecc",
              "policy.accelerators", "policy.vendors", "policy.allow_estimates", "policy.max_fabrics",
              "policy.allow_preemptible"]
    if spec.site is not None:
        groups += ["site.it_power_kw", "site.racks", "site.rack_power_kw", "site.cooling"]
    groups += [f"rules.{r.name}" for r in spec.rules]
    groups += [f"quotes.{q}.max_nodes" for q in problem.catalog.quotes]
    return groups


@pytest.fixture(scope="module")
def explanations() -> dict[str, Any]:
    out = {}
    for name in list(EXPECTED) + ["infeasible-budget.yaml"]:
        _ctx, r = solve_and_explain(load_problem(_path(name)))
        assert r.status == "infeasible", name
        out[name] = r
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_conflict_matches_construction(name: str, explanations: dict[str, Any]) -> None:
    conflict = set(explanations[name].explanation["conflict"])
    want, exact = EXPECTED[name]
    assert (conflict == want) if exact else want <= conflict, conflict


def test_budget_example_conflict_is_the_budget(explanations: dict[str, Any]) -> None:
    assert explanations["infeasible-budget.yaml"].explanation["conflict"] == ["budget.max_usd"]


@pytest.mark.parametrize("name", sorted(EXPECTED) + ["infeasible-budget.yaml"])
def test_conflict_is_infeasible_and_minimal_by_edited_resolves(name: str, explanations: dict[str, Any]) -> None:
    expl = explanations[name].explanation
    assert expl["proven"] is True
    conflict = expl["conflict"]
    problem = load_problem(_path(name))
    others = [g for g in every_group(problem) if g not in conflict]
    assert not feasible(problem, others), "with every other group dropped, the conflict alone must be infeasible"
    for g in conflict:
        if g != "workload.memory":
            assert feasible(problem, others + [g]), f"dropping {g} as well must give a plan"


def test_conflict_lines_point_at_the_yaml(explanations: dict[str, Any]) -> None:
    detail = explanations["power_and_modes.yaml"].explanation["conflict_detail"]
    text = (INF / "power_and_modes.yaml").read_text().splitlines()
    for d in detail:
        file, line = d["where"].rsplit(":", 1)
        key = d["group"].split(".")[-1]
        assert key in text[int(line) - 1], (d, text[int(line) - 1])


def _short(r: dict[str, Any], unit: int) -> Any:
    """One unit short of a relaxation's suggested value (the side that must stay infeasible)."""
    to, u = r["to"], r["unit"]
    if u == "day":
        d = date.fromisoformat(to)
        return (d + timedelta(days=1) if r["group"] == "schedule.earliest_start" else d - timedelta(days=1)).isoformat()
    # Never below the original value (which is infeasible by definition), e.g. 0.5 kW -> 1 kW: short is 0.5.
    return max(r["from"], to - (unit if u == "usd" else 1))


@pytest.mark.parametrize("name", sorted(EXPECTED) + ["infeasible-budget.yaml"])
def test_relaxations_are_exact(name: str, explanations: dict[str, Any]) -> None:
    r = explanations[name]
    for rel in r.explanation["relaxations"]:
        assert rel["proven"]
        at = load_problem(_path(name), [f"{rel['group']}={rel['to']}"])
        assert solve_problem(at, QUICK).status == "optimal", f"{rel['group']} at {rel['to']} must be feasible"
        short = load_problem(_path(name), [f"{rel['group']}={_short(rel, r.unit)}"])
        assert solve_problem(short, QUICK).status == "infeasible", f"{rel['group']} one unit short stays infeasible"


def test_relaxations_are_listed_smallest_change_first(explanations: dict[str, Any]) -> None:
    rels = explanations["budget_and_deadline.yaml"].explanation["relaxations"]
    assert len(rels) >= 2
    changes = [r["change"] for r in rels]
    assert changes == sorted(changes)
    budget = next(r for r in rels if r["group"] == "budget.max_usd")
    assert budget["change"] == pytest.approx((budget["to"] - budget["from"]) / budget["from"])


def test_every_single_group_drop_alternative_is_feasible(explanations: dict[str, Any]) -> None:
    for name, r in explanations.items():
        problem = load_problem(_path(name))
        for alt in r.explanation["alternatives"]:
            if "relax" not in alt:
                assert feasible(problem, alt["drop"]), (name, alt["drop"])


def test_explanations_are_deterministic(explanations: dict[str, Any]) -> None:
    again = solve_and_explain(load_problem(INF / "budget_and_deadline.yaml"))[1]
    assert to_json(result_dict(again)) == to_json(result_dict(explanations["budget_and_deadline.yaml"]))


def test_cli_infeasible_exit_1_leads_with_the_cause_and_collapses_capacities() -> None:
    res = CliRunner().invoke(main, ["solve", str(INF / "budget_and_deadline.yaml")])
    assert res.exit_code == 1
    out = res.stdout
    lines = out.splitlines()
    cause = next(i for i, line in enumerate(lines) if line.startswith("Cause:"))
    conflict = next(i for i, line in enumerate(lines) if line.startswith("Conflict"))
    assert cause < conflict, "the cause comes before the list of groups"
    assert "earliest any option can finish is" in lines[cause]
    assert "quotes.*.max_nodes" in out and "capacity of 2 quotes" in out
    verbose = CliRunner().invoke(main, ["solve", str(INF / "budget_and_deadline.yaml"), "--verbose"]).stdout
    assert "quotes.lambda-h100-8x-ondemand.max_nodes" in verbose.split("Smallest")[0]


def test_only_the_quotes_with_the_most_capacity_are_relaxed_one_by_one(explanations: dict[str, Any],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """With more quote capacities in the conflict than `MAX_QUOTE_RELAXATIONS`, the quotes with the most capacity
    are relaxed (each exactly as without the limit), and the others are counted and said to be left out."""
    from solver.answers import relax
    full = explanations["budget_and_deadline.yaml"].explanation
    capacities = [g for g in full["conflict"] if g.startswith("quotes.")]
    assert len(capacities) == 2 and "quotes_not_relaxed" not in full
    monkeypatch.setattr(relax, "MAX_QUOTE_RELAXATIONS", 1)
    problem = load_problem(INF / "budget_and_deadline.yaml")
    ctx, r = solve_and_explain(problem)
    held = {g: problem.catalog.quotes[g[len("quotes."):-len(".max_nodes")]].max_nodes for g in capacities}
    widest = min(capacities, key=lambda g: (-held[g], g))
    got = r.explanation
    assert got["conflict"] == full["conflict"] and got["quotes_not_relaxed"] == 1
    assert [x["group"] for x in got["relaxations"] if x["group"].startswith("quotes.")] == [widest]
    assert [x for x in got["relaxations"] if x["group"] == widest] == \
        [x for x in full["relaxations"] if x["group"] == widest]
    assert "the capacity of 1 more quote in the conflict is not relaxed" in render_result(r)


def test_cause_dates_agree_with_the_deadline_relaxation(explanations: dict[str, Any]) -> None:
    for name in ("deadline_only.yaml", "budget_and_deadline.yaml"):
        expl = explanations[name].explanation
        deadline = next(r for r in expl["relaxations"] if r["group"] == "schedule.deadline")
        assert expl["causes"][0]["fastest_finish"] <= deadline["to"], name


def test_explain_with_set_what_if() -> None:
    res = CliRunner().invoke(main, ["explain", str(INF / "deadline_only.yaml"),
                                    "--set", "schedule.deadline=2027-03-01"])
    assert res.exit_code == 0, res.stdout
    assert "CHOSEN" in res.stdout


def test_rack_power_relaxation_keeps_quotes_given_with_the_quotes_option(tmp_path: Path) -> None:
    """The only buyable quote comes from --quotes; the rack-power relaxation is a what-if of the validated problem,
    so it still sees that quote (re-reading the file without --quotes lost it, and the relaxation disappeared)."""
    problem_file = tmp_path / "p.yaml"
    problem_file.write_text(
        "name: rack-power-with-own-quote\nas_of: 2026-12-01\n"
        "workload: {method: full_finetune, params: 7B, tokens: 2B, seq_len: 4096}\n"
        "schedule: {deadline: 2027-06-01}\n"
        "site: {it_power_kw: 200, cooling: [air], racks: 10, rack_power_kw: 5, electricity_usd_per_kwh: 0.1}\n"
        "policy: {modes: [buy], accelerators: {include: [a100-40gb]}}\n")
    quotes = tmp_path / "q.yaml"
    quotes.write_text("quotes:\n- {id: used-dgx-a100, system: dgx-a100-40gb, mode: buy, vendor: broker, "
                      "price_usd: 60k, max_nodes: 4, lead_time_days: 20, quoted_on: 2026-11-20, "
                      "valid_until: 2027-02-28, kind: street, source: test}\n")
    problem = load_problem(problem_file, quotes=[str(quotes)])
    _ctx, r = solve_and_explain(problem)
    assert r.status == "infeasible"
    rel = {x["group"]: x for x in r.explanation["relaxations"]}
    assert "site.rack_power_kw" in rel, r.explanation
    to = rel["site.rack_power_kw"]["to"]
    node_kw = float(load_catalog().systems["dgx-a100-40gb"].node_kw.value)
    assert to == math.ceil(node_kw), "the smallest whole kW that holds one 6.5 kW node"
    assert solve_problem(problem.with_sets([f"site.rack_power_kw={to}"]), QUICK).status == "optimal"
    assert solve_problem(problem.with_sets([f"site.rack_power_kw={to - 1}"]), QUICK).status == "infeasible"
    assert rel["site.rack_power_kw"]["plan"]["quotes"] == {"used-dgx-a100": 1}


# ------------------------------------------------------------------------------------------------- why-not


@pytest.fixture(scope="module")
def why_nots() -> dict[str, dict[str, Any]]:
    problem = load_problem(ROOT / "constraints" / "finetune-70b.yaml")
    wn = WhyNot(problem, SolveSettings())
    return {a: wn.ask(a) for a in sorted(load_catalog().accelerators)}


def test_why_not_answers_for_every_accelerator(why_nots: dict[str, dict[str, Any]]) -> None:
    for acc, out in why_nots.items():
        assert out["status"] in ("excluded", "infeasible", "more_expensive", "chosen"), acc
        if out["status"] == "excluded":
            assert out["reasons"], acc
        elif out["status"] == "infeasible":
            assert out["explanation"]["conflict"], acc
        elif out["status"] == "more_expensive":
            assert out["delta_usd"] >= -1e-6, acc
            assert out["plan"].accelerator == acc
    assert why_nots["rubin"]["status"] == "excluded" and "no price yet" in why_nots["rubin"]["reasons"][0]
    assert why_nots["h800"]["status"] == "excluded" and "no quote" in why_nots["h800"]["reasons"][0]
    assert sum(o["status"] == "chosen" for o in why_nots.values()) == 1


def test_why_not_line_diff_adds_up(why_nots: dict[str, dict[str, Any]]) -> None:
    for acc, out in why_nots.items():
        if out["status"] != "more_expensive":
            continue
        total = sum(r["delta"] for r in out["lines"])
        assert math.isclose(total, out["delta_usd"], abs_tol=len(out["lines"]) + 1), acc


def test_why_not_unknown_id_suggests_by_prefix() -> None:
    res = CliRunner().invoke(main, ["explain", str(ROOT / "constraints" / "finetune-70b.yaml"), "--why-not", "h100"])
    assert res.exit_code == 2 and res.stdout == ""
    assert "did you mean 'h100-sxm', 'h100-pcie'" in res.stderr


def test_a_target_with_a_plan_never_builds_the_explanations_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The target's best plan settles that it is feasible: the explanation's model (every point and quote of its
    pairs, 73 s of a 10,000-quote why-not before) is built only when there is no such plan."""
    def refuse(self: Any, pair: str) -> Any:
        raise AssertionError(f"the explanation's model of {pair} was built")

    monkeypatch.setattr(conflicts.PairOracle, "model", refuse)
    out = why_not(load_problem(ROOT / "constraints" / "finetune-70b.yaml"), "h200")
    assert out["status"] == "more_expensive" and out["plan"].accelerator == "h200"


def test_a_target_whose_search_found_no_plan_but_that_can_work_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    """A time limit can stop the target's search before any plan while the feasibility check finds one: that is
    said as it is, not as infeasible nor as a crash."""
    monkeypatch.setattr(WhyNot, "best_forced", lambda self, t, repriced=None, tie_break=True: None)
    out = why_not(load_problem(ROOT / "constraints" / "finetune-70b.yaml"), "h200")
    assert out["status"] == "unknown"
    assert "hit the time limit" in render_why_not(out)


def test_break_even_price_flips_the_ranking() -> None:
    """At the break-even price the target's best plan scores at least as well as today's plan; a step above it,
    it does not (complete re-solves with the price set by --set, not the break-even search's forced solves)."""
    file = ROOT / "constraints" / "finetune-70b.yaml"
    out = why_not(load_problem(file), "h200")
    be = out["break_even"]
    assert be["price"] is not None and be["price"] < be["current"]
    for price, should_win in ((be["price"], True), (round(be["price"] + 0.01, 2), False)):
        r = solve_problem(load_problem(file, [f"quotes.{be['quote']}.usd_per_gpu_hour={price}"]), QUICK)
        assert (r.plan.accelerator == "h200") == should_win, (price, r.plan.option, r.plan.total_cost)


# ------------------------------------------------------------------------------------------- property test

from test_optimality import _load, extra_quotes, problems  # noqa: E402


def assert_minimal_conflict(p: Problem, conflict: list[str]) -> None:
    """Keeping only the conflict's groups (every other one dropped by editing the file) leaves no plan; dropping
    any one member too gives one (`workload.memory` is a fact, not droppable).

    With a priced delivery slip, removing `earliest_start` from the file also removes the planned start it gave
    (plans then start as soon as hardware is ready, with less allowance and a larger premium), whereas the
    explanation drops the limit and keeps that start among the candidates. A plan with it kept is therefore a plan
    with it dropped, and confirms the member is needed."""
    others = [g for g in every_group(p) if g not in conflict]
    assert not feasible(p, others), conflict
    keep_start = [g for g in others if g != "schedule.earliest_start"]
    slip_priced = p.assumptions.values.money.delay_cost_usd_per_day > 0
    for g in conflict:
        if g != "workload.memory":
            assert feasible(p, others + [g]) or (slip_priced and feasible(p, keep_start + [g])), (conflict, g)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(problems(), extra_quotes())
def test_random_conflicts_are_infeasible_and_minimal(problem: dict[str, Any], quotes: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = _load(problem, quotes, Path(d))
        if solve_problem(p, QUICK).status != "infeasible":
            return
        _ctx, r = solve_and_explain(p, QUICK)
        conflict = r.explanation["conflict"]
        assert_minimal_conflict(p, conflict)


def test_spot_capacity_forbidden_only_above_one_node_is_in_the_conflict() -> None:
    """Found by the property test above: the explanation listed the problem's groups from a model of one point
    per option, and for a spot option that point is a single node, which `policy.allow_preemptible` allows — so
    the group was missing, the search without it found a 3-node spot plan and reported an empty conflict
    ("feasible when re-checked") for a problem that has no plan (the enumeration agrees)."""
    from solver.solve.brute import brute_force
    from solver.solve.pipeline import prepare
    problem = {"name": "random", "as_of": "2026-12-01",
               "workload": {"method": "pretrain", "params": 200e9, "tokens": 1e9, "seq_len": 2048,
                            "precision": "bf16", "optimizer": "adamw", "recompute": "selective",
                            "framework": "pytorch"},
               "schedule": {"earliest_start": "2027-01-01", "deadline": "2027-01-21"},
               "policy": {"modes": ["buy", "cloud"], "require_ecc": False,
                          "accelerators": {"include": ["rtx-4090", "b200"]}, "after_run": "resell",
                          "max_fabrics": 1, "allow_preemptible": False},
               "objective": "cost", "budget": {"max_usd": 5000.0, "applies_to": "cash"}, "rules": []}
    with tempfile.TemporaryDirectory() as d:
        p = _load(problem, [], Path(d))
        ctx = prepare(p, QUICK)
        assert brute_force(p, ctx.universe, ctx.unit) is None
        _ctx, r = solve_and_explain(p, QUICK)
        conflict = r.explanation["conflict"]
        assert "policy.allow_preemptible" in conflict, r.explanation
        assert_minimal_conflict(p, conflict)


def test_combined_relaxation_restores_feasibility() -> None:
    """feasRelax: applying every change of the cheapest combined relaxation at once gives a feasible problem."""
    problem = load_problem(INF / "budget_and_deadline.yaml")
    comb = combined_relaxation(prepare(problem, SolveSettings()), pairs=["h100-sxm/cloud"])
    assert comb is not None and comb["changes"]
    sets = [f"{c['group']}={c['to']}" for c in comb["changes"]]
    assert solve_problem(problem.with_sets(sets), QUICK).status == "optimal"


@pytest.mark.parametrize("sets", [[], ["policy.deadline_confidence=0.9"]])
def test_why_not_relaxations_keep_the_question(sets: list[str]) -> None:
    """Why not MI355X on the 200B problem bought (rented MI355X clusters can work since the catalog carries them):
    every relaxation (including those found by re-solving what-ifs: rack power, and the deadline under a
    confidence) must give an MI355X plan — relaxing rack power by 1 kW admits bought B200s, which answers another
    question (a bug found while adding the confidence)."""
    out = why_not(load_problem(ROOT / "constraints" / "datacenter.yaml", [*sets, "risk.uncertainty.scenarios=1000"]),
                  "mi355x/buy")
    assert out["status"] == "infeasible"
    found = out["explanation"]["relaxations"]
    assert {r["group"] for r in found} >= {"schedule.deadline"}
    for r in found:
        assert r["plan"]["accelerator"] == "mi355x" and r["plan"]["mode"] == "buy", r
    deadline = next(r for r in found if r["group"] == "schedule.deadline")
    if sets:  # the deadline at 90% confidence lies past the planned finish of the plan it admits
        assert deadline["to"] > deadline["plan"]["finish"]


def _shrink_by_definition(items: list[list[frozenset[str]]], chosen: set[str]) -> set[str]:
    """The deletion as defined, one subset test per item: g goes (latest rank first) when every point keeps an item
    within the cover that does not contain g."""
    from solver.model.groups import rank
    chosen = set(chosen)
    for g in sorted(chosen, key=rank, reverse=True):
        rest = chosen - {g}
        if all(any(it <= rest for it in its) for its in items):
            chosen = rest
    return chosen


def test_the_covers_deletion_matches_its_definition() -> None:
    """`conflicts.shrink` (cores and counts, points with the same items merged) drops exactly the groups the plain
    definition drops, on random point-local reasons with overlapping items and repeated points."""
    import random

    from solver.answers.conflicts import shrink
    rnd = random.Random(5)
    pool = ["budget.max_usd", "schedule.deadline", "policy.modes", "site.racks"] + \
        [f"quotes.q{k}.max_nodes" for k in range(8)]
    for _ in range(400):
        items = []
        for _p in range(rnd.randint(1, 12)):
            its = [frozenset(rnd.sample(pool, rnd.randint(1, 4))) for _i in range(rnd.randint(1, 3))]
            items.extend([its] * rnd.randint(1, 2))
        chosen: set[str] = set()
        for its in items:
            if not any(it <= chosen for it in its):
                chosen |= rnd.choice(its)
        assert shrink(items, chosen) == _shrink_by_definition(items, chosen), items


def test_quickxplain_finds_the_conflict_deletion_keeps() -> None:
    """`deletion_filter` (QuickXplain) returns the conflict and the proof flag of deleting each group from last to
    first (`_delete_one_by_one`, the definition), on random monotone problems with several overlapping minimal
    conflicts, with and without a seed, and with fewer checks when the conflict is small. With checks a time limit
    leaves undecided, its answer is infeasible, minimal when it says so, and the deletion's when it does not."""
    import random

    from solver.answers.conflicts import _delete_one_by_one, deletion_filter
    from solver.solve.engine import FEASIBLE, INFEASIBLE, UNKNOWN
    rnd = random.Random(7)
    saved = 0

    def oracle(conflicts: list[frozenset[str]], flaky: bool, calls: list[int]) -> Callable[[list[str]], str]:
        def status(active: list[str]) -> str:
            calls[0] += 1
            act = frozenset(active)
            if flaky and hash((len(act), min(act, default=""))) % 7 == 0:
                return UNKNOWN
            return INFEASIBLE if any(c <= act for c in conflicts) else FEASIBLE
        return status

    for trial in range(600):
        n = rnd.randint(1, 24)
        groups = [f"g{k:02d}" for k in range(n)]
        rnd.shuffle(groups)
        conflicts = [frozenset(rnd.sample(groups, rnd.randint(1, min(4, n)))) for _ in range(rnd.randint(1, 4))]
        flaky = trial % 3 == 0
        seed = rnd.choice([None, sorted(conflicts[0] | set(rnd.sample(groups, min(2, n))))])
        quick, plain = [0], [0]
        got = deletion_filter(oracle(conflicts, flaky, quick), groups, seed)
        check = oracle(conflicts, flaky, plain)
        start = seed if seed is not None and check(seed) == INFEASIBLE else groups
        want = _delete_one_by_one(check, list(start))
        truth = [any(c <= frozenset(g) for c in conflicts) for g in
                 [got.groups] + [[h for h in got.groups if h != x] for x in got.groups]]
        assert truth[0], (groups, conflicts, seed)   # infeasible, decided or not
        if got.proven:   # minimal: without any one group it has a plan
            assert not any(truth[1:]), (groups, conflicts, seed)
        if not flaky:
            assert (got.groups, got.proven) == (want.groups, want.proven), (groups, conflicts, seed)
        elif not got.proven:   # undecided checks: the deletion itself was run
            assert (got.groups, got.proven) == (want.groups, want.proven), (groups, conflicts, seed)
        if not flaky and seed is None and n >= 16 and len(want.groups) == 1:
            saved += plain[0] - quick[0]
    assert saved > 0


def test_groups_named_needed_leave_the_conflict_unchanged() -> None:
    """`deletion_filter` told some groups are needed (their removal alone from the infeasible start leaves a plan,
    as `PairOracle.needed` shows for quote capacities) returns the deletion's conflict and proof flag, whichever of
    the needed groups it is told, on random monotone problems; told all of them, a conflict of many groups among
    many costs few checks."""
    import random

    from solver.answers.conflicts import _delete_one_by_one, deletion_filter
    from solver.solve.engine import FEASIBLE, INFEASIBLE
    rnd = random.Random(11)

    def oracle(conflicts: list[frozenset[str]], calls: list[int]) -> Callable[[list[str]], str]:
        def status(active: list[str]) -> str:
            calls[0] += 1
            return INFEASIBLE if any(c <= frozenset(active) for c in conflicts) else FEASIBLE
        return status

    told_any = 0
    for _trial in range(600):
        n = rnd.randint(1, 30)
        groups = [f"g{k:02d}" for k in range(n)]
        rnd.shuffle(groups)
        conflicts = [frozenset(rnd.sample(groups, rnd.randint(1, min(12, n)))) for _ in range(rnd.randint(1, 3))]
        seed = rnd.choice([None, sorted(conflicts[0] | set(rnd.sample(groups, min(3, n))))])
        check = oracle(conflicts, [0])
        start = seed if seed is not None and check(seed) == INFEASIBLE else groups
        truly = {g for g in start if check([h for h in start if h != g]) == FEASIBLE}
        told = {g for g in truly if rnd.random() < 0.7}
        told_any += bool(told)
        want = _delete_one_by_one(check, list(start))
        got = deletion_filter(oracle(conflicts, [0]), groups, seed, needed=lambda core, told=told: set(told))
        assert (got.groups, got.proven) == (want.groups, want.proven), (groups, conflicts, seed, told)
    assert told_any > 300

    # One conflict of 40 among 400: each of the 40 is needed; told so, one check confirms them.
    groups = [f"g{k:03d}" for k in range(400)]
    conflict = frozenset(groups[::10])
    plain, told_calls = [0], [0]
    want = deletion_filter(oracle([conflict], plain), groups, None)
    got = deletion_filter(oracle([conflict], told_calls), groups, None, needed=lambda core: set(conflict))
    assert got == want and set(got.groups) == conflict
    assert told_calls[0] <= 2 < 100 < plain[0], (told_calls, plain)
