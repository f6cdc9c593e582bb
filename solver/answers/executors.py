"""Where the units of a sweep run: in this process, on a local process pool, or on a Ray cluster.

Each executor maps one function over a list of plain-data units and returns the answers in the units' order, so
the caller cannot tell them apart except by speed: the answers are byte-identical (see `sweep.py` for why). Ray is
an optional extra (`pip install 'gpu-plan[ray]'`), imported only when asked for.

`start` hands the units over and returns at once, so that this process can do other work while they run
(`plan sensitivity` computes its break-even prices while the sweeps run on the pool); `map` is `start` followed by
`results`. The local executor runs its units only when their results are asked for, after that other work, as
`map` would.

Signals: Ctrl-C reaches the workers too (the terminal sends it to the process group), SIGTERM usually this process
alone (`kill PID`, a service manager). Either way the command unwinds through `Started`, and leaving it with an
exception stops the workers at once rather than waiting for their units (`_stop_pool`, `Ray.start`): no worker, and
so no resource tracker, outlives the command (`render/console.py` says "terminated" and exits 143).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Generic, Protocol, TypeVar

from .. import DISTRIBUTION, collect
from ..errors import InputError

log = logging.getLogger(__name__)

U = TypeVar("U")
R = TypeVar("R")
T = TypeVar("T")

EXECUTORS = ("local", "process", "ray")


class Started(Generic[T]):
    """Work handed to an executor (`start`): `results()` waits for its answers (an executor's: one per unit, in
    the units' order). Used as a context manager, leaving it releases what runs them (a pool, a local Ray) and
    drops the units not yet started, also when the work done meanwhile raised; leaving it with an exception (an
    error, Ctrl-C, SIGTERM) calls `abort` instead of `close`, which also stops the units under way: their answers
    are moot, and a SIGTERM that reached this process alone leaves nothing else to stop them."""

    def __init__(self, results: Callable[[], T], close: Callable[[], None] = lambda: None,
                 abort: Callable[[], None] | None = None) -> None:
        self._results = results
        self._close = close
        self._abort = abort or close
        self._got: list[T] = []

    def results(self) -> T:
        if not self._got:
            self._got.append(self._results())
        return self._got[0]

    def close(self) -> None:
        self._close()

    def then(self, fn: Callable[[T], R]) -> Started[R]:
        """The same work, its results passed through `fn` (once, when asked for)."""
        return Started(lambda: fn(self.results()), self._close, self._abort)

    def __enter__(self) -> Started[T]:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is None:
            self._close()
        else:
            self._abort()


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
        """The workers are spawned as the units are handed over, with Ctrl-C and SIGTERM blocked (a spawned process
        inherits the mask): a Ctrl-C that arrived while Python itself starts up in a worker, before any handler can
        exist, was a "Fatal Python error" there, and a signal taken here halfway through a spawn would leave a worker
        the pool does not list. Each worker lets them through once it can take them quietly (`_quiet_worker`); here
        they are let through inside the `try`, so that one held back meanwhile stops the pool it interrupts."""
        if self.workers <= 1 or len(units) <= 1:
            return Local().start(fn, units)
        quiet_resource_tracker()
        pool = ProcessPoolExecutor(max_workers=min(self.workers, len(units)),
                                   mp_context=multiprocessing.get_context("spawn"), initializer=_quiet_worker)
        try:
            blocked = _block_signals()
            try:
                futures: list[Future[R]] = [pool.submit(as_unit, fn, u) for u in units]
            finally:
                _unblock_signals(blocked)
        except BaseException:
            _stop_pool(pool)
            raise
        return Started(lambda: [f.result() for f in futures], lambda: pool.shutdown(cancel_futures=True),
                       lambda: _stop_pool(pool))


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """End a pool's workers now, whatever they are running, and wait until they are gone.

    `shutdown` alone lets the units under way run to their end: after Ctrl-C that is moot (the workers took it
    too), but after a SIGTERM sent to this process alone it kept two workers of 150–200 MB running, adopted by init,
    for a minute after the command had exited, with the resource tracker waiting for them. The workers are the
    executor's `_processes` (no public API lists them before Python 3.14's `terminate_workers`). A worker still
    starting up holds SIGTERM blocked until `_quiet_worker`, which lets it through: it ends there."""
    workers = list((getattr(pool, "_processes", None) or {}).values())
    for worker in workers:
        if worker.is_alive():
            worker.terminate()
    until = time.monotonic() + STOP_GRACE_SECONDS
    for worker in workers:
        worker.join(max(0.0, until - time.monotonic()))
    for worker in workers:   # still starting, SIGTERM held back: killed before this process lets go of its pipes
        if worker.is_alive():
            worker.kill()
            worker.join()
    pool.shutdown(wait=True, cancel_futures=True)


STOP_GRACE_SECONDS = 1.0
"""How long a pool's worker told to end (SIGTERM) may take before it is killed: a worker still starting up holds
SIGTERM back until `_quiet_worker`, and left to finish starting after this process went on it met a closed pipe or
a removed semaphore and printed a traceback on the command's stderr."""


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


STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})
"""Ctrl-C and SIGTERM: the signals that stop a command, held back while its workers are spawned."""


def _block_signals() -> frozenset[int]:
    """Block Ctrl-C and SIGTERM in this thread (the one that spawns the workers); those that were not blocked."""
    if not hasattr(signal, "pthread_sigmask"):
        return frozenset()
    return STOP_SIGNALS - signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)


def _unblock_signals(blocked: frozenset[int]) -> None:
    """Let through the signals `_block_signals` blocked; one held back meanwhile is raised here."""
    if blocked:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, blocked)


def _quiet_worker() -> None:
    """A pool worker, ready to run units: Ctrl-C (which the terminal sends to the whole process group) ends it at
    once and without a word — the command that owns the pool says "interrupted" for all — and so does SIGTERM
    (from `_stop_pool`, or a `timeout` that signals the group), by its default action: the handler a spawned worker
    inherits from `cli.py`'s first lines would print the command's own "terminated" line. Both are let through
    now."""
    signal.signal(signal.SIGINT, _exit_quietly)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


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
        """The units as Ray tasks, on a Ray started here unless one runs already. The processes this one has before
        it starts Ray are noted, so that leaving `Started` ends every process Ray started, and only those
        (`_shutdown_ray`)."""
        ray = import_ray()
        started = not ray.is_initialized()
        before = _descendants() if started else {}
        if started:
            _adopt_orphans(True)
            _init_ray(ray, self.address, self.workers, before)

        def close() -> None:
            if started:  # the local Ray's processes must not outlive the command
                _shutdown_ray(ray, before)
        try:
            task = ray.remote(num_cpus=1)(as_unit)
            refs = [task.remote(fn, u) for u in units]
        except BaseException:
            close()
            raise
        return Started(lambda: list(ray.get(refs)), close)


def _init_ray(ray: Any, address: str | None, workers: int, before: dict[int, str]) -> None:
    """`ray.init`, leaving this process's SIGTERM handling as it was, and no Ray behind if it did not return.

    `ray.init` sets a SIGTERM handler of its own (`sys.exit(15)`), and, unless `import_ray` switched it off, its
    C++ core a crash handler that dumps "*** SIGTERM received ... PC: ..." on stderr: a `kill` of the command was
    exit 15 with that dump, and could leave Ray's agents running. Putting the handler back replaces both for
    SIGTERM, so SIGTERM unwinds like Ctrl-C, `Started` shuts Ray down, and the command says "terminated" once. A
    SIGTERM that Ray's handler took during `ray.init` is raised again once the half-started Ray is shut down."""
    quiet = {"log_to_driver": False, "logging_level": logging.ERROR}
    try:
        with _sigterm_kept() as ours:
            if address:
                ray.init(address=address, **quiet)
            else:
                ray.init(num_cpus=workers, include_dashboard=False, **quiet)
    except BaseException as exc:
        _shutdown_ray(ray, before)  # whatever part of a local Ray had started must not outlive the command
        if isinstance(exc, SystemExit) and exc.code == signal.SIGTERM and ours is not None:
            signal.raise_signal(signal.SIGTERM)  # Ray's handler took it: now ours has it (`Terminated`)
        raise


