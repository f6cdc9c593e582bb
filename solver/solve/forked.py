"""Independent searches side by side, on forked copies of this process.

Why fork: a pair's search reads the whole prepared context (universe, screen, bounds: hundreds of megabytes with
a marketplace catalog). A forked child has all of it at once, shared copy-on-write; a fresh ("spawn") process would
import the package again and rebuild the context, which is what a 10,000-quote solve has to save (measured:
bench/README.md, "Timings that used to live in docstrings (moved 2026-12-07)"). A task is an index into the
list of items the parent holds when it forks; its answer is plain data (a plan, a status, numbers) pickled
back. This process works too, on the items at the back of the order while the children take them from the
front: with N processes, N − 1 children (one fork fewer, and the items it runs leave their caches here). Answers
come back in the items' order whatever order they finished in, and each search is single-threaded with a fixed
seed (`engine.py`), so the result is byte-identical to the serial one.

Fork-safety: the children use no lock another thread of the parent could hold. Our own threads are the CP-SAT
worker (idle between searches; a child starts its own, `engine._worker`), the progress spinner (which never
draws while a fork happens, `render/progress.py`) and the thread that reads the children's answers
(`_Collector`, started once every child is forked); numpy's OpenBLAS threads have their own fork handlers. The
one lock shared with the children is the order's (`_Order`), made before they are forked. A child
that dies is an error, never a hang (the parent reads the end of its pipe). Children ignore Ctrl-C: the parent
stops them (`terminate`) and raises `Interrupted`, so no partial answer is returned. SIGTERM, which usually reaches
the parent alone, unwinds it the same way (`render/console.py`), and its children, stopped by it, are gone before
it exits; a child itself ends on SIGTERM at once (the default action, not the handler it inherits). Fork is used on
Linux only (unsafe with macOS system frameworks, absent on Windows); elsewhere the items run one after the other.
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
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar

from ..errors import InternalError, Interrupted

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

_job: "tuple[Callable[[Any], Any], Sequence[Any], _Order] | None" = None
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


STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})
"""Ctrl-C and SIGTERM: held back while a child is forked (`_start`)."""


def _child_init() -> None:
    """Ignore Ctrl-C, let SIGTERM end the child (its default action), then let both through: the child was forked
    with them blocked (`_start`), so a Ctrl-C that arrived in between is discarded instead of interrupting the
    child's start-up with a traceback. SIGTERM must not run the parent's handler, inherited with the fork: its
    `Terminated` would be caught by `_serve` and sent as an answer, and the child, told by `terminate` to stop,
    would go on to the next item while the parent waits for it."""
    global _in_child
    _in_child = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def _serve(conn: Connection, parents_ends: list[Connection], first: int) -> None:
    """A child's loop: item `first`, then the items it takes from the front of the order, each answered with
    (index, True, answer) or (index, False, the exception); then (None, True, None), and it waits for the parent's
    word (None, or the end of the pipe) to end. A parent gone meanwhile (killed) ends it quietly. `parents_ends` are
    the parent's ends of this child's pipe and of the pipes of the children forked before it: inherited copies,
    closed here so that the child sees the end of its pipe as soon as the parent is gone."""
    _child_init()
    for end in parents_ends:
        end.close()
    assert _job is not None
    fn, items, order = _job
    index: int | None = first
    while index is not None:
        try:
            reply: tuple[int | None, bool, Any] = (index, True, fn(items[index]))
        except BaseException as exc:  # noqa: BLE001 -- re-raised in the parent
            reply = (index, False, exc)
        if not _send(conn, reply):
            return
        index = order.take_front()
    if _send(conn, (None, True, None)):
        try:
            conn.recv()
        except EOFError:  # the parent is gone
            pass
    conn.close()


def _send(conn: Connection, reply: tuple[int | None, bool, Any]) -> bool:
    """Send a child's reply; False when the parent is gone. An answer or exception that does not pickle is sent as
    an `InternalError` instead (pickling fails before anything is written)."""
    try:
        conn.send(reply)
    except (BrokenPipeError, ConnectionError):
        return False
    except Exception as exc:  # noqa: BLE001 -- an answer or exception that does not pickle
        return _send(conn, (reply[0], False, InternalError(f"a forked search could not send its answer: {exc!r}")))
    return True


def fork_map(fn: Callable[[T], R], items: Sequence[T], processes: int,
             order: Sequence[int] | None = None) -> list[R]:
    """[fn(item) for item in items], on this process and up to `processes` − 1 forked children (see module
    docstring).

    `order` is the order in which items are handed out (largest first balances the load): the children take them
    from its front, each child the next one as soon as it is free, and this process works too, from its back (the
    smallest items: a child left waiting while this process finishes one of them waits little). The answers are in
    the items' order regardless. An exception, here or in a child, is raised here once every child is stopped; a
    child that dies (a crash in native code) is an `InternalError`, never a hang. Serial, in `order`, with one
    process, one item, where fork is not used, where the system has no semaphore to share (`_Order`), and within an
    item (a map inside a map)."""
    processes = min(processes, len(items))
    order = list(order) if order is not None else list(range(len(items)))
    if sorted(order) != list(range(len(items))):
        raise ValueError("order must be a permutation of the items' indices")
    if processes <= 1 or not can_fork():
        return _serial(fn, items, order)
    mp = multiprocessing.get_context("fork")
    try:
        shared = _Order(mp, order, processes - 1)
    except OSError as exc:  # no shared semaphores here (no /dev/shm, as on some serverless hosts)
        log.debug("fork_map: serial, no lock to share with children: %s", exc)
        return _serial(fn, items, order)
    try:
        answers = _dispatch(mp, shared, fn, items, processes - 1)
    except KeyboardInterrupt:
        raise Interrupted("interrupted") from None
    log.debug("fork_map: %d items on %d processes", len(items), processes)
    return [answers[k] for k in range(len(items))]


def _serial(fn: Callable[[T], R], items: Sequence[T], order: list[int]) -> list[R]:
    """The items on this process alone, in `order`, the answers in the items' order. The order is the caller's
    priority: an explanation's ways out at 100,000 quotes run on one process, and under `--max-seconds` the
    relaxations it lists first (the budget's, the deadline's) were left unsearched behind a 50-second drop of
    one fabric per job that came first in the conflict's order."""
    answers: dict[int, R] = {}
    for k in order:
        answers[k] = fn(items[k])
    return [answers[k] for k in range(len(items))]


