"""JSON catalog and quote files (`solver/inputs/jsonsrc.py`): the same data as the YAML they were written from,
the same guarantees (duplicate keys, NaN, bounds), and errors naming file, line and field path.

Independent references: the data is compared with the YAML reader's on the bundled quote files; the lines of the
items are found by scanning the JSON text for the lines `json.dumps(indent=2)` opens items on."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from solver.errors import InputError
from solver.inputs.catalog import load_catalog
from solver.inputs.yamlsrc import parse_text

ROOT = Path(__file__).resolve().parent.parent
QUOTE_FILES = sorted((ROOT / "catalogs" / "quotes").glob("*.yaml"))


def _plain(x: Any) -> Any:
    """YAML data as JSON writes it: dates as ISO strings."""
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_plain(v) for v in x]
    return x.isoformat() if isinstance(x, date) else x


@pytest.mark.parametrize("file", QUOTE_FILES, ids=[f.name for f in QUOTE_FILES])
@pytest.mark.parametrize("indent", [2, None], ids=["pretty", "one-line"])
def test_json_reads_the_data_of_the_yaml_it_was_written_from(file: Path, indent: int | None) -> None:
    data = _plain(parse_text(file.read_text(), file.name).data)
    text = json.dumps(data, indent=indent)
    src = parse_text(text, "q.json")
    assert src.data == data
    items = data["quotes"]
    if indent is None:
        assert all(src.lines[("quotes", i)] == 1 for i in range(len(items)))
    else:
        opened = [n for n, line in enumerate(text.splitlines(), 1) if line == "    {"]
        assert [src.lines[("quotes", i)] for i in range(len(items))] == opened
        assert src.lines[("quotes",)] == 2


def _write_pair(tmp: Path, quotes: list[dict[str, Any]]) -> tuple[Path, Path]:
    import yaml
    (tmp / "y").mkdir()
    (tmp / "j").mkdir()
    y, j = tmp / "y" / "q.yaml", tmp / "j" / "q.json"
    y.write_text(yaml.safe_dump({"quotes": quotes}, sort_keys=False))
    j.write_text(json.dumps({"quotes": quotes}, indent=2))
    return y, j


def test_a_json_quote_file_makes_the_same_catalog_as_its_yaml(tmp_path: Path) -> None:
    data = _plain(parse_text(QUOTE_FILES[0].read_text(), "buy.yaml").data)["quotes"]
    renamed = [{**q, "id": "j-" + q["id"]} for q in data]
    y, j = _write_pair(tmp_path, renamed)
    from_yaml, from_json = load_catalog([y]), load_catalog([j])
    assert from_json.quotes == from_yaml.quotes and len(from_json.quotes) == len(from_yaml.quotes)
    from_folder = load_catalog([j.parent])   # a folder's .json files are read too
    assert from_folder.quotes == from_json.quotes
    assert from_json.where_quote(renamed[2]["id"]) == f"{j}:{_item_lines(j.read_text())[2]}"


def _item_lines(text: str) -> list[int]:
    return [n for n, line in enumerate(text.splitlines(), 1) if line == "    {"]


QUOTE = {"id": "q-ok", "system": "dgx-h100", "mode": "cloud", "vendor": "test", "usd_per_gpu_hour": 2.5,
         "max_nodes": 8, "lead_time_days": 10, "quoted_on": "2026-11-20", "valid_until": "2027-03-31",
         "kind": "list", "source": "test"}


def _error(tmp: Path, text: str) -> str:
    f = tmp / "feed.json"
    f.write_text(text)
    with pytest.raises(InputError) as exc:
        load_catalog([f])
    return str(exc.value)


def test_a_field_error_names_the_items_line_and_the_field_path(tmp_path: Path) -> None:
    bad = {**QUOTE, "id": "q-bad", "colour": "green"}
    text = json.dumps({"quotes": [QUOTE, {**QUOTE, "id": "q-2"}, bad]}, indent=2)
    line = _item_lines(text)[2]
    msg = _error(tmp_path, text)
    assert msg.startswith(f"{tmp_path / 'feed.json'}:{line}: quotes[2].colour: ") and "\n" not in msg, msg
    one_line = _error(tmp_path, json.dumps({"quotes": [QUOTE, {**QUOTE, "id": "q-2"}, bad]}))
    assert one_line.startswith(f"{tmp_path / 'feed.json'}:1: quotes[2].colour: "), one_line


@pytest.mark.parametrize("text, where, message", [
    ('{"quotes": [\n  {"id": "a",, "x": 1}\n]}', ":2: ", "JSON syntax error, column 14"),
    ('{"quotes": [\n  {"id": "a"},\n  {"id": "b", "id": "c"}\n]}', ":3: quotes[1]: ", "duplicate key 'id'"),
    ('{"quotes": [],\n "quotes": []}', ":2: ", "duplicate key 'quotes'"),
    ('{"quotes": [\n  {"max_nodes": NaN}]}', ":2: quotes[0]: ", "NaN is not a number plan accepts"),
    ('{"quotes": [\n  {"max_nodes": -Infinity}]}', ":2: quotes[0]: ", "-Infinity is not a number plan accepts"),
    ('{"quotes": [\n  {"max_nodes": 1e999}]}', ":2: quotes[0]: ", "number 1e999 is out of range"),
    ('{"quotes": [\n  {"max_nodes": 1' + "0" * 5000 + '}]}', ":2: quotes[0]: ", "unreadable number"),
    ('{"quotes": []}\nextra', ":2: ", "expected the end of the document, found 'e'"),
    ('{"quotes": [] "more": 1}', ":1: ", "expected ',' or '}', found '\"'"),
    ('{"quotes": [{"id": "a"} {"id": "b"}]}', ":1: ", "expected ',' or ']', found '{'"),
    ("{quotes: []}", ":1: ", "expected a key in double quotes, found 'q'"),
    ('{"quotes": [', ":1: ", "JSON syntax error"),
    ("", ":1: ", "JSON syntax error"),
    ('{"quotes": [' + "[" * 100_000 + "]" * 100_000 + "]}", ":1: ", "nested too deeply"),
], ids=["syntax", "duplicate-in-item", "duplicate-top", "nan", "infinity", "overflow", "long-int", "trailing",
        "missing-comma-top", "missing-comma-list", "unquoted-key", "unterminated", "empty", "deep"])
def test_bad_json_is_one_line_naming_file_line_and_path(tmp_path: Path, text: str, where: str, message: str) -> None:
    msg = _error(tmp_path, text)
    assert msg.startswith(str(tmp_path / "feed.json") + where) and message in msg and "\n" not in msg, msg


def test_a_byte_order_mark_is_read_past(tmp_path: Path) -> None:
    text = json.dumps({"quotes": [QUOTE]}, indent=2)
    f = tmp_path / "bom.json"
    f.write_text("\ufeff" + text, encoding="utf-8")
    assert "q-ok" in load_catalog([f]).quotes
    assert parse_text("\ufeff" + text, "bom.json").lines[("quotes", 0)] == _item_lines(text)[0]


def test_a_json_document_that_is_not_a_mapping_is_not_a_catalog(tmp_path: Path) -> None:
    msg = _error(tmp_path, "[1, 2]")
    assert "not a catalog file" in msg and msg.startswith(str(tmp_path / "feed.json")), msg


def test_the_cli_solves_with_a_json_feed_as_with_its_yaml(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from cli import main
    data = _plain(parse_text((ROOT / "catalogs" / "quotes" / "reserved.yaml").read_text(), "r.yaml").data)["quotes"]
    cheaper = [{**q, "id": "j-" + q["id"], "usd_per_gpu_hour": round(q["usd_per_gpu_hour"] * 0.8, 4)}
               for q in data if isinstance(q.get("usd_per_gpu_hour"), float | int)]
    assert len(cheaper) > 5
    y, j = _write_pair(tmp_path, cheaper)
    plans = []
    for f in (y, j):
        r = CliRunner().invoke(main, ["solve", str(ROOT / "constraints" / "datacenter.yaml"), "--quotes", str(f),
                                      "--format", "json"])
        assert r.exit_code == 0, r.output
        plans.append(json.loads(r.stdout)["plan"])
    assert plans[0] == plans[1]
    assert any(q["id"].startswith("j-") for q in plans[1]["quotes"]), plans[1]["quotes"]
