"""Independent searches side by side, on forked copies of this process.

Why fork: a pair's search reads the whole prepared context (universe, screen, bounds: hundreds of megabytes with
a marketplace catalog). A forked child has all of it at once, shared copy-on-write; a fresh ("spawn") process would
import the package again (0.4 s) and rebuild the context, which is what a 10,000-quote solve has to save. A
task is an index into the list of items the parent holds when it forks; its answer is plain data (a plan, a
status, numbers) pickled back. This process works too, on the items at the back of the order while the children
take them from the front: with N processes, N − 1 children (one fork fewer, and the items it runs leave their
caches here). Answers come back in the items' order whatever order they finished in, and each search is
single-threaded with a fixed seed (`engine.py`), so the result is byte-identical to the serial one.

Fork-safety: the children use no lock another thread of the parent could hold. Our own threads are the CP-SAT
worker (idle between searches; a child starts its own, `engine._worker`), the progress spinner (which never
draws while a fork happens, `render/progress.py`) and the thread that feeds the children (`_Feeder`, started
once every child is forked); numpy's OpenBLAS threads have their own fork handlers. A child
that dies is an error, never a hang (the parent reads the end of its pipe). Children ignore Ctrl-C: the parent
stops them (`terminate`) and raises `Interrupted`, so no partial answer is returned. Fork is used on Linux only
(unsafe with macOS system frameworks, absent on Windows); elsewhere the items run one after the other.
"""

from __future__ import annotations

import logging
import mmap
import multiprocessing
import os
import signal
import struct
import sys
import threading
from collections import deque
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar

from ..errors import InternalError, Interrupted

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

_job: tuple[Callable[[Any], Any], Sequence[Any]] | None = None
"""The function and items of the running `fork_map`, read by the children it forks (set before they exist)."""
_in_child = False
"""True in a forked child: a `fork_map` there runs serially (no process tree)."""
_mapping = False
"""True while this process runs an item of its own `fork_map`: a map inside it runs serially."""


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask, which containers and `taskset` narrow), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def in_child() -> bool:
    """Whether this is a child `fork_map` forked (whose answers must carry what the parent should learn)."""
    return _in_child


def can_fork() -> bool:
    return sys.platform.startswith("linux") and not _in_child and not _mapping


class SharedMinimum:
    """An integer minimum shared by this process and the children it forks afterwards (a page of shared memory):
    a search on any of them can ask whether its value is at most the least one offered anywhere so far.

    Without a lock, two offers at once may lose the lower one: the value kept is then another process's offer, so
    it never falls below the least value offered. That is all a caller may rely on: the least offer always finds
    itself at most the value kept, and any offer may be asked about more often than needed, never less."""

    _FORMAT = "q"

    def __init__(self) -> None:
        self._page = mmap.mmap(-1, mmap.PAGESIZE)
        struct.pack_into(self._FORMAT, self._page, 0, 2 ** 63 - 1)

    def offer(self, value: int) -> bool:
        """Whether `value` is at most every value offered before it (the first offer always is); then keep it."""
        least = struct.unpack_from(self._FORMAT, self._page, 0)[0]
        if value > least:
            return False
        struct.pack_into(self._FORMAT, self._page, 0, value)
        return True


def _child_init() -> None:
    """Ignore Ctrl-C, then let it through: the child was forked with SIGINT blocked (`_start`), so one that arrived
    in between is discarded instead of interrupting the child's start-up with a traceback."""
    global _in_child
    _in_child = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _serve(conn: Connection, parents_ends: list[Connection]) -> None:
    """A child's loop: receive an item's index, send back (True, answer) or (False, the exception); None ends it.
    `parents_ends` are the parent's ends of this child's pipe and of the pipes of the children forked before it:
    inherited copies, closed here so that the child sees the end of its pipe as soon as the parent is gone."""
    _child_init()
    for end in parents_ends:
        end.close()
    assert _job is not None
    fn, items = _job
    while True:
        try:
            index = conn.recv()
        except EOFError:  # the parent is gone
            break
        if index is None:
            break
        try:
            reply: tuple[bool, Any] = (True, fn(items[index]))
        except BaseException as exc:  # noqa: BLE001 -- re-raised in the parent
            reply = (False, exc)
        try:
            conn.send(reply)
        except Exception as exc:  # noqa: BLE001 -- an answer or exception that does not pickle
            conn.send((False, InternalError(f"a forked search could not send its answer: {exc!r}")))
    conn.close()


def fork_map(fn: Callable[[T], R], items: Sequence[T], processes: int,
             order: Sequence[int] | None = None) -> list[R]:
    """[fn(item) for item in items], on this process and up to `processes` − 1 forked children (see module
    docstring).

    `order` is the order in which items are handed out (largest first balances the load): the children take them
    from its front, one at a time to whichever child is free, and this process works too, from its back (the
    smallest items: a child left waiting while this process finishes one of them waits little). The answers are in
    the items' order regardless. An exception, here or in a child, is raised here once every child is stopped; a
    child that dies (a crash in native code) is an `InternalError`, never a hang. Serial with one process, one item,
    where fork is not used, and within an item (a map inside a map)."""
    processes = min(processes, len(items))
    if processes <= 1 or not can_fork():
        return [fn(item) for item in items]
    order = list(order) if order is not None else list(range(len(items)))
    if sorted(order) != list(range(len(items))):
        raise ValueError("order must be a permutation of the items' indices")
    try:
        answers = _dispatch(fn, items, processes - 1, order)
    except KeyboardInterrupt:
        raise Interrupted("interrupted") from None
    log.debug("fork_map: %d items on %d processes", len(items), processes)
    return [answers[k] for k in range(len(items))]


