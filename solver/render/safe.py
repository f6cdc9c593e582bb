"""Text that reaches a terminal carries no control sequences.

Problem names, rule notes, quote ids and sources are the user's (or a catalog's) text and end up in reports and
error messages. An escape sequence in them could retitle the terminal, hide lines, or forge an "OPTIMAL" status
line. Every control character except newline and tab is shown as a visible escape (`\\x1b`) instead.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(text: str) -> str:
    """`text` with every control character (and bidirectional override) replaced by a visible escape."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
