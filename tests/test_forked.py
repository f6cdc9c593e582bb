"""Pairs solved side by side on forked processes (`solver/solve/forked.py`): the same answer as one process, byte
for byte, including what later stages read from the context (chance cuts, the screen's point reasons).

The reference is the serial run of the same code (`--processes 1`), which the rest of the suite checks against
enumeration and hand calculations; these tests check that forking changes nothing but where the work runs.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from cli import main
from solver.answers.report import explained, side_by_side
from solver.errors import InputError, InternalError, Interrupted
from solver.inputs.problem import Problem, load_problem
from solver.render.jsonout import result_dict, to_json
from solver.solve import forked, pipeline
from solver.solve.pipeline import SolveSettings, prepare, processes_for, solve_problem

ROOT = Path(__file__).resolve().parent.parent
DATACENTER = ROOT / "constraints" / "datacenter.yaml"
INFEASIBLE = ROOT / "tests" / "infeasible" / "budget_and_deadline.yaml"

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork is used on Linux only")


def _pid_and_square(x: int) -> tuple[int, int]:
    return os.getpid(), x * x


def _pid_and_square_slowly(item: tuple[int, float]) -> tuple[int, int]:
    x, seconds = item
    time.sleep(seconds)
    return os.getpid(), x * x


@linux_only
@pytest.mark.parametrize("n", [5, 40])
def test_answers_come_back_in_the_items_order_from_children_and_this_process(n: int) -> None:
    """Children take items from the front of the order, this process from its back. The children's first items
    are slow, so this process surely takes the last one."""
    order = sorted(range(n), key=lambda x: (x % 2, -x))
    items = [(x, 0.3 if x in order[:2] else 0.0) for x in range(n)]
    got = forked.fork_map(_pid_and_square_slowly, items, 3, order=order)
    assert [sq for _pid, sq in got] == [x * x for x in range(n)]
    children = {got[order[0]][0], got[order[1]][0]}
    assert len(children) == 2 and os.getpid() not in children
    assert got[order[-1]][0] == os.getpid()


@linux_only
def test_a_free_child_gets_the_next_item_while_this_process_works_on_a_long_one() -> None:
    """The children are fed from a thread of their own: a child that finishes does not wait for this process to
    finish its item before it gets the next."""
    items = [(x, 0.02) for x in range(9)] + [(9, 1.0)]  # this process takes item 9 (the back of the order)
    got = forked.fork_map(_pid_and_square_slowly, items, 2)
    assert got[9][0] == os.getpid()
    assert os.getpid() not in {pid for pid, _sq in got[:9]}


def _offer(item: tuple[forked.SharedMinimum, int | None]) -> int:
    least, value = item
    if value is not None:
        least.offer(value)
    return os.getpid()


@linux_only
def test_a_minimum_offered_in_a_child_is_seen_here() -> None:
    """`SharedMinimum` lives in shared memory made before the fork: a child's offer lowers what this process sees
    (the child is handed the front item before this process starts; the other offers nothing, wherever it runs)."""
    least = forked.SharedMinimum()
    assert least.offer(10) and not least.offer(11) and least.offer(10)
    got = forked.fork_map(_offer, [(least, 5), (least, None)], 2)
    assert got[0] != os.getpid()
    assert not least.offer(6) and least.offer(5) and least.offer(4)


def test_one_process_runs_here() -> None:
    got = forked.fork_map(_pid_and_square, [1, 2, 3], 1)
    assert got == [(os.getpid(), 1), (os.getpid(), 4), (os.getpid(), 9)]


@linux_only
def test_without_a_semaphore_to_share_the_items_run_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """The children take items under a lock shared with this process; where the system has none to give (no
    /dev/shm: `SemLock` fails with an OSError), the map runs here, one item after the other, instead of failing."""
    def no_semaphores(self: Any) -> Any:
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(multiprocessing.context.ForkContext, "Lock", no_semaphores)
    got = forked.fork_map(_pid_and_square, [1, 2, 3], 2)
    assert got == [(os.getpid(), 1), (os.getpid(), 4), (os.getpid(), 9)]


def test_one_process_runs_the_items_in_the_order_given_and_answers_in_theirs() -> None:
    """Serial, the items are worked in `order` (the caller's priority: under a wall-clock limit its first answers
    are those it wants most) and the answers still come back in the items' order."""
    seen: list[int] = []

    def square(x: int) -> int:
        seen.append(x)
        return x * x

    assert forked.fork_map(square, [1, 2, 3, 4], 1, order=[2, 0, 3, 1]) == [1, 4, 9, 16]
    assert seen == [3, 1, 4, 2]
    with pytest.raises(ValueError, match="permutation"):
        forked.fork_map(square, [1, 2, 3], 1, order=[0, 0, 1])


