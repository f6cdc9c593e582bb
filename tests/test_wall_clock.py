"""`--max-seconds`: a wall-clock limit for the whole command. When it stops the search the answer is the best plan
found, a proven bound and the gap, exit 3, and it never claims a proof.

Independent check of the bound's honesty: the full deterministic solve's optimum must lie between the stopped
run's bound and its objective (bound ≤ optimum ≤ objective), for stops after each number of CP-SAT calls.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli import main
from solver.inputs.problem import load_problem
from solver.solve import engine as engine_mod
from solver.solve.pipeline import SolveSettings, prepare, solve_problem

ROOT = Path(__file__).resolve().parent.parent
DATACENTER = ROOT / "constraints" / "datacenter.yaml"


def _stopping_after(calls: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's clock runs out after `calls` CP-SAT calls (a deterministic stand-in for the wall clock). One
    process: the calls of forked searches are counted in their own copies of the engine, and how many the parent
    makes before it forks depends on the machine's speed (`pipeline.FORK_AFTER_SECONDS`)."""
    def seconds_left(self: Any) -> float | None:
        if self.limits.wall_deadline is None:
            return None
        return 0.0 if self.calls >= calls else 1000.0
    monkeypatch.setattr(engine_mod.Engine, "seconds_left", seconds_left)


@pytest.fixture(scope="module")
def full() -> Any:
    """The deterministic solve, and how many CP-SAT calls it makes."""
    problem = load_problem(DATACENTER)
    ctx = prepare(problem, SolveSettings(alternatives=False, processes=1))
    result = solve_problem(problem, ctx.settings, ctx)
    assert result.status == "optimal" and result.objective is not None
    assert ctx.engine.calls > 9  # every stop below interrupts the search
    return result


