"""The presolve that drops quotes a point never needs (`solver/model/reduce.py`) keeps every optimum.

Its proof obligation, checked three ways: random problems with many quotes per option solve to the same status and
optimum with and without it (and the plan passes the independent checker, which reads the full quote list); hand-made
cases where the dropped quotes are known from the arithmetic; and the bundled example, whose plan it must not change.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import solver.model.bounds as bounds_mod
import solver.model.builder as builder_mod
from solver.inputs.problem import load_problem
from solver.model.reduce import reducer_for
from solver.solve.checker import check_plan
from solver.solve.pipeline import SolveSettings, prepare, solve_problem

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = int(os.environ.get("PLAN_PROPERTY_EXAMPLES", "30"))
GRID = ["risk.node_grid.fine_until=8", "risk.node_grid.max_nodes=16", "risk.node_grid.step_until_512=4"]


def _quote(i: int, mode: str, system: str, draw: Any) -> dict[str, Any]:
    lo = draw(st.sampled_from([1, 1, 1, 2, 4]))
    q: dict[str, Any] = {"id": f"rq-{i:02d}", "system": system, "mode": mode, "vendor": f"v{i % 3}",
                         "min_nodes": lo, "max_nodes": lo + draw(st.sampled_from([0, 1, 3, 7, 15])),
                         "lead_time_days": draw(st.sampled_from([0, 14, 30, 60])), "quoted_on": "2026-11-01",
                         "valid_until": draw(st.sampled_from(["2027-01-20", "2027-03-01", "2027-12-31"])),
                         "kind": draw(st.sampled_from(["list", "list", "estimate"])), "source": "hypothesis"}
    if q["lead_time_days"] and draw(st.booleans()):
        q["lead_time_p90_days"] = q["lead_time_days"] * draw(st.sampled_from([1.5, 3.0]))
    if mode == "buy":
        q["price_usd"] = draw(st.sampled_from([250_000, 300_000, 350_000]))
    elif mode == "cloud":
        q["usd_per_gpu_hour"] = draw(st.sampled_from([3.0, 3.5, 4.0]))
        if draw(st.booleans()):
            q["contract"], q["commit_months"] = "reserved", draw(st.sampled_from([1, 3]))
        fabric = draw(st.sampled_from([None, None, "fab-a", "fab-b"]))
        if fabric is not None:
            q["fabric"] = fabric
    else:
        q["usd_per_month"] = draw(st.sampled_from([200_000, 260_000]))
        q["commit_months"] = draw(st.sampled_from([0, 3]))
    return q


@st.composite
def cases(draw: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A 70B pretraining problem over many quotes of two systems (bought on one site fabric; rented alone on their
    own fabrics or shared), with the limits that interact with the reduction switched on at random — among them the
    deadline as a chance constraint, where only R1 applies, to the quotes that meet the confidence alone, and a
    discount, under which only R1 applies too."""
    quotes = [_quote(i, draw(st.sampled_from(["buy", "cloud", "cloud", "managed"])),
                     draw(st.sampled_from(["dgx-b200", "dgx-h100"])), draw) for i in range(draw(st.integers(4, 12)))]
    p: dict[str, Any] = {
        "name": "reduce", "as_of": "2026-12-01",
        "workload": {"method": "pretrain", "params": 70e9, "tokens": draw(st.sampled_from([2e11, 6e11])),
                     "seq_len": 4096},
        "schedule": {"deadline": draw(st.sampled_from(["2027-06-01", "2027-09-01", "2028-06-01"]))},
        "policy": {"max_fabrics": draw(st.sampled_from([1, 1, 2])), "allow_estimates": draw(st.booleans())},
        "site": {"it_power_kw": 400, "cooling": ["air", "liquid"], "racks": 20, "rack_power_kw": 60,
                 "electricity_usd_per_kwh": 0.1, "pue": 1.3},
        "objective": draw(st.sampled_from(["cost", "time", {"cost": 1, "delay_cost_usd_per_day": 20000}])),
    }
    if draw(st.booleans()):
        p["schedule"]["earliest_start"] = draw(st.sampled_from(["2027-01-10", "2027-02-15"]))
    if draw(st.booleans()):
        p["risk"] = {"money": {"delay_cost_usd_per_day": draw(st.sampled_from([5000, 50000]))}}
    if draw(st.booleans()):
        p["budget"] = {"max_usd": draw(st.sampled_from([3e6, 8e6, 2e7])),
                       "applies_to": draw(st.sampled_from(["cash", "cost"]))}
    rules: list[dict[str, Any]] = []
    if draw(st.booleans()):
        rules.append({"name": "review", "when": {"mode": draw(st.sampled_from(["buy", "cloud"]))},
                      "then": {"delay_days": 10, "add_pct": 5}})
    if draw(st.booleans()):
        rules.append({"name": "big", "when": {"nodes": {"ge": 8}}, "then": {"delay_days": 7}})
    if draw(st.booleans()):
        rules.append({"name": "fee", "when": {"quote": ["rq-00"]}, "then": {"add_usd": 40000}})
    if draw(st.integers(0, 3)) == 0:
        rules.append({"name": "rebate", "when": draw(st.sampled_from([{"mode": "cloud"}, {"nodes": {"ge": 4}}])),
                      "then": {"add_pct": draw(st.sampled_from([-3, -20]))}})
    p["rules"] = rules
    confidence = draw(st.sampled_from([None, None, 0.6, 0.9]))
    if confidence is not None:
        p["policy"]["deadline_confidence"] = confidence
        p["schedule"]["deadline"] = draw(st.sampled_from(["2027-03-01", "2027-04-01", "2027-06-01"]))
        p.setdefault("risk", {})["uncertainty"] = {"scenarios": 400}
    return p, quotes