def _dispatch(mp: Any, shared: "_Order", fn: Callable[[T], R], items: Sequence[T], forks: int) -> dict[int, R]:
    global _job, _mapping
    children: list[tuple[Any, Connection]] = []
    answers: dict[int, R] = {}
    collector: _Collector | None = None
    finished = False
    try:
        _job = (fn, items, shared)
        for child in range(forks):
            _start(mp, children, shared.order[child])
        _job = None
        collector = _Collector(children)
        _mapping = True
        while (k := shared.take_back(collector)) is not None:
            answers[k] = fn(items[k])
        answers.update(collector.collect())
        finished = True
    finally:
        _job = None
        _mapping = False
        try:
            if collector is not None:
                collector.stop()
        finally:  # also when a signal cut the wait for the collector short
            _end_children(children, finished)
    return answers


def _end_children(children: list[tuple[Any, Connection]], finished: bool) -> None:
    """Let each child end (told there is no more work, after a `finished` map) or stop it (after an error the
    others' work is moot: they are stopped at once), and collect it. A Ctrl-C or SIGTERM that cuts this short stops
    the children not yet collected at once, so that none outlives this process."""
    left = list(children)
    try:
        while left:
            _end_child(*left[0], finished)
            left.pop(0)
    except BaseException:
        for child, conn in left:
            _end_child(child, conn, False)
        raise


def _end_child(child: Any, conn: Connection, finished: bool) -> None:
    """One child of `_end_children`: a finished one gets `JOIN_SECONDS` to end on its own before it is stopped."""
    if child.pid is None:  # interrupted before it was started
        conn.close()
        return
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


