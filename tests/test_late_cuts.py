"""The lateness cuts' figures are lower bounds, checked against the plans they cover, computed on their own.

A plan that uses several quotes starts when the last of them is ready; the model charges the largest alone figure
and adds cuts (`solve/cuts.py`). A pool cut says: any j of these quotes cost at least the figure of
`Outlook.pool_laws`. Here every subset of a pool of five bought quotes, at every planned start from the pool's j-th
earliest on, gets its own start law (the product of its parts' cdfs by `math.erfc`, not the model's table), and its
charge must be no less than the cut's. `arrival_cdfs` (all parts at once) must give the numbers of one
`Arrival.cdf` per part exactly.
"""

from __future__ import annotations

import math
from itertools import combinations
from pathlib import Path

import numpy as np
import yaml

from solver.estimate.outlook import Outlook
from solver.estimate.starts import Arrival, StartLaw, arrival_cdfs
from solver.inputs.problem import load_problem
from solver.solve.pipeline import SolveSettings, prepare

ROOT = Path(__file__).resolve().parent.parent


def _quotes() -> list[dict]:
    return [{"id": f"lot-{i}", "system": "dgx-b200", "mode": "buy", "vendor": f"v{i}", "price_usd": 400_000 + 1000 * i,
             "min_nodes": 1, "max_nodes": 12, "lead_time_days": lead, "lead_time_p90_days": round(lead * 1.6),
             "quoted_on": "2026-11-20", "valid_until": "2027-12-31", "kind": "list", "source": "test"}
            for i, lead in enumerate([40, 55, 70, 90, 120])]


def _exact_cdf(a: Arrival, days: np.ndarray) -> np.ndarray:
    """P(ready by each day), by math.erfc, element by element."""
    out = []
    for d in days.tolist():
        y = d - a.shift
        if y >= a.cap - 1e-9:
            out.append(1.0)
        elif a.sigma <= 0 or y <= 0:
            out.append(0.0)
        else:
            out.append(0.5 * math.erfc(-(math.log(y) - a.mu) / a.sigma / math.sqrt(2.0)))
    return np.array(out)


def test_a_pool_cut_is_below_every_plan_it_covers(tmp_path: Path) -> None:
    (tmp_path / "q.yaml").write_text(yaml.safe_dump({"quotes": _quotes()}))
    spec = yaml.safe_load((ROOT / "constraints" / "datacenter.yaml").read_text())
    spec["catalogs"] = ["q.yaml"]
    spec["rules"] = []
    spec["policy"] = {**spec.get("policy", {}), "accelerators": {"include": ["b200"]}, "modes": ["buy"]}
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    problem = load_problem(tmp_path / "p.yaml")
    ctx = prepare(problem, SolveSettings(processes=1))
    out = Outlook.of(problem)
    o = next(o for o in ctx.universe.options if o.mode == "buy" and {"lot-0", "lot-4"} <= {q.id for q in o.quotes})
    pt = next(p for p in o.points if p.workable and p.n >= 24)
    pool = [q for q in o.quotes if q.id.startswith("lot-")]
    starts = sorted(out.alone_start(o, q, 0, earliest=False) for q in pool)
    checked = 0
    for j in range(2, len(pool) + 1):
        bound_law = out.pool_laws(o, pool, starts[j - 1], 0)[j - 1]
        bound = out.charge(o, pt, bound_law)
        for size in range(j, len(pool) + 1):
            for subset in combinations(pool, size):
                lo_start = max(out.alone_start(o, q, 0, earliest=False) for q in subset)
                for start in (lo_start, lo_start + 30):
                    law = out.plan_law(o, list(subset), start, 0)
                    # the plan's own law, independently: every part's cdf by math.erfc, multiplied
                    port = out.port(o, 0)
                    parts = [out.arrival(o, q, out.order(o, q, start, 0)) for q in subset] + \
                        ([port] if port is not None else [])
                    days = np.arange(law.lo, law.hi + 1, dtype=float)
                    mine = np.prod([_exact_cdf(a, days) for a in parts], axis=0)
                    mine[-1] = 1.0
                    assert np.allclose(mine, law.cdf, atol=1e-8)
                    charge = out.charge(o, pt, StartLaw(law.lo, np.maximum.accumulate(mine)))
                    assert charge >= bound - 1e-6 * max(1.0, bound), (j, [q.id for q in subset], start)
                    checked += 1
    assert checked > 50
    # the bound is not trivial: j = 5 is the five quotes' own figure at the latest alone start
    whole = out.charge(o, pt, out.plan_law(o, pool, starts[-1], 0))
    assert whole > 0
    assert abs(out.charge(o, pt, out.pool_laws(o, pool, starts[-1], 0)[-1]) - whole) <= 1e-6 * whole


