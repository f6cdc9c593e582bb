"""`plan sweep`: every grid point is the answer of solving that what-if alone, and the answers are byte-identical
in this process, on a process pool and on a real local Ray cluster.

Independent checks: each row against a separate `solve_problem` of the same problem with the point's `--set`s
(loaded from the files, not from the sweep's portable data); the portable problem against the loaded one field by
field; the JSON of the three executors compared byte for byte.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from cli import main
from solver.answers.executors import Local, Processes, Ray, make_executor
from solver.answers.sweep import grid, parse_axis, run_unit, split_values, units
from solver.errors import InputError
from solver.inputs.problem import load_problem, portable
from solver.render.jsonout import sweep_dict, to_json
from solver.solve.pipeline import SolveSettings, prepare, solve_problem

ROOT = Path(__file__).resolve().parent.parent
FINETUNE = ROOT / "constraints" / "finetune-70b.yaml"
AXES = ["budget.max_usd=500,400k", "policy.accelerators.exclude=[b200],[tpu7x, h100-sxm]"]
"""Four points of the 70B fine-tune: an infeasible budget, and two policies with different plans (one value a list
with a comma inside)."""


def test_values_split_on_top_level_commas_only() -> None:
    assert split_values("50M, 100M,150M") == ["50M", "100M", "150M"]
    assert split_values("[cloud],[buy, cloud]") == ["[cloud]", "[buy, cloud]"]
    assert split_values("{a: 1, b: 2},3") == ["{a: 1, b: 2}", "3"]


def test_the_grid_is_every_combination_first_axis_slowest() -> None:
    axes = [parse_axis("a.b=1,2,3"), parse_axis("c=x,y")]
    points = grid(axes)
    assert len(points) == 6 and len(set(points)) == 6
    assert points[0] == ("a.b=1", "c=x") and points[1] == ("a.b=1", "c=y") and points[-1] == ("a.b=3", "c=y")


@pytest.mark.parametrize("args, message", [
    (["--set-grid", "budget.max_usd=9M,abc"], "--set-grid budget.max_usd=9M,abc: expected a number"),
    (["--set-grid", "budget.max_usd=9M,,3"], "empty value"),
    (["--set-grid", "budget.max_usd=9M,9M"], "appears twice"),
    (["--set-grid", "budget.max_usd=1M", "--set-grid", "budget.max_usd=2M"], "given twice"),
    (["--set-grid", "budget.max_usd"], "expected PATH=VALUE1,VALUE2"),
    (["--set-grid", "budget.max_usd=" + ",".join(str(i) for i in range(1, 102)),
      "--set-grid", "workload.tokens=" + ",".join(f"{i}B" for i in range(1, 101))], "10,100 grid points"),
    (["--set-grid", "budget.max_usd=1M", "--address", "auto"], "--address is for --executor ray"),
])
def test_bad_grids_are_one_line_errors_before_any_solve(args: list[str], message: str) -> None:
    r = CliRunner().invoke(main, ["sweep", str(FINETUNE), *args])
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in r.output, r.output


def test_a_portable_problem_rebuilds_the_same_problem(tmp_path: Path) -> None:
    """A problem with its own `catalogs:` entry (relative to its folder), a `--quotes` file and `--set`s on the
    problem and on a quote: rebuilt from plain data (after a JSON round trip of its texts), it is the same."""
    (tmp_path / "cat").mkdir()
    quote = {"id": "my-h200", "system": "hgx-h200", "mode": "cloud", "vendor": "Mine", "usd_per_gpu_hour": 2.5,
             "max_nodes": 16, "lead_time_days": 10, "quoted_on": "2026-11-01", "valid_until": "2027-06-30",
             "kind": "negotiated", "source": "my quote"}
    (tmp_path / "cat" / "mine.yaml").write_text(yaml.safe_dump({"quotes": [quote]}))
    extra = tmp_path / "extra.yaml"
    extra.write_text(yaml.safe_dump({"quotes": [{**quote, "id": "my-h200-b", "usd_per_gpu_hour": 2.7}]}))
    data = yaml.safe_load(FINETUNE.read_text())
    (tmp_path / "p.yaml").write_text(yaml.safe_dump({**data, "catalogs": ["cat"]}, sort_keys=False))
    problem = load_problem(tmp_path / "p.yaml", ["budget.max_usd=3M", "quotes.my-h200.max_nodes=8"],
                           quotes=[str(extra)])
    port = portable(problem)
    texts = json.loads(json.dumps(port.quote_texts))
    again = type(port)(port.name, port.data, tuple(map(tuple, texts)), port.changes, port.today).problem()
    assert again.spec.catalogs == []  # carried as texts instead
    assert again.spec.model_copy(update={"catalogs": problem.spec.catalogs}) == problem.spec
    assert again.as_of == problem.as_of
    assert again.assumptions.values == problem.assumptions.values
    assert dict(again.catalog.quotes) == dict(problem.catalog.quotes)
    assert again.catalog.quotes["my-h200"].max_nodes == 8 and "my-h200-b" in again.catalog.quotes


@pytest.fixture(scope="module")
def finetune_units() -> tuple[Any, list[Any], list[Any]]:
    problem = load_problem(FINETUNE, ["risk.uncertainty.scenarios=2000"])
    axes = [parse_axis(a) for a in AXES]
    return problem, axes, units(problem, axes, SolveSettings())


@pytest.fixture(scope="module")
def local_json(finetune_units: tuple[Any, list[Any], list[Any]]) -> str:
    problem, axes, work = finetune_units
    return to_json(sweep_dict(problem, axes, Local().map(run_unit, work)))


def test_each_point_is_the_what_if_solved_alone(finetune_units: tuple[Any, list[Any], list[Any]],
                                                local_json: str) -> None:
    problem, _axes, work = finetune_units
    rows = json.loads(local_json)["points"]
    assert [r["status"] for r in rows].count("infeasible") == 2
    assert len({r["plan"]["accelerator"] for r in rows if r["plan"]}) == 2
    for unit, row in zip(work, rows, strict=True):
        alone = load_problem(FINETUNE, ["risk.uncertainty.scenarios=2000", *unit.sets])
        settings = SolveSettings(alternatives=False)
        result = solve_problem(alone, settings, prepare(alone, settings))
        assert row["status"] == result.status, unit.sets
        if result.plan is None:
            assert row["plan"] is None and "budget.max_usd" in row["conflict"], row
            continue
        assert (row["plan"]["option"], row["plan"]["nodes"]) == (result.plan.option, result.plan.nodes)
        assert row["plan"]["cost_usd"] == round(result.plan.total_cost)
        assert 0.0 <= row["risk"]["p_deadline"] <= 1.0 and row["risk"]["scenarios"] == 2000


def test_a_process_pool_gives_the_same_bytes(finetune_units: tuple[Any, list[Any], list[Any]],
                                             local_json: str) -> None:
    problem, axes, work = finetune_units
    assert to_json(sweep_dict(problem, axes, Processes(2).map(run_unit, work))) == local_json


@pytest.fixture(scope="session")
def ray_cluster() -> Any:
    """One real local Ray cluster (2 CPUs) for the test session."""
    if importlib.util.find_spec("ray") is None:
        pytest.skip("ray is not installed here (pip install 'gpu-plan[ray]'); the test extra installs it where it can")
    import ray
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield ray
    ray.shutdown()


def test_ray_gives_the_same_bytes(ray_cluster: Any, finetune_units: tuple[Any, list[Any], list[Any]],
                                  local_json: str) -> None:
    problem, axes, work = finetune_units
    rows = make_executor("ray", 2).map(run_unit, work)
    assert ray_cluster.is_initialized()  # the session's cluster was used, not a new one
    assert to_json(sweep_dict(problem, axes, rows)) == local_json
    assert isinstance(make_executor("ray"), Ray)


def test_a_missing_ray_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    with pytest.raises(InputError, match=r"pip install 'gpu-plan\[ray\]'"):
        make_executor("ray")
    r = CliRunner().invoke(main, ["sweep", str(FINETUNE), "--set-grid", "budget.max_usd=1M", "--executor", "ray"])
    assert r.exit_code == 2 and "--executor ray: Ray is not installed" in r.output, r.output


def test_sensitivity_sweeps_on_a_process_pool_are_the_direct_solves() -> None:
    """`plan sensitivity`'s input sweeps run as plain-data units too: on a pool, each row is the plan of the
    problem with that input changed, solved directly in this process."""
    from solver.answers.sensitivity import sweeps, variant
    problem = load_problem(FINETUNE)
    pooled = sweeps(problem, SolveSettings(), ["tokens"], Processes(2))["tokens"]
    assert [r["value"] for r in pooled] == ["50%", "75%", "100%", "125%", "150%"]
    quick = SolveSettings(alternatives=False)
    for factor, row in ((0.5, pooled[0]), (1.5, pooled[-1])):
        got = variant(problem, "tokens", factor)
        assert got is not None
        alone = solve_problem(got[1], quick, prepare(got[1], quick))
        assert alone.plan is not None and (row["option"], row["nodes"], row["cost_usd"]) == \
            (alone.plan.option, alone.plan.nodes, round(alone.plan.total_cost))


def _wait_for(path: str) -> str:
    """A unit that ends only once `path` exists (an error after a minute)."""
    import time
    end = time.monotonic() + 60
    while not Path(path).exists():
        if time.monotonic() > end:
            raise TimeoutError(f"{path} never appeared")
        time.sleep(0.01)
    return path


def _mark(path: str) -> None:
    """A unit that leaves a file behind, then takes a while."""
    import time
    Path(path).write_text("ran")
    time.sleep(0.05)


def test_a_started_pool_runs_while_this_process_works(tmp_path: Path) -> None:
    """`start` returns while the units run: they end only once this process, after `start` returned, makes the file
    they wait for (a `start` that waited for them would never see it)."""
    gate = str(tmp_path / "gate")
    with Processes(2).start(_wait_for, [gate, gate]) as started:
        Path(gate).write_text("go")
        assert started.results() == [gate, gate]


def test_local_start_runs_the_units_when_their_results_are_asked_for() -> None:
    ran: list[int] = []
    started = Local().start(ran.append, [1, 2])
    assert ran == []
    assert started.results() == [None, None] and ran == [1, 2]
    assert started.results() == [None, None] and ran == [1, 2]


def test_leaving_a_started_pool_drops_the_units_not_yet_started(tmp_path: Path) -> None:
    """What `plan sensitivity` does when there is no plan: the sweeps handed to the pool are dropped, not run."""
    marks = [str(tmp_path / f"unit-{k}") for k in range(40)]
    with Processes(2).start(_mark, marks):
        pass
    ran = sum(Path(m).exists() for m in marks)
    assert ran < len(marks), "every unit ran although the pool was left at once"


class _Node:
    """An object in a reference cycle: only the cyclic collector can free it."""

    def __init__(self) -> None:
        self.me = self


def _cyclic_garbage(n: int) -> int:
    for _ in range(n):
        _Node()
    return n


def test_units_run_without_collection_and_their_garbage_is_freed_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each unit runs with the cyclic collector paused; after it, its garbage is frozen out of the collector's way
    until more than `HELD_OBJECTS` objects are held, then collected at once — so memory stays bounded however many
    units run, and the collector's state is what it was."""
    import gc
    import weakref

    from solver import collect
    monkeypatch.setattr(collect, "HELD_OBJECTS", 50_000)
    monkeypatch.setattr(collect, "_held", [0])
    probes: list[Any] = []
    kept_over: list[bool] = []

    def unit(k: int) -> bool:
        assert not gc.isenabled()
        if probes:
            kept_over.append(probes[-1]() is not None)
        node = _Node()
        probes.append(weakref.ref(node))
        del node
        _cyclic_garbage(10_000)
        return True

    was = gc.isenabled()
    gc.enable()
    try:
        assert Local().map(unit, list(range(12))) == [True] * 12
        assert gc.isenabled()
        assert any(p() is None for p in probes), "garbage held beyond HELD_OBJECTS was never collected"
        assert any(kept_over), "a unit's garbage was collected right after it, not set aside for a batch"
    finally:
        gc.unfreeze()
        gc.collect()
        if not was:
            gc.disable()
