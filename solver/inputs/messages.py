"""pydantic's validation errors in `plan`'s words: what was expected, in the field's unit, and what the file has.

pydantic's own messages ("Input should be a valid integer, unable to parse string as an integer", "Field
required", "String should match pattern '^[a-z…'") describe its types, not the user's fields; and printed whole, a
`ValidationError` adds `type=…` tags and links to errors.pydantic.dev. `plain` turns one error of
`ValidationError.errors()` into one sentence that names what the field wants, with an example in its unit (a
sequence length is "a whole number of tokens (e.g. 4096 or 4Ki)", a power "a number of kW (e.g. 6000)"), and never
returns pydantic's text: an error type this module does not know gets a generic sentence, not pydantic's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .names import did_you_mean

WHOLE: Mapping[str, tuple[str, str]] = {
    "seq_len": ("a whole number of tokens", "4096 or 4Ki"),
    "racks": ("a whole number of racks", "120"),
    "per_node": ("a whole number of GPUs per node", "8"),
    "min_nodes": ("a whole number of nodes", "1"),
    "max_nodes": ("a whole number of nodes", "64"),
    "max_fabrics": ("a whole number of fabrics", "2"),
    "layers": ("a whole number of layers", "80"),
    "heads": ("a whole number of attention heads", "64"),
    "hidden": ("a whole number (the hidden size)", "8192"),
    "vocab": ("a whole number of vocabulary tokens", "128256"),
    "lora_rank": ("a whole number (the LoRA rank)", "16"),
    "scenarios": ("a whole number of scenarios", "10000"),
    "seed": ("a whole number", "20261201"),
}
"""Integer fields: what they count, and an example."""

UNITS: tuple[tuple[str, str, str], ...] = (
    ("usd_per_month", "US dollars per node-month", "250k"),
    ("price_usd", "US dollars per node", "400k"),
    ("_usd_per_gpu_hour", "US dollars per GPU-hour", "2.50"),
    ("_usd_per_kw_month", "US dollars per kW-month", "150"),
    ("_usd_per_kwh", "US dollars per kWh", "0.08"),
    ("_usd_per_day", "US dollars per day", "50k"),
    ("_usd_per_month", "US dollars per month", "20k"),
    ("_usd", "US dollars", "150M"),
    ("_kw", "kW", "6000"),
    ("_days", "days", "30"),
    ("_months", "months", "3"),
)
"""Number fields whose name carries a unit: the unit in words, and an example. A name starting with `_` is a
suffix (`it_power_kw`), any other the whole field name (a managed quote's `usd_per_month`); the first match wins.
A value given with another unit (`it_power_kw: 6MW`, `lead_time_days: 2w`) gets an example in the right one."""

_PATTERNS: Mapping[str, str] = {
    r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$": "letters, digits, '.', '_' and '-', starting with a letter or digit",
    r"^[a-z0-9][a-z0-9.\-]*$": "lowercase letters, digits, '.' and '-', starting with a letter or digit",
    r"^[a-z0-9][a-z0-9.\-_]*$": "lowercase letters, digits, '.', '-' and '_', starting with a letter or digit",
    r"^[A-Za-z0-9][A-Za-z0-9._\-]*$": "letters, digits, '.', '_' and '-', starting with a letter or digit",
}
_TYPES: Mapping[str, str] = {
    "float_type": "a number", "float_parsing": "a number", "finite_number": "a finite number",
    "bool_type": "true or false", "bool_parsing": "true or false",
    "string_type": "text (a string)", "string_unicode": "text (a string)",
    "list_type": "a list (e.g. [a, b])", "tuple_type": "a list (e.g. [a, b])", "set_type": "a list (e.g. [a, b])",
    "date_type": "a date like 2027-01-04", "date_parsing": "a date like 2027-01-04",
    "date_from_datetime_parsing": "a date like 2027-01-04", "date_from_datetime_inexact": "a date like 2027-01-04",
    "none_required": "nothing (null)",
}
_BOUNDS: Mapping[str, tuple[str, str]] = {
    "greater_than": ("gt", "greater than"), "greater_than_equal": ("ge", "greater than or equal to"),
    "less_than": ("lt", "less than"), "less_than_equal": ("le", "less than or equal to"),
}
_QUANTITY = re.compile(r"^expected a number like (\S+), got (.*)$", re.S)
_QUOTED = re.compile(r"'((?:[^'\\]|\\.)*)'")


def unit_of(field: str | None) -> tuple[str, str] | None:
    """(unit in words, example) of a number field named with a unit suffix, or None."""
    if not field:
        return None
    for name, words, example in UNITS:
        if field == name or (name.startswith("_") and field.endswith(name)) or field == name[1:]:
            return words, example
    return None


def shown(value: Any) -> str:
    """A value as a message quotes it: short, one line, never a whole mapping or list."""
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def figure(x: Any) -> str:
    """A bound as a sentence reads it: 10000000, not 1e+07; 0.5 as 0.5."""
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e16:
        return str(int(x))
    return str(x)


def _got(value: Any, echo: bool) -> str:
    return f", got {shown(value)}" if echo else ""


def _whole(field: str | None) -> str:
    noun, example = WHOLE.get(field or "", ("a whole number", ""))
    return f"{noun} (e.g. {example})" if example else noun


def plain(err: Mapping[str, Any], field: str | None, *, echo: bool = True) -> str:
    """One pydantic error (a dict of `ValidationError.errors()`) as `plan` words it; `field` is the last key of its
    path (for the unit and the example), `echo` whether the offending value may be quoted."""
    kind, ctx, given = str(err.get("type", "")), err.get("ctx") or {}, err.get("input")
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown key"
    if kind in ("value_error", "assertion_error"):
        return _own(str(ctx.get("error") or "invalid value"), field)
    if kind.startswith("int_"):
        if kind == "int_parsing_size":
            return f"expected {_whole(field)}, got a number too large to be one"
        return f"expected {_whole(field)}" + _got(given, echo)
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"expected a mapping of keys, got {type(given).__name__}"   # the type only: never a file's content
    if kind in _TYPES:
        unit = unit_of(field) if kind in ("float_type", "float_parsing") else None
        what = f"a number of {unit[0]} (e.g. {unit[1]})" if unit else _TYPES[kind]
        return f"expected {what}" + _got(given, echo)
    if kind in ("literal_error", "enum"):
        return _choice(str(ctx.get("expected", "")), given, echo)
    if kind in _BOUNDS:
        key, words = _BOUNDS[kind]
        noun = WHOLE[field][0] if field in WHOLE else "a number"
        return f"expected {noun} {words} {figure(ctx.get(key))}" + _got(given, echo)
    return _sized(kind, ctx, given, echo) or _generic(kind, given, echo)


def _own(text: str, field: str | None) -> str:
    """A message of `plan`'s own validators (already plain), with an example in the field's unit when the number
    given could not be read (`parse_quantity` knows the example of the type, not the unit of the field)."""
    for prefix in ("Value error, ", "Assertion failed, "):
        if text.startswith(prefix):
            text = text[len(prefix):]
    match = _QUANTITY.match(text)
    unit = unit_of(field)
    if match and unit:
        return f"expected a number of {unit[0]} (e.g. {unit[1]}), got {match.group(2)}"
    return text


def _choice(expected: str, given: Any, echo: bool) -> str:
    options = [o.replace("\\'", "'") for o in _QUOTED.findall(expected)] or [expected]
    listed = ", ".join(options[:-1]) + " or " + options[-1] if len(options) > 1 else options[0]
    hint = did_you_mean(given, options) if isinstance(given, str) and echo else ""
    return f"expected one of {listed}" + _got(given, echo) + hint


def _sized(kind: str, ctx: Mapping[str, Any], given: Any, echo: bool) -> str | None:
    if kind == "string_too_short":
        n = ctx.get("min_length", 1)
        return "expected text, got an empty string" if n == 1 else f"expected at least {n} characters"
    if kind == "string_too_long":
        return f"expected at most {ctx.get('max_length'):,} characters, got {len(str(given)):,}"
    if kind == "too_short":
        n = ctx.get("min_length", 1)
        return f"expected at least {n} item{'s' if n != 1 else ''}, got {ctx.get('actual_length', 0)}"
    if kind == "too_long":
        return f"expected at most {ctx.get('max_length'):,} items, got {ctx.get('actual_length', '?')}"
    if kind == "string_pattern_mismatch":
        pattern = str(ctx.get("pattern", ""))
        words = _PATTERNS.get(pattern, "letters, digits and the characters the field allows")
        return f"expected a name of {words}" + _got(given, echo)
    if kind == "multiple_of":
        return f"expected a multiple of {figure(ctx.get('multiple_of'))}" + _got(given, echo)
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        return "expected one of the forms this field takes (see the README)" + _got(given, echo)
    return None


def _generic(kind: str, given: Any, echo: bool) -> str:
    """An error type not worded above: a sentence of ours, never pydantic's message."""
    return "invalid value for this field" + _got(given, echo)


__all__ = ["plain", "unit_of", "shown", "figure", "WHOLE", "UNITS"]