def test_arrival_cdfs_are_the_parts_own_numbers() -> None:
    rng = np.random.default_rng(7)
    parts = [Arrival(float(rng.uniform(-20, 60)), float(rng.uniform(2, 5)), float(s), float(rng.uniform(5, 400)))
             for s in rng.choice([0.0, 0.2, 0.6], size=300)]
    parts.append(Arrival(-100.0, 1.0, 0.3, 10.0))     # ready before the grid starts
    for lo in (0, 25):
        days = np.arange(lo, 600, dtype=float)
        got = arrival_cdfs(parts, days, lo)
        want = np.array([a.cdf(days) if a.last > lo else np.ones(len(days)) for a in parts])
        assert np.array_equal(got, want)


def test_a_plan_over_several_lots_is_the_cheapest_by_enumeration(tmp_path: Path) -> None:
    """Five lots of at most 8 nodes: a plan of 20 nodes (a rule requires it) uses three or more of them, so lateness
    cuts (sets, subsets, pools) decide it. The chosen plan's cost by the checker's own walk is the least of every
    candidate's, within the model's rounding."""
    from test_objective_by_enumeration import _exact
    from solver.estimate.chance import chance_model
    from solver.model.decode import Decision
    from solver.solve import brute
    from solver.solve.plan import make_plan
    quotes = [{**q, "max_nodes": 8} for q in _quotes()]
    (tmp_path / "q.yaml").write_text(yaml.safe_dump({"quotes": quotes}))
    spec = yaml.safe_load((ROOT / "constraints" / "datacenter.yaml").read_text())
    spec.update(catalogs=["q.yaml"], rules=[{"name": "big", "when": {"nodes": {"eq": 20}}, "then": "require"}])
    spec["workload"] = {**spec["workload"], "params": "20B", "tokens": "400B"}
    spec["policy"] = {**spec.get("policy", {}), "accelerators": {"include": ["b200"]}, "modes": ["buy"]}
    spec["risk"] = {**spec.get("risk", {}), "uncertainty": {"scenarios": 400}}
    spec["schedule"] = {**spec["schedule"], "deadline": "2027-05-01"}
    spec.pop("budget", None)
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    problem = load_problem(tmp_path / "p.yaml")
    import dataclasses
    from types import MappingProxyType
    cat = problem.files_catalog
    problem = problem.with_catalog(dataclasses.replace(
        cat, quotes=MappingProxyType({k: v for k, v in cat.quotes.items() if k.startswith("lot-")})))
    from solver.solve.pipeline import solve_problem
    ctx = prepare(problem, SolveSettings(processes=1, alternatives=False))
    result = solve_problem(problem, ctx.settings, ctx)
    assert result.plan is not None and result.status == "optimal"
    assert len(result.plan.allocation) >= 3, result.plan.allocation
    out = Outlook.of(problem)
    chance = chance_model(problem) if problem.spec.policy.deadline_confidence is not None else None
    candidates = []
    for o in ctx.universe.options:
        for pt in o.points:
            if pt.n != 20 or not pt.workable:
                continue
            for alloc in brute._splits(pt.n, o.quotes, 200_000):
                c = brute._score(pt, alloc, problem, ctx.universe, ctx.unit, None, out, chance)
                if c is not None:
                    d = Decision(o.id, pt.n, c.alloc, c.start, c.cost_units, planned_day=c.start)
                    candidates.append(make_plan(problem, ctx.universe, d, ctx.unit, out))
    assert len(candidates) > 5
    exact = {(c.option, c.nodes, tuple(sorted(c.allocation.items()))): _exact(problem, ctx.universe, c)
             for c in candidates}
    chosen = _exact(problem, ctx.universe, result.plan)
    slack = ctx.unit * (result.plan.nodes + 4)
    assert chosen <= min(exact.values()) + slack
    # A pool cut reaches the model: any 3 of the five lots (every plan of 20 nodes) are charged at least U; any 6
    # of them (no plan) changes nothing.
    from solver.estimate.outlook import LateCut
    pair = next(o.pair for o in ctx.universe.options if o.id == result.plan.option)
    lots = tuple(sorted(q["id"] for q in quotes))
    base = result.plan.late_units or 0
    for need, raised in ((6, False), (3, True)):
        again = prepare(problem, SolveSettings(processes=1, alternatives=False))
        again.late_cuts[pair] = [LateCut(result.plan.option, 20, lots, base + 5000, at_least=need)]
        got = solve_problem(problem, again.settings, again)
        assert got.plan is not None and got.plan.nodes == 20
        assert ((got.plan.late_units or 0) >= base + 5000) is raised, (need, got.plan.late_units, base)