def _shutdown_ray(ray: Any, before: dict[int, str]) -> None:
    """`ray.shutdown`, whole, then the end of every process Ray started that still runs (`_end_descendants`).

    Ctrl-C and SIGTERM are held back until this is done, then handled: a shutdown cut short by one (the units done,
    Ray stopping, then `kill`) left Ray's dashboard and runtime-env agents running, adopted by init, for a minute
    after the command had exited. So did a `ray.init` cut short: Ray's shutdown does not know a node it had not
    finished starting, and a raylet ended while starting leaves the agents it started behind. The handlers are put
    back after it: with Ray's crash handler on (see `import_ray`), `ray.shutdown` leaves SIGTERM to its default
    action, a silent exit 143."""
    with _signals_held():
        try:
            ray.shutdown()
        finally:
            _end_descendants(before)
            _adopt_orphans(False)


PR_SET_CHILD_SUBREAPER = 36
"""prctl(2): the orphans of this process's descendants are reparented to it, not to init."""


def _adopt_orphans(on: bool) -> None:
    """Be (or stop being) the "subreaper" of this process's descendants while a local Ray runs (Linux only).

    Ray's agents and workers are the raylet's children: when a raylet still starting up is ended, they used to be
    adopted by init and out of reach. Adopted here instead, they stay this process's descendants, so that
    `_end_descendants` finds them; once they end, init collects them, as it does everything this process leaves."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)
    except (OSError, AttributeError):  # no prctl: Ray's own shutdown is all there is
        pass


END_ROUNDS = 5
"""Rounds of `_end_descendants`: a process ended in one may leave children that are ended in the next."""


def _end_descendants(before: dict[int, str]) -> None:
    """End the descendants of this process that were not among them `before` (by id and start time), round after
    round, until none runs."""
    for _ in range(END_ROUNDS):
        new = {pid: start for pid, start in _descendants().items() if before.get(pid) != start}
        running = {pid: start for pid, start in new.items() if _running(pid, start)}
        if not running:
            return
        _end_processes(running)


def _descendants() -> dict[int, str]:
    """This process's descendants (children, their children, ...), each with its start time, which tells it from a
    later process given the same id; empty where there is no /proc to read them from."""
    parents: dict[int, list[int]] = {}
    starts: dict[int, str] = {}
    for pid in _proc_ids():
        fields = _stat_fields(pid)
        if fields:
            parents.setdefault(int(fields[1]), []).append(pid)
            starts[pid] = fields[19]
    found: dict[int, str] = {}
    todo = [os.getpid()]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found[child] = starts[child]
                todo.append(child)
    return found


def _proc_ids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:  # not Linux
        return []


def _stat_fields(pid: int) -> list[str]:
    """/proc/PID/stat after the command name: state, parent, ..., start time (index 19); [] if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


END_SECONDS = 3.0
"""How long a process told to end (SIGTERM) may take before it is killed."""


def _end_processes(processes: dict[int, str]) -> None:
    """SIGTERM to each of `processes` still running, SIGKILL to those still running `END_SECONDS` later; back when
    none runs (or a second after the SIGKILL)."""
    left = _signal_and_wait(processes, signal.SIGTERM, END_SECONDS)
    _signal_and_wait(left, signal.SIGKILL, 1.0)


