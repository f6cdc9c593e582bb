"""Every CP-SAT call `plan` makes goes through `Engine.solve`: one place for limits, determinism, Ctrl-C and debug.

- **Determinism.** One worker (unless asked), seed 0, a *deterministic* time limit per call (`--time-limit`,
  seconds of CP-SAT's deterministic clock), so the same model gives the same answer on any machine and load.
- **ortools 9.15 workarounds.** `presolve_inclusion_work_limit = 0` against the wrong certified optimum of
  google/or-tools#5293; presolve off for reading assumption cores (google/or-tools#5141). Probing and symmetry
  detection are off: our models are small one-hot selections where they cost more than they save.
- **Ctrl-C.** CP-SAT catches SIGINT itself by default and ends the search early *as if it had finished*, so an
  interrupted search could be reported as a proof (it was: a runner-up 0.03% off its proven optimum, "OPTIMAL").
  Here CP-SAT's handler is off, the search runs on a worker thread, and the main thread waits; Ctrl-C raises
  `KeyboardInterrupt` in the main thread, which stops the search, waits for it, and raises `Interrupted`. No
  result of an interrupted search is ever returned.
- **Wall clock.** Off by default. With `--max-seconds` every call gets the wall time left before the command's
  deadline, and none starts after it (`out_of_time`): the answer is then the best found so far, never a proof.
- **Debugging.** With a debug folder (`--debug-model DIR`) every model is written as text protobuf with the
  solver's log next to it, numbered in call order.
"""

from __future__ import annotations

import logging
import math
import os
import queue
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InternalError, Interrupted
from ..model.cpsat import cp_model

log = logging.getLogger(__name__)

WAIT_SECONDS = 0.05
"""How often the main thread wakes while a search runs: the delay between Ctrl-C and the search being stopped."""


@dataclass(frozen=True)
class Limits:
    """What bounds one CP-SAT call: deterministic seconds, workers, and where to write models for debugging."""

    time_limit: float = 20.0
    workers: int = 1
    debug_dir: str | None = None
    wall_deadline: float | None = None
    """`time.monotonic()` after which no search runs (`--max-seconds`): each call gets the wall time left."""


OPTIMAL = "optimal"
FEASIBLE = "feasible"
INFEASIBLE = "infeasible"
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Outcome:
    """A finished CP-SAT call: `optimal` (proven), `feasible` (a solution, not proven: the time limit), `infeasible`
    (proven), `unknown` (the time limit, no solution); `solver` answers `value(...)` when there is a solution."""

    status: str
    solver: cp_model.CpSolver

    @property
    def has_solution(self) -> bool:
        return self.status in (OPTIMAL, FEASIBLE)

    def value(self, expr: Any) -> int:
        return int(self.solver.value(expr))

    def bound(self) -> int:
        """The proven lower bound of a minimisation (integer objective)."""
        return int(math.ceil(self.solver.best_objective_bound - 1e-6))


_STATUS = {cp_model.OPTIMAL: OPTIMAL, cp_model.FEASIBLE: FEASIBLE, cp_model.INFEASIBLE: INFEASIBLE,
           cp_model.UNKNOWN: UNKNOWN}


