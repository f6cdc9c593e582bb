"""Every mistake of the input in one run, as a linter reports them (issue "Errors all at once, as ruff does").

1. A problem file with several mistakes gets one line per mistake, `file:line: field.path: message`, in file order,
   then exit 2 (at most 20 lines, then "… and N more"); a file with one mistake still gets exactly one line.
2. A mistyped id in a `--quotes` file (a change to a catalog quote that names none, a `system:` that does not
   exist) is named with the nearest existing ids, not "required fields are missing".
3. No pydantic text reaches the user: a value of the wrong kind or unit gets a sentence in the field's terms
   (`seq_len: 4k` → "expected a whole number of tokens (e.g. 4096 or 4Ki)").
4. `--set quotes.<id>.price=…` suggests the price field of that quote's mode, and the suggestion is then accepted.

Real files are written in tmp_path and run through the command line (`cli.main`).
"""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cli import main

REPO = Path(__file__).resolve().parent.parent
FINETUNE = str(REPO / "constraints" / "finetune-70b.yaml")
CLOUD = "together-b200-reserved-91-180d"
MANAGED = "coreweave-gb200-nvl72-managed-12mo"
BUY = "dgx-b200-nvidia-list"
PYDANTIC_WORDS = ("Input should", "pydantic", "type=", "Field required", "value is not a valid", "String should",
                  "List should", "Dictionary should", "Extra inputs", "Value error", "Assertion failed",
                  "errors.pydantic.dev", "For further information")
LINE = re.compile(r"^error: (?P<file>[^:]+):(?P<line>\d+): (?P<path>[A-Za-z0-9_.\[\]\-]+): (?P<message>.+)$")

THREE_MISTAKES = """\
name: three-mistakes
as_of: 2026-12-01
workload:
  method: pretrain
  params: 7B
  tokens: 1T
  seq_len: 4k
schedule:
  dedline: 2027-10-01
site:
  it_power_kw: 6000
  cooling: [air]
  racks: 0
  rack_power_kw: 40
  electricity_usd_per_kwh: 0.08
"""


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def bad(result: Result) -> list[str]:
    """Exit 2, no traceback, nothing on stdout, no pydantic text: the lines of stderr."""
    assert result.exit_code == 2, f"exit {result.exit_code}: {result.output}"
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output and "INTERNAL ERROR" not in result.stderr, result.output
    assert result.stdout == ""
    for word in PYDANTIC_WORDS:
        assert word not in result.stderr, f"{word!r} in:\n{result.stderr}"
    lines = result.stderr.strip().splitlines()
    assert all(line.startswith("error: ") for line in lines), lines
    return lines


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# --------------------------------------------------------------------------------------------- 1. all at once


@pytest.mark.parametrize("command", ["validate", "solve"])
def test_three_mistakes_are_three_lines_in_file_order(tmp_path: Path, command: str) -> None:
    f = write(tmp_path, "three.yaml", THREE_MISTAKES)
    lines = bad(run(command, f))
    assert lines == [
        f"error: {f}:7: workload.seq_len: expected a whole number of tokens (e.g. 4096 or 4Ki), got '4k' "
        "(4Ki is 4,096 tokens)",
        f"error: {f}:9: schedule.dedline: unknown key 'dedline'; did you mean 'deadline'?",
        f"error: {f}:13: site.racks: expected a whole number of racks greater than or equal to 1, got 0",
    ]
    for line in lines:
        m = LINE.match(line)
        assert m and m["file"] == f, line


def test_one_mistake_is_still_one_line_and_the_same_line(tmp_path: Path) -> None:
    """The one-line format of a single mistake is unchanged: the line the first of the three gave alone before."""
    f = write(tmp_path, "one.yaml", THREE_MISTAKES.replace("seq_len: 4k", "seq_len: 4096").replace(
        "racks: 0", "racks: 10"))
    assert bad(run("validate", f)) == [f"error: {f}:9: schedule.dedline: unknown key 'dedline'; did you mean "
                                       "'deadline'?"]


