"""A line reader for the plain subset of block YAML that quote and catalog files are written in; it either gives
exactly what the event reader (`yamlsrc._Builder`) gives, or declines and leaves the file to it.

Why: PyYAML's C parser hands Python one event object (with two mark objects) per key and per value: three Python
objects made and dropped for each (measured: bench/README.md, "Timings that used to live in docstrings (moved
2026-12-07)"). Quote files are almost always the same simple shape — maps and lists in block style, one key and
one scalar per line, long texts wrapped over a few more — which a split into lines reads without those objects.

The subset, line by line (anything else, anywhere, declines the whole file):
- blank lines and comment lines; no tabs, carriage returns, byte-order marks, other line breaks (NEL, U+2028/9) or
  characters YAML refuses; no directives, document markers but a first `---`, anchors, aliases, tags, flow
  collections, block scalars or complex keys;
- `key: value`, `key:` (a nested block, an indentless list, or null) and `- ` list items, which may open a map
  (`- key: value`); keys are simple names that read as strings, each once per map;
- values: plain scalars (typed as the event reader types them: the same function does it), single-quoted scalars,
  and double-quoted scalars without escapes, optionally followed by a comment; a scalar may go on over the lines
  right after it, more indented than its block, as writers wrap long texts (`_Reader._go_on`).
Lines are recorded as the event reader records them: a map key's line for its path, a list item's line for its.
The reader never reports an error itself: a malformed file is declined, and the event reader reports it with its
line. `tests/test_yamlblock.py` holds the reader to the event reader on every bundled file and on random documents.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator
from typing import Any

from ..errors import InputError
from .source import PathT

MAX_DEPTH = 200
"""Deepest nesting read here (the event reader has the same limit and reports it)."""

_REFUSED = re.compile("[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
"""Characters this reader leaves to the event reader: controls and tabs, CR, NEL, U+2028/2029 (YAML line breaks),
surrogates and the byte-order mark."""
_NOT_PLAIN_START = frozenset("&*!|>%@`{}[],?:#\"'")
"""First characters of a value that is not a plain scalar here (quotes are read separately)."""


class _Decline(Exception):
    """The document is outside the subset: the event reader reads it."""


class _Block:
    """A map or list being filled: its indentation, value and path; a map's key lines."""

    __slots__ = ("indent", "value", "path", "is_map", "key_lines", "indentless")

    def __init__(self, indent: int, value: Any, path: PathT, indentless: bool = False) -> None:
        self.indent = indent
        self.value = value
        self.path = path
        self.is_map = isinstance(value, dict)
        self.key_lines: dict[str, int] | None = None
        self.indentless = indentless


def read_block(text: str, plain: Callable[[str], Any], text_starts: Collection[str] | None
               ) -> tuple[Any, dict[PathT, int], dict[PathT, dict[str, int]]] | None:
    """(value, line of each list item and of the top, line of each map key by map path) of `text`, or None when it
    is outside the subset (module docstring). `plain(text)` types a plain scalar as the event reader does, raising
    on a value it refuses; `text_starts` are the first characters for which it may give anything but the text
    itself (None: any)."""
    if _REFUSED.search(text):
        return None
    try:
        return _Reader(plain, text_starts).read(text)
    except (_Decline, InputError):
        return None


_LINE = re.compile(r"^( *)(- +)?(?:([A-Za-z0-9_][A-Za-z0-9_./-]*):(?: |$))?(.*)$", re.M)
"""Every line, as (indentation, list dash, key, the rest): one match per line, so the n-th is line n. A key is a
simple name followed by `:` and a space or the line's end (`a:b` is a scalar); the rest starts after that one space
(the line can be put together again where a key turns out to be text inside a quoted scalar)."""
CHUNK_CHARS = 1_000_000
"""Text split into lines at a time: the lines of a 36 MB file at once were 1.5 million tuples (~0.15 GB on top of
the values read); a megabyte's are a few MB."""


def _chunks(text: str) -> Iterator[list[tuple[str, str, str, str]]]:
    """`_LINE`'s matches of every line of `text`, a chunk of whole lines at a time, in order."""
    start = 0
    while True:
        cut = text.find("\n", start + CHUNK_CHARS) if start + CHUNK_CHARS < len(text) else -1
        if cut < 0:
            yield _LINE.findall(text, start)
            return
        yield _LINE.findall(text, start, cut)
        start = cut + 1