def _load(problem: dict[str, Any], quotes: list[dict[str, Any]], tmp: Path) -> Any:
    (tmp / "q.yaml").write_text(yaml.safe_dump({"quotes": quotes}))
    f = tmp / "p.yaml"
    f.write_text(yaml.safe_dump({**problem, "catalogs": ["q.yaml"]}, sort_keys=False))
    loaded = load_problem(f, GRID)
    cat = loaded.files_catalog
    assert cat is not None
    keep = {k: v for k, v in cat.quotes.items() if k.startswith("rq-")}
    return loaded.with_catalog(dataclasses.replace(cat, quotes=MappingProxyType(keep)))


def _solve(p: Any, reduce: bool) -> Any:
    s = SolveSettings(alternatives=False, reduce=reduce)
    ctx = prepare(p, s)
    return ctx, solve_problem(p, s, ctx)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                       HealthCheck.function_scoped_fixture])
@given(cases(), st.booleans())
def test_reduction_keeps_the_optimum(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     case: tuple[dict[str, Any], list[dict[str, Any]]], big: bool) -> None:
    """With `big`, every option counts as big: the refined bounds, and models that leave out the quotes a point
    cannot use and presolve only the others (`builder._usable`), against the full model of every quote."""
    problem, quotes = case
    p = _load(problem, quotes, tmp_path)
    with monkeypatch.context() as mp:
        if big:
            mp.setattr(builder_mod, "REFINE_FROM", 2)
            mp.setattr(bounds_mod, "REFINE_FROM", 2)
        ctx, reduced = _solve(p, True)
    _ctx, full = _solve(p, False)
    assert (reduced.status, reduced.objective) == (full.status, full.objective), (reduced.plan, full.plan)
    if reduced.plan is not None:
        check_plan(p, ctx.universe, reduced.plan)


def _rented(i: int, rate: float, cap: int, *, lead: int = 0, fabric: str | None = None) -> dict[str, Any]:
    q = {"id": f"rq-{i:02d}", "system": "dgx-b200", "mode": "cloud", "vendor": "v", "min_nodes": 1,
         "max_nodes": cap, "lead_time_days": lead, "quoted_on": "2026-11-01", "valid_until": "2027-12-31",
         "kind": "list", "source": "test", "usd_per_gpu_hour": rate}
    if fabric:
        q["fabric"] = fabric
    return q


BASE = {"name": "hand", "as_of": "2026-12-01",
        "workload": {"method": "pretrain", "params": 70e9, "tokens": 2e11, "seq_len": 4096},
        "policy": {"modes": ["cloud"]}, "objective": "cost"}


def _drops(tmp: Path, quotes: list[dict[str, Any]], problem: dict[str, Any] = BASE) -> dict[int, frozenset[str]]:
    p = _load(problem, quotes, tmp)
    ctx = prepare(p, SolveSettings())
    (o,) = ctx.universe.options
    reducer = reducer_for(p, o, ctx.unit, ctx.screen.outlook)
    assert reducer is not None
    return {pt.n: reducer.dropped(pt) for pt in o.points if pt.workable}


def test_a_dearer_quote_alone_on_its_fabric_is_dropped_where_a_cheaper_one_can_supply(tmp_path: Path) -> None:
    """One fabric per job, each quote its own provider: at n nodes a plan uses one quote, so the dearer one is
    needed only where the cheaper one cannot supply n (n > 4) — by hand, with nothing else different."""
    drops = _drops(tmp_path, [_rented(0, 3.0, 4), _rented(1, 3.5, 16)])
    for n, gone in drops.items():
        assert gone == ({"rq-01"} if n <= 4 else {"rq-00"} if n <= 16 else {"rq-00", "rq-01"}), (n, gone)


