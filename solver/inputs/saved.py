"""Saved plans (`plan solve --save`), read back for `--compare-to` and `plan diff`.

A saved plan is an input like any other, and a hostile one: a file can be truncated, edited by hand or tampered
with, and whatever it says is printed as a change or fed to arithmetic. So it is checked in three passes, each
failure one `InputError` (exit code 2) naming the file and the field path:

1. Parsing refuses what JSON allows and `plan` must not believe: NaN and infinities (`1e999` included), integers
   of more than `MAX_DIGITS` digits (Python refuses to convert 4,300 digits with a bare `ValueError`, which used to
   escape as an internal error) and duplicate keys (readers disagree on which one wins). They are kept in place
   as markers rather than raised, so that the next pass can say *where* they are.
2. The whole document is walked once: markers, nesting depth, length of every string and list. Every number under
   `inputs` (the problem and quote snapshot a diff prints as causes) stays within the magnitude problem files may
   use (`units.MAX_MAGNITUDE`).
3. Every field a comparison reads is validated by a strict pydantic model (no "5" for 5, no `true` for 1): dates
   are real ISO dates, node and GPU counts whole numbers within `MAX_COUNT`, money finite and within `MAX_USD`,
   probabilities in [0, 1], names bounded. Fields this version does not read are kept (a file written by a newer
   patch release still compares) but only after pass 2 bounded them.

The readers (`answers.history`, `answers.program.program_diff`) get the parsed data unchanged, so a good saved plan
compares exactly as before.
"""

from __future__ import annotations

import json
import math
import re
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from ..errors import InputError
from .messages import plain
from .schema import clean_loc
from .units import DATE_MIN, MAX_MAGNITUDE
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

MAX_DIGITS = 30
"""Longest integer literal parsed. Nothing `plan` writes comes near it (the largest whole numbers are dollar
figures under 10^13); it stops a 100,000-digit number before Python's conversion limit turns it into a crash."""
MAX_DEPTH = 64
"""Deepest nesting walked; a saved plan is at most about 8 levels deep."""
MAX_TEXT = 100_000
"""Longest string anywhere in a saved plan (an explanation or a problem's description is a few hundred)."""
MAX_KEY = 1_000
"""Longest key of any mapping (quote ids, field names and accelerator ids are tens of characters; see `MAX_NAME`)."""
MAX_ITEMS = 200_000
"""Most items in any list or mapping: the quote snapshot of a file at `MAX_SAVED_BYTES` holds about 100,000."""
MAX_NAME = 1_000
"""Longest id or name a comparison reads and prints. Problem names stop at 200 characters; catalogs do not bound
quote or system ids, but real ones are under 100."""
MAX_COUNT = 10_000_000
"""Most nodes or GPUs in one plan, far past any cluster that exists (the largest are about 10^5 GPUs)."""
MAX_USD = 1e13
"""Largest dollar figure, positive or negative, read from a saved plan: a problem's budget may not exceed it."""
DATE_LATEST = date(2199, 12, 31)
"""Latest date in a saved plan: problem dates stop at `units.DATE_MAX` (2100), plans and risk dates are computed
from them and may run on; past this a date is a tampered one, not a late plan."""


# --- pass 1: parsing --------------------------------------------------------------------------------------------

class _Refused:
    """A JSON value `plan` refuses (NaN, an infinity, an over-long integer), kept where it was so that the walk
    (pass 2) can name its path; it is never seen by a reader."""

    def __init__(self, message: str) -> None:
        self.message = message


class _DuplicateKeys(dict):  # type: ignore[type-arg]
    """A JSON object that spelled one key twice (the last value is kept, as `json` does, and the walk refuses it)."""

    duplicate = ""


def _int(text: str) -> int | _Refused:
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        return _Refused(f"expected a number of at most {MAX_DIGITS} digits, got one of {digits:,} digits")
    return int(text)


def _float(text: str) -> float | _Refused:
    value = float(text)
    if not math.isfinite(value):
        return _Refused(f"expected a finite number, got {_clip(text)}")
    return value


def _constant(text: str) -> _Refused:
    return _Refused(f"expected a finite number, got {text}")


