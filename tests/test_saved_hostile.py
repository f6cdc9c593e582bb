"""Tampered saved plans are refused, not believed (issue 43, items 5 and 6).

A real `plan solve --save` file is edited the way the hostile-input round edited it (NaN, infinities, absurd
figures, impossible dates, a word for a budget, numbers too long for Python to convert, a truncated file, a list
for an object). Both readers, `plan diff` and `plan solve --compare-to`, must stop with one line on stderr naming the
file and the field, exit code 2 and no traceback; an untouched file still compares as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli import main
from solver.inputs.saved import load_saved, load_saved_any

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = str(ROOT / "constraints" / "lora-small.yaml")
_SLOT = '"__tampered__"'


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real saved plan for the module (a solve takes a second; every case only edits a copy)."""
    path = tmp_path_factory.mktemp("saved") / "good.json"
    r = CliRunner().invoke(main, ["solve", PROBLEM, "--save", str(path)])
    assert r.exit_code == 0, r.output
    return path


def _first_quote(data: dict[str, Any]) -> str:
    return next(iter(data["inputs"]["quotes"]))


def _with(good: Path, path: tuple[Any, ...], raw: str) -> str:
    """The good file's text with the value at `path` replaced by `raw`, spelled as written (JSON text, so NaN
    and 100,000-digit numbers go in exactly as a hand edit would put them)."""
    data = json.loads(good.read_text())
    node = data
    for key in path[:-1]:
        node = node[key(data) if callable(key) else key]
    node[path[-1]] = _SLOT[1:-1]
    return json.dumps(data, indent=2).replace(_SLOT, raw, 1)


# (case, where the value goes, the JSON text put there, the field path the error must name, a word it must say)
TAMPERED = [
    ("nan", ("result", "plan", "cost_usd", "total"), "NaN", "result.plan.cost_usd.total", "finite"),
    ("infinity", ("result", "plan", "cost_usd", "total"), "Infinity", "result.plan.cost_usd.total", "finite"),
    ("minus-infinity", ("result", "plan", "cash_usd", "total"), "-Infinity", "result.plan.cash_usd.total", "finite"),
    ("overflowing-float", ("result", "plan", "cost_usd", "total"), "1e999", "result.plan.cost_usd.total", "finite"),
    ("1e308", ("result", "plan", "cost_usd", "total"), "1e308", "result.plan.cost_usd.total", "at most"),
    ("nodes-10^30", ("result", "plan", "nodes"), str(10 ** 30), "result.plan.nodes", "digits"),
    ("nodes-1e30", ("result", "plan", "nodes"), "1e30", "result.plan.nodes", "whole number"),
    ("nodes-10^12", ("result", "plan", "nodes"), str(10 ** 12), "result.plan.nodes", "at most"),
    ("nodes-negative", ("result", "plan", "quotes", 0, "nodes"), "-3", "result.plan.quotes[0].nodes", "at least"),
    ("nodes-true", ("result", "plan", "gpus"), "true", "result.plan.gpus", "whole number"),
    ("start-9999-99-99", ("result", "plan", "start"), '"9999-99-99"', "result.plan.start", "9999-99-99"),
    ("as-of-not-a-date", ("result", "as_of"), '"soon"', "result.as_of", "date"),
    ("budget-lots", ("inputs", "problem", "budget", "max_usd"), '"lots"', "inputs.problem.budget.max_usd", "lots"),
    ("budget-negative", ("inputs", "problem", "budget", "max_usd"), "-5", "inputs.problem.budget.max_usd", "at least"),
    ("tokens-1e300", ("inputs", "problem", "workload", "tokens"), "1e300", "inputs.problem.workload.tokens",
     "1e+300"),
    ("quote-price-1e300", ("inputs", "quotes", _first_quote, "price"), "1e300", "inputs.quotes.", "price"),
    ("schema-version-10^400", ("schema_version",), str(10 ** 400), "schema_version", "digits"),
    ("schema-version-5", ("schema_version",), "5", "schema_version", "newer"),
    ("schema-version-string", ("schema_version",), '"4"', "schema_version", '"4"'),
    ("100000-digit-integer-read", ("result", "plan", "gpus"), "7" * 100_000, "result.plan.gpus", "100,000 digits"),
    ("100000-digit-integer-unread", ("result", "objective", "value_units"), "7" * 100_000,
     "result.objective.value_units", "100,000 digits"),
    ("status-unknown-word", ("result", "status"), '"great"', "result.status", "great"),
    ("probability-1.5", ("result", "plan", "risk", "p_deadline"), "1.5", "result.plan.risk.p_deadline", "at most 1"),
    ("cost-lines-a-list", ("result", "plan", "cost_usd"), "[1, 2]", "result.plan.cost_usd", "object"),
    ("long-option-name", ("result", "plan", "option"), json.dumps("x" * 5000), "result.plan.option", "characters"),
    ("kind-a-list", ("kind",), "[1]", "kind", "not a saved plan"),
    ("kind-other", ("kind",), "\"why-not\"", "kind", "why-not"),
]


