"""The line reader of block YAML (`inputs/yamlblock.py`) against independent readers: PyYAML's safe loader (values)
and node graph (lines), and the event reader it stands in for (`yamlsrc._Builder`, values and lines). On every
bundled file it must read what they read; on random documents, many of them malformed or outside its subset, it must
either read exactly that or decline — and decline whatever the event reader refuses."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from solver.errors import InputError
from solver.inputs import yamlsrc
from solver.inputs.yamlblock import read_block

from test_yaml_source import _expected_lines, _str_keys

ROOT = Path(__file__).resolve().parent.parent


def _events(text: str) -> tuple[Any, dict[Any, int]] | None:
    """The event reader's value and lines, or None where it refuses the text."""
    builder = yamlsrc._Builder("t.yaml", yamlsrc.MAX_NODES + len(text))
    try:
        data = builder.build(getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text))
    except (InputError, yaml.YAMLError, RecursionError):
        return None
    return data, dict(builder.lines.items())


def _block(text: str) -> tuple[Any, dict[Any, int]] | None:
    """The line reader's value and lines (as `parse_text` assembles them), or None where it declines."""
    builder = yamlsrc._Builder("t.yaml", yamlsrc.MAX_NODES + len(text))
    got = read_block(text, builder.plain, yamlsrc.PLAIN_TEXT_STARTS)
    if got is None:
        return None
    lines = yamlsrc.LineIndex()
    data, lines.nodes, lines.by_map = got
    return data, dict(lines.items())


def _pyyaml(text: str) -> tuple[Any, dict[Any, int]]:
    lines: dict[Any, int] = {}
    _expected_lines(yaml.compose(text, Loader=yaml.SafeLoader), (), lines)
    return _str_keys(yaml.safe_load(text)), lines