def _keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    marked = _DuplicateKeys(out)
    seen: set[str] = set()
    for key, _value in pairs:
        if key in seen:
            marked.duplicate = key
            break
        seen.add(key)
    return marked


def _parse(text: str, shown: str, noun: str) -> Any:
    """The JSON of `text`, refused values marked in place (see module docstring, pass 1)."""
    try:
        return json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant,
                          object_pairs_hook=_keys)
    except json.JSONDecodeError as exc:
        raise InputError(f"not a {noun} (invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}; "
                         "truncated or edited?)", file=shown) from None
    except RecursionError:
        raise InputError(f"not a {noun} (nested too deeply)", file=shown) from None


# --- pass 2: the whole document ---------------------------------------------------------------------------------

def _walk(node: Any, path: tuple[str | int, ...], shown: str) -> None:
    """Refuse the first value pass 2 does not allow (see module docstring), naming its path."""
    problem = _refusal(node, path)
    if problem is not None:
        raise InputError(problem, file=shown, path=path_str(path))
    if isinstance(node, dict):
        for key, value in node.items():
            _walk(value, path + (key,), shown)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _walk(value, path + (i,), shown)


def _refusal(node: Any, path: tuple[str | int, ...]) -> str | None:
    """Why this one value (not its children) is refused, or None."""
    if len(path) > MAX_DEPTH:
        return f"nested more than {MAX_DEPTH} levels deep"
    if path and isinstance(path[-1], str) and len(path[-1]) > MAX_KEY:
        return f"expected a key of at most {MAX_KEY:,} characters, got {len(path[-1]):,}"
    if isinstance(node, _Refused):
        return node.message
    if isinstance(node, str) and len(node) > MAX_TEXT:
        return f"expected a string of at most {MAX_TEXT:,} characters, got {len(node):,}"
    if isinstance(node, (int, float)) and not isinstance(node, bool) and path[:1] == ("inputs",) \
            and abs(node) > MAX_MAGNITUDE:
        return f"expected a number within ±{MAX_MAGNITUDE:g}, got {_shown(node)}"
    if isinstance(node, (dict, list)) and len(node) > MAX_ITEMS:
        return f"expected at most {MAX_ITEMS:,} items, got {len(node):,}"
    if isinstance(node, _DuplicateKeys):
        return f"duplicate key '{_clip(node.duplicate)}'"
    return None


# --- pass 3: the fields a comparison reads ----------------------------------------------------------------------

_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _real_date(text: str) -> str:
    """An ISO date that exists, kept as the string (readers compare and print it as written)."""
    try:
        day = date.fromisoformat(text) if _ISO_DATE.fullmatch(text) else None
    except ValueError:
        day = None
    if day is None:
        raise ValueError(f"expected a real date like 2026-12-01, got {_shown(text)}")
    if not DATE_MIN <= day <= DATE_LATEST:
        raise ValueError(f"date {text} is outside {DATE_MIN} to {DATE_LATEST}")
    return text


IsoDate = Annotated[str, AfterValidator(_real_date)]
Name = Annotated[str, StringConstraints(max_length=MAX_NAME)]
FileName = Annotated[str, StringConstraints(max_length=4096)]
NodeCount = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Usd = Annotated[float, Field(ge=-MAX_USD, le=MAX_USD, allow_inf_nan=False)]
Price = Annotated[float, Field(ge=0, le=MAX_USD, allow_inf_nan=False)]
Probability = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
Days = Annotated[float, Field(ge=0, le=MAX_COUNT, allow_inf_nan=False)]
Status = Literal["optimal", "feasible", "infeasible", "unknown"]


class _Open(BaseModel):
    """Strict types for the fields named; other fields are kept (bounded by pass 2, never read)."""

    model_config = ConfigDict(extra="allow", frozen=True, defer_build=True, strict=True)


class SavedQuoteUse(_Open):
    id: Name
    nodes: NodeCount


class SavedRisk(_Open):
    """A plan's risk by scenarios; every field optional (schema versions added them one by one)."""

    p_deadline: Probability | None = None
    finish_p50: IsoDate | None = None
    finish_p80: IsoDate | None = None
    finish_p90: IsoDate | None = None
    cost_expected_usd: Usd | None = None
    cost_p90_usd: Usd | None = None
    cvar95_usd: Usd | None = None
    objective_usd: Usd | None = None
    late_days_expected: Days | None = None


