"""Strict input models and one clear `InputError` (file, line, field path) per validation failure.

pydantic reports every error of a document; a user needs the first real one, on one line, at the right place.
Two refinements over "the first error": an unknown key is reported before the 'missing' error it usually causes
(a typo of a required key), and all fields missing from one mapping are reported together — eight validate round
trips to discover eight missing fields of a quote is what this module exists to prevent.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import InputError
from .names import did_you_mean
from .yamlsrc import PathT, Source

M = TypeVar("M", bound=BaseModel)


class Strict(BaseModel):
    """Base for every input model: unknown keys are errors (typos must not be silently ignored), values are frozen.

    Schemas are built on first use (`defer_build`): most runs validate a handful of models, and building all of
    them at import cost a measurable part of `plan solve`'s start-up.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)


def _inner_model(ann: Any) -> type[BaseModel] | None:
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return ann
    for arg in getattr(ann, "__args__", ()) or ():
        inner = _inner_model(arg)
        if inner is not None:
            return inner
    return None


def field_names(model: type[BaseModel], path: PathT) -> list[str]:
    """The valid keys at `path` inside `model` (for suggestions)."""
    current: Any = model
    for part in path:
        if isinstance(part, int):
            continue
        fields = getattr(current, "model_fields", None)
        if not fields or part not in fields:
            return []
        current = _inner_model(fields[part].annotation)
        if current is None:
            return []
    fields = getattr(current, "model_fields", None) or {}
    return [f.alias or name for name, f in fields.items()]


_UNION_TAGS = ("str", "float", "int", "word", "adjust", "weighted")


def clean_loc(loc: tuple[Any, ...]) -> PathT:
    """Drop pydantic's union/function tags so the location is a real YAML path."""
    out: list[str | int] = []
    for part in loc:
        if isinstance(part, int):
            out.append(part)
        elif isinstance(part, str) and ("[" in part or part.startswith("function-") or part in _UNION_TAGS):
            continue
        else:
            out.append(part)
    return tuple(out)


def _message(err: dict[str, Any], model: type[BaseModel], loc: PathT, echo: bool) -> str:
    kind = err.get("type", "")
    if kind == "extra_forbidden":
        key = str(loc[-1]) if loc else "?"
        return f"unknown key '{key}'" + did_you_mean(key, field_names(model, loc[:-1]), listing=True)
    if kind == "missing":
        return "required field is missing"
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return f"expected a mapping of keys, got {type(err.get('input')).__name__}"
    msg = str(err.get("msg", "invalid value"))
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    given = err.get("input")
    if echo and (kind in ("literal_error", "enum") or kind.endswith("_type") or kind.endswith("_parsing")):
        if not isinstance(given, (dict, list)):
            msg = f"{msg}, got {given!r}"
    return msg


def _report(errors: list[dict[str, Any]], model: type[BaseModel], source: Source, base: PathT,
            echo: bool) -> InputError:
    unknown = [e for e in errors if e.get("type") == "extra_forbidden"]
    first = unknown[0] if unknown else errors[0]
    loc = clean_loc(tuple(first.get("loc", ())))
    if first.get("type") == "missing":
        parent = loc[:-1]
        missing = [str(clean_loc(tuple(e["loc"]))[-1]) for e in errors
                   if e.get("type") == "missing" and clean_loc(tuple(e["loc"]))[:-1] == parent]
        if len(missing) > 1:
            return source.error(base + parent, f"required fields are missing: {', '.join(missing)}")
    return source.error(base + loc, _message(first, model, loc, echo))


def validate(model: type[M], source: Source, data: Any = None, base: PathT = (), *, echo: bool = True) -> M:
    """Validate `data` (default: the whole document) against `model`; failure is one `InputError`.

    `echo=False` keeps the offending value out of the message (files given as catalogs may not be catalogs at all,
    and their content is not ours to print)."""
    payload = source.data if data is None else data
    if not isinstance(payload, dict):
        raise source.error(base, f"expected a mapping of keys, got {type(payload).__name__}")
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        raise _report([dict(e) for e in exc.errors()], model, source, base, echo) from None


__all__ = ["Strict", "validate", "field_names", "clean_loc", "InputError"]
