"""Strict input models, and every validation failure of a document as `InputError`s (file, line, field path).

pydantic reports every error of a document; a user needs each real mistake once, on one line, at the right place,
in `plan`'s words (`messages.py`), and all of them in one run (`errors.combined`). Three refinements over "every
error pydantic lists": an unknown key that is the typo of a required key stands for the 'missing' error it causes
(one mistake, one line); all fields missing from one mapping are one line; and of a union's alternatives (`str |
list[str]`) only the one the value came closest to is reported.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import InputError, combined
from .messages import plain, shown
from .names import did_you_mean, meant, suggest
from .yamlsrc import PathT, Source

M = TypeVar("M", bound=BaseModel)


class Strict(BaseModel):
    """Base for every input model: unknown keys are errors (typos must not be silently ignored), values are frozen.

    Schemas are built on first use (`defer_build`): most runs validate a handful of models, and building all of
    them at import cost a measurable part of `plan solve`'s start-up.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)

    @classmethod
    def allowed_keys(cls, data: Any) -> list[str]:
        """The keys this model accepts in `data` (its raw mapping), for "did you mean": a model whose keys depend
        on another key's value (a quote's price field on its `mode`) suggests only those that apply."""
        return [f.alias or name for name, f in cls.model_fields.items()]

    @classmethod
    def key_hints(cls, key: str, data: Any) -> list[str]:
        """Keys an unknown `key` stands for that no spelling rule finds (a quote's `price` is its mode's price
        field); none by default."""
        return []


def _inner_model(ann: Any) -> type[BaseModel] | None:
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return ann
    for arg in getattr(ann, "__args__", ()) or ():
        inner = _inner_model(arg)
        if inner is not None:
            return inner
    return None


def _model_at(model: type[BaseModel], path: PathT) -> type[BaseModel] | None:
    current: Any = model
    for part in path:
        if isinstance(part, int):
            continue
        fields = getattr(current, "model_fields", None)
        if not fields or part not in fields:
            return None
        current = _inner_model(fields[part].annotation)
        if current is None:
            return None
    return current


def field_names(model: type[BaseModel], path: PathT) -> list[str]:
    """The valid keys at `path` inside `model` (for suggestions)."""
    fields = getattr(_model_at(model, path), "model_fields", None) or {}
    return [f.alias or name for name, f in fields.items()]


def _data_at(data: Any, path: PathT) -> Any:
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


_UNION_TAGS = ("str", "float", "int", "word", "adjust", "weighted")


def _is_tag(part: Any) -> bool:
    return isinstance(part, str) and ("[" in part or part.startswith("function-") or part in _UNION_TAGS)


def clean_loc(loc: tuple[Any, ...]) -> PathT:
    """Drop pydantic's union/function tags so the location is a real YAML path."""
    return tuple(part for part in loc if not _is_tag(part))


Located = list[tuple[PathT, dict[str, Any]]]


def _located(errors: list[dict[str, Any]], echo: bool) -> Located:
    """Each error with its YAML path, in pydantic's order; of a union's alternatives only the errors of the one
    that got furthest into the value (the list branch of `str | list[str]` given `[1]`), or, when every
    alternative failed on the value's type alone, one error naming them all ("text (a string) or a list")."""
    order: list[tuple[PathT, dict[str, Any] | None]] = []   # (path, error), or (union path, None) for a union
    groups: dict[PathT, dict[Any, Located]] = {}
    for e in errors:
        raw = tuple(e.get("loc", ()))
        k = next((i for i, part in enumerate(raw) if _is_tag(part)), None)
        if k is None:
            order.append((clean_loc(raw), e))
            continue
        prefix = clean_loc(raw[:k])
        if prefix not in groups:
            groups[prefix] = {}
            order.append((prefix, None))
        groups[prefix].setdefault(raw[k], []).append((clean_loc(raw), e))
    located: Located = []
    for loc, err in order:
        located.extend([(loc, err)] if err is not None else _branch(loc, groups[loc], echo))
    return located