class SavedPlan(_Open):
    option: Name
    accelerator: Name
    system: Name
    mode: Name
    offer: Name | None = None
    nodes: NodeCount
    gpus: NodeCount
    start: IsoDate
    finish: IsoDate
    quotes: list[SavedQuoteUse] = Field(max_length=10_000)
    cost_usd: dict[Name, Usd] = Field(max_length=100)
    cash_usd: dict[Name, Usd] = Field(max_length=100)
    risk: SavedRisk | None = None


class SavedResult(_Open):
    status: Status
    problem: Name
    as_of: IsoDate
    plan: SavedPlan | None


class SavedBudget(_Open):
    max_usd: Price | None = None
    applies_to: Name | None = None
    per_quarter_usd: dict[Name, Price | None] | None = None


class SavedSchedule(_Open):
    deadline: IsoDate | None = None
    earliest_start: IsoDate | None = None
    late_after: IsoDate | None = None


class SavedProblemWorkload(_Open):
    """A program's workload: its id keys the workload's input changes (`answers.program._by_id`)."""

    id: Name
    schedule: SavedSchedule | None = None


class SavedProblem(_Open):
    """The problem as validated when saved; a diff flattens and prints all of it, so its dated and priced fields
    are typed here and the rest is bounded by pass 2."""

    name: Name | None = None
    as_of: IsoDate | None = None
    budget: SavedBudget | None = None
    schedule: SavedSchedule | None = None
    workloads: list[SavedProblemWorkload] | None = Field(default=None, max_length=10_000)


class SavedQuoteSnapshot(_Open):
    """A quote as the solve saw it; every field optional (expired and unpriced quotes keep fewer)."""

    system: Name | None = None
    mode: Name | None = None
    kind: Name | None = None
    price: Price | None = None
    max_nodes: NodeCount | None = None
    min_nodes: NodeCount | None = None
    valid_until: IsoDate | None = None
    expired: IsoDate | None = None


class SavedInputs(_Open):
    problem_file: FileName
    overrides: list[Annotated[str, StringConstraints(max_length=4096)]] = Field(max_length=10_000)
    digest: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
    problem: SavedProblem
    quotes: dict[Name, SavedQuoteSnapshot] = Field(max_length=MAX_ITEMS)


class SavedFile(_Open):
    kind: Literal["plan-result"]
    schema_version: int
    inputs: SavedInputs
    result: SavedResult


class SavedProgramWorkload(_Open):
    id: Name
    option: Name
    nodes: NodeCount
    start: IsoDate
    finish: IsoDate
    quotes: list[Name] = Field(max_length=10_000)


class SavedProgramPurchase(_Open):
    quote: Name
    order: IsoDate
    nodes: NodeCount


class SavedProgramBody(_Open):
    workloads: list[SavedProgramWorkload] = Field(max_length=10_000)
    purchases: list[SavedProgramPurchase] = Field(max_length=100_000)
    cost_usd: Usd
    cash_usd: Usd


class SavedProgramResult(_Open):
    status: Status
    problem: Name
    program: SavedProgramBody | None


class SavedProgramFile(_Open):
    kind: Literal["program-result"]
    schema_version: int
    inputs: SavedInputs | None = None
    """Absent in programs saved before 2026-12-02 (their diffs show no input changes)."""
    result: SavedProgramResult


# --- reading ----------------------------------------------------------------------------------------------------

def load_saved(path: str | Path) -> dict[str, Any]:
    """A saved plan as plain data, validated (see module docstring). Raises `InputError` naming file and field."""
    return _read_saved(path, {"plan-result": SavedFile}, "saved plan", "`plan solve --save`")


def load_saved_any(path: str | Path) -> dict[str, Any]:
    """A saved plan or a saved program (its `kind` says which), validated (see module docstring)."""
    return _read_saved(path, {"plan-result": SavedFile, "program-result": SavedProgramFile},
                       "saved plan or program", "`plan solve --save`")


def load_saved_program(path: str | Path) -> dict[str, Any]:
    """A program saved by `plan solve PROGRAM --save`, validated like a saved plan (see module docstring)."""
    return _read_saved(path, {"program-result": SavedProgramFile}, "saved program", "`plan solve PROGRAM --save`")


