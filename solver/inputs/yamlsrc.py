"""Safe YAML loading that remembers where every value came from.

Why not `yaml.safe_load`: users need errors that point at a line, duplicate keys must be errors (PyYAML
silently keeps the last one), object-constructing tags must be refused, and alias expansion ("billion
laughs") must be bounded. We compose the node graph with PyYAML's safe composer and build plain Python
values ourselves, recording `path -> line` for every node.
"""

from __future__ import annotations

import math
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import InputError

MAX_FILE_BYTES = 2_000_000
"""Largest problem (or saved-plan) YAML file read, in bytes: a problem is kilobytes; this bounds memory before
parsing. Catalog and quote files have their own limit (`catalog_file_limit`)."""
CATALOG_LIMIT_ENV = "PLAN_MAX_CATALOG_MB"
DEFAULT_CATALOG_MB = 64.0
"""Largest catalog or quote file, in MB (10^6 bytes), unless `PLAN_MAX_CATALOG_MB` says otherwise: a marketplace's
quote list of ~100,000 offers is ~45 MB of YAML. Parsing takes memory of a few times the text."""
MAX_CATALOG_MB = 1024.0
MAX_NODES = 200_000
"""Most values a document may expand to (aliases included) beyond one per byte of its text: bounds the work of a
YAML alias bomb (a few bytes that expand to millions of values) without refusing a long honest file."""

PathT = tuple[str | int, ...]

_SCALAR_TAGS = {
    "tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null", "tag:yaml.org,2002:timestamp",
}
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"


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
    """A loaded YAML document: its data, the line of every path in it, and the paths a `--set` replaced.

    `overridden` maps a path to the `--set` expression that gave its value: errors at or below such a path are
    reported against the `--set`, not against the file line whose value it replaced.
    """

    file: str
    data: Any
    lines: dict[PathT, int] = field(default_factory=dict)
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


def catalog_file_limit() -> int:
    """The catalog and quote file limit in bytes: `PLAN_MAX_CATALOG_MB` (a positive number of MB, at most 1,024)
    or 64 MB."""
    raw = os.environ.get(CATALOG_LIMIT_ENV)
    if raw is None or not raw.strip():
        return int(DEFAULT_CATALOG_MB * 1_000_000)
    try:
        mb = float(raw)
    except ValueError:
        mb = math.nan
    if not (0 < mb <= MAX_CATALOG_MB):
        raise InputError(f"expected a number of MB in (0, {MAX_CATALOG_MB:g}], got {raw!r}",
                         origin=f"environment {CATALOG_LIMIT_ENV}")
    return max(1, int(mb * 1_000_000))


class _Builder:
    def __init__(self, file: str, budget: int = MAX_NODES) -> None:
        self.file = file
        self.budget = budget
        self.lines: dict[PathT, int] = {}
        self.count = 0
        self.constructor = yaml.SafeLoader("")

    def build(self, node: yaml.Node, path: PathT) -> Any:
        self.count += 1
        if self.count > self.budget:
            raise InputError(f"document expands to more than {self.budget:,} values (YAML alias bomb?)",
                             file=self.file, line=node.start_mark.line + 1)
        self.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            if node.tag != _MAP_TAG:
                raise self._tag_error(node)
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise InputError("YAML merge keys (<<) are not supported; write the keys out",
                                     file=self.file, line=key_node.start_mark.line + 1, path=path_str(path))
                key = self.build(key_node, path + ("<key>",))
                if not isinstance(key, (str, int, float, bool)) or key is None:
                    raise InputError("mapping keys must be plain scalars", file=self.file,
                                     line=key_node.start_mark.line + 1, path=path_str(path))
                key = str(key)
                if key in out:
                    raise InputError(f"duplicate key '{key}' (an earlier value would be silently lost)",
                                     file=self.file, line=key_node.start_mark.line + 1,
                                     path=path_str(path + (key,)))
                self.lines[path + (key,)] = key_node.start_mark.line + 1
                out[key] = self.build(value_node, path + (key,))
            return out
        if isinstance(node, yaml.SequenceNode):
            if node.tag != _SEQ_TAG:
                raise self._tag_error(node)
            return [self.build(item, path + (i,)) for i, item in enumerate(node.value)]
        if node.tag not in _SCALAR_TAGS:
            raise self._tag_error(node)
        try:
            value = self.constructor.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError) as exc:
            raise InputError(f"cannot read value {node.value!r}: {exc}", file=self.file,
                             line=node.start_mark.line + 1, path=path_str(path)) from None
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"expected a finite number, got {node.value!r}", file=self.file,
                             line=node.start_mark.line + 1, path=path_str(path))
        return value

    def _tag_error(self, node: yaml.Node) -> InputError:
        return InputError(f"YAML tag {node.tag!r} is not allowed (only plain data: maps, lists, strings, "
                          "numbers, booleans, dates)", file=self.file, line=node.start_mark.line + 1)


def parse_text(text: str, file: str) -> Source:
    """Parse YAML text into a `Source`; every failure is an `InputError` naming `file`."""
    try:
        node = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        col = f", column {mark.column + 1}" if mark else ""
        problem = exc.problem or exc.context or "syntax error"
        raise InputError(f"YAML syntax error{col}: {problem}", file=file, line=line) from None
    except yaml.YAMLError as exc:
        raise InputError(f"YAML error: {exc}", file=file) from None
    except RecursionError:
        raise InputError("input is nested too deeply", file=file) from None
    if node is None:
        raise InputError("file is empty", file=file)
    builder = _Builder(file, MAX_NODES + len(text))
    try:
        data = builder.build(node, ())
    except RecursionError:
        raise InputError("input is nested too deeply", file=file) from None
    return Source(file=file, data=data, lines=builder.lines)


def read_text(path: str | Path, *, max_bytes: int = MAX_FILE_BYTES, shown: str | None = None,
              limit_hint: str = "") -> str:
    """The UTF-8 text of a regular file, refusing devices, FIFOs, pipes, directories and files over `max_bytes`.

    The size is enforced on the bytes actually read (at most `max_bytes + 1`), not on `stat`, which reports 0 for
    pipes and nothing useful for devices: `/dev/zero` must not be read until memory runs out, and a FIFO must not
    block the run forever (it is refused before it is opened).
    """
    p = Path(path)
    shown = shown or str(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise InputError("file not found", file=shown) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=shown) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError("is a directory, expected a YAML file", file=shown)
    if not stat.S_ISREG(st.st_mode):
        raise InputError("not a regular file (a device, FIFO, pipe or socket); save the content to a file first",
                         file=shown)
    try:
        with open(p, "rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=shown) from None
    if len(raw) > max_bytes:
        raise InputError(f"file is over {max_bytes:,} bytes; refusing to read it{limit_hint}", file=shown)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", file=shown) from None
    if "\x00" in text:
        raise InputError("contains NUL bytes; expected a YAML text file", file=shown)
    return text


def load_file(path: str | Path, *, max_bytes: int = MAX_FILE_BYTES, shown: str | None = None,
              limit_hint: str = "") -> Source:
    """Read and parse one YAML file (see `read_text` for what is refused)."""
    shown = shown or str(path)
    return parse_text(read_text(path, max_bytes=max_bytes, shown=shown, limit_hint=limit_hint), shown)
