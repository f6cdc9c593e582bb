"""The builder's state as the constraint-family modules see it: a structural type of `builder._Builder`.

`builder.py` assembles the model from one helper per constraint family; the larger families (lateness, the planned
start and its waiting costs, the deadline's confidence, rules) live in modules of their own as functions taking the
builder. Those modules cannot import `builder.py`, which imports them (imports here flow one way, without cycles:
`tests/test_architecture.py`), so they name the builder by this protocol: the attributes and methods they read and
extend, typed as `_Builder` holds them.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..estimate.options import Option, Point, Universe
from ..estimate.outlook import Outlook
from ..inputs.assumptions import Assumptions
from ..inputs.problem import Problem
from ..inputs.spec import ProblemSpec
from .cpsat import Model, cp_model
from .groups import GroupKind
from .screening import Screen


class BuilderState(Protocol):
    """What the constraint-family helpers share while one model is built (see `builder._Builder`)."""

    problem: Problem
    spec: ProblemSpec
    a: Assumptions
    universe: Universe
    screen: Screen
    outlook: Outlook
    unit: int
    m: Model
    points: list[Point]
    options: list[Option]
    by_option: dict[str, list[int]]
    z: list[cp_model.IntVar]
    sel: dict[str, Any]
    zero: cp_model.IntVar
    u: dict[str, Any]
    y: dict[tuple[str, int], Any]
    cost_terms: list[Any]
    cost_adds: list[Any]
    cash_adds: list[Any]
    delays: list[Any]
    delay_rules: list[int]
    horizon: int
    start: cp_model.IntVar
    planned: cp_model.IntVar
    finish: cp_model.IntVar
    earliest_term: Any
    floors: list[Any]
    thresholds: dict[tuple[str, str, int], Any]
    late: dict[str, Any]
    late_at: dict[str, list[tuple[int, int]]]
    raisable: dict[str, int]

    @property
    def guard(self) -> str:
        """"fixed" (every group literal a constant true) or "assume" (free Booleans, for explanations)."""
        ...

    def group(self, gid: str, kind: GroupKind, path: tuple[Any, ...], text: str, unit_name: str | None = None,
              value: Any = None) -> Any: ...

    def cost_expr(self) -> Any: ...

    def _whole_of(self, qid: str, i: int) -> Any: ...
