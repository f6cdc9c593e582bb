"""The YAML reader (`inputs/yamlsrc.py`): built from parser events in one pass, it must give exactly what PyYAML's
own safe loader gives for plain data, the line of every field, and one-line errors for what is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from solver.errors import InputError
from solver.inputs.yamlsrc import parse_text

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("path", sorted((ROOT / "catalogs").rglob("*.yaml")) + sorted((ROOT / "constraints").glob(
    "*.yaml")), ids=lambda p: p.name)
def test_values_are_pyyamls(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert parse_text(text, path.name).data == _str_keys(yaml.safe_load(text))


def _str_keys(value: Any) -> Any:
    """PyYAML's value with every mapping key as text, as the reader gives them (paths name keys as text)."""
    if isinstance(value, dict):
        return {str(k): _str_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_str_keys(v) for v in value]
    return value


def test_scalars_anchors_and_lines() -> None:
    text = """\
a: 1
b: -2.5e+3
c: 0x1F
d: 2027-03-01
e: "2027-03-01"
f: yes
g: ~
h: 1_000
base: &q {system: dgx-b200, price_usd: 410000}
list:
  - *q
  - {system: hgx-h100, price_usd: 1.5}
"""
    src = parse_text(text, "t.yaml")
    assert src.data == _str_keys(yaml.safe_load(text))
    assert src.lines[("d",)] == 4 and src.lines[("list", 1, "price_usd")] == 12
    assert src.lines[("list", 0, "system")] == 9, "an alias's fields point at the anchor's lines"
    src.data["list"][0]["system"] = "changed"
    assert src.data["base"]["system"] == "dgx-b200", "an alias is a copy, not the anchor's object"


@pytest.mark.parametrize("text, message, line", [
    ("a: 1\n---\nb: 2\n", "one YAML document", 2),
    ("a: 1\na: 2\n", "duplicate key 'a'", 2),
    ("a: !!python/object:os.system x\n", "is not allowed", 1),
    ("x: &a {k: 1}\ny:\n  <<: *a\n", "merge keys", 3),
    ("? [a]\n: 1\n", "plain scalars", 1),
    ("a: .inf\n", "finite number", 1),
    ("a: *nowhere\n", "undefined alias", 1),
    ("a: [1, 2\n", "YAML syntax error", None),
    ("# only a comment\n", "file is empty", None),
])
def test_refusals_are_one_line(text: str, message: str, line: int | None) -> None:
    with pytest.raises(InputError) as exc:
        parse_text(text, "t.yaml")
    assert message in str(exc.value)
    if line is not None:
        assert exc.value.line == line


def test_fast_paths_read_what_pyyaml_reads() -> None:
    """Keys repeated over many maps (read without resolving their tag again) and plain numbers (read by one
    pattern, not the resolver's list) must give PyYAML's values, including its YAML 1.1 corner cases: an exponent
    without a sign is text, a leading zero is octal, `yes` as a key is the boolean's text."""
    values = ["1.0e5", "1.0e+5", "0123", "+12", "-0.5", "1_000", "1.", ".5", "12", "0", "-0", "2027-03-01",
              "'7'", "yes", "~", "x1", "1e3", "3.25E-2"]
    text = "items:\n" + "".join(f"- {{id: q{k}, price: {v}, yes: {v}, 'lead': {v}}}\n" for k, v in enumerate(values))
    text += "".join(f"- id: r{k}\n  price: {v}\n  'yes': {v}\n" for k, v in enumerate(values))
    src = parse_text(text, "t.yaml")
    assert src.data == _str_keys(yaml.safe_load(text))
    assert src.lines[("items", len(values) + 1, "price")] == 1 + len(values) + 3 + 2
    with pytest.raises(InputError) as exc:
        parse_text("- {id: a, price: 1}\n- {id: b, price: 2, price: 3}\n", "t.yaml")
    assert "duplicate key 'price'" in str(exc.value) and exc.value.line == 2


def _expected_lines(node: Any, path: tuple[Any, ...], out: dict[tuple[Any, ...], int]) -> None:
    """Every path's line from PyYAML's own node graph: a map entry's is its key's, a list item's its own."""
    out.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            out[path + (str(key.value),)] = key.start_mark.line + 1
            _expected_lines(value, path + (str(key.value),), out)
    elif isinstance(node, yaml.SequenceNode):
        for i, value in enumerate(node.value):
            _expected_lines(value, path + (i,), out)


@pytest.mark.parametrize("path", sorted((ROOT / "catalogs").rglob("*.yaml"))[:4] + [ROOT / "constraints" /
                                                                                    "datacenter.yaml"],
                         ids=lambda p: p.name)
def test_every_path_has_the_line_pyyaml_gives_it(path: Path) -> None:
    """The reader keeps map keys' lines per map (`LineIndex`): every path of a file, and only those, must have the line
    PyYAML's node graph gives it."""
    text = path.read_text(encoding="utf-8")
    want: dict[tuple[Any, ...], int] = {}
    _expected_lines(yaml.compose(text, Loader=yaml.SafeLoader), (), want)
    got = parse_text(text, path.name).lines
    assert dict(got.items()) == want
    assert len(got) == len(want) and all(p in got for p in want) and ("no", "such") not in got


def test_a_plain_text_is_read_as_pyyaml_reads_it_whatever_its_first_character() -> None:
    """Plain scalars whose first character has no implicit tag are read as strings without the resolver
    (`yamlsrc.PLAIN_TEXT_STARTS`): texts starting with every printable character, each alone and as the tail of a
    number, a boolean, a null and a date, read as `yaml.safe_load` reads them — as map values and as list items."""
    import string
    tails = ["", "x", "1", "0.5", "es", "ull", "rue", "2026-12-01", ".inf", "_1"]
    texts = [c + t for c in string.printable.strip() for t in tails if c not in "#:,[]{}&*!|>'\"%@`?-"]
    texts += ["-1", "-x", "-.5", "?x"]
    for text in texts:
        doc = f"a: {text}\nb:\n  - {text}\n"
        try:
            want = yaml.safe_load(doc)
        except yaml.YAMLError:
            continue
        try:
            got = parse_text(doc, "t.yaml").data
        except InputError:
            continue   # a tag the reader refuses (only plain data is allowed): not a first-character question
        assert got == want, (text, got, want)
