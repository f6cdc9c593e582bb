"""Bad input never crashes `plan`: one clear line on stderr naming the file (line, field path), exit code 2.

The corpus is `tests/bad_inputs/*.yaml`, one broken file per case with a comment saying what it tests. Files
named `quotes_*.yaml` are quote catalogs, passed with `--quotes` next to a valid problem; every other file is a
problem file. Cases that need bytes a text corpus cannot hold (non-UTF-8, NUL, oversize) are generated in
tmp_path. Expectations live in EXPECT below; a corpus file without an expectation fails the suite.

Product bugs this corpus finds are fixed; a new one is added as a strict xfail in BUGS until it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from cli import main

REPO = Path(__file__).resolve().parent.parent
CORPUS = Path(__file__).resolve().parent / "bad_inputs"
CORPUS_REL = "tests/bad_inputs"
VALID_PROBLEM = "constraints/finetune-70b.yaml"

# filename -> (substring or tuple of substrings that must appear in the message, expected line or None)
EXPECT: dict[str, tuple[str | tuple[str, ...], int | None]] = {
    "yaml_syntax_error.yaml": (("YAML syntax error", "column"), 6),
    "empty.yaml": ("file is empty", None),
    "top_level_list.yaml": (("expected a mapping", "got list"), 2),
    "unknown_top_key.yaml": (("unknown key 'budjet'", "did you mean 'budget'?"), 7),
    "unknown_nested_key.yaml": (("schedule.dedline", "unknown key 'dedline'", "did you mean 'deadline'?"), 10),
    "unknown_required_key_typo.yaml": (("site.rack_pwer_kw", "unknown key 'rack_pwer_kw'",
                                        "did you mean 'rack_power_kw'?"), 11),
    "wrong_type_params.yaml": ("workload.params: expected a number like 70B, got 'seventy'", 5),
    "negative_tokens.yaml": (("workload.tokens", "expected a positive number"), 6),
    "zero_budget.yaml": (("budget.max_usd", "expected a positive number, got 0"), 8),
    "zero_racks.yaml": (("site.racks", "greater than or equal to 1"), 10),
    "nan_params.yaml": (("workload.params", "expected a finite number", ".nan"), 5),
    "inf_power.yaml": (("site.it_power_kw", "expected a finite number", ".inf"), 8),
    "absurd_params.yaml": (("workload.params", "absurdly large"), 5),
    "params_out_of_range.yaml": (("workload.params", "between 1M and 100T parameters"), 5),
    "huge_integer.yaml": ("workload.params", 5),
    "bad_unit.yaml": ("workload.params: expected a number like 70B, got '200 bilion'", 5),
    "impossible_date.yaml": (("schedule.earliest_start", "2027-02-30", "day is out of range"), 9),
    "deadline_before_start.yaml": (
        ("schedule.deadline", "deadline 2027-01-01 is not after earliest_start 2027-03-01"), 10),
    "duplicate_keys.yaml": (("workload.params", "duplicate key 'params'"), 7),
    "merge_key.yaml": ("merge keys (<<) are not supported", 6),
    "rule_unknown_attribute.yaml": (("rules[0].when.acelerator", "did you mean 'accelerator'?"), 9),
    "rule_unknown_operator.yaml": (("rules[0].when.gpus", "unknown operator 'gte'", "gt, ge, lt, le, eq"), 10),
    "rule_unknown_accelerator.yaml": (("rules[0].when.accelerator", "unknown accelerator 'h100-sxn'",
                                       "did you mean 'h100-sxm'?"), 10),
    "rule_then_unknown_key.yaml": (("rules[0].then", "unknown key 'dely_days'", "did you mean 'delay_days'?"), 10),
    "risk_unknown_assumption.yaml": (("risk.memory.headrom", "did you mean 'headroom'?"), 9),
    "risk_absurd_override.yaml": ("risk.money.engineer_usd_per_month", 10),
    "absurd_site_power.yaml": ("site.it_power_kw", 9),
    "alias_bomb.yaml": ("alias bomb", None),
    "python_tag.yaml": (("YAML tag", "python/object/apply", "not allowed"), 2),
    "deeply_nested.yaml": ("nested too deeply", None),
    "quotes_duplicate_id.yaml": (("quotes[1].id", "duplicate quote id 'my-h100-cloud'"), 14),
    "quotes_unknown_system.yaml": (("quote 'my-typo-quote'", "unknown system 'dgx-h1000'"), 3),
    "quotes_negative_price.yaml": (("quotes[0].price_usd", "expected a number >= 0"), 7),
    "quotes_unknown_key.yaml": (("quotes[0].lead_time_day", "did you mean 'lead_time_days'?"), 9),
    "quotes_absurd_price.yaml": (("quotes[0].usd_per_gpu_hour",), 7),
    "quotes_term_without_rate.yaml": (("quotes[0]", "max_term_months and after_term_usd_per_gpu_hour go together"),
                                      3),
    "quotes_term_below_commit.yaml": (("quotes[0]", "max_term_months (2) is below commit_months (3)"), 3),
    "quotes_contact_sales_list.yaml": (("quotes[0]", "a contact_sales tier has no list price"), 3),
}

BUGS: dict[str, str] = {}  # product bugs found by this corpus are fixed; add new ones here as strict xfails

# Cases checked only with `plan solve`: listing an absurd price in `plan catalog quotes` is not an error.
SOLVE_ONLY = {"quotes_absurd_price.yaml"}


def corpus_files() -> list[str]:
    return sorted(p.name for p in CORPUS.glob("*.yaml"))


def command_for(name: str, command: str) -> list[str]:
    """Problem files: `plan solve FILE` / `plan validate FILE`. Quote files: `--quotes FILE` on a valid problem
    (`plan solve`) and `plan catalog quotes --quotes FILE`."""
    rel = f"{CORPUS_REL}/{name}"
    if command == "catalog":
        return ["catalog", "quotes", "--quotes", rel]
    if name.startswith("quotes_"):
        return [command, VALID_PROBLEM, "--quotes", rel]
    return [command, rel]


def cases() -> list[Any]:
    out = []
    for name in corpus_files():
        commands = ("solve", "catalog") if name.startswith("quotes_") else ("solve", "validate")
        for command in commands:
            if name in SOLVE_ONLY and command != "solve":
                continue
            marks = [pytest.mark.xfail(strict=True, reason=BUGS[name])] if name in BUGS else []
            out.append(pytest.param(name, command, id=f"{name}-{command}", marks=marks))
    return out


@pytest.fixture(scope="module")
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(autouse=True)
def in_repo(monkeypatch):
    monkeypatch.chdir(REPO)


def assert_bad_input(result: Result, file: str, expect: str | tuple[str, ...], line: int | None) -> str:
    """Exit 2, no traceback, nothing on stdout, ONE line on stderr naming the file (and line)."""
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 2, f"exit {result.exit_code}: {result.output}"
    assert result.stdout == ""
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1, f"expected one line on stderr, got:\n{err}"
    assert file in err, f"file {file!r} not named in: {err}"
    for sub in (expect,) if isinstance(expect, str) else expect:
        assert sub in err, f"{sub!r} not in: {err}"
    if line is not None:
        assert f"{file}:{line}:" in err, f"expected {file}:{line} in: {err}"
    return err


# --------------------------------------------------------------------------------------------- the corpus


def test_every_corpus_file_has_an_expectation_and_a_comment():
    files = corpus_files()
    assert set(files) == set(EXPECT), (sorted(set(files) - set(EXPECT)), sorted(set(EXPECT) - set(files)))
    for name in files:
        first = (CORPUS / name).read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("# Tests"), f"{name}: first line should say what it tests"
    assert set(BUGS) <= set(EXPECT)


@pytest.mark.parametrize("name,command", cases())
def test_bad_input_file(runner, name, command):
    expect, line = EXPECT[name]
    result = runner.invoke(main, command_for(name, command))
    assert_bad_input(result, f"{CORPUS_REL}/{name}", expect, line)


def test_python_tag_is_not_executed(runner, tmp_path):
    marker = tmp_path / "pwned"
    bad = tmp_path / "tag.yaml"
    bad.write_text(f'name: !!python/object/apply:os.system ["touch {marker}"]\n', encoding="utf-8")
    result = runner.invoke(main, ["validate", str(bad)])
    assert_bad_input(result, str(bad), "not allowed", 1)
    assert not marker.exists()


# --------------------------------------------------------------------------------------------- generated files


def test_non_utf8_file(runner, tmp_path):
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"# caf\xe9 in Latin-1\nname: caf\xe9\nworkload: {method: pretrain, params: 7B, tokens: 1T}\n")
    for command in ("solve", "validate"):
        result = runner.invoke(main, [command, str(bad)])
        assert_bad_input(result, str(bad), "not UTF-8", None)


def test_nul_bytes(runner, tmp_path):
    bad = tmp_path / "nul.yaml"
    bad.write_bytes(b"name: a\x00b\n")
    assert_bad_input(runner.invoke(main, ["solve", str(bad)]), str(bad), "NUL", None)


def test_file_over_size_limit(runner, tmp_path):
    from solver.inputs.yamlsrc import MAX_FILE_BYTES

    big = tmp_path / "big.yaml"
    with big.open("w", encoding="utf-8") as f:
        f.write("name: big\n")
        line = "# " + "x" * 97 + "\n"
        f.write(line * (MAX_FILE_BYTES // len(line) + 1))
    assert big.stat().st_size > MAX_FILE_BYTES
    result = runner.invoke(main, ["solve", str(big)])
    assert_bad_input(result, str(big), f"file is over {MAX_FILE_BYTES:,} bytes", None)


def test_missing_problem_file(runner, tmp_path):
    missing = tmp_path / "nope.yaml"
    assert_bad_input(runner.invoke(main, ["solve", str(missing)]), str(missing), "file not found", None)


def test_missing_quotes_file(runner, tmp_path):
    missing = tmp_path / "nope-quotes.yaml"
    result = runner.invoke(main, ["solve", VALID_PROBLEM, "--quotes", str(missing)])
    assert_bad_input(result, str(missing), "not found", None)


def test_quote_file_with_an_extra_top_level_key(runner, tmp_path):
    bad = tmp_path / "q.yaml"
    bad.write_text("quotes: []\nqoutes: []\n", encoding="utf-8")
    assert_bad_input(runner.invoke(main, ["catalog", "quotes", "--quotes", str(bad)]), str(bad), "qoutes", 2)


def test_quote_file_unknown_top_level_key_suggests(runner, tmp_path):
    bad = tmp_path / "q.yaml"
    bad.write_text("quotes: []\nqoutes: []\n", encoding="utf-8")
    result = runner.invoke(main, ["catalog", "quotes", "--quotes", str(bad)])
    assert_bad_input(result, str(bad), "did you mean 'quotes'", 2)


# --------------------------------------------------------------------------------------------- --set overrides


# A value given with --set is blamed on the --set, never on the line of the file it replaced.


def test_set_impossible_date(runner):
    expr = "schedule.deadline=2027-02-30"
    result = runner.invoke(main, ["validate", VALID_PROBLEM, "--set", expr])
    err = assert_bad_input(result, f"--set {expr}", ("2027-02-30",), None)
    assert VALID_PROBLEM not in err


def test_set_infinite_assumption(runner):
    expr = "risk.money.engineer_usd_per_month=.inf"
    result = runner.invoke(main, ["solve", VALID_PROBLEM, "--set", expr])
    assert_bad_input(result, f"--set {expr}", ("finite",), None)


@pytest.mark.parametrize("expr,expect", [
    ("workload.params=.nan", "finite"),
    ("site.pue=.inf", "finite"),
    ("workload.tokens=-3B", "expected a number like 70B, got '-3B'"),
    ("workload=[1, 2]", "expected a mapping"),
    ("risk.memory.headrom=0.2", "did you mean 'headroom'?"),
])
def test_set_bad_values(runner, expr, expect):
    result = runner.invoke(main, ["validate", "constraints/datacenter.yaml", "--set", expr])
    err = assert_bad_input(result, f"--set {expr}", expect, None)
    assert "constraints/datacenter.yaml" not in err


def test_quote_files_have_their_own_configurable_limit(runner, tmp_path, monkeypatch):
    """A quote file over the problem files' 2 MB is read (catalogs may be marketplace-sized, 64 MB by default); the
    limit is PLAN_MAX_CATALOG_MB, counted on bytes read, and a bad value of it is a one-line error."""
    from solver.inputs.yamlsrc import MAX_FILE_BYTES
    quote = ("- {id: big-%05d, system: dgx-h100, mode: cloud, vendor: test, usd_per_gpu_hour: 9.5, max_nodes: 1, "
             "lead_time_days: 7, quoted_on: 2026-11-01, valid_until: 2027-06-30, kind: list, source: test}\n")
    big = tmp_path / "quotes.yaml"
    with big.open("w", encoding="utf-8") as f:
        f.write("quotes:\n")
        f.write("# " + "x" * (MAX_FILE_BYTES + 1000) + "\n")  # over 2 MB in one comment; a few quotes after it
        for i in range(3):
            f.write(quote % i)
    assert big.stat().st_size > MAX_FILE_BYTES
    problem = REPO / "constraints" / "finetune-70b.yaml"
    ok = runner.invoke(main, ["validate", str(problem), "--quotes", str(big)])
    assert ok.exit_code == 0, ok.output
    monkeypatch.setenv("PLAN_MAX_CATALOG_MB", "1.5")
    refused = runner.invoke(main, ["validate", str(problem), "--quotes", str(big)])
    assert_bad_input(refused, "quotes.yaml", "file is over 1,500,000 bytes", None)
    assert "PLAN_MAX_CATALOG_MB" in refused.output
    monkeypatch.setenv("PLAN_MAX_CATALOG_MB", "lots")
    r = runner.invoke(main, ["validate", str(problem), "--quotes", str(big)])
    assert r.exit_code == 2 and "environment PLAN_MAX_CATALOG_MB: expected a number of MB" in r.output, r.output
