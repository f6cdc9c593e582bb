"""Turn pydantic validation errors into one clear `InputError` with file, line and field path."""

from __future__ import annotations

import difflib
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from .errors import InputError
from .yamlsrc import PathT, Source

M = TypeVar("M", bound=BaseModel)


class Strict(BaseModel):
    """Base for every input model: unknown keys are errors (typos must not be silently ignored)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)


def _field_names(model: type[BaseModel], path: PathT) -> list[str]:
    """The valid keys at `path` inside `model`, for "did you mean" suggestions."""
    current: Any = model
    for part in path:
        if isinstance(part, int):
            continue
        fields = getattr(current, "model_fields", None)
        if not fields or part not in fields:
            return []
        ann = fields[part].annotation
        current = _inner_model(ann)
        if current is None:
            return []
    fields = getattr(current, "model_fields", None) or {}
    return [f.alias or name for name, f in fields.items()]


def _inner_model(ann: Any) -> type[BaseModel] | None:
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return ann
    for arg in getattr(ann, "__args__", ()) or ():
        inner = _inner_model(arg)
        if inner is not None:
            return inner
    return None


def _message(err: dict[str, Any], model: type[BaseModel], loc: PathT) -> str:
    kind = err.get("type", "")
    if kind == "extra_forbidden":
        key = str(loc[-1]) if loc else "?"
        names = _field_names(model, loc[:-1])
        hint = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
        extra = f"; did you mean '{hint[0]}'?" if hint else (f"; allowed: {', '.join(sorted(names))}" if names else "")
        return f"unknown key '{key}'{extra}"
    if kind == "missing":
        return "required field is missing"
    msg = str(err.get("msg", "invalid value"))
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    given = err.get("input")
    if kind in ("literal_error", "enum") or kind.endswith("_type") or kind.endswith("_parsing"):
        if not isinstance(given, (dict, list)):
            msg = f"{msg}, got {given!r}"
    return msg


UNION_TAGS = ("str", "float", "int", "word", "adjust", "weighted")


def _pick(errors: Any) -> Any:
    """The most useful error first: an unknown key explains a 'missing' twin (a typo of a required key)."""
    for kind in ("extra_forbidden",):
        for e in errors:
            if e.get("type") == kind:
                return e
    return errors[0]


def _clean_loc(loc: tuple[Any, ...]) -> PathT:
    """Drop pydantic's union/function tags so the location is a real YAML path."""
    out: list[str | int] = []
    for part in loc:
        if isinstance(part, int):
            out.append(part)
        elif isinstance(part, str) and ("[" in part or part.startswith("function-") or part in UNION_TAGS):
            continue
        else:
            out.append(part)
    return tuple(out)


def validate(model: type[M], source: Source, data: Any = None, base: PathT = ()) -> M:
    """Validate `data` (default: the whole document) against `model`; first error becomes an `InputError`."""
    payload = source.data if data is None else data
    if not isinstance(payload, dict):
        raise source.error(base, f"expected a mapping of keys, got {type(payload).__name__}")
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        err = _pick(exc.errors())
        loc = _clean_loc(tuple(err.get("loc", ())))
        raise source.error(base + loc, _message(err, model, loc)) from None


def require_mapping(source: Source, data: Any, path: PathT, what: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise source.error(path, f"expected a mapping ({what}), got {type(data).__name__}")
    return data


def error_at(source: Source, path: PathT, message: str) -> InputError:
    return source.error(path, message)


__all__ = ["Strict", "validate", "require_mapping", "error_at", "InputError"]
