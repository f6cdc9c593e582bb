"""Changes to a problem: `--set PATH=VALUE` from the command line, and the what-ifs later stages ask for.

A change is plain data (a path, a value, and where it came from), applied to a copy of the problem's raw data
and then validated by the same models as the file itself. Paths under `quotes.<id>.<field>` change a quote of
the catalog instead of the problem file. Values are YAML scalars or flow collections (`80M`, `2027-03-01`,
`[cloud]`, `{gt: 64}`).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from ..errors import InputError
from .yamlsrc import PathT, path_str

MAX_SET_LENGTH = 10_000
"""Longest `--set` expression accepted (a value is a scalar or a small flow collection, never a document)."""

_SET_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z0-9_\-]+|\[[0-9]+\])*)=(.*)$", re.S)


@dataclass(frozen=True)
class Change:
    """One change: the field path, the new value, and the origin errors and explanations name (`--set …`)."""

    path: PathT
    value: Any
    origin: str

    @property
    def quote(self) -> tuple[str, str] | None:
        """(quote id, field) when the change is to a catalog quote: `quotes.<id>.<field>` (ids may contain dots)."""
        if len(self.path) >= 3 and self.path[0] == "quotes" and all(isinstance(p, str) for p in self.path):
            return ".".join(str(p) for p in self.path[1:-1]), str(self.path[-1])
        return None


def parse_set(expr: str) -> Change:
    """`budget.max_usd=80M` → Change(('budget', 'max_usd'), '80M', '--set budget.max_usd=80M')."""
    origin = f"--set {expr}" if len(expr) <= 120 else f"--set {expr[:117]}..."
    if len(expr) > MAX_SET_LENGTH:
        raise InputError(f"expression is over {MAX_SET_LENGTH:,} characters", origin=origin)
    m = _SET_RE.match(expr)
    if not m:
        raise InputError("expected PATH=VALUE (e.g. budget.max_usd=80M or quotes.<id>.max_nodes=64)",
                         origin=origin)
    raw_path, raw_value = m.groups()
    path: list[str | int] = []
    for part in re.findall(r"[^.\[\]]+|\[[0-9]+\]", raw_path):
        path.append(int(part[1:-1]) if part.startswith("[") else part)
    try:
        value = _load_value(raw_value, origin) if raw_value.strip() else ""
    except (yaml.YAMLError, ValueError, OverflowError, RecursionError):
        value = raw_value
    return Change(tuple(path), value, origin)


MAX_SET_VALUES = 10_000
"""Most values a `--set` value may expand to, aliases included: a few hundred characters of anchors and aliases
(`&a1 [*a0, *a0, …]`, nine levels) otherwise expand to 10⁹ values and hang the validation that walks them. Files
have their own cap (`yamlsrc.MAX_NODES`)."""


def _load_value(raw: str, origin: str) -> Any:
    """The YAML value of `raw`, after its node graph (aliases shared, not copied) is counted as it would expand."""
    loader = yaml.SafeLoader(raw)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded(node, {}) > MAX_SET_VALUES:
            raise InputError(f"the value expands to more than {MAX_SET_VALUES:,} values (YAML alias bomb?)",
                             origin=origin)
        return loader.construct_document(node)   # what yaml.safe_load does after composing, without a second parse
    finally:
        loader.dispose()


def _expanded(node: Any, seen: dict[int, int]) -> int:
    """How many values `node` stands for once every alias is copied: each node counted once per path to it, by
    the sizes of its children kept per node (linear in the graph, not in the expansion)."""
    got = seen.get(id(node))
    if got is not None:
        return got
    if isinstance(node, yaml.SequenceNode):
        size = 1 + sum(_expanded(child, seen) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size = 1 + sum(_expanded(k, seen) + _expanded(v, seen) for k, v in node.value)
    else:
        size = 1
    seen[id(node)] = size
    return size


def parse_sets(exprs: Sequence[str]) -> tuple[Change, ...]:
    return tuple(parse_set(e) for e in exprs)


def apply_to_data(data: dict[str, Any], changes: Sequence[Change]) -> tuple[dict[str, Any], dict[PathT, str]]:
    """A deep copy of `data` with the changes applied, and the paths they replaced (for error attribution).

    Parents are created as mappings where missing; list items must exist (an index past the end is an error, not
    a silent append).
    """
    out = copy.deepcopy(data)
    replaced: dict[PathT, str] = {}
    for ch in changes:
        node: Any = out
        path = ch.path
        for i, part in enumerate(path[:-1]):
            if isinstance(part, int):
                if not isinstance(node, list) or part >= len(node):
                    raise InputError(f"{path_str(path[: i + 1])} does not exist", origin=ch.origin)
                node = node[part]
            else:
                if not isinstance(node, dict):
                    raise InputError(f"{path_str(path[:i])} is not a mapping", origin=ch.origin)
                node = node.setdefault(part, {})
        last = path[-1]
        if isinstance(last, int):
            if not isinstance(node, list) or last >= len(node):
                raise InputError(f"{path_str(path)} does not exist", origin=ch.origin)
        elif not isinstance(node, dict):
            raise InputError(f"{path_str(path[:-1])} is not a mapping", origin=ch.origin)
        node[last] = copy.deepcopy(ch.value)
        replaced[tuple(path)] = ch.origin
    return out, replaced