class _Order:
    """The items not yet taken, as the two ends of the order in a page of shared memory, under a lock the children
    inherit: a child takes the next item from the front itself, the moment it is free, and this process takes from
    the back. Each child starts on one item handed to it at its fork (the first `forks` of the order), so the
    largest items are under way before this process takes any.

    Why not hand items out from this process: a child that finished then waited for it to read the answer and send
    the next index, which needs the GIL, held by the main thread's own search: a wait per item that grows with the
    answer's size (measured: bench/README.md, "Timings that used to live in docstrings (moved 2026-12-07)"). Taking
    from shared memory, a child never waits for this process; its answers are read by a thread of their own
    (`_Collector`)."""

    _FORMAT = "qq"

    def __init__(self, mp: Any, order: list[int], forks: int) -> None:
        self.order = order
        self.lock = mp.Lock()
        self._page = mmap.mmap(-1, mmap.PAGESIZE)
        struct.pack_into(self._FORMAT, self._page, 0, forks, len(order) - 1)

    def take_front(self) -> int | None:
        """The next item from the front (in a child), or None when none is left."""
        with self.lock:
            front, back = struct.unpack_from(self._FORMAT, self._page, 0)
            if front > back:
                return None
            struct.pack_into(self._FORMAT, self._page, 0, front + 1, back)
        return self.order[front]

    def take_back(self, collector: "_Collector") -> int | None:
        """The next item from the back (in this process), or None when none is left; a child's error first. The
        lock is waited for in short turns, each after a look at the children: one killed while it held the lock
        (in the microseconds it does) is reported as dead instead of blocking this process for ever."""
        while True:
            collector.raise_error()
            if self.lock.acquire(timeout=WAIT_SECONDS):
                break
        try:
            front, back = struct.unpack_from(self._FORMAT, self._page, 0)
            if front > back:
                return None
            struct.pack_into(self._FORMAT, self._page, 0, front, back - 1)
        finally:
            self.lock.release()
        return self.order[back]


class _Collector:
    """Reads the children's answers on a thread of its own while this process's main thread works through the
    back of the order, until every child has said it found no item left.

    The thread sleeps in `wait` on the pipes and holds the GIL only to read an answer: a child does not wait for it
    unless an answer outgrows the pipe's buffer. All children exist before it starts (no fork happens while it
    runs), and it never runs an item: Ctrl-C and every exception still reach the main thread."""

    def __init__(self, children: list[tuple[Any, Connection]]) -> None:
        self.owner = {conn: child for child, conn in children}
        self.working = set(self.owner)
        self.answers: dict[int, Any] = {}
        self.error: BaseException | None = None
        self.stopping = False
        self.thread = threading.Thread(target=self._run, name="plan-fork-collector", daemon=True)
        self.thread.start()

    def collect(self) -> dict[int, Any]:
        """The children's answers, once the last is in (Ctrl-C still reaches the main thread while it waits)."""
        while self.thread.is_alive():
            self.thread.join(WAIT_SECONDS)
        self.raise_error()
        return self.answers

    def stop(self) -> None:
        self.stopping = True
        while self.thread.is_alive():
            self.thread.join(WAIT_SECONDS)

    def raise_error(self) -> None:
        if self.error is not None:
            raise self.error

    def _run(self) -> None:
        try:
            while not self.stopping and self.working:
                for ready in wait(list(self.working), timeout=WAIT_SECONDS):
                    assert isinstance(ready, Connection)
                    self._receive(ready)
        except BaseException as exc:  # noqa: BLE001 -- re-raised in the main thread
            self.error = exc

    def _receive(self, conn: Connection) -> None:
        """A child's answer or its last word (readable: one of those, or the end of a child that died); its
        exception is raised."""
        try:
            index, ok, payload = conn.recv()
        except (EOFError, ConnectionError):  # the end of the pipe, or a reset if it died unread
            raise _died(self.owner[conn]) from None
        if not ok:
            raise payload
        if index is None:
            self.working.discard(conn)
        else:
            self.answers[index] = payload


WAIT_SECONDS = 0.05
"""How often a thread waiting on another wakes (to see a stop, or a Ctrl-C in the main thread)."""


def _start(mp: Any, children: list[tuple[Any, Connection]], first: int) -> None:
    """Fork one more child, to start on item `first`, and list it with the parent's end of its pipe.

    SIGINT and SIGTERM are blocked in this thread meanwhile: a Ctrl-C between the fork and the child's
    `_child_init` would otherwise interrupt the child's start-up (a traceback on the terminal), and either signal
    between the fork and the listing would leave a child the parent does not know to stop. Here it stays pending
    until the child is listed, then interrupts the parent as usual. The child is listed before it starts, so a
    signal that reaches this thread through another one (Python runs handlers in the main thread whichever thread
    took the signal) finds it too."""
    here, there = mp.Pipe()
    child = mp.Process(target=_serve, args=(there, [here] + [h for _c, h in children], first), daemon=True)
    before = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
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