@pytest.mark.parametrize("calls", [1, 3, 6, 9])
def test_a_stopped_search_reports_an_honest_bound(calls: int, full: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    problem = load_problem(DATACENTER)
    _stopping_after(calls, monkeypatch)
    settings = SolveSettings(alternatives=False, wall_deadline=time.monotonic() + 1000.0, max_seconds=5.0,
                             processes=1)
    ctx = prepare(problem, settings)
    stopped = solve_problem(problem, settings, ctx)
    assert ctx.engine.out_of_time
    assert stopped.stopped_by == "--max-seconds 5"
    if stopped.status == "optimal":  # stopped only in the tie-break among equal plans: the value is still proven
        assert stopped.objective == full.objective
        return
    assert stopped.status in ("feasible", "unknown")
    if stopped.plan is not None:  # a plan found before the stop, re-checked by the checker inside solve_problem
        assert stopped.objective is not None and stopped.objective >= full.objective
    if stopped.bound is not None:
        assert stopped.bound <= full.objective, (stopped.bound, full.objective)
    assert any("time limit reached (--max-seconds 5)" in w for w in stopped.warnings)


def test_the_cli_says_what_was_found_and_exits_3() -> None:
    r = CliRunner().invoke(main, ["solve", str(DATACENTER), "--max-seconds", "0.001"])
    assert r.exit_code == 3, r.output
    first = r.stdout.splitlines()[0]
    assert "--max-seconds 0.001 hit" in first and "OPTIMAL" not in first and "Traceback" not in r.output
    r = CliRunner().invoke(main, ["solve", str(DATACENTER), "--max-seconds", "0.001", "--format", "json"])
    import json
    d = json.loads(r.stdout)
    assert r.exit_code == 3 and d["stopped_by"] == "--max-seconds 0.001" and d["status"] in ("feasible", "unknown")


def test_without_max_seconds_nothing_changes() -> None:
    r1 = CliRunner().invoke(main, ["solve", str(DATACENTER), "--format", "json"])
    assert r1.exit_code == 0 and "stopped_by" not in r1.stdout


def test_sweep_refuses_a_wall_clock_and_model_dumps(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["sweep", str(DATACENTER), "--set-grid", "budget.max_usd=20M", "--max-seconds", "5"])
    assert r.exit_code == 2 and "--max-seconds: not for plan sweep" in r.output, r.output
    r = CliRunner().invoke(main, ["sweep", str(DATACENTER), "--set-grid", "budget.max_usd=20M", "--debug-model",
                                  str(tmp_path / "m")])
    assert r.exit_code == 2 and "not for plan sweep" in r.output and "Traceback" not in r.output, r.output


TIGHT = ["rules=[]", "schedule.deadline=2027-01-20"]
"""The bundled problem with a deadline only more capacity could meet: infeasible, its conflict a dozen groups."""


@pytest.fixture(scope="module")
def unstopped_conflict() -> list[str]:
    from solver.answers.report import explained
    problem = load_problem(DATACENTER, TIGHT)
    ctx = prepare(problem, SolveSettings(processes=1))
    result = explained(ctx, solve_problem(problem, ctx.settings, ctx))
    assert result.status == "infeasible" and result.explanation is not None and result.explanation["proven"]
    return list(result.explanation["conflict"])


@pytest.mark.parametrize("checks", [0, 1, 4])
def test_an_explanation_the_clock_stops_is_a_true_conflict_never_called_minimal(
        checks: int, unstopped_conflict: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`--max-seconds` running out in the conflict search (after `checks` feasibility checks; the clock is moved
    past the deadline there) ends it at once: the conflict is the infeasible set the search started from — it holds
    the minimal conflict of the unstopped run and has no plan (asked again without a clock) — and it is not called
    minimal; no way out is searched or denied; the result says what stopped it. Before, each later check came back
    undecided and the search went on group by group: at 10,000 quotes under --max-seconds 5, 300 s and 1.9 GB."""
    import dataclasses

    from solver.answers import conflicts as conflicts_mod
    from solver.answers.conflicts import PairOracle
    from solver.answers.report import explained
    from solver.render.text import render_explanation
    problem = load_problem(DATACENTER, TIGHT)
    settings = SolveSettings(wall_deadline=time.monotonic() + 1000.0, max_seconds=5.0, processes=1)
    ctx = prepare(problem, settings)
    result = solve_problem(problem, settings, ctx)
    assert result.status == "infeasible" and not ctx.engine.out_of_time
    asked = [0]
    status = conflicts_mod.PairOracle.status

    def counted(self: Any, active: list[str]) -> str:
        if asked[0] >= checks:
            ctx.engine.limits = dataclasses.replace(ctx.engine.limits, wall_deadline=time.monotonic() - 1.0)
        asked[0] += 1
        return status(self, active)
    monkeypatch.setattr(conflicts_mod.PairOracle, "status", counted)
    stopped = explained(ctx, result)
    monkeypatch.undo()
    expl = stopped.explanation
    assert expl is not None and stopped.stopped_by == "--max-seconds 5"
    assert expl["proven"] is False and expl["stopped_by"] == "--max-seconds 5"
    assert expl["relaxations"] == [] and expl["alternatives"] == [] and expl["combined"] is None
    conflict = expl["conflict"]
    assert set(unstopped_conflict) <= set(conflict) and len(conflict) > len(unstopped_conflict)
    fresh = prepare(problem, SolveSettings(processes=1))
    assert PairOracle(fresh).status(conflict) == "infeasible"
    text = render_explanation(expl)
    assert "NOT proven minimal: --max-seconds 5 stopped the search" in text
    assert "No single change" not in text and "minimal: dropping any one" not in text


@pytest.mark.parametrize("allowed", [0, 1, 3, 8, 10, 100])
def test_a_stopped_deletion_keeps_every_group_it_did_not_get_to(allowed: int) -> None:
    """`deletion_filter` on a problem whose only conflict is {b, e}, with undecided checks (any three groups
    without it: QuickXplain's first), so that the one-by-one deletion runs after QuickXplain's 8 checks: stopped
    after `allowed` checks (in QuickXplain, at its end, within the deletion) it asks nothing more, keeps a superset
    of {b, e}, and does not call it proven; never stopped (100), the deletion finds {b, e}."""
    from solver.answers.conflicts import deletion_filter
    groups = list("abcdef")
    asked = [0]

    def status(active: list[str]) -> str:
        asked[0] += 1
        assert asked[0] <= allowed, "asked after the stop"
        return "infeasible" if {"b", "e"} <= set(active) else "unknown" if len(active) == 3 else "feasible"

    found = deletion_filter(status, groups, None, stop=lambda: asked[0] >= allowed)
    assert {"b", "e"} <= set(found.groups)
    if allowed == 100:
        assert set(found.groups) == {"b", "e"}
    else:
        assert not found.proven


def test_ways_out_the_clock_stops_are_said_to_be_stopped(unstopped_conflict: list[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """`--max-seconds` running out after the conflict is found, while its ways out are searched: the conflict is
    the unstopped run's, proven minimal; the explanation says what stopped the ways out, searches no pair of drops
    and no combined change, and its text neither claims that no single change restores feasibility nor builds a
    pair's full model after the clock ran out (each took minutes at 100,000 quotes, past a limit of 60 s)."""
    import dataclasses

    from solver.answers import relax
    from solver.answers.conflicts import PairOracle
    from solver.answers.report import explained
    from solver.render.text import render_explanation
    problem = load_problem(DATACENTER, TIGHT)
    settings = SolveSettings(wall_deadline=time.monotonic() + 1000.0, max_seconds=5.0, processes=1)
    ctx = prepare(problem, settings)
    result = solve_problem(problem, settings, ctx)
    assert result.status == "infeasible"
    found = relax.conflict_of

    def then_stop(c: Any, oracle: Any = None) -> Any:
        got = found(c, oracle)
        c.engine.limits = dataclasses.replace(c.engine.limits, wall_deadline=time.monotonic() - 1.0)
        monkeypatch.setattr(PairOracle, "model", lambda self, pair: pytest.fail(f"built {pair}'s full model"))
        return got
    monkeypatch.setattr(relax, "conflict_of", then_stop)
    monkeypatch.setattr(relax, "combined_relaxation", lambda *a, **k: pytest.fail("searched a combined change"))
    stopped = explained(ctx, result)
    monkeypatch.undo()
    expl = stopped.explanation
    assert expl is not None and stopped.stopped_by == "--max-seconds 5"
    assert expl["proven"] is True and expl["stopped_by"] == "--max-seconds 5"
    assert expl["conflict"] == unstopped_conflict
    assert all(len(a["drop"]) == 1 for a in expl["alternatives"])
    text = render_explanation(expl)
    assert "--max-seconds 5 stopped the search for ways out" in text
    assert "No single change" not in text and "minimal: dropping any one" in text