def test_an_order_that_is_not_a_permutation_is_refused() -> None:
    if not forked.can_fork():
        pytest.skip("fork is used on Linux only")
    with pytest.raises(ValueError, match="permutation"):
        forked.fork_map(_pid_and_square, [1, 2, 3], 2, order=[0, 0, 1])


def _fails_on_two(x: int) -> int:
    if x == 2:
        raise InputError("two is not allowed", file="f.yaml", line=3, path="items[2]")
    return x


@linux_only
def test_an_error_in_a_child_reaches_the_parent_as_it_was_raised() -> None:
    with pytest.raises(InputError, match=r"^f\.yaml:3: items\[2\]: two is not allowed$"):
        forked.fork_map(_fails_on_two, [0, 1, 2, 3], 2, order=[2, 0, 1, 3])  # the child takes item 2


@linux_only
def test_an_error_here_stops_the_children() -> None:
    before = _my_children()
    with pytest.raises(InputError, match="two is not allowed"):
        forked.fork_map(_fails_on_two, [0, 1, 2, 3], 2, order=[0, 1, 3, 2])  # this process takes item 2 first
    assert _my_children() <= before


def _dies_on_two(x: int) -> int:
    if x == 2:
        os._exit(3)  # as a crash in native code would: no answer, no exception
    return x


@linux_only
def test_a_child_that_dies_is_an_internal_error_not_a_hang() -> None:
    with pytest.raises(InternalError, match="died"):
        forked.fork_map(_dies_on_two, [0, 1, 2, 3], 2, order=[2, 0, 1, 3])


@linux_only
def test_a_child_that_dies_as_it_starts_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed before it reads its first item (the OOM killer, a signal): the parent's send or read fails at the
    socket, which is reported as the child's death, not as a connection error."""
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "_after_fork", staticmethod(lambda: os._exit(9)))
    with pytest.raises(InternalError, match="died"):
        forked.fork_map(_pid_and_square, [1, 2, 3, 4], 2)


def _dies_holding_the_order(self: Any) -> None:
    self.lock.acquire()
    os._exit(7)


@linux_only
def test_a_child_that_dies_holding_the_order_is_an_internal_error_not_a_hang(monkeypatch: pytest.MonkeyPatch) -> None:
    """Children take items from the order under a lock shared with this process (`_Order`): one killed while it
    holds it (after its first item) leaves it held for ever, and this process still reports the death."""
    monkeypatch.setattr(forked._Order, "take_front", _dies_holding_the_order)
    with pytest.raises(InternalError, match="died"):
        forked.fork_map(_pid_and_square_slowly, [(x, 0.05) for x in range(8)], 2)