def test_a_typo_of_a_required_key_is_one_mistake_not_two(tmp_path: Path) -> None:
    f = write(tmp_path, "typo.yaml", THREE_MISTAKES.replace("seq_len: 4k", "seq_len: 4096").replace(
        "racks: 0", "racks: 10").replace("dedline", "deadline").replace("rack_power_kw", "rack_pwer_kw"))
    assert bad(run("validate", f)) == [f"error: {f}:14: site.rack_pwer_kw: unknown key 'rack_pwer_kw'; did you "
                                       "mean 'rack_power_kw'?"]


def test_mistakes_of_every_section_and_of_set_are_reported_together(tmp_path: Path) -> None:
    """Schema mistakes, a `risk:` override, ids in policy and rules (checked against the catalog), a deadline before
    the start and a `--set`: each found in one run, the file's by line, then the `--set`'s."""
    f = write(tmp_path, "sections.yaml", """\
name: sections
as_of: 2026-12-01
workload:
  method: pretrain
  params: 7 billion
  tokens: 1T
schedule:
  earliest_start: 2027-03-01
  deadline: 2027-01-01
policy:
  modes: [clod]
  accelerators: {include: [h100-sxn]}
risk:
  memory:
    headrom: 0.2
rules:
  - name: no-amd
    when: {vendor: amdd}
    then: forbid
""")
    lines = bad(run("validate", f, "--set", "budget.max_usd=lots"))
    where = [(m["line"], m["path"]) for m in map(LINE.match, lines[:-1]) if m]
    assert where == [("5", "workload.params"), ("9", "schedule.deadline"), ("11", "policy.modes[0]"),
                     ("12", "policy.accelerators.include[0]"), ("15", "risk.memory.headrom"),
                     ("18", "rules[0].when.vendor")], lines
    assert "did you mean 'cloud'?" in lines[2] and "did you mean 'h100-sxm'?" in lines[3]
    assert "did you mean 'headroom'?" in lines[4] and "did you mean 'amd'?" in lines[5]
    assert lines[-1] == "error: --set budget.max_usd=lots: expected a number of US dollars (e.g. 150M), got 'lots'"


def test_the_list_is_capped_with_a_count(tmp_path: Path) -> None:
    items = "".join(f"      - h100-sxn{i}\n" for i in range(25))
    f = write(tmp_path, "many.yaml", "name: many\nworkload: {method: pretrain, params: 7B, tokens: 1T}\n"
                                     f"policy:\n  accelerators:\n    include:\n{items}")
    lines = bad(run("validate", f))
    assert len(lines) == 21
    assert [LINE.match(x)["line"] for x in lines[:20]] == [str(6 + i) for i in range(20)]  # type: ignore[index]
    assert lines[-1] == "error: … and 5 more mistakes (fix these and run again)"


def test_a_program_file_reports_every_workload_mistake(tmp_path: Path) -> None:
    text = (REPO / "constraints" / "program-200b.yaml").read_text(encoding="utf-8")
    text = text.replace("seq_len: 8192}", "seq_len: 8k}").replace("rack_power_kw: 40", "rack_pwer_kw: 40")
    f = write(tmp_path, "program.yaml", text)
    lines = bad(run("validate", f))
    assert len(lines) == 3, lines
    assert "workloads[3].workload.seq_len" in lines[0] and "workloads[4].workload.seq_len" in lines[1]
    assert "site.rack_pwer_kw" in lines[2] and "did you mean 'rack_power_kw'?" in lines[2]


def test_several_mistakes_survive_a_process_boundary() -> None:
    from solver.errors import InputError, InputErrors, combined
    err = combined([InputError("b", file="f.yaml", line=9, path="x"), InputError("a", file="f.yaml", line=2, path="y")])
    assert isinstance(err, InputErrors) and err.line == 2
    back = pickle.loads(pickle.dumps(err))
    assert back.lines() == err.lines() == ["f.yaml:2: y: a", "f.yaml:9: x: b"]
    one = pickle.loads(pickle.dumps(InputError("m", file="f.yaml", line=3, path="z")))
    assert (one.file, one.line, one.path, one.lines()) == ("f.yaml", 3, "z", ["f.yaml:3: z: m"])


# --------------------------------------------------------------------------------------------- 2. mistyped ids


