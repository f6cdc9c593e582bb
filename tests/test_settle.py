"""A pair that can rank neither first nor second is searched only to within `SolveSettings.settle` of its optimum
(`settle.SETTLE_GAP`); everything else is searched exactly. Checked against the exact search of every pair
(`settle=0`, itself checked against brute force in test_bounds.py and test_late_cuts.py) on marketplaces of small
bought lots, where a plan of several lots is later together than any of them alone and the model's lateness cuts
decide it: the winner and the runner-up are the same plans, byte for byte; every settled alternative's shown cost
is no less than its pair's exact optimum and no more than the stated gap above it; the rows keep their order
beyond the places that matter only where the gaps allow."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from types import MappingProxyType

import pytest
import yaml

from solver.inputs.problem import load_problem
from solver.solve import settle
from solver.solve.pipeline import SolveSettings, solve_problem

ROOT = Path(__file__).resolve().parent.parent
SYSTEMS = {"dgx-b200": 400_000, "hgx-h200": 260_000, "dgx-h100": 230_000, "dgx-b300": 520_000, "mi300x-8x": 200_000}


def _problem(tmp: Path, seed: int, nodes: int):
    """Six lots of at most 6 nodes per system, later lots often cheaper (so the cheapest plan is not the earliest),
    a rule that requires `nodes` or more nodes (several lots per plan)."""
    rng = random.Random(seed)
    quotes = []
    for system, price in SYSTEMS.items():
        for i in range(6):
            lead = rng.randint(30, 160)
            quotes.append({"id": f"{system}-lot-{i}", "system": system, "mode": "buy", "vendor": f"v{i}",
                           "price_usd": round(price * rng.uniform(0.85, 1.1) - 150 * lead), "min_nodes": 1,
                           "max_nodes": 6, "lead_time_days": lead, "lead_time_p90_days": round(lead * 1.7),
                           "quoted_on": "2026-11-20", "valid_until": "2027-12-31", "kind": "list", "source": "test"})
    (tmp / "q.yaml").write_text(yaml.safe_dump({"quotes": quotes}))
    spec = yaml.safe_load((ROOT / "constraints" / "datacenter.yaml").read_text())
    spec.update(catalogs=["q.yaml"], rules=[{"name": "big", "when": {"nodes": {"ge": nodes}}, "then": "require"}])
    spec["workload"] = {**spec["workload"], "params": "20B", "tokens": "400B"}
    spec["policy"] = {**spec.get("policy", {}), "modes": ["buy"]}
    spec["risk"] = {**spec.get("risk", {}), "uncertainty": {"scenarios": 400}}
    spec["schedule"] = {**spec["schedule"], "deadline": "2027-06-15"}
    spec.pop("budget", None)
    (tmp / "p.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    problem = load_problem(tmp / "p.yaml")
    cat = problem.files_catalog
    return problem.with_catalog(dataclasses.replace(
        cat, quotes=MappingProxyType({k: v for k, v in cat.quotes.items() if "-lot-" in k})))


CASES = [(1, 18), (2, 18), (3, 12), (4, 18), (5, 12), (6, 18)]


def test_settling_changes_nothing_that_matters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settled = differ = 0
    earlier: list[object] = []
    offer = settle.Incumbent.offer

    def counted(self: settle.Incumbent, *args: object) -> object:
        got = offer(self, *args)  # type: ignore[arg-type]
        if got is not None:
            earlier.append(got)
        return got
    monkeypatch.setattr(settle.Incumbent, "offer", counted)
    for seed, nodes in CASES:
        folder = tmp_path / str(seed)
        folder.mkdir()
        problem = _problem(folder, seed, nodes)
        exact = solve_problem(problem, SolveSettings(processes=1, settle=0.0))
        got = solve_problem(problem, SolveSettings(processes=1))
        assert got.status == exact.status
        if exact.plan is None:
            continue
        assert got.plan == exact.plan and got.objective == exact.objective
        assert all(a.settled_usd == 0 for a in exact.alternatives)
        if exact.alternatives:
            assert got.alternatives[0] == exact.alternatives[0], "the runner-up is searched to its proven optimum"
        best = {a.plan.pair: a.plan for a in exact.alternatives}
        assert {a.plan.pair for a in got.alternatives} == set(best)
        for a in got.alternatives:
            optimum = best[a.plan.pair]
            if a.settled_usd == 0:
                assert a.plan == optimum
                continue
            settled += 1
            differ += a.plan.allocation != optimum.allocation or a.plan.nodes != optimum.nodes
            slack = 1e-6 * a.plan.total_cost
            # the plan shown is a real plan of the pair, priced exactly: never below the pair's optimum ...
            assert a.plan.total_cost >= optimum.total_cost - slack, (a.plan.pair, a.plan.total_cost,
                                                                     optimum.total_cost)
            # ... no more above it than the answer says (the model's shortfall, in whole money units) ...
            assert a.plan.total_cost - optimum.total_cost <= a.settled_usd + got.unit + slack
            assert a.settled_usd <= 0.05 * a.plan.model_cost_units * got.unit + got.unit
            # ... and it could not have ranked first or second
            assert a.plan.total_cost - a.settled_usd > exact.alternatives[0].plan.total_cost - got.unit
    assert settled >= 3, "the cases must exercise the settled path"
    assert earlier, "and settling on a plan an earlier cut's search found (`settle.Incumbent`)"
    print(f"settled {settled}, of which {differ} show another plan than the pair's optimum")