def _dispatch(fn: Callable[[T], R], items: Sequence[T], forks: int, order: list[int]) -> dict[int, R]:
    global _job, _mapping
    mp = multiprocessing.get_context("fork")
    children: list[tuple[Any, Connection]] = []
    answers: dict[int, R] = {}
    feeder: _Feeder | None = None
    finished = False
    try:
        _job = (fn, items)
        for _ in range(forks):
            _start(mp, children)
        _job = None
        feeder = _Feeder(children, deque(order))
        _mapping = True
        while (k := feeder.take_last()) is not None:
            answers[k] = fn(items[k])
        answers.update(feeder.collect())
        finished = True
    finally:
        _job = None
        _mapping = False
        if feeder is not None:
            feeder.stop()
        for child, conn in children:  # after an error the others' work is moot: they are stopped at once
            if child.pid is None:  # interrupted before it was started
                conn.close()
                continue
            if finished:
                try:
                    conn.send(None)
                except OSError:  # it is gone already: nothing to stop
                    pass
                child.join(timeout=JOIN_SECONDS)
            if child.is_alive():
                child.terminate()
            child.join()
            conn.close()
    return answers


class _Feeder:
    """Hands the children items from the front of the order, each the moment it is free, on a thread of its own
    while this process's main thread works through the back.

    Why a thread: handing out from the main thread between its own items leaves a free child waiting until the main
    thread finishes the item it is on (a third of a child's time on the 1,000-quote bench), and holding a second
    item per child instead makes the last items wait behind a busy child. The thread sleeps in `wait` on the pipes
    and holds the GIL only to read an answer and send an index. All children exist before it starts (no fork
    happens while it runs), and it never runs an item: Ctrl-C and every exception still reach the main thread."""

    def __init__(self, children: list[tuple[Any, Connection]], todo: deque[int]) -> None:
        self.todo = todo
        self.lock = threading.Lock()
        self.owner = {conn: child for child, conn in children}
        self.holding: dict[Connection, int | None] = {}
        self.answers: dict[int, Any] = {}
        self.error: BaseException | None = None
        self.stopping = False
        with self.lock:
            for conn in self.owner:
                self._give(conn)
        self.thread = threading.Thread(target=self._run, name="plan-fork-feeder", daemon=True)
        self.thread.start()

    def take_last(self) -> int | None:
        """The item at the back of the order for the main thread, or None when none is left; a child's error
        first."""
        with self.lock:
            self._raise()
            return self.todo.pop() if self.todo else None

    def collect(self) -> dict[int, Any]:
        """The children's answers, once the last is in (Ctrl-C still reaches the main thread while it waits)."""
        while self.thread.is_alive():
            self.thread.join(WAIT_SECONDS)
        self._raise()
        return self.answers

    def stop(self) -> None:
        self.stopping = True
        while self.thread.is_alive():
            self.thread.join(WAIT_SECONDS)

    def _raise(self) -> None:
        if self.error is not None:
            raise self.error

    def _run(self) -> None:
        try:
            while not self.stopping and self.error is None:
                busy = [conn for conn, k in self.holding.items() if k is not None]
                if not busy:
                    return
                for ready in wait(busy, timeout=WAIT_SECONDS):
                    assert isinstance(ready, Connection)
                    payload = self._receive(ready)
                    with self.lock:
                        index = self.holding[ready]
                        assert index is not None
                        self.answers[index] = payload
                        self._give(ready)
        except BaseException as exc:  # noqa: BLE001 -- re-raised in the main thread
            self.error = exc

    def _receive(self, conn: Connection) -> Any:
        """A child's answer (readable: an answer, or the end of a child that died); its exception is raised."""
        try:
            ok, payload = conn.recv()
        except (EOFError, ConnectionError):  # the end of the pipe, or a reset if it died unread
            raise _died(self.owner[conn]) from None
        if not ok:
            raise payload
        return payload

    def _give(self, conn: Connection) -> None:
        """Send a free child the item at the front of the order (the lock is held), or nothing when none is left."""
        index = self.todo.popleft() if self.todo else None
        self.holding[conn] = index
        if index is None:
            return
        try:
            conn.send(index)
        except (BrokenPipeError, ConnectionError):  # it died before it read anything (killed as it started)
            raise _died(self.owner[conn]) from None


WAIT_SECONDS = 0.05
"""How often a thread waiting on another wakes (to see a stop, or a Ctrl-C in the main thread)."""


def _start(mp: Any, children: list[tuple[Any, Connection]]) -> None:
    """Fork one more child and list it with the parent's end of its pipe.

    SIGINT is blocked in this thread meanwhile: a Ctrl-C between the fork and the child's `_child_init` would
    otherwise interrupt the child's start-up (a traceback on the terminal), and one between the fork and the
    listing would leave a child the parent does not know to stop. Here it stays pending until the child is listed,
    then interrupts the parent as usual. The child is listed before it starts, so a Ctrl-C that reaches this thread
    through another one (Python runs handlers in the main thread whichever thread took the signal) finds it too."""
    here, there = mp.Pipe()
    child = mp.Process(target=_serve, args=(there, [here] + [h for _c, h in children]), daemon=True)
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        children.append((child, here))
        child.start()
        there.close()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


JOIN_SECONDS = 5.0
"""How long a child told to stop may take to exit before it is terminated."""


def _died(child: Any) -> InternalError:
    child.join(timeout=JOIN_SECONDS)
    return InternalError(f"a forked search died (exit code {child.exitcode})")
