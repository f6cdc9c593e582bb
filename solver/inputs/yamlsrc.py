"""Safe YAML loading that remembers where every value came from.

Why not `yaml.safe_load`: users need errors that point at a line, duplicate keys must be errors (PyYAML
silently keeps the last one), object-constructing tags must be refused, and alias expansion ("billion
laughs") must be bounded. We read the events of PyYAML's (C) parser and build plain Python values from them in
one pass, recording `path -> line` for every value (`_Builder`).
"""

from __future__ import annotations

import copy
import math
import os
import re
import stat
from datetime import date
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from ..errors import InputError
from .jsonsrc import parse_json
from .yamlblock import read_block
from .source import PathT, Source, path_str

MAX_FILE_BYTES = 2_000_000
"""Largest problem (or saved-plan) YAML file read, in bytes: a problem is kilobytes; this bounds memory before
parsing. Catalog and quote files have their own limit (`catalog_file_limit`)."""
CATALOG_LIMIT_ENV = "PLAN_MAX_CATALOG_MB"
DEFAULT_CATALOG_MB = 64.0
"""Largest catalog or quote file, in MB (10^6 bytes), unless `PLAN_MAX_CATALOG_MB` says otherwise: a marketplace's
quote list of ~100,000 offers is ~36–45 MB of YAML. Reading 100,000 quotes (36 MB) peaks at 0.7 GB with the
catalog validated (`plan validate`, bench/README.md)."""
MAX_CATALOG_MB = 1024.0
MAX_NODES = 200_000
"""Most values a document may expand to (aliases included) beyond one per byte of its text: bounds the work of a
YAML alias bomb (a few bytes that expand to millions of values) without refusing a long honest file."""

_SCALAR_TAGS = {
    "tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null", "tag:yaml.org,2002:timestamp",
}
_MAP_TAG = "tag:yaml.org,2002:map"
_STR_TAG = "tag:yaml.org,2002:str"
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_SEQ_TAG = "tag:yaml.org,2002:seq"


class LineIndex(Mapping[PathT, int]):
    """The line of every path of a document. Most paths end in a map key: those lines are kept per map, one small
    dict each, with no path made per key (a 100,000-quote file has 1.6 million keys, and a path per key is a tuple
    to build and hash for each; measured: bench/README.md, "Timings that used to live in docstrings (moved
    2026-12-07)"); the rest (list items, maps, copies made by aliases) by path. A key's line is its path's line (a
    map value's own line is not kept beside it)."""

    __slots__ = ("nodes", "by_map")

    def __init__(self) -> None:
        self.nodes: dict[PathT, int] = {}
        self.by_map: dict[PathT, dict[str, int]] = {}

    def __getitem__(self, path: PathT) -> int:
        if path:
            here = self.by_map.get(path[:-1])
            if here is not None:
                line = here.get(path[-1])  # type: ignore[arg-type]
                if line is not None:
                    return line
        return self.nodes[path]

    def __contains__(self, path: object) -> bool:
        try:
            self[path]  # type: ignore[index]
        except (KeyError, TypeError):
            return False
        return True

    def __iter__(self) -> Iterator[PathT]:
        yield from self.nodes
        for parent, here in self.by_map.items():
            for key in here:
                path = parent + (key,)
                if path not in self.nodes:
                    yield path

    def __len__(self) -> int:
        return sum(1 for _ in self)


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


_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")
_PLAIN_FLOAT = re.compile(r"[-+]?[0-9]+\.[0-9]*(?:[eE][-+][0-9]+)?\Z")
"""A subset of YAML 1.1's float pattern as PyYAML resolves it (its float exponent needs a sign; `_INT` is its int
pattern's decimal part)."""
_IMPLICIT = yaml.SafeLoader.yaml_implicit_resolvers
PLAIN_TEXT_STARTS = None if None in _IMPLICIT or "" not in _IMPLICIT else frozenset(_IMPLICIT)
"""First characters for which YAML 1.1 has an implicit tag to try (numbers, booleans, null, dates, merge …): a
plain scalar starting with any other character is a string, as the resolver decides — it looks up its regular
expressions by the text's first character (None if the loader registered one for every character). Quote ids and
names are mostly such texts: unique, so a cache of resolved texts would only fill with them."""
MAX_CACHED_TEXTS = 100_000
"""Most distinct scalar texts whose tag is remembered: bounds the cache on a file of unique values."""
MAX_DEPTH = 200
"""Deepest nesting of maps and lists read: a problem is a few levels deep; this refuses a hostile file at once."""


