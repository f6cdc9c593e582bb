""""Did you mean …" for ids and keys: by prefix and by token before edit distance.

`difflib` alone ranks `h800` closest to `h100` (one character), while the user who typed `h100` meant one of
`h100-sxm` / `h100-pcie`. Ids in the catalogs are hyphenated tokens (`dgx-b200`, `lambda-b200-8x-ondemand`), so
a word that starts an id, or equals one of its tokens, is a far better hint than a near spelling.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

MAX_HINTS = 3
"""At most this many suggestions: a hint is a hint, not a listing (`plan catalog` lists)."""

_TOKENS = re.compile(r"[a-z0-9]+")


def _tokens(name: str) -> list[str]:
    return _TOKENS.findall(name.lower())


def suggest(word: str, candidates: Iterable[str], n: int = MAX_HINTS) -> list[str]:
    """Candidates `word` most likely meant: ids it starts (`h100` → `h100-sxm`, `h100-pcie`), else ids that contain
    all of its tokens (`b200` → `dgx-b200`), else close spellings. The first tier with a match is the answer (a
    near spelling next to two exact prefixes would only be noise); within a tier the shortest ids come first, since
    the shortest completion is usually the thing itself (`h100-sxm`) and the longer ones its variants."""
    names = sorted(set(candidates))
    w = word.strip().lower()
    if not w:
        return []
    prefix = sorted((c for c in names if c.lower().startswith(w) and c.lower() != w), key=lambda c: (len(c), c))
    wt = set(_tokens(w))
    token = sorted((c for c in names if c not in prefix and wt and wt <= set(_tokens(c))), key=lambda c: (len(c), c))
    close = difflib.get_close_matches(w, names, n=1, cutoff=0.6)  # a typo has one intended spelling
    for tier in (prefix, token, close):
        if tier:
            return tier[:n]
    return []


def did_you_mean(word: str, candidates: Iterable[str], *, listing: bool = False) -> str:
    """The tail of an error message: `; did you mean 'a' or 'b'?`, or with `listing` and no hint the allowed values."""
    names = sorted(set(candidates))
    hints = suggest(word, names)
    if hints:
        return meant(hints)
    if listing and names:
        shown = ", ".join(names[:12]) + (f", … ({len(names)} in all)" if len(names) > 12 else "")
        return f"; allowed: {shown}"
    return ""


def meant(hints: Iterable[str]) -> str:
    """`; did you mean 'a' or 'b'?` for hints already chosen (empty when there are none)."""
    quoted = [f"'{h}'" for h in list(hints)[:MAX_HINTS]]
    if not quoted:
        return ""
    listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f"; did you mean {listed}?"
