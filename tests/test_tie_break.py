"""The winner's tie-break made during its search (`solve_pair`'s `speculate`), not by a second search after all pairs.

The solve ranks pairs by their optima without the tie-break and tie-breaks only the winner. A pair whose optimum is
the least seen so far (`forked.SharedMinimum`) is tie-broken at once on the model that proved the optimum, which is
what a second search from scratch does after its identical growth. These tests hold the two to the same outcome, on
a catalog where the tie-break decides: every quote twice more, under ids that sort before and after it, with the
presolve off (it would drop the copies, leaving nothing to break a tie between).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from solver.inputs.problem import Problem, load_problem
from solver.render.jsonout import result_dict, to_json
from solver.solve import best as best_mod
from solver.solve import forked, pipeline
from solver.solve.pipeline import SolveSettings, prepare, solve_pair, solve_problem

DATACENTER = Path(__file__).resolve().parent.parent / "constraints" / "datacenter.yaml"
SETTINGS = SolveSettings(processes=1, reduce=False)
PAIRS = ("gb200/cloud", "gb200/managed")


@pytest.fixture(scope="module")
def tied() -> Problem:
    problem = load_problem(DATACENTER, ["policy.accelerators.include=[gb200]", "schedule.deadline=2027-12-31"])
    catalog = problem.files_catalog
    assert catalog is not None
    copies = {prefix + qid: q.model_copy(update={"id": prefix + qid})
              for qid, q in catalog.quotes.items() for prefix in ("a-copy-", "z-copy-")}
    return problem.with_catalog(catalog.with_quotes(copies))


def test_a_pair_tie_broken_during_its_search_is_what_a_second_search_gives(tied: Problem) -> None:
    ctx = prepare(tied, SETTINGS)
    decided = []
    for pair in PAIRS:
        out = solve_pair(ctx, ctx.universe.subset(pair), ctx.cost_hi(), tie_break=False, speculate=lambda _v: True)
        again = prepare(tied, SETTINGS)
        second = solve_pair(again, again.universe.subset(pair), again.cost_hi(), tie_break=True)
        assert out.tie_broken == second
        assert second.plan is not None and out.plan is not None
        decided.append(second.plan.quotes != out.plan.quotes)
        assert second.plan.quotes[0].id.startswith("a-copy-")
    assert any(decided), "the tie-break should decide in one of the pairs (the search found another copy first)"
    asked: list[int] = []

    def refuse(value: int) -> bool:
        asked.append(value)
        return False

    out = solve_pair(ctx, ctx.universe.subset(PAIRS[0]), ctx.cost_hi(), tie_break=False, speculate=refuse)
    assert out.tie_broken is None and asked == [out.objective]


def test_the_winner_is_the_same_tie_broken_during_its_search_or_after(tied: Problem,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """With the least optimum offered, the winner needs no second search; refusing every offer brings the second
    search back; the result is the same, byte for byte. Two processes: the pairs are searched on a forked child
    and here (`--processes 2`), so a tie-break made in the child comes back with its outcome."""
    settings = SolveSettings(processes=2, reduce=False)
    searches: list[bool] = []
    real = pipeline.solve_pair

    def counting(*args: Any, **kwargs: Any) -> Any:
        searches.append(kwargs["tie_break"])
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "solve_pair", counting)
    during = solve_problem(tied, settings, prepare(tied, settings))
    assert True not in searches
    monkeypatch.setattr(forked.SharedMinimum, "offer", lambda _self, _v: False)
    after = solve_problem(tied, settings, prepare(tied, settings))
    assert searches.count(True) == 1
    assert during.plan is not None and during.plan.pair in PAIRS
    assert to_json(result_dict(during)) == to_json(result_dict(after))


def test_the_best_only_search_tie_breaks_an_uncapped_winner_during_its_search(tied: Problem,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """`best_only` (the frontier's dates, the sensitivity's sweeps) searches pairs by their bound, capping each at
    the best plan so far; the first is uncapped, and here it is the winner: its tie-break comes with its search,
    and the plan is `solve_problem`'s."""
    searches: list[tuple[bool, int | None]] = []
    real = best_mod.solve_pair

    def counting(*args: Any, **kwargs: Any) -> Any:
        searches.append((kwargs["tie_break"], kwargs.get("cost_cap")))
        return real(*args, **kwargs)

    monkeypatch.setattr(best_mod, "solve_pair", counting)
    best = best_mod.best_only(tied, SETTINGS)
    assert searches[0] == (False, None) and all(not tb for tb, _cap in searches)
    solved = solve_problem(tied, SETTINGS, prepare(tied, SETTINGS))
    assert best.plan == solved.plan and best.status == solved.status == "optimal"