def _child(parent: PathT, key: str | int | None) -> PathT:
    return parent if key is None else parent + (key,)


def _plain_number_tag(text: str) -> str | None:
    """The tag PyYAML's resolver gives a plain decimal int or float without underscores, found by one regular
    expression instead of the resolver's list (a quote file has a distinct price on every line); None for anything
    else, which the resolver then decides."""
    if _INT.match(text):
        return _INT_TAG
    if _PLAIN_FLOAT.match(text):
        return _FLOAT_TAG
    return None


def _line(event: Any) -> int:
    return int(event.start_mark.line) + 1 if event.start_mark is not None else 0


class _PlainEvent:
    """What `_Builder._scalar` reads of a plain scalar's event, for a scalar read without the parser."""

    __slots__ = ("value",)
    tag = None
    implicit = (True, False)
    start_mark = end_mark = style = None

    def __init__(self, value: str) -> None:
        self.value = value


class _Frame:
    """A map or list being built: its value, path, the key waiting for its value (maps), and what it records for
    an anchor (its size in values and the lines under it) when it has one."""

    __slots__ = ("value", "is_map", "path", "key", "anchor", "count0", "lines0", "key_lines")

    def __init__(self, value: Any, path: PathT, anchor: str | None, count0: int, lines0: int) -> None:
        self.value = value
        self.is_map = isinstance(value, dict)
        self.path = path
        self.key: str | None = None
        self.anchor = anchor
        self.count0 = count0
        self.lines0 = lines0
        self.key_lines: dict[str, int] | None = None