def test_a_mistyped_quote_id_names_the_nearest_quote(tmp_path: Path) -> None:
    q = write(tmp_path, "q.yaml", "quotes:\n  - {id: togther-b200-reserved-91-180d, usd_per_gpu_hour: 7.5}\n")
    for args in (("validate", FINETUNE, "--quotes", q), ("catalog", "quotes", "--quotes", q)):
        lines = bad(run(*args))
        assert len(lines) == 1, lines
        assert lines[0].startswith(f"error: {q}:2: quotes[0].id: quote id 'togther-b200-reserved-91-180d' matches "
                                   f"no catalog quote; did you mean '{CLOUD}'?"), lines
        assert "required fields are missing" not in lines[0]


def test_every_quote_file_mistake_at_once_with_mistyped_systems(tmp_path: Path) -> None:
    entry = ("  - id: {id}\n    system: {system}\n    mode: cloud\n    vendor: Example\n    usd_per_gpu_hour: 2.5\n"
             "    max_nodes: {nodes}\n    lead_time_days: {lead}\n    quoted_on: 2026-11-01\n"
             "    valid_until: 2027-06-01\n    kind: negotiated\n    source: test fixture\n")
    q = write(tmp_path, "q.yaml", "quotes:\n  - {id: togther-b200-reserved-91-180d, usd_per_gpu_hour: 7.5}\n"
              + entry.format(id="mine-1", system="dgx-b20", nodes=8, lead=7)
              + entry.format(id="mine-2", system="dgx-h100", nodes="8 nodes", lead="2w"))
    lines = bad(run("validate", FINETUNE, "--quotes", q))
    assert [(m["line"], m["path"]) for m in map(LINE.match, lines) if m] == [
        ("2", "quotes[0].id"), ("3", "quotes[1].system"), ("19", "quotes[2].max_nodes"),
        ("20", "quotes[2].lead_time_days")], lines
    assert "quote 'mine-1' refers to unknown system 'dgx-b20'; did you mean 'dgx-b200'?" in lines[1]
    assert lines[2].endswith("expected a whole number of nodes (e.g. 64), got '8 nodes'")
    assert lines[3].endswith("expected a number of days (e.g. 30), got '2w'")


def test_a_new_quote_with_no_near_id_still_lists_what_it_lacks(tmp_path: Path) -> None:
    q = write(tmp_path, "q.yaml", "quotes:\n- {id: brand-new, usd_per_gpu_hour: 2.0}\n")
    lines = bad(run("validate", FINETUNE, "--quotes", q))
    assert len(lines) == 1 and f"{q}:2: quotes[0]: required fields are missing: system, mode" in lines[0]


# --------------------------------------------------------------------------------------------- 3. plain words


@pytest.mark.parametrize("expr,expect", [
    ("workload.seq_len=4k", "expected a whole number of tokens (e.g. 4096 or 4Ki), got '4k'"),
    ("workload.seq_len=abc", "expected a whole number of tokens (e.g. 4096 or 4Ki), got 'abc'"),
    ("workload.seq_len=4.5", "expected a whole number of tokens (e.g. 4096 or 4Ki), got 4.5"),
    ("workload.seq_len=8", "expected a whole number of tokens greater than or equal to 16, got 8"),
    ("workload.layers=80 layers", "expected a whole number of layers (e.g. 80), got '80 layers'"),
    ("workload.method=pre", "expected one of pretrain, continued_pretrain, full_finetune, lora or qlora, got 'pre'; "
                            "did you mean 'pretrain'?"),
    ("policy.require_ecc=maybe", "expected true or false, got 'maybe'"),
    ("policy.modes=cloud", "expected a list (e.g. [a, b]), got 'cloud'"),
    ("policy.modes=[]", "expected at least 1 item, got 0"),
    ("policy.max_fabrics=2.5", "expected a whole number of fabrics (e.g. 2), got 2.5"),
    ("policy.deadline_confidence=high", "expected a number, got 'high'"),
    ("name=", "expected text, got an empty string"),
    ("description=[1]", "expected text (a string), got a list"),
    ("objective=speed", "expected one of cost or time, got 'speed'"),
    ("budget.max_usd=150 million", "expected a number of US dollars (e.g. 150M), got '150 million'"),
    ("rules=[{name: a b, then: forbid}]", "rules[0].name: expected a name of letters, digits"),
    ("rules=[{name: a, when: {accelerator: 3}, then: forbid}]",
     "rules[0].when.accelerator: expected text (a string) or a list (e.g. [a, b]), got 3"),
    ("site={it_power_kw: 6MW, cooling: [air], racks: 3, rack_power_kw: 40, electricity_usd_per_kwh: 0.08}",
     "site.it_power_kw: expected a number of kW (e.g. 6000), got '6MW'"),
    (f"quotes.{CLOUD}.lead_time_days=2w", "expected a number of days (e.g. 30), got '2w'"),
    (f"quotes.{CLOUD}.max_nodes=lots", "expected a whole number of nodes (e.g. 64), got 'lots'"),
    (f"quotes.{CLOUD}.mode=rent", "expected one of buy, cloud or managed, got 'rent'"),
])
def test_no_pydantic_text_for_a_bad_value(expr: str, expect: str) -> None:
    lines = bad(run("validate", FINETUNE, "--set", expr))
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: --set {expr}: ") and expect in lines[0], lines


