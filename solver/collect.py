"""Cyclic garbage collection paused around allocation-heavy work, and always restored.

Building a universe allocates hundreds of thousands of small long-lived objects (points, price templates, cost
lines). Every automatic full collection re-scans all of them (CPython's collector traverses every tracked object
of the generations it collects), so a block pays again for everything it built so far at each one (measured:
bench/README.md, "Timings that used to live in docstrings (moved 2026-12-07)"). Nothing built there is cyclic
garbage, so collection waits until the block ends; the collector's previous state is restored whatever happens.

A sweep runs many such blocks in one process. Turned back on after each, the collector scans the block's young
objects at the next allocation — a scan of everything the block made, which goes by reference counting anyway
(`Point.option` is weak, so a universe is no reference cycle) — and never turned back on, whatever cyclic garbage
remains would pile up. So between units (`unit`) the garbage is frozen out of the collector's way, and collected
once there is enough of it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


HELD_OBJECTS = 2_000_000
"""Tracked objects held between units (frozen or not yet collected) beyond which `unit` collects: about five
what-ifs' garbage of the 200B example, ~200 MB."""


_held = [0]
"""Tracked objects set aside by `unit` since its last collection (this process's)."""


@contextmanager
def paused() -> Iterator[None]:
    """Collection paused while the block runs. The outermost block then sets its objects aside (`_set_aside`)
    before the collector's previous state returns: turned back on with the block's objects young, the collector
    would scan them all at the next allocation — 0.13–0.17 s after a 10,000-quote solve, on the command's
    critical path, to find the little cyclic garbage a solve leaves."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            _set_aside()
            gc.enable()


def _set_aside() -> None:
    """The objects made since the last freeze or collection: collected if more than `HELD_OBJECTS` are held, else
    frozen (kept out of the collector's scans until then). Freezing and collecting change no answer, only when
    memory is returned."""
    _held[0] += gc.get_count()[0]  # net new tracked objects since the last freeze or collection
    if _held[0] > HELD_OBJECTS:
        gc.unfreeze()
        gc.collect()
        _held[0] = 0
    else:
        gc.freeze()


@contextmanager
def unit() -> Iterator[None]:
    """One unit of a sweep: collection paused while it runs, then, before the collector's previous state returns,
    its garbage collected if more than `HELD_OBJECTS` objects are held, else frozen, so that the collector (if it is
    on) does not scan it until then. In that order: turned back on first, the collector would scan the unit's half
    a million young objects at the next allocation. Freezing and collecting change no answer, only when memory is
    returned."""
    with paused():
        try:
            yield
        finally:
            _set_aside()
