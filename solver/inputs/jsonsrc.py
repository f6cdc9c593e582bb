"""JSON documents (a marketplace's quote feed) read into the same `Source` as YAML, at the speed of `json`.

Why: PyYAML's C parser hands Python an event object per key and per value (`yamlblock.py`), where the json
module's C scanner makes the values directly (measured: bench/README.md, "Stop 27" and "Timings that used to live
in docstrings (moved 2026-12-07)"). A JSON file keeps YAML's guarantees: duplicate keys are errors, NaN,
infinities and numbers too long to read are refused, nesting is bounded, and every error names the file, a line
and the field path. Lines are kept for the top-level keys and for each item of a top-level list (each catalog
entry): the top level is walked here and each item decoded from its offset (`JSONDecoder.raw_decode`), so the
line is found without a second parser. An error inside an item names the item's line and the full field path: in
a feed written on one line every item is on line 1, and the path is what tells them apart.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ..errors import InputError
from .source import PathT, Source, path_str

_SPACE = re.compile(r"[ \t\n\r]*")


class _Refused(ValueError):
    """A value JSON allows and plan does not: a duplicate key, NaN or an infinity."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise _Refused(f"duplicate key '{key}'")
            seen.add(key)
    return out


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"number {text} is out of range")
    return value


def _no_constant(text: str) -> float:
    raise _Refused(f"{text} is not a number plan accepts")


class _Reader:
    """Decodes values of one text from given offsets, with errors that name the file, line and path."""

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self.decoder = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_float=_finite,
                                        parse_constant=_no_constant)
        self._counted = (0, 1)

    def line(self, pos: int) -> int:
        """The line of an offset; offsets are asked in increasing order, so the text is counted once."""
        at, line = self._counted
        if pos < at:
            at, line = 0, 1
        line += self.text.count("\n", at, pos)
        self._counted = (pos, line)
        return line

    def skip(self, pos: int) -> int:
        m = _SPACE.match(self.text, pos)
        return m.end() if m else pos

    def value(self, pos: int, path: PathT) -> tuple[Any, int]:
        try:
            return self.decoder.raw_decode(self.text, pos)
        except json.JSONDecodeError as exc:
            raise InputError(f"JSON syntax error, column {exc.colno}: {exc.msg}", file=self.file,
                             line=exc.lineno) from None
        except _Refused as exc:
            raise InputError(str(exc), file=self.file, line=self.line(pos), path=path_str(path) if path else None
                             ) from None
        except RecursionError:
            raise InputError("input is nested too deeply", file=self.file, line=self.line(pos)) from None
        except ValueError as exc:  # an integer beyond Python's digit limit
            raise InputError(f"unreadable number: {str(exc)[:80]}", file=self.file, line=self.line(pos),
                             path=path_str(path) if path else None) from None

    def expect(self, pos: int, chars: str, what: str) -> tuple[str, int]:
        """The character at `pos` (one of `chars`) and the offset after it and the spaces that follow."""
        pos = self.skip(pos)
        if pos < len(self.text) and self.text[pos] in chars:
            return self.text[pos], self.skip(pos + 1)
        found = repr(self.text[pos]) if pos < len(self.text) else "the end of the file"
        column = pos - self.text.rfind("\n", 0, pos)
        raise InputError(f"JSON syntax error, column {column}: expected {what}, found {found}", file=self.file,
                         line=self.line(pos))

    def items(self, pos: int, path: PathT, lines: dict[PathT, int]) -> tuple[list[Any], int]:
        """A list whose `[` is at `pos`, each item decoded on its own and its line kept."""
        out: list[Any] = []
        _c, pos = self.expect(pos, "[", "'['")
        if self.text.startswith("]", pos):
            return out, pos + 1
        while True:
            here = path + (len(out),)
            lines[here] = self.line(pos)
            item, pos = self.value(pos, here)
            out.append(item)
            c, pos = self.expect(pos, ",]", "',' or ']'")
            if c == "]":
                return out, pos


def parse_json(text: str, file: str) -> Source:
    """Parse JSON text into a `Source` (see module docstring); every failure is an `InputError` naming `file`."""
    r = _Reader(text, file)
    lines: dict[PathT, int] = {}
    pos = r.skip(1 if text.startswith("\ufeff") else 0)  # a byte-order mark, as Windows editors write
    if not text.startswith("{", pos):  # not a mapping: read whole (the caller says what it expected)
        data, pos = r.value(pos, ())
        lines[()] = 1
    else:
        data = {}
        lines[()] = r.line(pos)
        _c, pos = r.expect(pos, "{", "'{'")
        closed = text.startswith("}", pos)
        pos += closed
        while not closed:
            if not text.startswith('"', pos):
                r.expect(pos, '"', "a key in double quotes")
            key_line = r.line(pos)
            key, pos = r.value(pos, ())
            if key in data:
                raise InputError(f"duplicate key '{key}'", file=file, line=key_line)
            lines[(key,)] = key_line
            _c, pos = r.expect(pos, ":", "':'")
            if text.startswith("[", pos):
                data[key], pos = r.items(pos, (key,), lines)
            else:
                data[key], pos = r.value(pos, (key,))
            c, pos = r.expect(pos, ",}", "',' or '}'")
            closed = c == "}"
    pos = r.skip(pos)
    if pos != len(text):
        r.expect(pos, "", "the end of the document")
    return Source(file=file, data=data, lines=lines)


__all__ = ["parse_json"]