def test_a_file_of_wrong_kinds_and_units_gets_plain_sentences(tmp_path: Path) -> None:
    f = write(tmp_path, "units.yaml", """\
name: units
workload: {method: pretrain, params: 7B, tokens: 1T, seq_len: 8k, vocab: 128k}
site:
  it_power_kw: 6 MW
  cooling: air
  racks: twelve
  rack_power_kw: 40
  electricity_usd_per_kwh: 8c
policy: {require_ecc: sometimes}
""")
    lines = bad(run("validate", f))
    assert [LINE.match(x)["path"] for x in lines] == [  # type: ignore[index]
        "workload.seq_len", "workload.vocab", "site.it_power_kw", "site.cooling", "site.racks",
        "site.electricity_usd_per_kwh", "policy.require_ecc"], lines
    assert "expected a whole number of tokens (e.g. 4096 or 4Ki), got '8k' (8Ki is 8,192 tokens)" in lines[0]
    assert "expected a number of kW (e.g. 6000), got '6 MW'" in lines[2]
    assert "expected a list (e.g. [a, b]), got 'air'" in lines[3]
    assert "expected a number of US dollars per kWh (e.g. 0.08), got '8c'" in lines[5]


@pytest.mark.parametrize("value,tokens", [("4Ki", 4096), ("8ki", 8192), ("1Mi", 1048576), ("4096", 4096)])
def test_a_sequence_length_takes_binary_suffixes(value: str, tokens: int) -> None:
    from solver.inputs.problem import load_problem
    assert load_problem(FINETUNE, [f"workload.seq_len={value}"]).spec.workload.seq_len == tokens


def test_a_saved_plan_error_is_worded_by_plan_not_pydantic() -> None:
    from solver.inputs.saved import _what
    message = _what({"type": "int_parsing", "loc": ("x",), "msg": "Input should be a valid integer", "input": "a"})
    assert "Input should" not in message and message.startswith("expected a whole number")
    odd = _what({"type": "some_new_type", "loc": ("x",), "msg": "Input should be odd", "input": 3})
    assert "Input should" not in odd


# --------------------------------------------------------------------------------------------- 4. price fields


@pytest.mark.parametrize("quote,field", [(CLOUD, "usd_per_gpu_hour"), (MANAGED, "usd_per_month"), (BUY, "price_usd")])
def test_set_price_suggests_the_price_field_of_the_quote_mode(quote: str, field: str) -> None:
    lines = bad(run("validate", FINETUNE, "--set", f"quotes.{quote}.price=7.5"))
    assert lines == [f"error: --set quotes.{quote}.price=7.5: unknown key 'price'; did you mean '{field}'?"]
    ok = run("validate", FINETUNE, "--set", f"quotes.{quote}.{field}=7.5")
    assert ok.exit_code == 0, ok.output


def test_a_quote_file_price_key_suggests_the_mode_price_field(tmp_path: Path) -> None:
    q = write(tmp_path, "q.yaml", f"quotes:\n  - {{id: {MANAGED}, price: 900k}}\n  - {{id: {CLOUD}, cost: 7}}\n")
    lines = bad(run("validate", FINETUNE, "--quotes", q))
    assert lines == [f"error: {q}:2: quotes[0].price: unknown key 'price'; did you mean 'usd_per_month'?",
                     f"error: {q}:3: quotes[1].cost: unknown key 'cost'; did you mean 'usd_per_gpu_hour'?"]
