"""Cyclic garbage collection paused around allocation-heavy work, and always restored.

Building a universe allocates hundreds of thousands of small long-lived objects (points, price templates, cost
lines). Every automatic full collection re-scans all of them, which cost about 40% of the universe build of a
1,000-quote catalog and half of a small what-if (bench/README.md). Nothing built there is cyclic garbage, so
collection waits until the block ends; the collector's previous state is restored whatever happens.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
