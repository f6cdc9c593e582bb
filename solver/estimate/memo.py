"""Process-wide caches of estimates, keyed by what they depend on.

Estimates and run scenarios are pure functions of the workload, the assumptions and the point: a what-if that changes
prices, quotes, the site, the schedule or the policy reuses them, one that changes the workload or an assumption gets
its own. A process (a sweep, a test run) visits a few such combinations in turn, so each cache keeps the most
recently used few."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ..inputs.problem import Problem

K = TypeVar("K")
V = TypeVar("V")


def workload_key(problem: "Problem") -> tuple[str, str]:
    """What a process-wide cache of estimates is keyed by: the workload and the assumptions, as JSON."""
    return problem.spec.workload.model_dump_json(), problem.assumptions.values.model_dump_json()


def recent(store: dict[K, dict[Any, V]], key: K, limit: int) -> dict[Any, V]:
    """The cache kept in `store` under `key` (a new one if none), made the most recently used; the least recently
    used beyond `limit` are dropped."""
    cache = store.pop(key, None)
    if cache is None:
        cache = {}
        while len(store) >= limit:
            store.pop(next(iter(store)))
    store[key] = cache
    return cache


__all__ = ["workload_key", "recent"]