def test_an_earlier_quote_is_kept_beside_a_cheaper_later_one(tmp_path: Path) -> None:
    """Ready 60 days later, the cheaper quote does not dominate: the planned start, hence the finish, differs."""
    drops = _drops(tmp_path, [_rented(0, 3.0, 16, lead=60), _rented(1, 3.5, 16)])
    assert all(not gone for n, gone in drops.items() if n <= 16)


def test_quotes_sharing_a_fabric_are_dropped_only_when_their_dominators_hold_n(tmp_path: Path) -> None:
    """On one fabric a job may combine quotes: the dearer quote's nodes fit on the cheaper ones only at points
    where their capacities add up to n (4 + 4 = 8); of two identical quotes the second (by id) is needed only where
    the first cannot hold n alone."""
    quotes = [_rented(0, 3.0, 4, fabric="f"), _rented(1, 3.0, 4, fabric="f"), _rented(2, 3.5, 16, fabric="f")]
    drops = _drops(tmp_path, quotes)
    assert max(drops) == 16
    for n, gone in drops.items():
        assert gone == ({"rq-01", "rq-02"} if n <= 4 else {"rq-02"} if n <= 8 else set()), (n, gone)


def test_under_a_discount_quotes_alone_on_their_fabrics_are_still_reduced_and_shared_ones_not(tmp_path: Path) -> None:
    """A 10 % discount on rented capacity: each quote alone on its fabric is still a plan alone, priced with the
    discount as the model prices it, so the dearer one goes where the cheaper can supply n (as without it); quotes
    sharing a fabric would need nodes moved between them (R2), which a discount rounded per quote does not allow."""
    rebate = {**BASE, "rules": [{"name": "rebate", "when": {"mode": "cloud"}, "then": {"add_pct": -10}}]}
    drops = _drops(tmp_path, [_rented(0, 3.0, 4), _rented(1, 3.5, 16)], rebate)
    for n, gone in drops.items():
        assert gone == ({"rq-01"} if n <= 4 else {"rq-00"} if n <= 16 else {"rq-00", "rq-01"}), (n, gone)
    shared = [_rented(0, 3.0, 4, fabric="f"), _rented(1, 3.0, 4, fabric="f"), _rented(2, 3.5, 16, fabric="f")]
    assert not any(_drops(tmp_path, shared, rebate).values())
    assert any(_drops(tmp_path, shared).values())


def test_a_rule_on_cost_switches_the_reduction_off(tmp_path: Path) -> None:
    p = _load({**BASE, "rules": [{"name": "cap", "when": {"cost": {"gt": 1e9}}, "then": "forbid"}]},
              [_rented(0, 3.0, 4), _rented(1, 3.5, 16)], tmp_path)
    ctx = prepare(p, SolveSettings())
    assert reducer_for(p, ctx.universe.options[0], ctx.unit, ctx.screen.outlook) is None


@pytest.mark.parametrize("example", ["datacenter.yaml", "finetune-70b.yaml"])
def test_bundled_examples_solve_the_same_without_it(example: str) -> None:
    p = load_problem(ROOT / "constraints" / example, [])
    _ctx, reduced = _solve(p, True)
    _ctx2, full = _solve(p, False)
    assert (reduced.status, reduced.objective) == (full.status, full.objective)
    assert reduced.plan is not None and full.plan is not None
    assert reduced.plan.decision() == full.plan.decision()


def _bought(i: int, price: float, lead: int, cap: int = 16) -> dict[str, Any]:
    return {"id": f"rq-{i:02d}", "system": "dgx-b200", "mode": "buy", "vendor": "v", "min_nodes": 1,
            "max_nodes": cap, "lead_time_days": lead, "quoted_on": "2026-11-01", "valid_until": "2027-12-31",
            "kind": "list", "source": "test", "price_usd": price}