def _read_saved(path: str | Path, kinds: dict[str, type[BaseModel]], noun: str, writer: str) -> dict[str, Any]:
    """A JSON file written by `writer`, of one of these `kinds`, checked in the passes of the module docstring;
    the data is returned as parsed."""
    shown = str(path)
    data = _parse(read_text(path, max_bytes=MAX_SAVED_BYTES, shown=shown), shown, noun)
    _walk(data, (), shown)
    if not isinstance(data, dict):
        raise InputError(f"not a {noun}: the top level is {_shown(data)}, expected an object (the output of "
                         f"{writer})", file=shown)
    kind = data.get("kind")
    if not isinstance(kind, str) or kind not in kinds:
        expected = " or ".join(json.dumps(k) for k in kinds)
        got = "nothing" if kind is None else _shown(kind)
        raise InputError(f"not a {noun}: expected {expected} (the output of {writer}), got {got}", file=shown,
                         path="kind")
    _check_version(data.get("schema_version"), shown)
    try:
        kinds[kind].model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(_what(err), file=shown, path=path_str(clean_loc(tuple(err.get("loc", ()))))) from None
    return data


def _check_version(version: Any, shown: str) -> None:
    """Only the versions this release reads: a newer file may have changed what its fields mean."""
    if type(version) is int and version in READABLE_VERSIONS:
        return
    readable = f"{READABLE_VERSIONS[0]} to {READABLE_VERSIONS[-1]}"
    if type(version) is int and version > READABLE_VERSIONS[-1]:
        message = f"saved by a newer plan (schema_version {version}); this one reads {readable}: upgrade plan"
    elif version is None:
        message = "required field is missing"
    else:
        message = f"expected a schema version from {readable}, got {_shown(version)}"
    raise InputError(message, file=shown, path="schema_version")


# --- messages ---------------------------------------------------------------------------------------------------

_EXPECTED = {"float_type": "a number", "int_type": "a whole number", "string_type": "a string",
             "bool_type": "true or false", "dict_type": "an object", "model_type": "an object",
             "model_attributes_type": "an object", "list_type": "a list", "finite_number": "a finite number"}
_BOUND = {"less_than_equal": ("le", "at most"), "less_than": ("lt", "less than"),
          "greater_than_equal": ("ge", "at least"), "greater_than": ("gt", "more than")}


def _what(err: Any) -> str:
    """A pydantic error as `plan` words it: what was expected, what the file has."""
    kind, ctx, got = err.get("type", ""), err.get("ctx") or {}, err.get("input")
    if kind == "missing":
        return "required field is missing"
    if kind == "value_error":
        return str(ctx.get("error") or "invalid value")
    if kind in _EXPECTED:
        return f"expected {_EXPECTED[kind]}, got {_shown(got)}"
    if kind == "literal_error":
        return f"expected {ctx.get('expected')}, got {_shown(got)}"
    if kind in _BOUND:
        key, words = _BOUND[kind]
        return f"expected {words} {_figure(ctx.get(key))}, got {_shown(got)}"
    if kind in ("too_long", "string_too_long"):
        unit = "characters" if kind == "string_too_long" else "items"
        return f"expected at most {ctx.get('max_length'):,} {unit}, got {len(got):,}"
    if kind == "string_pattern_mismatch":
        return f"expected a string matching {ctx.get('pattern')}, got {_shown(got)}"
    return f"{plain(err, None, echo=False)}, got {_shown(got)}"   # never pydantic's own words


def _figure(x: Any) -> str:
    if isinstance(x, (int, float)) and float(x).is_integer() and abs(x) < 1e16:
        return f"{int(x):,}"
    return str(x)


def _clip(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def _shown(v: Any) -> str:
    """A value as it reads in the JSON file, one short line whatever its size."""
    if v is None or isinstance(v, bool):
        return json.dumps(v)
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, int):
        return str(v) if abs(v) < 10 ** 15 else f"{float(v):g}"
    if isinstance(v, str):
        return json.dumps(_clip(v), ensure_ascii=False)
    return "an object" if isinstance(v, dict) else "a list" if isinstance(v, list) else type(v).__name__
