"""The JSON Schemas (draft 2020-12) of `--format json`, shipped as package data (`solver/schemas/*.schema.json`) and
printed by `plan schema [COMMAND]`.

One file per command's answer (`solve`, `program`, `risk`, …, `catalog-quotes`); the definitions they share (a plan,
a quote, a risk summary, an explanation) are in `common.schema.json`, referred to as
`common.schema.json#/$defs/<name>`. `bundled(name)` gives a command's schema self-contained — the common definitions
it uses copied into its own `$defs`, the references made local — which is what `plan schema` prints and what
`tests/test_json_schema.py` validates the program's output against.
"""

from __future__ import annotations

import json
from importlib import resources
from importlib.abc import Traversable
from typing import Any

COMMON = "common"
SUFFIX = ".schema.json"
_COMMON_REF = f"{COMMON}{SUFFIX}#/$defs/"


def folder() -> Traversable:
    """The folder of the schema files, inside the installed package or the checkout."""
    return resources.files("solver") / "schemas"


def names() -> list[str]:
    """The command schemas there are (`common` is not one), sorted."""
    return sorted(c.name[: -len(SUFFIX)] for c in folder().iterdir()
                  if c.name.endswith(SUFFIX) and c.name != COMMON + SUFFIX)


def raw(name: str) -> dict[str, Any]:
    """One schema file as it is stored (references to the common definitions left as they are)."""
    data: dict[str, Any] = json.loads((folder() / f"{name}{SUFFIX}").read_text(encoding="utf-8"))
    return data


def bundled(name: str) -> dict[str, Any]:
    """A command's schema, self-contained: the common definitions it uses (and those they use) copied into its
    `$defs`, every `common.schema.json#/$defs/X` made `#/$defs/X`."""
    schema = raw(name)
    common: dict[str, Any] = raw(COMMON)["$defs"]
    own: dict[str, Any] = schema.get("$defs", {})
    defs = dict(own)
    todo = _common_refs(schema)
    while todo:
        ref = todo.pop()
        if ref in own:
            raise KeyError(f"{name}{SUFFIX} defines {ref!r}, a name {COMMON}{SUFFIX} defines too")
        if ref in defs:
            continue
        if ref not in common:
            raise KeyError(f"{name}{SUFFIX} refers to {_COMMON_REF}{ref}, which {COMMON}{SUFFIX} does not define")
        defs[ref] = common[ref]
        todo.extend(r for r in _common_refs(common[ref]) if r not in defs)
    out = _localised(schema)
    if defs:
        out["$defs"] = {k: _localised(v) for k, v in sorted(defs.items())}
    return out


def text(name: str) -> str:
    """What `plan schema NAME` prints."""
    return json.dumps(bundled(name), indent=2, ensure_ascii=False) + "\n"


def listing() -> str:
    """What `plan schema --list` prints: each schema's name and what it describes."""
    found = {n: str(raw(n).get("title", "")) for n in names()}
    pad = max(len(n) for n in found) + 2
    return "".join(f"{n.ljust(pad)}{title}\n" for n, title in found.items()) + \
        "\nplan schema NAME prints one (default: solve); `catalog quotes` is catalog-quotes.\n"


def _common_refs(node: Any) -> list[str]:
    """The common definitions a schema node refers to, by name."""
    if isinstance(node, dict):
        found = [node["$ref"][len(_COMMON_REF):]] if str(node.get("$ref", "")).startswith(_COMMON_REF) else []
        return found + [r for v in node.values() for r in _common_refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _common_refs(v)]
    return []


def _localised(node: Any) -> Any:
    """A copy of the node with references to common definitions made local."""
    if isinstance(node, dict):
        return {k: ("#/$defs/" + v[len(_COMMON_REF):] if k == "$ref" and isinstance(v, str)
                    and v.startswith(_COMMON_REF) else _localised(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [_localised(v) for v in node]
    return node


__all__ = ["bundled", "listing", "names", "raw", "text"]
