"""Reading a solution: which point, which quotes, which start day — plain data, independent of the solver object."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .builder import Built


@dataclass(frozen=True)
class Decision:
    """What a plan decides: an option at a node count, the nodes taken from each quote, the start day."""

    option: str
    nodes: int
    allocation: tuple[tuple[str, int], ...]
    start_day: int
    cost_units: int
    planned_day: int | None = None
    """The planned start the model priced delivery timing at (None: take the start)."""
    late_units: int | None = None
    """The model's lateness charge of a plan on an option of several quotes (`lateness.add_lateness`; None: a
    one-quote option, charged exactly)."""

    @property
    def quotes(self) -> dict[str, int]:
        return dict(self.allocation)


def decode(b: Built, value: Callable[[Any], int]) -> Decision:
    """The decision of a solution, given the solver's `value` function (e.g. `solver.value`)."""
    i = next(k for k, zi in enumerate(b.z) if value(zi))
    pt = b.points[i]
    quotes = pt.option.quotes
    if len(quotes) == 1:
        alloc = {quotes[0].id: pt.n}
    else:
        alloc = {q.id: int(value(v)) for q in quotes if (v := b.y.get((q.id, i))) is not None}
    late = b.late.get(pt.option.id)
    return Decision(pt.option.id, pt.n, tuple(sorted((k, v) for k, v in alloc.items() if v > 0)),
                    int(value(b.start)), int(value(b.cost)), int(value(b.planned)),
                    None if late is None else int(value(late)))