BUNDLED = sorted((ROOT / "catalogs").rglob("*.yaml")) + sorted((ROOT / "constraints").glob("*.yaml")) + \
    sorted((ROOT / "tests").rglob("*.yaml"))


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: str(p.relative_to(ROOT)))
def test_bundled_files_read_as_pyyaml_reads_them(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    got = _block(text)
    want = _events(text)
    if got is None:
        return
    assert want is not None, "read a file the event reader refuses"
    assert repr(got[0]) == repr(want[0]) and got[1] == want[1]
    assert got == _pyyaml(text)


def test_the_bundled_quote_files_are_in_the_subset() -> None:
    """The point of the reader: quote files (and the bibliography) are read by it, not declined. The spec files
    write each figure as a one-line flow map ({value: …, source: …}), which is left to the event reader (all four
    are read in ~11 ms)."""
    files = sorted((ROOT / "catalogs" / "quotes").glob("*.yaml")) + [ROOT / "catalogs" / "bibliography.yaml"]
    assert len(files) > 2 and [p.name for p in files if _block(p.read_text(encoding="utf-8")) is None] == []


KEYS = ["id", "system", "mode", "price_usd", "min_nodes", "a-b", "x.y", "k/1", "K_2", "2024", "y", "n", "é"]
ODD_KEYS = ["yes", "null", "On", "0x1", "1.5", "'q'", '"dq"', "with space", "a:b", "-lead", "<<", "~", "2026-01-01"]
SCALARS = [
    "buy", "NVIDIA / ODM (estimate)", "4351818.21", "16", "0.0", "-3", "+4", "1e5", "1.0e+5", "1.0e5", ".5", "5.",
    "0x1F", "010", "0o7", "1_000", "1:30", "yes", "No", "on", "OFF", "true", "False", "null", "Null", "~", "y", "n",
    "2026-11-01", "2026-11-01 10:00:00", "2026-11-01T10:00:00Z", "'2026-11-01'", "'it''s'", "''", '"dq"', '""',
    '"esc\\n"', "a:b", "x #c", "x#c", "-x", "-.5", "[1, 2]", "{a: 1}", "?x", "<<", "=", "α β", "a,b", "a]", "a}",
    "x  y", "'a' #c", '"a" #c', "http://x.y/z#f", "é", "0", "-0", "+0.5e-3", "0.1.2", "1e", "TRUE", "tRue", "nULL",
    "a [b] {c}", "'#'", "' x '", "a!", "a&b", "a*", "a|b", "a>b", "a%", "a@b", "a`b",
]
ODD_SCALARS = [
    "2026-13-01", "'open", '"open', "a: b", "ends:", "# c", "- x", "-", "&a x", "*a", "!t x", "!!str 5", "|", ">",
    "!", "%x", "@x", "`x", "? x", ":x", ": x", "---", "...", "--- x", ".inf", "-.inf", ".nan", "1e999", "9" * 30,
    "1.5e+999", "'a' b", "'a'#c", "a\tb", "x\ry", "\u2028", "\ufeffx", "\x85",
]


WORDS = ["beta", "gamma delta", "12", "true", "a,b", "[x]", "{y}", "x''y", "a-b", "(c) d", "url http://x/y", "é"]
ODD_LINES = ["x: y", "#c", "# c", "- x", "-x", "'", "\"", "a'' b'", "&a", "*b", "!t", "tail' # c", "tail' junk",
             "tail'#c", "e\\n\"", "...", "---", "%x", "?x", ": x", "a:b", "url http://x#f", "12 #c"]


def _long_scalar(rng: random.Random, pad: str) -> list[str]:
    """A scalar over several lines, as YAML writers wrap long texts: plain, or in single or double quotes closed on
    its last line; the lines after the first mostly more indented than the block, some with a blank or comment line
    between or a line that does not continue it validly."""
    quote = rng.choice(["", "", "'", '"'])
    words = [rng.choice(WORDS) for _ in range(rng.randint(2, 3))]
    if quote:
        words[0], words[-1] = quote + words[0], words[-1] + quote
    lines = [words[0]]
    for word in words[1:]:
        if rng.random() < 0.05:
            lines.append(rng.choice(["", pad + "# note"]))
        odd = rng.random() < 0.1
        lines.append(pad + " " * rng.choice([0, 1, 2, 2, 4]) + (rng.choice(ODD_LINES) if odd else word))
    return lines


def _keys(rng: random.Random, n: int) -> list[str]:
    """n distinct keys (a repeated one is made by repeating a line, `_document`)."""
    return [rng.choice(ODD_KEYS) if rng.random() < 0.03 else key for key in rng.sample(KEYS, n)]


def _scalar(rng: random.Random) -> str:
    return rng.choice(ODD_SCALARS if rng.random() < 0.03 else SCALARS)


def _map(rng: random.Random, indent: int, depth: int) -> list[str]:
    lines = []
    for key in _keys(rng, rng.randint(1, 4)):
        pad = " " * indent
        r = rng.random()
        if depth < 3 and r < 0.18:
            lines.append(f"{pad}{key}:")
            lines += _map(rng, indent + rng.choice([1, 2, 2, 4]), depth + 1)
        elif depth < 3 and r < 0.36:
            lines.append(f"{pad}{key}:" + rng.choice(["", "", "  ", " # c"]))
            lines += _seq(rng, indent + rng.choice([0, 0, 2, 3]), depth + 1)
        elif r < 0.42:
            lines.append(f"{pad}{key}:" + rng.choice(["", " ", " # c"]))
        elif r < 0.55:
            first, *more = _long_scalar(rng, pad)
            lines += [f"{pad}{key}: {first}"] + more
        else:
            lines.append(f"{pad}{key}:{rng.choice([' ', ' ', '  '])}{_scalar(rng)}")
    return lines


def _seq(rng: random.Random, indent: int, depth: int) -> list[str]:
    lines = []
    for _ in range(rng.randint(1, 3)):
        dash = "-" + " " * rng.choice([1, 1, 2])
        if depth < 3 and rng.random() < 0.6:
            item = _map(rng, indent + len(dash), depth + 1)
            lines.append(" " * indent + dash + item[0].lstrip(" "))
            lines += item[1:]
        elif rng.random() < 0.2:
            first, *more = _long_scalar(rng, " " * indent)
            lines += [" " * indent + dash + first] + more
        else:
            lines.append(" " * indent + dash + _scalar(rng))
    return lines


def _document(rng: random.Random) -> str:
    lines = _map(rng, rng.choice([0, 0, 0, 1]), 0) if rng.random() < 0.8 else _seq(rng, 0, 0)
    for _ in range(rng.choice([0, 0, 1, 2])):
        at = rng.randrange(len(lines) + 1)
        odd = rng.random() < 0.15
        lines.insert(at, rng.choice(["---", "...", "%YAML 1.1", "\t"] if odd else ["", "   ", "# note", "  # x: y"]))
    if rng.random() < 0.1:
        k = rng.randrange(len(lines))
        lines[k] = rng.choice([" ", "  "]) + lines[k] if rng.random() < 0.5 else lines[k][1:]
    if rng.random() < 0.05:
        k = rng.randrange(len(lines))
        lines.insert(k, lines[k])   # a repeated line: mostly a duplicate key
    if rng.random() < 0.2:
        lines = [line + rng.choice(["", " ", "  "]) for line in lines]
    return "\n".join(lines) + rng.choice(["\n", "", "\n\n"])


def test_random_documents_are_read_as_the_event_reader_and_pyyaml_read_them_or_declined() -> None:
    rng = random.Random(20261203)
    read = declined = refused = 0
    for _ in range(1500):
        text = _document(rng)
        got = _block(text)
        want = _events(text)
        if want is None:
            refused += 1
            assert got is None, f"read a document the event reader refuses:\n{text}"
            continue
        if got is None:
            declined += 1
            continue
        read += 1
        assert repr(got[0]) == repr(want[0]), text
        assert got[1] == want[1], text
        assert got == _pyyaml(text), text
    assert read > 300 and declined > 100 and refused > 100, (read, declined, refused)


def test_what_is_declined_is_still_read_by_parse_text_with_its_lines() -> None:
    """Outside the subset the event reader reads the file: anchors, flow maps and a value continued on a second
    line still load, and a duplicate key is still refused at its line."""
    text = "a: &x {k: 1}\nb: *x\nc: one\n  two\n"
    src = yamlsrc.parse_text(text, "t.yaml")
    assert src.data == {"a": {"k": 1}, "b": {"k": 1}, "c": "one two"} and src.lines[("c",)] == 3
    with pytest.raises(InputError) as exc:
        yamlsrc.parse_text("quotes:\n- id: a\n  mode: buy\n  mode: cloud\n", "t.yaml")
    assert "duplicate key 'mode'" in str(exc.value) and exc.value.line == 4


def test_lines_read_a_chunk_at_a_time_are_the_lines_read_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The text is split into lines a chunk at a time (`CHUNK_CHARS`, bounded memory): chunks of any size, down to
    one character, give the same values and lines as one chunk."""
    from solver.inputs import yamlblock
    rng = random.Random(7)
    texts = [_document(rng) for _ in range(200)] + \
        [p.read_text(encoding="utf-8") for p in sorted((ROOT / "catalogs" / "quotes").glob("*.yaml"))]
    whole = [_block(text) for text in texts]
    for size in (1, 7, 64):
        monkeypatch.setattr(yamlblock, "CHUNK_CHARS", size)
        for text, want in zip(texts, whole, strict=True):
            got = _block(text)
            assert (got is None) == (want is None) and (got is None or repr(got) == repr(want)), (size, text)


@pytest.mark.parametrize("text", [
    "a: alpha\n  beta\nb: 1\n",
    "a: 'alpha\n  beta'\nb: 1\n",
    'a: "alpha\n  beta"\n',
    "- alpha\n  beta\n- x\n",
    "k:\n- alpha\n  beta\n",
    "q:\n- id: x\n  source: '[S1] a long source, as PyYAML wraps it at 80 columns: it goes\n    on'\n  kind: list\n",
    "a: 12\n  apples\n",
    "a: 'it''s\n  ok'\n",
    "a: alpha\n    beta\n      gamma\n",
    "a: 'x\n  y' # c\nb: 2\n",
    "a: 'capacity and lead\n  time: estimate'\nb:   2\n",
    "- k:  'x\n    - y\n    z:  w'\n",
])
def test_wrapped_scalars_are_read(text: str) -> None:
    """What YAML writers do to long texts (PyYAML folds at 80 columns): a scalar over several lines is read here,
    as PyYAML reads it."""
    got = _block(text)
    assert got is not None and got == _pyyaml(text) and got == _events(text)


@pytest.mark.parametrize("text", [
    "  ---\nmode: buy\n",              # a marker not at the line's start: the event reader refuses it
    "a: alpha\n\n  beta\n",            # a blank line in a scalar is a line break
    "a: alpha\n# c\n  beta\n",         # a comment ends a plain scalar
    "a: alpha\n  beta: x\n",           # a key inside a plain scalar
    "a: 'x'\n  y\n",                   # text after a closed quote
    "a: 'x\n# y'\n",                   # a quote's lines start at the block's own indentation
    'a: "x\n  \\\\n y"\n',             # an escape
    "a: 'x\n  y\nb: 1\n",              # never closed
])
def test_what_a_wrapped_scalar_must_not_be_is_left_to_the_event_reader(text: str) -> None:
    assert _block(text) is None