def _branch(prefix: PathT, branches: dict[Any, Located], echo: bool) -> Located:
    """The errors of the union alternative the value came closest to (see `_located`)."""
    depth = {tag: max(len(loc) for loc, _ in errs) for tag, errs in branches.items()}
    best = max(depth.values())
    tied = [errs for tag, errs in branches.items() if depth[tag] == best]
    kinds = [errs[0][1].get("type", "") for errs in tied]
    if len(tied) > 1 and all(len(errs) == 1 and errs[0][0] == prefix for errs in tied) \
            and all(k.endswith("_type") or k.endswith("_parsing") for k in kinds):
        words = [plain(errs[0][1], None, echo=False).removeprefix("expected ") for errs in tied]
        first = tied[0][0][1]
        got = f", got {shown(first.get('input'))}" if echo else ""
        merged = {**first, "type": "value_error", "ctx": {"error": "expected " + " or ".join(words) + got}}
        return [(prefix, merged)]
    return tied[0]


def _unknown(model: type[BaseModel], payload: Any, loc: PathT) -> tuple[str, list[str]]:
    """The message of an unknown key at `loc`, and the keys it suggests: the model's hints for it, else the
    nearest of the keys that apply there (or, with no near one, the list of them)."""
    key = str(loc[-1]) if loc else "?"
    parent = _model_at(model, loc[:-1])
    data = _data_at(payload, loc[:-1])
    if parent is not None and issubclass(parent, Strict):
        keys, hints = parent.allowed_keys(data), parent.key_hints(key, data)
    else:
        keys, hints = field_names(model, loc[:-1]), []
    hints = list(dict.fromkeys(hints + suggest(key, keys)))
    return f"unknown key '{key}'" + (meant(hints) if hints else did_you_mean(key, keys, listing=True)), hints


def report(errors: list[dict[str, Any]], model: type[BaseModel], source: Source, base: PathT, echo: bool,
           payload: Any) -> list[InputError]:
    """Every mistake among pydantic's `errors` of `payload` (validated as `model` at `base` in `source`), one
    `InputError` each, in pydantic's order (see module docstring)."""
    located = _located(errors, echo)
    out: dict[PathT, InputError] = {}
    covered: set[PathT] = set()   # required keys an unknown key is the typo of
    for loc, e in located:
        if e.get("type") == "extra_forbidden":
            message, hints = _unknown(model, payload, loc)
            covered.update(loc[:-1] + (h,) for h in hints)
            out.setdefault(loc, source.error(base + loc, message))
    missing: dict[PathT, list[str]] = {}   # by mapping: reported together, where the first was
    for loc, e in located:
        if e.get("type") == "missing" and loc and loc not in covered:
            missing.setdefault(loc[:-1], []).append(str(loc[-1]))
    for loc, e in located:
        kind = e.get("type")
        if kind == "extra_forbidden" or loc in out:
            continue
        if kind == "missing":
            names = missing.pop(loc[:-1], None)
            if names is not None and len(names) > 1:
                out[loc[:-1]] = source.error(base + loc[:-1], f"required fields are missing: {', '.join(names)}")
            elif names is not None:
                out[loc] = source.error(base + loc, "required field is missing")
            continue
        field = next((str(p) for p in reversed(loc) if isinstance(p, str)), None)
        out[loc] = source.error(base + loc, plain(e, field, echo=echo))
    return list(out.values())


def validate_all(model: type[M], source: Source, data: Any = None, base: PathT = (), *,
                 echo: bool = True) -> tuple[M | None, list[InputError]]:
    """`data` (default: the whole document) validated as `model`, or None and every mistake found in it."""
    payload = source.data if data is None else data
    if not isinstance(payload, dict):
        return None, [source.error(base, f"expected a mapping of keys, got {type(payload).__name__}")]
    try:
        return model.model_validate(payload), []
    except ValidationError as exc:
        return None, report([dict(e) for e in exc.errors()], model, source, base, echo, payload)


def validate(model: type[M], source: Source, data: Any = None, base: PathT = (), *, echo: bool = True) -> M:
    """Validate `data` (default: the whole document) against `model`; failure is one `InputError` for one mistake,
    an `InputErrors` (one line each) for several.

    `echo=False` keeps the offending value out of the message (files given as catalogs may not be catalogs at all,
    and their content is not ours to print)."""
    value, errors = validate_all(model, source, data, base, echo=echo)
    if value is None:
        raise combined(errors)
    return value


__all__ = ["Strict", "validate", "validate_all", "report", "field_names", "clean_loc", "InputError"]
