"""Saved plans (`plan solve --save`), read back for `--compare-to` and `plan diff`.

A saved plan is an input like any other: it is validated against its schema when read, so a truncated, edited or
foreign JSON file is one clear error naming the file and the field, not a traceback deep inside a diff. Fields
this version does not use are kept (a file written by a newer patch release still compares), but every field a
comparison reads must be there with the right type.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InputError
from .schema import _clean_loc
from .yamlsrc import path_str, read_text

SCHEMA_VERSION = 4
"""Version of the JSON written by `--format json` and `--save`; bumped when a field changes meaning or goes.
Version 2 (2026-12) gave `excluded` structured reasons. Version 3 (2026-12) charges bought hardware by
`policy.after_run` (a bought plan's `compute` is the price, with a negative `resale_credit`, under the default
`resell`; `accounting` became `after_run`), adds `offer`, the quotes' fabric, contract and dates, `frontier` and
`unpriced`. Version 4 (2026-12) makes the cost the expectation over the scenarios: the `throughput` line (the
runs' mean less the planned lines) and the `lateness` line (the price of a late day × the expected days past the
deadline) replace `delivery_slip`; `risk` adds `objective_usd`, `objective_std_error_usd`, `late_days_expected`;
frontier points add `p_deadline` and `chosen`. The fields a comparison reads are the same in 1 to 4, so saved
plans of any of them are read (a comparison across versions shows the model's changes as changes)."""
READABLE_VERSIONS = (1, 2, 3, 4)
MAX_SAVED_BYTES = 20_000_000
"""Largest saved plan read: a saved plan holds a snapshot of every usable quote (about 200 bytes each)."""


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, defer_build=True)


class SavedQuoteUse(_Open):
    id: str
    nodes: int = Field(ge=0)


class SavedPlan(_Open):
    option: str
    accelerator: str
    system: str
    mode: str
    nodes: int = Field(ge=0)
    gpus: int = Field(ge=0)
    start: str
    finish: str
    quotes: list[SavedQuoteUse]
    cost_usd: dict[str, float]
    cash_usd: dict[str, float]


class SavedResult(_Open):
    status: Literal["optimal", "feasible", "infeasible", "unknown"]
    problem: str
    as_of: str
    plan: SavedPlan | None


class SavedInputs(_Open):
    problem_file: str
    overrides: list[str]
    digest: str
    problem: dict[str, Any]
    quotes: dict[str, dict[str, Any]]


class SavedFile(_Open):
    kind: Literal["plan-result"]
    schema_version: int
    inputs: SavedInputs
    result: SavedResult


def load_saved(path: str | Path) -> dict[str, Any]:
    """A saved plan as plain data, validated (see module docstring). Raises `InputError` naming file and field."""
    return _read_saved(path, {"plan-result": SavedFile}, "saved plan", "`plan solve --save`")


def load_saved_any(path: str | Path) -> dict[str, Any]:
    """A saved plan or a saved program (its `kind` says which), validated (see module docstring)."""
    return _read_saved(path, {"plan-result": SavedFile, "program-result": SavedProgramFile},
                       "saved plan or program", "`plan solve --save`")


def _read_saved(path: str | Path, kinds: dict[str, type[BaseModel]], noun: str, writer: str) -> dict[str, Any]:
    """A JSON file written by `writer`, of one of these `kinds`, checked against its model (see module
    docstring)."""
    shown = str(path)
    text = read_text(path, max_bytes=MAX_SAVED_BYTES, shown=shown)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not a {noun} (invalid JSON at line {exc.lineno}, column {exc.colno})",
                         file=shown) from None
    except RecursionError:
        raise InputError(f"not a {noun} (nested too deeply)", file=shown) from None
    if not isinstance(data, dict) or data.get("kind") not in kinds:
        raise InputError(f"not a {noun} (expected the output of {writer})", file=shown)
    if data.get("schema_version") not in READABLE_VERSIONS:
        raise InputError(f"saved with schema_version {data.get('schema_version')!r}; this plan reads "
                         f"{' and '.join(map(str, READABLE_VERSIONS))}", file=shown)
    try:
        kinds[data["kind"]].model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = path_str(_clean_loc(tuple(err.get("loc", ()))))
        what = "required field is missing" if err.get("type") == "missing" else str(err.get("msg", "invalid"))
        raise InputError(f"not a valid {noun}: {what}", file=shown, path=where) from None
    return data


class SavedProgramWorkload(_Open):
    id: str
    option: str
    nodes: int = Field(ge=0)
    start: str
    finish: str
    quotes: list[str]


class SavedProgramPurchase(_Open):
    quote: str
    order: str
    nodes: int = Field(ge=0)


class SavedProgramBody(_Open):
    workloads: list[SavedProgramWorkload]
    purchases: list[SavedProgramPurchase]
    cost_usd: float
    cash_usd: float


class SavedProgramResult(_Open):
    status: Literal["optimal", "feasible", "infeasible", "unknown"]
    problem: str
    program: SavedProgramBody | None


class SavedProgramFile(_Open):
    kind: Literal["program-result"]
    schema_version: int
    inputs: SavedInputs | None = None
    """Absent in programs saved before 2026-12-02 (their diffs show no input changes)."""
    result: SavedProgramResult


def load_saved_program(path: str | Path) -> dict[str, Any]:
    """A program saved by `plan solve PROGRAM --save`, validated like a saved plan (see module docstring)."""
    return _read_saved(path, {"program-result": SavedProgramFile}, "saved program", "`plan solve PROGRAM --save`")