class _Builder:
    """Plain values from the parser's events, in one pass, recording the line of every path.

    Why events, not `yaml.compose` and a walk of its node graph: the graph holds a node and two marks per value
    until the walk ends — 1.2 GB for a 36 MB marketplace quote file, twice the values themselves — and the walk is a
    second pass. Each event is dropped as soon as its value is made. Common scalars (plain strings, decimal ints
    and floats, ISO dates) are converted directly; the rest go through PyYAML's safe constructor."""

    def __init__(self, file: str, budget: int = MAX_NODES) -> None:
        self.file = file
        self.budget = budget
        self.lines = LineIndex()
        self.order: list[tuple[PathT, int]] = []
        """Lines in the order recorded (an anchor replays its share of them under each alias's path)."""
        self.count = 0
        self.constructor = yaml.SafeLoader("")
        self.anchors: dict[str, tuple[Any, int, list[tuple[PathT, int]]]] = {}
        self.resolved: dict[str, str] = {}
        """Tag of each plain scalar text seen (the resolver's regular expressions run once per distinct text)."""
        self.anchored = 0
        self.plain_keys: set[str] = set()
        """Plain (unquoted, untagged) key texts already read as strings: the next occurrence of one is a key
        without resolving its tag again (a quote file repeats the same dozen keys 100,000 times)."""
        """Anchored maps and lists open: only then are lines also kept in order (a file without anchors keeps one
        record per path, not two)."""

    def _line(self, path: PathT, line: int, force: bool = False) -> None:
        if force or path not in self.lines:
            self.lines.nodes[path] = line
            if self.anchored:
                self.order.append((path, line))

    def _count(self, n: int, line: int) -> None:
        self.count += n
        if self.count > self.budget:
            raise InputError(f"document expands to more than {self.budget:,} values (YAML alias bomb?)",
                             file=self.file, line=line)

    def build(self, loader: Any) -> Any:
        stack: list[_Frame] = []
        root: list[Any] = []
        documents = 0
        get_event, scalar_event = loader.get_event, yaml.ScalarEvent
        plain_keys, resolved, key_lines, budget = self.plain_keys, self.resolved, self.lines.by_map, self.budget
        starts = PLAIN_TEXT_STARTS
        while True:
            event: Any = get_event()
            if type(event) is scalar_event and stack and stack[-1].is_map and event.anchor is None:
                # The common case, inlined: a scalar key or value in a map.
                top = stack[-1]
                mark = event.start_mark
                line = mark.line + 1 if mark is not None else 0
                self.count += 1
                if self.count > budget:
                    self._count(0, line)
                text = event.value
                if top.key is None:
                    if event.tag is None and text in plain_keys and text not in top.value:
                        here = top.key_lines
                        if here is None:
                            here = top.key_lines = key_lines.setdefault(top.path, {})
                        here[text] = line
                        if self.anchored:
                            self.order.append((top.path + (text,), line))
                        top.key = text
                    else:
                        self.count -= 1
                        top.key = self._key(event, top)
                    continue
                # a map's scalar value: its path's line is its key's, recorded with the key
                if event.tag is None and (not event.implicit[0]
                                          or (starts is not None and text and text[0] not in starts)
                                          or resolved.get(text) == _STR_TAG):
                    top.value[top.key] = text
                else:
                    top.value[top.key] = self._scalar(event, top.path, top.key, line)
                top.key = None
                continue
            if isinstance(event, yaml.StreamEndEvent):
                break
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    raise InputError("expected one YAML document, found more (a second `---`)", file=self.file,
                                     line=_line(event))
                continue
            if isinstance(event, (yaml.StreamStartEvent, yaml.DocumentEndEvent)):
                continue
            self._structure(event, stack, root)
        if not root:
            raise InputError("file is empty", file=self.file)
        return root[0]

    def _open(self, event: Any, stack: list[_Frame], path: PathT, line: int) -> None:
        is_map = isinstance(event, yaml.MappingStartEvent)
        tag = event.tag if event.tag not in (None, "!") else (_MAP_TAG if is_map else _SEQ_TAG)
        if tag != (_MAP_TAG if is_map else _SEQ_TAG):
            raise self._tag_error(tag, line)
        if len(stack) >= MAX_DEPTH:
            raise InputError("input is nested too deeply", file=self.file, line=line)
        if event.anchor is not None:
            self.anchored += 1
            self.order.append((path, line))
        stack.append(_Frame({} if is_map else [], path, event.anchor, self.count - 1, len(self.order) - 1))

    def _structure(self, event: Any, stack: list[_Frame], root: list[Any]) -> None:
        """Every event but a plain scalar in a map (`build`'s inlined common case): keys of other kinds, list items,
        the start and end of maps and lists, aliases, and scalars at the top or in a list."""
        line = _line(event)
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            frame = stack.pop()
            self._finish(frame, stack, root)
            return
        parent = stack[-1] if stack else None
        if parent is not None and parent.is_map and parent.key is None:
            parent.key = self._key(event, parent)
            return
        path = self._child_path(parent)
        if isinstance(event, yaml.AliasEvent):
            self._place(self._alias(event, path, line), parent, root)
            return
        self._count(1, line)
        self._line(path, line)
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            self._open(event, stack, path, line)
            return
        value = self._scalar(event, path[:-1], path[-1] if path else None, line)
        if event.anchor is not None:
            self.anchors[event.anchor] = (value, 1, [((), line)])
        self._place(value, parent, root)

    def _child_path(self, parent: _Frame | None) -> PathT:
        if parent is None:
            return ()
        if parent.is_map:
            assert parent.key is not None
            return parent.path + (parent.key,)
        return parent.path + (len(parent.value),)

    def _place(self, value: Any, parent: _Frame | None, root: list[Any]) -> None:
        if parent is None:
            root.append(value)
        elif parent.is_map:
            assert parent.key is not None
            parent.value[parent.key] = value
            parent.key = None
        else:
            parent.value.append(value)

    def _finish(self, frame: _Frame, stack: list[_Frame], root: list[Any]) -> None:
        if frame.anchor is not None:
            n = len(frame.path)
            self.anchors[frame.anchor] = (frame.value, self.count - frame.count0,
                                          [(p[n:], ln) for p, ln in self.order[frame.lines0:]])
            self.anchored -= 1
            if not self.anchored:
                self.order.clear()
        self._place(frame.value, stack[-1] if stack else None, root)

    def _key(self, event: Any, parent: _Frame) -> str:
        line = _line(event)
        if not isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)):
            raise InputError("mapping keys must be plain scalars", file=self.file, line=line,
                             path=path_str(parent.path))
        if isinstance(event, yaml.AliasEvent):
            got = self.anchors.get(str(event.anchor))
            key = got[0] if got is not None else None
            if got is None:
                raise InputError(f"found undefined alias {event.anchor!r}", file=self.file, line=line)
        else:
            tag = self._tag_of(event)
            if tag == "tag:yaml.org,2002:merge":
                raise InputError("YAML merge keys (<<) are not supported; write the keys out", file=self.file,
                                 line=line, path=path_str(parent.path))
            self._count(1, line)
            key = self._scalar(event, parent.path, "<key>", line)
            if tag == _STR_TAG and event.implicit[0] and len(self.plain_keys) < MAX_CACHED_TEXTS:
                self.plain_keys.add(key)
        if not isinstance(key, (str, int, float, bool)) or key is None:
            raise InputError("mapping keys must be plain scalars", file=self.file, line=line,
                             path=path_str(parent.path))
        key = str(key)
        if key in parent.value:
            raise InputError(f"duplicate key '{key}' (an earlier value would be silently lost)", file=self.file,
                             line=line, path=path_str(parent.path + (key,)))
        self._line(parent.path + (key,), line, force=True)
        return key

    def _alias(self, event: Any, path: PathT, line: int) -> Any:
        got = self.anchors.get(event.anchor)
        if got is None:
            raise InputError(f"found undefined alias {event.anchor!r}", file=self.file, line=line)
        value, size, lines = got
        self._count(size, line)
        for rel, ln in lines:
            self._line(path + rel, ln)
        return copy.deepcopy(value)

    def _tag_of(self, event: Any) -> str:
        if event.tag not in (None, "!"):
            return str(event.tag)
        if not event.implicit[0]:
            return _STR_TAG  # quoted: a string, as the resolver says
        text = event.value
        if PLAIN_TEXT_STARTS is not None and text and text[0] not in PLAIN_TEXT_STARTS:
            return _STR_TAG
        tag = self.resolved.get(text)
        if tag is None:
            tag = _plain_number_tag(text) or str(self.constructor.resolve(yaml.ScalarNode, text, event.implicit))
            if len(self.resolved) < MAX_CACHED_TEXTS:
                self.resolved[text] = tag
        return tag

    def plain(self, text: str) -> Any:
        """The value of a plain scalar `text` (unquoted, untagged) as this reader types it (`yamlblock.py`); an
        `InputError` without a line for a value it refuses. Decimal numbers, most of a quote file's values, are
        converted as `_scalar` converts them, without making an event for them."""
        tag = _plain_number_tag(text)
        if tag == _INT_TAG:
            return int(text)
        if tag == _FLOAT_TAG:
            value = float(text)
            if math.isfinite(value):
                return value
        return self._scalar(_PlainEvent(text), (), None, 0)

    def _scalar(self, event: Any, parent: PathT, key: str | int | None, line: int) -> Any:
        """The value of a scalar at `parent + (key,)` (the path is made only for an error message)."""
        if event.tag is None and not event.implicit[0]:
            return event.value  # quoted: a string, as the resolver says
        tag = self._tag_of(event)
        text = event.value
        if tag == _STR_TAG:
            return text
        if tag not in _SCALAR_TAGS:
            raise self._tag_error(tag, line)
        if tag == _INT_TAG and _INT.match(text):
            return int(text)
        if tag == _FLOAT_TAG and _FLOAT.match(text):
            value: Any = float(text)
        elif tag == "tag:yaml.org,2002:timestamp" and _DATE.match(text):
            try:
                return date.fromisoformat(text)
            except ValueError as exc:
                raise InputError(f"cannot read value {text!r}: {exc}", file=self.file, line=line,
                                 path=path_str(_child(parent, key))) from None
        else:
            node = yaml.ScalarNode(tag, text, event.start_mark, event.end_mark, event.style)
            try:
                value = self.constructor.construct_object(node, deep=True)
            except (yaml.YAMLError, ValueError) as exc:
                raise InputError(f"cannot read value {text!r}: {exc}", file=self.file, line=line,
                                 path=path_str(_child(parent, key))) from None
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"expected a finite number, got {text!r}", file=self.file, line=line,
                             path=path_str(_child(parent, key)))
        return value

    def _tag_error(self, tag: str, line: int) -> InputError:
        return InputError(f"YAML tag {tag!r} is not allowed (only plain data: maps, lists, strings, numbers, "
                          "booleans, dates)", file=self.file, line=line)


def parse_text(text: str, file: str) -> Source:
    """Parse YAML text into a `Source` (JSON when `file` ends in `.json`, `jsonsrc.py`); every failure is an
    `InputError` naming `file`."""
    if file.lower().endswith(".json"):
        return parse_json(text, file)
    builder = _Builder(file, MAX_NODES + len(text))
    block = read_block(text, builder.plain, PLAIN_TEXT_STARTS)
    if block is not None:
        lines = LineIndex()
        data, lines.nodes, lines.by_map = block
        return Source(file=file, data=data, lines=lines)
    try:
        data = builder.build(getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text))
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