@pytest.mark.parametrize("earliest,deadline", [(None, "2027-05-31"), ("2027-06-01", "2027-07-11")])
def test_a_dearer_faster_purchase_is_kept_only_for_earlier_starts(tmp_path: Path, earliest: str | None,
                                                                  deadline: str) -> None:
    """Two purchases of the same servers, lead times certain and delay unpriced. The dearer one is ready sooner:
    it is needed for plans that start before the cheaper one is ready — unless the earliest start is later than
    that, when it is never needed. The cheaper one is needed only by points that can still start after it is ready
    and finish by the deadline. By hand from each point's run length and each quote's ready day (the estimate
    stage's): a point can start at most deadline − days."""
    from solver.estimate.options import option_quote_ready

    problem = {**BASE, "policy": {"modes": ["buy"]}, "schedule": {"deadline": deadline},
               "site": {"it_power_kw": 2000, "cooling": ["air", "liquid"], "racks": 60, "rack_power_kw": 60,
                        "electricity_usd_per_kwh": 0.1, "pue": 1.3},
               "risk": {"money": {"delay_cost_usd_per_day": 0}}}
    if earliest:
        problem["schedule"]["earliest_start"] = earliest
    p = _load(problem, [_bought(0, 300_000, 120), _bought(1, 360_000, 10)], tmp_path)
    ctx = prepare(p, SolveSettings())
    (o,) = ctx.universe.options
    reducer = reducer_for(p, o, ctx.unit, ctx.screen.outlook)
    assert reducer is not None
    a = p.assumptions.values
    cheap, fast = (max(o.ready_day, option_quote_ready(p.catalog.quotes[q], o, a)) for q in ("rq-00", "rq-01"))
    first = ctx.universe.earliest_day if earliest else 0
    last = ctx.universe.deadline_day
    assert last is not None and fast < cheap and (earliest is None or first > cheap)
    seen = set()
    for pt in o.points:
        if not pt.workable or pt.n > 16:
            continue
        latest = last - pt.days
        want = set()
        if latest < max(cheap, first):
            want.add("rq-00")
        if first >= cheap or latest < max(fast, first):
            want.add("rq-01")
        assert reducer.dropped(pt) == want, (pt.n, pt.days, latest, cheap, fast, first)
        seen.add(frozenset(want))
    assert len(seen) >= 2, "the deadline should split the points"


@settings(max_examples=max(5, EXAMPLES // 2), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(cases(), st.sampled_from(["budget.max_usd", "schedule.deadline", None]), st.sampled_from(["cost", "cash",
                                                                                                 "finish"]))
def test_r1_in_explanation_models_keeps_every_minimum(tmp_path: Path, case: tuple[dict[str, Any], list[dict[str, Any]]],
                                                      dropped: str | None, quantity: str) -> None:
    """An explanation model solved once under a known set of groups uses R1 when they enforce all it relies on
    (`reduce.r1_holds`: one fabric per job, every capacity, the earliest start, every rule). A budget's or a
    deadline's relaxation is such a set: with that group dropped, the minimum cost, cash or finish of each pair is
    the same as over every quote at every point (`reduce=False`, the same groups known: both models charge a quote
    used alone in one term), and so is feasibility."""
    from solver.model.builder import build
    from solver.model.reduce import r1_holds

    problem, quotes = case
    p = _load(problem, quotes, tmp_path)
    ctx = prepare(p, SolveSettings(alternatives=False))
    for pair in ctx.universe.pairs():
        sub = ctx.universe.subset(pair)
        skeleton = build(p, sub, ctx.screen, ctx.unit, guard="assume", reduce=False)
        active = frozenset(g for g in skeleton.lits if g != dropped)

        def usable(pt: Any, groups: frozenset[str] = active) -> Any:
            return ctx.bounds.usable(pt, groups)

        values = []
        for reduce in (True, False):
            b = build(p, sub, ctx.screen, ctx.unit, guard="assume", reduce=reduce, active=active,
                      usable=usable if reduce else None)
            b.model.add_assumptions([b.lits[g] for g in active if g in b.lits])
            expr = {"cost": b.cost, "cash": b.cash, "finish": b.finish}[quantity]
            b.model.minimize(expr)
            out = ctx.engine.solve(b.model, label="r1-explain")
            assert out.status in ("optimal", "infeasible"), out.status
            values.append(out.value(expr) if out.has_solution else None)
        assert values[0] == values[1], (pair, dropped, quantity, values,
                                        [r1_holds(p, o, active) for o in sub.options])


def test_a_what_ifs_universe_read_from_its_pairs_quotes_alone_is_the_same() -> None:
    """A what-if of one option (an unpriced quote priced, a quote re-priced) builds its universe from that option's
    accelerator's quotes only, with the original problem's horizon as a floor (`build_universe(horizon_floor=)`):
    its options, points and calendar horizon must be those of the universe read from every quote."""
    from solver.answers.unpriced import priced
    from solver.estimate.options import build_universe

    problem = load_problem(ROOT / "constraints" / "datacenter.yaml")
    full = build_universe(problem)
    checked = 0
    for q in full.unpriced:
        base = priced(problem, q, 1000.0)
        accel = base.catalog.systems[q.system].accelerator
        pairs = {f"{accel}/{o.offer}" for o in build_universe(base).options if o.accel.id == accel}
        whole = build_universe(base, only_pairs=pairs)
        read = build_universe(base, only_pairs=pairs, horizon_floor=full.horizon)
        assert read.horizon == whole.horizon == build_universe(base).horizon
        assert [(o.id, [q.id for q in o.quotes], [(pt.n, pt.days, pt.workable) for pt in o.points])
                for o in read.options] == [(o.id, [q.id for q in o.quotes], [(pt.n, pt.days, pt.workable)
                                                                          for pt in o.points]) for o in whole.options]
        checked += bool(read.options)
    assert checked >= 1