@linux_only
def test_a_child_whose_parent_is_gone_ends_quietly() -> None:
    """A child whose parent died (killed) finds the pipe closed when it sends: it ends with exit code 0, without a
    traceback on the terminal it shares."""
    mp = multiprocessing.get_context("fork")
    here, there = mp.Pipe()
    forked._job = (_pid_and_square_slowly, [(1, 0.3), (2, 0.0)], forked._Order(mp, [0, 1], 1))
    try:
        child = mp.Process(target=forked._serve, args=(there, [here], 0), daemon=True)
        child.start()
    finally:
        forked._job = None
    here.close()  # gone before the child's first answer (its item takes 0.3 s)
    there.close()
    child.join(10)
    assert child.exitcode == 0


def _unpicklable(x: int) -> Any:
    return lambda: x


@linux_only
def test_an_answer_that_cannot_come_back_is_an_internal_error() -> None:
    with pytest.raises(InternalError, match="could not send its answer"):
        forked.fork_map(_unpicklable, [0, 1], 2)


def _nested(x: int) -> tuple[int, list[tuple[int, int]], bool]:
    if x == 1:
        time.sleep(0.3)  # the first item keeps the child busy, so this process surely runs the last
    return os.getpid(), forked.fork_map(_pid_and_square, [x, x + 1], 2), forked.in_child()


@linux_only
def test_a_map_inside_a_map_runs_serially_in_a_child_and_here() -> None:
    assert not forked.in_child()
    got = forked.fork_map(_nested, [1, 2, 3], 2)
    assert got[0][0] != os.getpid() and got[2][0] == os.getpid()
    for pid, inner, in_child in got:
        assert {p for p, _sq in inner} == {pid} and in_child == (pid != os.getpid())
    assert forked.can_fork()


_SIGINT_AT_FORK = {"parent": False}
"""Whether the forking thread sends itself SIGINT right after each fork (a Ctrl-C that lands while a child is
started). Sent to the thread, not the process: with SIGINT blocked in it, a process-directed signal would go to
another thread (pytest-xdist's), whose handler call would then raise inside this hook, where it is swallowed."""


def _sigint_in_parent() -> None:
    if _SIGINT_AT_FORK["parent"]:
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_parent=_sigint_in_parent)


def _my_children() -> set[str]:
    multiprocessing.active_children()  # reaps the ones that have exited
    return set(Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split())


@linux_only
def test_a_ctrl_c_while_a_child_starts_is_ignored_there(monkeypatch: pytest.MonkeyPatch) -> None:
    """The child is forked with SIGINT blocked until it ignores it: else the signal interrupts its start-up
    (multiprocessing's bootstrap prints a traceback, and the child dies before it serves anything)."""
    bootstrap = multiprocessing.process.BaseProcess._after_fork

    def sigint_then_bootstrap() -> None:  # in the child, before it reaches `_child_init`
        os.kill(os.getpid(), signal.SIGINT)
        bootstrap()

    monkeypatch.setattr(multiprocessing.process.BaseProcess, "_after_fork", staticmethod(sigint_then_bootstrap))
    got = forked.fork_map(_pid_and_square, [1, 2, 3, 4], 2)
    assert [sq for _pid, sq in got] == [1, 4, 9, 16]


@linux_only
def test_a_ctrl_c_while_a_child_starts_interrupts_the_parent_and_stops_the_child() -> None:
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("Python runs signal handlers in the main thread only")
    before = _my_children()
    # A shell starts a background job with SIGINT ignored, and Python then keeps it so: make it what a terminal gives.
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    _SIGINT_AT_FORK["parent"] = True
    try:
        with pytest.raises(Interrupted):
            forked.fork_map(_pid_and_square, [1, 2, 3, 4], 2)
    finally:
        _SIGINT_AT_FORK["parent"] = False
        signal.signal(signal.SIGINT, handler)
    assert _my_children() <= before, "a child forked before the interruption is still running"


def _json(problem: Problem, processes: int) -> str:
    settings = SolveSettings(processes=processes)
    ctx = prepare(problem, settings)
    result = explained(ctx, solve_problem(problem, settings, ctx))
    return to_json(result_dict(result))


