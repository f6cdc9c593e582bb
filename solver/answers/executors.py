"""Where the units of a sweep run: in this process, on a local process pool, or on a Ray cluster.

Each executor maps one function over a list of plain-data units and returns the answers in the units' order, so
the caller cannot tell them apart except by speed: the answers are byte-identical (see `sweep.py` for why). Ray is
an optional extra (`pip install 'plan[ray]'`), imported only when asked for.

`start` hands the units over and returns at once, so that this process can do other work while they run
(`plan sensitivity` computes its break-even prices while the sweeps run on the pool); `map` is `start` followed by
`results`. The local executor runs its units only when their results are asked for, after that other work, as
`map` would.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Generic, Protocol, TypeVar

from .. import collect
from ..errors import InputError

log = logging.getLogger(__name__)

U = TypeVar("U")
R = TypeVar("R")
T = TypeVar("T")

EXECUTORS = ("local", "process", "ray")


class Started(Generic[T]):
    """Work handed to an executor (`start`): `results()` waits for its answers (an executor's: one per unit, in
    the units' order). Used as a context manager, leaving it releases what runs them (a pool, a local Ray) and
    drops the units not yet started, also when the work done meanwhile raised."""

    def __init__(self, results: Callable[[], T], close: Callable[[], None] = lambda: None) -> None:
        self._results = results
        self._close = close
        self._got: list[T] = []

    def results(self) -> T:
        if not self._got:
            self._got.append(self._results())
        return self._got[0]

    def close(self) -> None:
        self._close()

    def then(self, fn: Callable[[T], R]) -> Started[R]:
        """The same work, its results passed through `fn` (once, when asked for)."""
        return Started(lambda: fn(self.results()), self._close)

    def __enter__(self) -> Started[T]:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._close()


class Executor(Protocol):
    @property
    def name(self) -> str: ...

    def map(self, fn: Callable[[U], R], units: Sequence[U]) -> list[R]: ...

    def start(self, fn: Callable[[U], R], units: Sequence[U]) -> Started[list[R]]: ...


@dataclass(frozen=True)
class Local:
    """Every unit in this process, one after the other (the reference the others are compared with)."""

    name: str = "local"

    def map(self, fn: Callable[[U], R], units: Sequence[U]) -> list[R]:
        return [as_unit(fn, u) for u in units]

    def start(self, fn: Callable[[U], R], units: Sequence[U]) -> Started[list[R]]:
        """Nothing runs until the results are asked for: this process has only one thread of work."""
        return Started(lambda: self.map(fn, units))


@dataclass(frozen=True)
class Processes:
    """A pool of `workers` local processes started fresh ("spawn": no OR-Tools state or thread is inherited from
    this process), one unit at a time per process."""

    workers: int
    name: str = "process"

    def map(self, fn: Callable[[U], R], units: Sequence[U]) -> list[R]:
        with self.start(fn, units) as started:
            return started.results()

    def start(self, fn: Callable[[U], R], units: Sequence[U]) -> Started[list[R]]:
        """The workers are spawned as the units are handed over, with Ctrl-C blocked (a spawned process inherits
        the mask): one that arrived while Python itself starts up in a worker, before any handler can exist, was a
        "Fatal Python error" there. Each worker lets it through once it can take it quietly (`_quiet_worker`)."""
        if self.workers <= 1 or len(units) <= 1:
            return Local().start(fn, units)
        quiet_resource_tracker()
        pool = ProcessPoolExecutor(max_workers=min(self.workers, len(units)),
                                   mp_context=multiprocessing.get_context("spawn"), initializer=_quiet_worker)
        blocked = _block_sigint()
        try:
            futures: list[Future[R]] = [pool.submit(as_unit, fn, u) for u in units]
        except BaseException:
            pool.shutdown(cancel_futures=True)
            raise
        finally:
            _unblock_sigint(blocked)
        return Started(lambda: [f.result() for f in futures], lambda: pool.shutdown(cancel_futures=True))


QUIET_TRACKER = "ignore:resource_tracker:UserWarning"
"""The `-W` option that silences the resource tracker's "leaked semaphore" warning (`quiet_resource_tracker`)."""


def quiet_resource_tracker() -> None:
    """Start multiprocessing's resource tracker, when it starts, without its "leaked semaphore objects" warning.

    A spawned pool's queues hold named semaphores, registered with the tracker (a process of its own, started with
    the first of them and given this interpreter's `-W` options). After Ctrl-C the console script leaves with
    `os._exit` (cli.py, `entry`) while the pool's queues may still be alive, unfinalised; once every process is gone,
    the tracker unlinks what is still registered — as it should — and warns "There appear to be 5 leaked semaphore
    objects", a second line after "interrupted" on the user's terminal. Only the warning is filtered; the clean-up
    stays. (Fork-context semaphores, `forked.py`'s, are unlinked at once and never registered.)"""
    if QUIET_TRACKER not in sys.warnoptions:
        sys.warnoptions.append(QUIET_TRACKER)


def _block_sigint() -> bool:
    """Block Ctrl-C in this thread (the one that spawns the workers); whether it was not blocked already."""
    if not hasattr(signal, "pthread_sigmask"):
        return False
    return signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def _unblock_sigint(blocked: bool) -> None:
    if blocked:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _quiet_worker() -> None:
    """A pool worker, ready to run units: Ctrl-C (which the terminal sends to the whole process group) ends it at
    once and without a word — the command that owns the pool says "interrupted" for all — and is let through now."""
    signal.signal(signal.SIGINT, _exit_quietly)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _exit_quietly(signum: int, frame: object) -> None:
    os._exit(130)


@dataclass(frozen=True)
class Ray:
    """Ray tasks, one CPU each: on the cluster at `address` ("auto": the one this machine belongs to; "ray://host:
    10001": a remote head through Ray Client), or, without an address, a local Ray started with `workers` CPUs.
    A Ray already initialised by the caller (a test session, a notebook) is used as it is."""

    address: str | None
    workers: int
    name: str = "ray"

    def map(self, fn: Callable[[U], R], units: Sequence[U]) -> list[R]:
        with self.start(fn, units) as started:
            return started.results()

    def start(self, fn: Callable[[U], R], units: Sequence[U]) -> Started[list[R]]:
        ray = import_ray()
        started = not ray.is_initialized()
        if started:
            quiet = {"log_to_driver": False, "logging_level": logging.ERROR}
            if self.address:
                ray.init(address=self.address, **quiet)
            else:
                ray.init(num_cpus=self.workers, include_dashboard=False, **quiet)

        def close() -> None:
            if started:  # the local Ray's processes must not outlive the command
                ray.shutdown()
        try:
            task = ray.remote(num_cpus=1)(as_unit)
            refs = [task.remote(fn, u) for u in units]
        except BaseException:
            close()
            raise
        return Started(lambda: list(ray.get(refs)), close)


def as_unit(fn: Callable[[U], R], unit: U) -> R:
    """fn(unit) with cyclic garbage collection paused, as a command runs in its own process, and its garbage set aside
    after (`collect.unit`). Every executor runs its units this way: in a worker that collected as it went, a what-if
    of the 200B example took three times as long (0.35 → 1.05 s), so a pool of two processes was slower than one
    process; one that never collected would hold gigabytes after a hundred units."""
    with collect.unit():
        return fn(unit)


def import_ray() -> Any:
    """Ray, or a one-line input error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise InputError("Ray is not installed: pip install 'plan[ray]' (or pip install ray), or use "
                         "--executor process", origin="--executor ray") from None
    return ray


def default_workers() -> int:
    """The CPUs this process may use (the affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def make_executor(name: str, workers: int | None = None, address: str | None = None) -> Executor:
    """The executor called `name` (one of `EXECUTORS`)."""
    n = workers or default_workers()
    if address and name != "ray":
        raise InputError("--address is for --executor ray", origin=f"--address {address}")
    if name == "local":
        return Local()
    if name == "process":
        return Processes(n)
    if name == "ray":
        import_ray()
        return Ray(address, n)
    raise InputError(f"unknown executor '{name}' (use one of {', '.join(EXECUTORS)})", origin=f"--executor {name}")


__all__ = ["Executor", "Started", "Local", "Processes", "Ray", "EXECUTORS", "make_executor", "default_workers",
           "import_ray", "as_unit"]
