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
worker (idle between searches; a child starts its own, `engine._worker`) and the progress spinner (which never
draws while a fork happens, `render/progress.py`); numpy's OpenBLAS threads have their own fork handlers. A child
that dies is an error, never a hang (the parent reads the end of its pipe). Children ignore Ctrl-C: the parent
stops them (`terminate`) and raises `Interrupted`, so no partial answer is returned. Fork is used on Linux only
(unsafe with macOS system frameworks, absent on Windows); elsewhere the items run one after the other.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
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
    todo = deque(order)
    sent: dict[Connection, deque[int]] = {}
    finished = False
    try:
        _job = (fn, items)
        for _ in range(forks):
            _start(mp, children)
        _job = None
        owner = {conn: child for child, conn in children}
        depth = QUEUED if len(items) >= QUEUE_FROM * (forks + 1) else 1
        for _child, conn in children:
            sent[conn] = deque()
            _top_up(conn, todo, sent, owner, depth)
        _mapping = True
        while any(sent.values()) or todo:
            # The answers that are in (waiting for one once nothing is left to do here), then one item here.
            busy = [conn for conn, queued in sent.items() if queued]
            for ready in wait(busy, timeout=0 if todo else None):
                assert isinstance(ready, Connection)
                _receive(ready, sent, answers, owner)
                _top_up(ready, todo, sent, owner, depth)
            if todo:
                k = todo.pop()
                answers[k] = fn(items[k])
        finished = True
    finally:
        _job = None
        _mapping = False
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


def _receive(conn: Connection, sent: dict[Connection, deque[int]], answers: dict[int, Any],
             owner: dict[Connection, Any]) -> None:
    """Read a child's next answer (readable: an answer, or the end of a child that died) and file it under its
    item (a child answers in the order it was sent its items)."""
    try:
        ok, payload = conn.recv()
    except (EOFError, ConnectionError):  # the end of the pipe, or a reset if it died unread
        raise _died(owner[conn]) from None
    if not ok:
        raise payload
    answers[sent[conn].popleft()] = payload


QUEUED = 2
"""Items a child holds at once when there are many: the one it works on and the next, so that it never waits for
this process to finish an item of its own before it gets more (on the 1,000-quote bench a child idled a third of
the time without)."""
QUEUE_FROM = 4
"""Items per process from which children hold `QUEUED` items; with fewer, one each: a few long items (the answers
after a solve) would otherwise all go to one child while this process ran out of work."""


def _top_up(conn: Connection, todo: deque[int], sent: dict[Connection, deque[int]], owner: dict[Connection, Any],
            depth: int) -> None:
    """Send a child the next items (from the front of the order) until it holds `depth`."""
    while todo and len(sent[conn]) < depth:
        index = todo.popleft()
        _send(conn, index, owner)
        sent[conn].append(index)


def _send(conn: Connection, index: int | None, owner: dict[Connection, Any]) -> None:
    """Send an item's index, or None (stop)."""
    try:
        conn.send(index)
    except (BrokenPipeError, ConnectionError):  # it died before it read anything (killed as it started)
        raise _died(owner[conn]) from None


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