@linux_only
@pytest.mark.parametrize("file", [DATACENTER, INFEASIBLE], ids=["feasible", "infeasible"])
def test_two_processes_give_the_json_of_one(file: Path) -> None:
    """Everything `plan solve` prints: the plan, the runners-up, every exclusion reason, the explanation of an
    infeasible problem (which prunes points by the screen's known reasons), the frontier and the risk table."""
    problem = load_problem(file)
    assert _json(problem, 2) == _json(problem, 1)


@linux_only
def test_answers_side_by_side_come_back_by_name_with_a_child_s_wall_clock_stop() -> None:
    """A plan's answers run on forked children too (`report.side_by_side`): each comes back under its name, in the
    tasks' order, and a child's `--max-seconds` stop reaches the command's engine (its later searches must not
    start)."""
    ctx = prepare(load_problem(DATACENTER), SolveSettings(processes=2))

    def stop() -> int:
        ctx.engine.out_of_time = True
        return os.getpid()

    got = side_by_side(ctx, {"stops": stop, "b": os.getpid, "c": lambda: 3}, 2)  # the child takes the first
    assert list(got) == ["stops", "b", "c"] and got["c"] == 3
    assert got["stops"] != os.getpid() and ctx.engine.out_of_time


TWO_PAIRS = [
    {"id": f"cut-{x}-{sys_}", "system": sys_, "mode": "cloud", "vendor": "test", "usd_per_gpu_hour": price,
     "max_nodes": 4, "lead_time_days": 20, "lead_time_p90_days": 60, "fabric": f"fab-{sys_}",
     "quoted_on": "2026-11-20", "valid_until": "2027-03-31", "kind": "list", "source": "test"}
    for sys_, price in (("dgx-h100", 2.0), ("hgx-h200", 2.6)) for x in "ab"]
"""Two pairs (H100 and H200 in the cloud), each with two late quotes of one fabric whose plans on both miss a 95%
deadline confidence together (`test_chance.py` works the numbers): each pair's search adds chance cuts."""


@linux_only
def test_chance_cuts_found_in_children_reach_the_parent() -> None:
    import solver.estimate.chance as chance
    problem = {"name": "cut", "as_of": "2026-12-01",
               "workload": {"method": "pretrain", "params": "7B", "tokens": "200B", "seq_len": 2048, "layers": 32,
                            "hidden": 4096},
               "schedule": {"deadline": "2027-03-06"},
               "policy": {"modes": ["cloud"], "accelerators": {"include": ["h100-sxm", "h200"]},
                          "deadline_confidence": 0.95},
               "risk": {"uncertainty": {"scenarios": 4000}},
               "objective": {"cost": 1, "delay_cost_usd_per_day": 10000}}
    saved = chance.EXACT_QUOTE_SETS
    chance.EXACT_QUOTE_SETS = 1
    try:
        with tempfile.TemporaryDirectory() as d:
            tmp = Path(d)
            (tmp / "q.yaml").write_text(yaml.safe_dump({"quotes": TWO_PAIRS}))
            (tmp / "p.yaml").write_text(yaml.safe_dump({**problem, "catalogs": ["q.yaml"]}, sort_keys=False))
            loaded = load_problem(tmp / "p.yaml")
            cat = loaded.files_catalog
            assert cat is not None
            keep = {k: v for k, v in cat.quotes.items() if k.startswith("cut-")}
            p = loaded.with_catalog(dataclasses.replace(cat, quotes=MappingProxyType(keep)))
            runs: list[tuple[Any, Any]] = []
            for processes in (1, 2):
                settings = SolveSettings(processes=processes)
                ctx = prepare(p, settings)
                assert processes_for(ctx, len(ctx.universe.pairs())) == processes
                runs.append((solve_problem(p, settings, ctx), ctx))
    finally:
        chance.EXACT_QUOTE_SETS = saved
    (serial, serial_ctx), (two, two_ctx) = runs
    assert len(serial_ctx.cuts) == 2 and all(serial_ctx.cuts.values())  # both pairs were cut
    assert two_ctx.cuts == serial_ctx.cuts
    assert to_json(result_dict(two)) == to_json(result_dict(serial))