def _error_line(r: Any) -> str:
    """The run's whole stderr, checked to be one `error:` line with nothing on stdout and no traceback."""
    assert r.exit_code == 2, (r.exit_code, r.output, r.stderr)
    assert r.stdout == "", r.stdout
    assert "Traceback" not in r.output + r.stderr
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1 and r.stderr.endswith("\n"), r.stderr
    assert len(r.stderr) < 400, "the message shows the bad value shortened, not the whole of it"
    return r.stderr


def _both_readers(good: Path, bad: Path) -> list[str]:
    """The error of `plan diff good bad` and of `plan solve --compare-to bad`."""
    runner = CliRunner()
    return [_error_line(runner.invoke(main, ["diff", str(good), str(bad)])),
            _error_line(runner.invoke(main, ["solve", PROBLEM, "--compare-to", str(bad)]))]


@pytest.mark.parametrize("case,path,raw,field,word", TAMPERED, ids=[t[0] for t in TAMPERED])
def test_tampered_value_is_one_error_naming_file_and_field(good: Path, tmp_path: Path, case: str,
                                                           path: tuple[Any, ...], raw: str, field: str,
                                                           word: str) -> None:
    bad = tmp_path / f"{case}.json"
    bad.write_text(_with(good, path, raw))
    for err in _both_readers(good, bad):
        assert err.startswith(f"error: {bad}: "), err
        assert f": {field}" in err and word in err, err


def test_truncated_file_names_the_line(good: Path, tmp_path: Path) -> None:
    bad = tmp_path / "truncated.json"
    text = good.read_text()
    bad.write_text(text[:len(text) // 2])
    line = text[:len(text) // 2].count("\n") + 1
    for err in _both_readers(good, bad):
        assert err.startswith(f"error: {bad}: not a saved plan") and f"line {line}," in err, err


@pytest.mark.parametrize("text,shown", [("[1, 2, 3]", "a list"), ('"plan"', '"plan"'), ("null", "null")])
def test_not_an_object_at_the_top_level(good: Path, tmp_path: Path, text: str, shown: str) -> None:
    bad = tmp_path / "top.json"
    bad.write_text(text)
    for err in _both_readers(good, bad):
        assert err.startswith(f"error: {bad}: not a saved plan") and f"top level is {shown}" in err, err


def test_duplicate_key_is_refused_where_it_is(good: Path, tmp_path: Path) -> None:
    """Readers disagree on which of two spellings of a key wins; a saved plan never has two."""
    bad = tmp_path / "dup.json"
    bad.write_text(_with(good, ("result", "plan", "nodes"), '1, "nodes": 2'))
    for err in _both_readers(good, bad):
        assert err.startswith(f"error: {bad}: result.plan: duplicate key 'nodes'"), err


def test_untampered_plan_still_diffs_and_is_read_as_written(good: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.json"
    copy.write_text(good.read_text())
    r = CliRunner().invoke(main, ["diff", str(good), str(copy)])
    assert r.exit_code == 0 and "no change" in r.stdout and r.stderr == "", r.output
    assert load_saved(good) == load_saved_any(good) == json.loads(good.read_text()), \
        "the readers get the file's data as written"


def _program(purchase_nodes: str) -> str:
    """A minimal saved program (no `inputs`, as saved before 2026-12-02) with one purchase of the given nodes."""
    body = {"workloads": [{"id": "main", "option": "dgx-h100/buy", "nodes": 4, "start": "2027-01-04",
                           "finish": "2027-03-01", "quotes": []}],
            "purchases": [{"quote": "dgx-h100-list", "order": "2026-12-03", "nodes": _SLOT[1:-1]}],
            "cost_usd": 1_000_000, "cash_usd": 2_000_000}
    data = {"kind": "program-result", "schema_version": 4,
            "result": {"status": "optimal", "problem": "p", "program": body}}
    return json.dumps(data).replace(_SLOT, purchase_nodes)


def test_saved_programs_are_checked_the_same_way(tmp_path: Path) -> None:
    ok, bad = tmp_path / "ok.json", tmp_path / "bad.json"
    ok.write_text(_program("4"))
    bad.write_text(_program("NaN"))
    r = CliRunner().invoke(main, ["diff", str(ok), str(ok)])
    assert r.exit_code == 0 and "nothing changed" in r.stdout, r.output
    err = _error_line(CliRunner().invoke(main, ["diff", str(ok), str(bad)]))
    assert err == f"error: {bad}: result.program.purchases[0].nodes: expected a finite number, got NaN\n"
