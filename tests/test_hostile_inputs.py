"""Inputs that try to hurt: unbounded work, files that never end, dates past the calendar, terminal escapes.

Each case is refused before any long work with one line naming where the problem is (exit 2), or — for text that
only ends up in a report — made harmless.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from cli import main
from solver.inputs.assumptions import MAX_GRID_COUNTS
from solver.inputs.yamlsrc import MAX_FILE_BYTES

REPO = Path(__file__).resolve().parent.parent
FINETUNE = str(REPO / "constraints" / "finetune-70b.yaml")


def one_line_error(args: list[str]) -> str:
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert r.stdout == "" and "Traceback" not in r.output
    assert r.stderr.count("\n") == 1, r.stderr
    return r.stderr


# ---------------------------------------------------------------------------------------------- bounded work


@pytest.mark.parametrize("sets", [
    ["risk.node_grid.max_nodes=100000", "risk.node_grid.fine_until=100000"],
    ["risk.node_grid.step_until_512=1", "risk.node_grid.step_until_max=1", "risk.node_grid.max_nodes=1000000"],
])
def test_a_node_grid_is_bounded_by_the_work_it_creates(sets: list[str]) -> None:
    for command in ("validate", "solve"):
        err = one_line_error([command, FINETUNE, *[a for s in sets for a in ("--set", s)]])
        assert "risk.node_grid" in err and f"{MAX_GRID_COUNTS:,}" in err


def test_points_times_options_is_bounded(tmp_path: Path) -> None:
    """A grid inside its own bound, over a catalog with many options, is refused as a whole (estimates x options)."""
    base = next(s for s in yaml.safe_load((REPO / "catalogs" / "systems.yaml").read_text())["systems"]
                if s["id"] == "dgx-b200")
    systems = [{**base, "id": f"clone-{i}"} for i in range(60)]
    quotes = [{"id": f"q-{s['id']}-{m}", "system": s["id"], "mode": m, "vendor": "x", "max_nodes": 4,
               "lead_time_days": 1, "quoted_on": "2026-11-01", "valid_until": "2027-12-31", "kind": "list",
               "source": "test", **({"price_usd": 1000} if m == "buy" else {"usd_per_gpu_hour": 1.0} if m == "cloud"
                                    else {"usd_per_month": 1000})}
              for s in systems for m in ("buy", "cloud", "managed")]
    (tmp_path / "q.yaml").write_text(yaml.safe_dump({"systems": systems, "quotes": quotes}))
    err = one_line_error(["validate", FINETUNE, "--quotes", str(tmp_path / "q.yaml"), "--set",
                          f"risk.node_grid.fine_until={MAX_GRID_COUNTS}", "--set",
                          f"risk.node_grid.max_nodes={MAX_GRID_COUNTS}"])
    assert "estimates; at most" in err and "risk.node_grid" in err


# ---------------------------------------------------------------------------------------------- files


def test_devices_are_refused_without_reading_them() -> None:
    for device in ("/dev/zero", "/dev/urandom"):
        err = one_line_error(["solve", device])
        assert device in err and "not a regular file" in err


def test_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "problem.yaml"
    os.mkfifo(fifo)
    r = subprocess.run([sys.executable, "cli.py", "solve", str(fifo)], cwd=REPO, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "not a regular file" in r.stderr


def test_a_pipe_cannot_bypass_the_size_cap() -> None:
    """`plan solve <(cat big.yaml)` passes /dev/fd/N, a pipe whose stat size is 0: refused as not a file."""
    read, write = os.pipe()
    try:
        os.write(write, b"name: x\n")
        os.close(write)
        r = subprocess.run([sys.executable, "cli.py", "validate", f"/dev/fd/{read}"], cwd=REPO, capture_output=True,
                           text=True, timeout=60, pass_fds=(read,))
    finally:
        os.close(read)
    assert r.returncode == 2 and "not a regular file" in r.stderr


def test_the_size_cap_is_on_bytes_read(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"name: big\n" + b"#" * MAX_FILE_BYTES)
    assert f"file is over {MAX_FILE_BYTES:,} bytes" in one_line_error(["solve", str(big)])


def test_a_file_that_is_not_a_catalog_is_named_but_not_printed(tmp_path: Path) -> None:
    secret = tmp_path / "credentials.yaml"
    secret.write_text("aws_secret_access_key: hunter2-very-secret\nregion: us-east-1\n")
    for command in (["solve", FINETUNE], ["catalog", "quotes"]):
        err = one_line_error([*command, "--quotes", str(secret)])
        assert str(secret) in err and "not a catalog file" in err
        assert "hunter2" not in err and "aws_secret" not in err


# ---------------------------------------------------------------------------------------------- dates, numbers


@pytest.mark.parametrize("expr", ["schedule.earliest_start=9999-12-30", "as_of=0001-01-01",
                                  "schedule.deadline=2999-01-01"])
def test_dates_outside_the_calendar_are_refused(expr: str) -> None:
    err = one_line_error(["solve", FINETUNE, "--set", expr])
    assert f"--set {expr}" in err and "outside the range" in err


def test_a_file_date_outside_the_calendar_names_its_line(tmp_path: Path) -> None:
    data = yaml.safe_load(Path(FINETUNE).read_text())
    data["schedule"]["earliest_start"] = "9999-12-30"
    f = tmp_path / "p.yaml"
    f.write_text(yaml.safe_dump(data, sort_keys=False))
    err = one_line_error(["solve", str(f)])
    assert f"{f}:" in err and "schedule.earliest_start" in err and "outside the range" in err


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0", "1e9"])
def test_time_limit_must_be_a_finite_positive_number(value: str) -> None:
    r = CliRunner().invoke(main, ["solve", FINETUNE, "--time-limit", value])
    assert r.exit_code == 2 and "Traceback" not in r.output and "--time-limit" in r.output


def test_a_quote_dated_after_as_of_is_not_used(tmp_path: Path) -> None:
    """A quote from the future of the planning date did not exist then: it is left out (and listed)."""
    q = tmp_path / "q.yaml"
    q.write_text("quotes:\n- {id: from-the-future, system: dgx-b200, mode: cloud, vendor: x, usd_per_gpu_hour: 0.10, "
                 "max_nodes: 8, lead_time_days: 1, quoted_on: 2027-06-01, valid_until: 2027-12-31, kind: list, "
                 "source: test}\n")
    r = CliRunner().invoke(main, ["solve", FINETUNE, "--quotes", str(q), "--format", "json"])
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    assert all(x["id"] != "from-the-future" for x in d["plan"]["quotes"])
    assert d["quotes_dated_after_as_of"] == [{"id": "from-the-future", "quoted_on": "2027-06-01"}]
    text = CliRunner().invoke(main, ["solve", FINETUNE, "--quotes", str(q)]).stdout
    assert "1 quote is dated after 2026-12-01 and not used" in text


# ---------------------------------------------------------------------------------------------- terminal


def test_control_characters_in_problem_text_are_shown_escaped(tmp_path: Path) -> None:
    data = yaml.safe_load(Path(FINETUNE).read_text())
    data["name"] = "x\x1b]0;OWNED\x07\x1b[2K\rplan 'x': OPTIMAL (proven)"
    data["rules"] = [{"name": "r1", "when": {"mode": "cloud"}, "then": {"add_usd": 1}, "note": "\x1b[31mred\x1b[0m"}]
    f = tmp_path / "p.yaml"
    f.write_text(yaml.safe_dump(data, allow_unicode=True))
    for fmt in ("table", "markdown"):
        r = CliRunner().invoke(main, ["solve", str(f), "--format", fmt])
        assert r.exit_code == 0
        assert "\x1b" not in r.stdout and "\x07" not in r.stdout and "\r" not in r.stdout
        assert "\\x1b]0;OWNED\\x07" in r.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: ok\nworkload: {method: pretrain, params: 7B, tokens: 1T}\n\"\\e]0;x\\a\": 1\n")
    err = CliRunner().invoke(main, ["validate", str(bad)]).stderr
    assert "\x1b" not in err and "\\x1b" in err