@linux_only
@pytest.mark.parametrize("file", [DATACENTER, INFEASIBLE], ids=["feasible", "infeasible"])
def test_the_parent_knows_every_point_reason_the_children_found(file: Path) -> None:
    """After the solve, and after the reasons why pairs without a plan cannot work (also searched pair by pair on
    children), the parent's screen holds the same point reasons as after a serial run (an explanation prunes the
    points whose reasons are known, so a missing one could change its model, not only its speed); the reasons are
    the same too."""
    from solver.answers.conflicts import exclusion_reasons
    problem = load_problem(file)
    found = []
    for processes in (1, 2):
        settings = SolveSettings(processes=processes)
        ctx = prepare(problem, settings)
        result = solve_problem(problem, settings, ctx)
        solved = ctx.screen.findings({o.id for o in ctx.universe.options})
        reasons = exclusion_reasons(ctx, list(result.infeasible_pairs))
        found.append((solved, reasons, ctx.screen.findings({o.id for o in ctx.universe.options})))
    serial, two = found
    assert serial[0].local and serial[0].excluded and len(serial[1]) >= 2
    assert two == serial


def test_the_default_may_use_every_cpu_but_never_when_models_are_written(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    problem = load_problem(DATACENTER)
    monkeypatch.setattr(pipeline, "available_cpus", lambda: 3)
    ctx = prepare(problem)
    pairs = len(ctx.universe.pairs())
    assert processes_for(ctx, pairs) == 3 and processes_for(ctx, 2) == 2
    assert processes_for(prepare(problem, SolveSettings(processes=1)), pairs) == 1
    assert processes_for(prepare(problem, SolveSettings(processes=3, debug_model=str(tmp_path))), pairs) == 1
    monkeypatch.setattr(pipeline, "PARALLEL_MAX_QUOTES", 10)
    assert processes_for(ctx, pairs) == 1


@linux_only
@pytest.mark.parametrize("after, forked_pairs", [(1e9, None), (0.0, "all")])
def test_by_default_only_the_pairs_left_after_a_while_are_forked(after: float, forked_pairs: str | None,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A search that ends within `FORK_AFTER_SECONDS` forks nothing; past it, every pair left is forked out (with
    a zero delay, all of them); the JSON is the serial one either way."""
    problem = load_problem(DATACENTER)
    serial = _json(problem, 1)
    calls: list[tuple[int, int]] = []
    real = pipeline.fork_map

    def recording(fn: Any, items: Any, processes: int, order: Any = None) -> Any:
        calls.append((len(items), processes))
        return real(fn, items, processes, order)

    monkeypatch.setattr(pipeline, "fork_map", recording)
    monkeypatch.setattr(pipeline, "available_cpus", lambda: 2)
    monkeypatch.setattr(pipeline, "FORK_AFTER_SECONDS", after)
    settings = SolveSettings()
    ctx = prepare(problem, settings)
    got = to_json(result_dict(explained(ctx, solve_problem(problem, settings, ctx))))
    assert got == serial
    pairs = len(ctx.universe.pairs())
    solve_calls = [c for c in calls if c[0] == pairs]
    if forked_pairs is None:
        assert not solve_calls
    else:
        assert solve_calls and solve_calls[0] == (pairs, 2)


def test_the_cli_takes_processes_and_refuses_zero() -> None:
    runner = CliRunner()
    one = runner.invoke(main, ["solve", str(DATACENTER), "--format", "json", "--processes", "1"])
    assert one.exit_code == 0, one.output
    bad = runner.invoke(main, ["solve", str(DATACENTER), "--processes", "0"])
    assert bad.exit_code == 2 and "--processes" in bad.output and "Traceback" not in bad.output
