"""Where the units of a sweep run: in this process, on a local process pool, or on a Ray cluster.

Each executor maps one function over a list of plain-data units and returns the answers in the units' order, so
the caller cannot tell them apart except by speed: the answers are byte-identical (see `sweep.py` for why). Ray is
an optional extra (`pip install 'plan[ray]'`), imported only when asked for.
"""

from __future__ import annotations

import functools
import logging
import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from .. import collect
from ..errors import InputError

log = logging.getLogger(__name__)

U = TypeVar("U")
R = TypeVar("R")

EXECUTORS = ("local", "process", "ray")


class Executor(Protocol):
    @property
    def name(self) -> str: ...

    def map(self, fn: Callable[[U], R], units: Sequence[U]) -> list[R]: ...


@dataclass(frozen=True)
class Local:
    """Every unit in this process, one after the other (the reference the others are compared with)."""

    name: str = "local"

    def map(self, fn: Callable[[U], R], units: Sequence[U]) -> list[R]:
        return [as_unit(fn, u) for u in units]


@dataclass(frozen=True)
class Processes:
    """A pool of `workers` local processes started fresh ("spawn": no OR-Tools state or thread is inherited from
    this process), one unit at a time per process."""

    workers: int
    name: str = "process"

    def map(self, fn: Callable[[U], R], units: Sequence[U]) -> list[R]:
        if self.workers <= 1 or len(units) <= 1:
            return Local().map(fn, units)
        with ProcessPoolExecutor(max_workers=min(self.workers, len(units)),
                                 mp_context=multiprocessing.get_context("spawn")) as pool:
            return list(pool.map(functools.partial(as_unit, fn), units, chunksize=1))


@dataclass(frozen=True)
class Ray:
    """Ray tasks, one CPU each: on the cluster at `address` ("auto": the one this machine belongs to; "ray://host:
    10001": a remote head through Ray Client), or, without an address, a local Ray started with `workers` CPUs.
    A Ray already initialised by the caller (a test session, a notebook) is used as it is."""

    address: str | None
    workers: int
    name: str = "ray"

    def map(self, fn: Callable[[U], R], units: Sequence[U]) -> list[R]:
        ray = import_ray()
        started = not ray.is_initialized()
        if started:
            quiet = {"log_to_driver": False, "logging_level": logging.ERROR}
            if self.address:
                ray.init(address=self.address, **quiet)
            else:
                ray.init(num_cpus=self.workers, include_dashboard=False, **quiet)
        try:
            task = ray.remote(num_cpus=1)(as_unit)
            return list(ray.get([task.remote(fn, u) for u in units]))
        finally:
            if started:  # the local Ray's processes must not outlive the command
                ray.shutdown()


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


__all__ = ["Executor", "Local", "Processes", "Ray", "EXECUTORS", "make_executor", "default_workers", "import_ray",
           "as_unit"]
