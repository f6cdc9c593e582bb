"""A loaded document (YAML or JSON) with the line of each of its paths: what every reader returns and every error
message is made from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError

PathT = tuple[str | int, ...]


def path_str(path: PathT) -> str:
    """`('rules', 0, 'when')` -> `rules[0].when` — the form used in every message."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


@dataclass
class Source:
    """A loaded document: its data, the line of every path in it, and the paths a `--set` replaced.

    `overridden` maps a path to the `--set` expression that gave its value: errors at or below such a path are
    reported against the `--set`, not against the file line whose value it replaced.
    """

    file: str
    data: Any
    lines: Mapping[PathT, int] = field(default_factory=dict)
    overridden: dict[PathT, str] = field(default_factory=dict)

    def line_of(self, path: PathT) -> int | None:
        """The line of `path`, or of its nearest ancestor that has one."""
        p = tuple(path)
        while True:
            if p in self.lines:
                return self.lines[p]
            if not p:
                return None
            p = p[:-1]

    def set_by(self, path: PathT) -> str | None:
        """The `--set` expression that gave `path` (or one of its ancestors) its value, or that created `path`
        (a key the file does not have, made as the parent of a `--set` path), if any."""
        p = tuple(path)
        while p:
            if p in self.overridden:
                return self.overridden[p]
            p = p[:-1]
        if path and tuple(path) not in self.lines:
            created = [o for k, o in self.overridden.items() if k[: len(path)] == tuple(path)]
            if created:
                return created[0]
        return None

    def where(self, path: PathT) -> str:
        """`file:line` of a path, or `--set PATH=VALUE` when a `--set` gave it its value."""
        via = self.set_by(path)
        if via:
            return via
        line = self.line_of(path)
        return f"{self.file}:{line}" if line else self.file

    def error(self, path: PathT, message: str) -> InputError:
        via = self.set_by(path)
        shown = path_str(path) if path else None
        if via:
            return InputError(message, path=shown, origin=via)
        return InputError(message, file=self.file, line=self.line_of(path), path=shown)


__all__ = ["PathT", "Source", "path_str"]