class Engine:
    """Runs the CP-SAT calls of one command with its limits (see module docstring)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.calls = 0
        self.out_of_time = False
        """True once the wall-clock deadline stopped a search or kept one from starting."""

    def seconds_left(self) -> float | None:
        """Wall seconds before the deadline (None without one); never negative."""
        if self.limits.wall_deadline is None:
            return None
        return max(0.0, self.limits.wall_deadline - time.monotonic())

    def spent(self) -> bool:
        """Whether the wall-clock deadline has passed (then also `out_of_time`): for the work between CP-SAT calls —
        an explanation's cover tests and written-down plans — which no solver limit stops."""
        if self.seconds_left() == 0.0:
            self.out_of_time = True
        return self.out_of_time

    def solver(self, *, presolve: bool = True, thorough: bool = False) -> cp_model.CpSolver:
        """A solver with the engine's limits. Quick (the default) turns off presolve inclusion, probing and symmetry
        detection and runs one presolve pass, which cost more than they save on the many small solves of a single
        run and of explanations (small one-hot selections; the same optima either way); `thorough` keeps CP-SAT's
        defaults for one hard optimisation (a program), where their work pays for itself (measured: bench/README.md,
        "Timings that used to live in docstrings (moved 2026-12-07)")."""
        s = cp_model.CpSolver()
        p = s.parameters
        p.num_workers = self.limits.workers
        p.random_seed = 0
        p.max_deterministic_time = self.limits.time_limit
        left = self.seconds_left()
        if left is not None:
            p.max_time_in_seconds = max(left, 1e-3)
        if not thorough:
            p.max_presolve_iterations = 1
            p.presolve_inclusion_work_limit = 0
            p.cp_model_probing_level = 0
            p.symmetry_level = 0
        p.catch_sigint_signal = False
        if not presolve:
            p.cp_model_presolve = False
            p.keep_all_feasible_solutions_in_presolve = True
        return s

    def solve(self, model: cp_model.CpModel, *, label: str, presolve: bool = True, thorough: bool = False
              ) -> Outcome:
        """Solve `model` (with its current objective, assumptions and hints); see the module docstring."""
        self.calls += 1
        solver = self.solver(presolve=presolve, thorough=thorough)
        if self.seconds_left() == 0.0:
            self.out_of_time = True
            log.debug("CP-SAT %s: not started, --max-seconds reached", label)
            return Outcome(UNKNOWN, solver)
        log_file = self._debug(model, solver, label)
        try:
            status = _interruptible(solver, model)
        finally:
            if log_file is not None:
                log_file.close()
        if status == cp_model.MODEL_INVALID:
            raise InternalError(f"CP-SAT model invalid ({label}): {model.validate()[:300]}")
        name = _STATUS.get(status, UNKNOWN)
        left = self.seconds_left()
        if name in (FEASIBLE, UNKNOWN) and left is not None and left <= 0.01:
            self.out_of_time = True
        log.debug("CP-SAT %s: %s in %.3f s (deterministic %.3f)", label, name, solver.wall_time,
                  solver.deterministic_time)
        return Outcome(name, solver)

    def _debug(self, model: cp_model.CpModel, solver: cp_model.CpSolver, label: str) -> Any:
        if not self.limits.debug_dir:
            return None
        stem = Path(self.limits.debug_dir) / f"{self.calls:04d}-{re.sub(r'[^A-Za-z0-9.-]+', '_', label)[:80]}"
        model.export_to_file(str(stem) + ".pbtxt")
        fh = open(str(stem) + ".log", "w", encoding="utf-8")
        solver.parameters.log_search_progress = True
        solver.parameters.log_to_stdout = False

        def write_line(line: str) -> None:
            fh.write(line + "\n")

        solver.log_callback = write_line
        return fh


class _Worker:
    """A long-lived thread that runs the CP-SAT searches of the thread that owns it, one at a time.

    Why not a new thread per search: a fresh thread makes CP-SAT set up its thread-local state and a new malloc
    arena again, a fixed cost that is a large share of a small solve (measured: bench/README.md, "Timings that used
    to live in docstrings (moved 2026-12-07)"; tests of the whole pipeline make dozens of solves per command). One
    worker per calling thread keeps searches from different threads independent; one per process (a forked child
    gets its own) because threads do not survive a fork.
    """

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        threading.Thread(target=self._loop, name="cp-sat", daemon=True).start()

    def _loop(self) -> None:
        while True:
            self.jobs.get()()


_workers = threading.local()


def _worker() -> _Worker:
    worker: _Worker | None = getattr(_workers, "worker", None)
    if worker is None or worker.pid != os.getpid():
        worker = _workers.worker = _Worker()
    return worker


def _interruptible(solver: cp_model.CpSolver, model: cp_model.CpModel) -> Any:
    """`solver.solve(model)` on the worker thread, so that Ctrl-C reaches the calling (main) thread while it runs."""
    done = threading.Event()
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["status"] = solver.solve(model)
        except BaseException as exc:  # re-raised in the calling thread
            box["error"] = exc
        finally:
            done.set()

    _worker().jobs.put(run)
    try:
        while not done.wait(WAIT_SECONDS):
            pass
    except KeyboardInterrupt:
        solver.stop_search()
        done.wait()
        raise Interrupted("interrupted") from None
    if "error" in box:
        raise box["error"]
    return box["status"]