def _signal_and_wait(processes: dict[int, str], sig: int, seconds: float) -> dict[int, str]:
    """Send `sig` to those of `processes` still running; those still running `seconds` later."""
    import time
    running = {pid: start for pid, start in processes.items() if _running(pid, start)}
    for pid in running:
        try:
            os.kill(pid, sig)
        except OSError:  # gone meanwhile
            pass
    deadline = time.monotonic() + seconds
    while running and time.monotonic() < deadline:
        time.sleep(0.02)
        running = {pid: start for pid, start in running.items() if _running(pid, start)}
    return running


def _running(pid: int, start: str) -> bool:
    """Whether process `pid`, started at `start`, still runs (a zombie, or another process since, does not)."""
    fields = _stat_fields(pid)
    return bool(fields) and fields[19] == start and fields[0] not in ("Z", "X")


@contextmanager
def _signals_held() -> Iterator[None]:
    """Run a step that must not be cut short with Ctrl-C and SIGTERM only noted, then put their handlers back and
    raise the one that came again (SIGTERM first). Off the main thread no handler can be set: nothing is held."""
    if not _main_thread():
        yield
        return
    came: list[int] = []
    handlers = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    for s in STOP_SIGNALS:
        signal.signal(s, lambda signum, frame: came.append(signum))
    try:
        yield
    finally:
        for s, handler in handlers.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)
        if came:
            signal.raise_signal(signal.SIGTERM if signal.SIGTERM in came else came[0])


@contextmanager
def _sigterm_kept() -> Iterator[Any]:
    """Run a step of Ray's, then put back the SIGTERM handler it replaced (yielded: None when it cannot be put back,
    off the main thread, or when no Python handler was set)."""
    ours = signal.getsignal(signal.SIGTERM) if _main_thread() else None
    try:
        yield ours
    finally:
        if ours is not None:
            signal.signal(signal.SIGTERM, ours)


def _main_thread() -> bool:
    import threading
    return threading.current_thread() is threading.main_thread()


def as_unit(fn: Callable[[U], R], unit: U) -> R:
    """fn(unit) with cyclic garbage collection paused, as a command runs in its own process, and its garbage set aside
    after (`collect.unit`). Every executor runs its units this way: a worker that collected as it went would re-scan
    the long-lived objects of every universe it built at each automatic full collection (`collect.py`), which made a
    pool of two processes slower than one process (measured: bench/README.md, "Timings that used to live in
    docstrings (moved 2026-12-07)"); one that never collected would hold gigabytes after a hundred units."""
    with collect.unit():
        return fn(unit)


RAY_CRASH_HANDLER_OFF = "RAY_DISABLE_FAILURE_SIGNAL_HANDLER"
"""Ray's documented switch for the C++ crash handler of its processes, read once, when `ray` is imported."""


def import_ray() -> Any:
    """Ray, or a one-line input error saying how to install it.

    Imported with Ray's C++ crash handler switched off for this process only: besides real crashes, that handler
    takes SIGTERM, and from the moment `ray.init` connects until this process's handler is put back (`_init_ray`),
    a `kill` of the command printed "*** SIGTERM received ... PC: @ ... __recv" and a stack on stderr before its
    one line. The switch is an environment variable that Ray reads as it is imported; it is removed right after,
    so the processes Ray starts (raylet, workers), which inherit the environment, keep their crash handler. The
    cost: a crash inside Ray's C++ code in this process shows no C++ stack. A value the user set is left alone, and
    a Ray imported before (a test session, a notebook) keeps the handler it has."""
    try:
        with _env_while_importing(RAY_CRASH_HANDLER_OFF, "1", "ray"):
            import ray
    except ImportError:
        raise InputError(f"Ray is not installed: pip install '{DISTRIBUTION}[ray]' (or pip install ray), or use "
                         "--executor process", origin="--executor ray") from None
    return ray


@contextmanager
def _env_while_importing(name: str, value: str, module: str) -> Iterator[None]:
    """`name=value` in the environment while `module` is first imported, unless the user set `name` already."""
    if name in os.environ or module in sys.modules:
        yield
        return
    os.environ[name] = value
    try:
        yield
    finally:
        os.environ.pop(name, None)


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