class _Reader:
    """One document's lines into values: a stack of the maps and lists open, and the key whose value starts on the
    next line (`pending`)."""

    def __init__(self, plain: Callable[[str], Any], text_starts: Collection[str] | None) -> None:
        self.plain = plain
        self.starts = text_starts
        self.nodes: dict[PathT, int] = {}
        self.by_map: dict[PathT, dict[str, int]] = {}
        self.keys: set[str] = set()
        """Key texts already known to read as themselves."""
        self.typed: dict[str, Any] = {}
        """The value of each plain text typed so far (a quote file repeats its modes, kinds and small numbers)."""
        self.last: tuple[_Block, str | int, str, int] | None = None
        """A scalar `_line` placed: its block, key or index, text and line (a scalar may go on over the lines below,
        more indented than its block); `read` takes it over."""
        self.unclosed = False
        """The last scalar is quoted and its closing quote is on a line below."""

    def read(self, text: str) -> tuple[Any, dict[PathT, int], dict[PathT, dict[str, int]]]:
        stack: list[_Block] = []
        root: _Block | None = None
        pending: tuple[_Block, str] | None = None
        started = False
        keys, value = self.keys, self._value
        # First characters of a value that may read as anything but its text, or not be a plain scalar here.
        special = None if self.starts is None else _NOT_PLAIN_START | {"-", "."} | set(self.starts)
        no = 0
        # The last scalar placed (`_go_on`), kept in locals on the common line: its block, key or index, text, line.
        last_block: _Block | None = None
        last_slot: str | int = ""
        last_text = ""
        last_no = -1
        unclosed = False
        for spaces, dash, key, rest in (line for chunk in _chunks(text) for line in chunk):
            no += 1
            if not key and not dash:
                if not rest or rest[0] == "#":
                    continue  # blank, or a comment
                if root is None and not started and not spaces and rest.rstrip(" ") == "---":
                    started = True
                    continue  # the one document's start
            if rest[-1:] == " ":
                rest = rest.rstrip(" ")
            indent = len(spaces)
            if pending is None and not dash and stack and not unclosed:
                top = stack[-1]
                if top.is_map and top.indent == indent and key in keys and key not in top.value:
                    # The common line, inlined: a known key in the map being filled.
                    here = top.key_lines
                    if here is None:
                        here = top.key_lines = self.by_map.setdefault(top.path, {})
                    here[key] = no
                    first = rest[0] if rest else "#"
                    if first == " ":
                        rest = rest.lstrip(" ")  # more spaces after `key:` than one (none are left at the end)
                        first = rest[0]
                    if first == "#":
                        pending = top, key
                        continue
                    if special is None or first in special or " #" in rest or ": " in rest or rest[-1] == ":":
                        top.value[key] = value(rest)
                        unclosed = self.unclosed
                    else:
                        top.value[key] = rest  # plain text that can only be a string
                    last_block = top
                    last_slot = key
                    last_text = rest
                    last_no = no
                    continue
            if last_no == no - 1 and pending is None and last_block is stack[-1] and indent > last_block.indent:
                if key:  # text that looks like `key: …`: an error in a plain scalar, text in a quoted one
                    if not unclosed:
                        raise _Decline
                    rest = key + ":" + (" " + rest if rest else "")
                last_text = self._go_on(last_block, last_slot, last_text, dash + rest)
                last_no, unclosed = no, self.unclosed
                continue
            if unclosed or not (key or dash):
                raise _Decline  # a quote not closed, or a scalar alone on its line: a marker, a directive …
            if key and rest and rest[0] == " ":
                rest = rest.lstrip(" ")
            pending = self._line(stack, pending, no, indent, dash, key, rest)
            if self.last is not None:
                (last_block, last_slot, last_text, last_no), self.last = self.last, None
                unclosed = self.unclosed
            if root is None:
                root = stack[0]
        if root is None or unclosed:
            raise _Decline
        if pending is not None:
            pending[0].value[pending[1]] = self.plain("")
        return root.value, self.nodes, self.by_map

    def _line(self, stack: list[_Block], pending: tuple[_Block, str] | None, no: int, indent: int, dash: str,
              key: str, rest: str) -> tuple[_Block, str] | None:
        """Any line but the common one: the first, the one after a key whose value is below it, list items, and
        lines that close blocks. Returns the key whose value is on the lines below, if any."""
        if not stack:
            self.nodes[()] = no
            stack.append(_Block(indent, [] if dash else {}, ()))
        elif pending is not None:
            top, above = pending
            if indent > top.indent or (indent == top.indent and dash):
                child = _Block(indent, [] if dash else {}, top.path + (above,), indent == top.indent)
                top.value[above] = child.value
                stack.append(child)
                if len(stack) > MAX_DEPTH:
                    raise _Decline
            else:
                top.value[above] = self.plain("")
        while stack and (stack[-1].indent > indent
                         or (stack[-1].indentless and not dash and stack[-1].indent == indent)):
            stack.pop()
        if not stack or stack[-1].indent != indent:
            raise _Decline
        top = stack[-1]
        if top.is_map:
            if dash:
                raise _Decline
            return self._entry(top, key, rest, no)
        if not dash:
            raise _Decline
        path = top.path + (len(top.value),)
        self.nodes[path] = no
        if key:
            item = _Block(indent + len(dash), {}, path)
            top.value.append(item.value)
            stack.append(item)
            if len(stack) > MAX_DEPTH:
                raise _Decline
            return self._entry(item, key, rest, no)
        if not rest:
            raise _Decline  # `-` with its value on the lines below
        top.value.append(self._value(rest))
        self.last = (top, len(top.value) - 1, rest, no)
        return None

    def _entry(self, block: _Block, key: str, rest: str, no: int) -> tuple[_Block, str] | None:
        """Read `key: rest` into the map `block`; (block, key) when the value is on the lines below."""
        if key not in self.keys:
            typed = self.plain(key)
            if type(typed) is not str or typed != key:
                raise _Decline
            self.keys.add(key)
        if key in block.value:
            raise _Decline  # a duplicate key: the event reader says where
        here = block.key_lines
        if here is None:
            here = block.key_lines = self.by_map.setdefault(block.path, {})
        here[key] = no
        if not rest or rest[0] == "#":
            return block, key
        block.value[key] = self._value(rest)
        self.last = (block, key, rest, no)
        return None

    def _go_on(self, block: _Block, slot: str | int, text: str, more: str) -> str:
        """A line that continues the last scalar (the line after it, more indented than its block): YAML folds the
        break into one space, as the lines are joined here, and the scalar is read again whole. A plain scalar goes
        on only with plain text (no comment, nothing that could start another node); a quoted one with anything
        up to its closing quote (no escapes in double quotes). Returns the text so far."""
        if self.unclosed:
            if text[0] == '"' and "\\" in more:
                raise _Decline
        elif text[0] in "'\"" or "#" in more or " #" in text or more[0] in _NOT_PLAIN_START or more[0] == "-":
            raise _Decline
        joined = text + " " + more
        block.value[slot] = self._value(joined)
        return joined

    def _value(self, text: str) -> Any:
        """A scalar from its text (its lines joined, no trailing spaces), with any comment after it dropped; None,
        and `unclosed` set, for a quoted one whose closing quote is on a line below."""
        first = text[0]
        if first == "'" or first == '"':
            if first == '"' and "\\" in text:
                raise _Decline
            quoted = _quoted(text, first)
            self.unclosed = quoted is None
            return quoted
        if first in _NOT_PLAIN_START or (first == "-" and (len(text) == 1 or text[1] == " ")) \
                or text.startswith(("---", "...")):
            raise _Decline
        if " #" in text:
            text = text[:text.index(" #")].rstrip(" ")
        if ": " in text or text[-1] == ":":
            raise _Decline
        if self.starts is not None and first not in self.starts:
            return text
        got = self.typed.get(text, _UNSEEN)
        if got is _UNSEEN:
            got = self.plain(text)
            if len(self.typed) < MAX_TYPED:
                self.typed[text] = got
        return got


_UNSEEN = object()
MAX_TYPED = 100_000
"""Most distinct plain texts whose value is remembered."""


def _quoted(text: str, mark: str) -> str | None:
    """The content of a scalar quoted with `mark` ('' is a quote inside single quotes); None when its closing quote
    is not in `text` (it is on a line below)."""
    at = 1
    while True:
        end = text.find(mark, at)
        if end < 0:
            return None
        if mark == "'" and text[end + 1:end + 2] == "'":
            at = end + 2
            continue
        break
    after = text[end + 1:]
    if after and not (after[0] == " " and after.lstrip(" ")[:1] in ("", "#")):
        raise _Decline
    body = text[1:end]
    return body.replace("''", "'") if mark == "'" else body


__all__ = ["read_block"]
