"""What a new user runs into first: changing a quote, typos, templates, readable tables, progress, completion."""

from __future__ import annotations

import io
import json
import re
import shlex
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from cli import main
from solver.render.progress import Spinner

REPO = Path(__file__).resolve().parent.parent
FINETUNE = str(REPO / "constraints" / "finetune-70b.yaml")
QUOTE = "lambda-b200-8x-ondemand"


def run(*args: str) -> object:
    return CliRunner().invoke(main, list(args))


def test_set_changes_any_field_of_a_quote() -> None:
    r = run("solve", FINETUNE, "--set", f"quotes.{QUOTE}.usd_per_gpu_hour=0.50", "--format", "json")
    assert r.exit_code == 0
    plan = json.loads(r.stdout)["plan"]
    assert [(q["id"], q["price"]) for q in plan["quotes"]] == [(QUOTE, 0.5)]
    r = run("solve", FINETUNE, "--set", f"quotes.{QUOTE}.usd_per_gpu_hour=-1")
    assert r.exit_code == 2 and r.stderr.startswith(f"error: --set quotes.{QUOTE}.usd_per_gpu_hour=-1: ")
    r = run("solve", FINETUNE, "--set", "quotes.lambda-b200-8x-ondemnd.max_nodes=4")
    assert r.exit_code == 2 and f"did you mean '{QUOTE}'" in r.stderr
    r = run("solve", FINETUNE, "--set", f"quotes.{QUOTE}.max_nodez=4")
    assert r.exit_code == 2 and "did you mean 'max_nodes'" in r.stderr


def test_a_quotes_file_entry_with_a_known_id_changes_only_its_fields(tmp_path: Path) -> None:
    q = tmp_path / "q.yaml"
    q.write_text(f"quotes:\n- {{id: {QUOTE}, usd_per_gpu_hour: 0.50}}\n")
    r = run("catalog", "quotes", "--quotes", str(q), "--id", QUOTE, "--format", "json")
    row = json.loads(r.stdout)[0]
    bundled = json.loads(run("catalog", "quotes", "--id", QUOTE, "--format", "json").stdout)[0]
    assert row["usd_per_gpu_hour"] == 0.5 and bundled["usd_per_gpu_hour"] == 6.69
    assert {k: v for k, v in row.items() if k != "usd_per_gpu_hour"} == \
        {k: v for k, v in bundled.items() if k != "usd_per_gpu_hour"}


def test_a_new_quote_reports_every_missing_field_at_once(tmp_path: Path) -> None:
    q = tmp_path / "q.yaml"
    q.write_text("quotes:\n- {id: brand-new, usd_per_gpu_hour: 2.0}\n")
    r = run("solve", FINETUNE, "--quotes", str(q))
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    for field in ("system", "mode", "vendor", "max_nodes", "lead_time_days", "quoted_on", "valid_until", "kind",
                  "source"):
        assert field in r.stderr, field
    assert "required fields are missing" in r.stderr and f"{q}:2" in r.stderr


def test_a_quote_template_round_trips(tmp_path: Path) -> None:
    r = run("catalog", "quotes", "--id", QUOTE, "--format", "yaml")
    assert r.exit_code == 0
    data = yaml.safe_load(r.stdout)
    assert data["quotes"][0]["id"] == QUOTE and data["quotes"][0]["usd_per_gpu_hour"] == 6.69
    data["quotes"][0]["id"] = "my-copy"
    (tmp_path / "q.yaml").write_text(yaml.safe_dump(data))
    copy = json.loads(run("catalog", "quotes", "--quotes", str(tmp_path / "q.yaml"), "--id", "my-copy",
                          "--format", "json").stdout)[0]
    original = json.loads(run("catalog", "quotes", "--id", QUOTE, "--format", "json").stdout)[0]
    assert {**copy, "id": QUOTE, "fabric_id": original["fabric_id"]} == original
    r = run("catalog", "quotes", "--id", "lambda-b200", "--format", "yaml")
    assert r.exit_code == 2 and "did you mean" in r.stderr and f"'{QUOTE}'" in r.stderr


def test_catalog_tables_fit_a_terminal_and_sources_resolve() -> None:
    for what in ("accelerators", "systems", "quotes"):
        out = run("catalog", what).stdout
        assert max(len(line) for line in out.splitlines()) <= 140, what
    sources = run("catalog", "sources", "--id", "S1")
    assert sources.exit_code == 0 and "glennklockwood.com" in sources.stdout


def test_report_reads_naturally() -> None:
    out = run("solve", FINETUNE, "--verbose").stdout
    assert "1 node = 8 GPUs" in out and "1 nodes" not in out
    rows = [line for line in out.split("Options that cannot work:")[1].splitlines() if line.strip()]
    buy = [line for line in rows if " buy " in line]
    assert len(buy) == 1 and buy[0].startswith("(all ") and "policy.modes" in buy[0], buy  # one row, not ~25
    header = rows[0].split()
    assert header[:2] == ["accelerator", "mode"], "one vocabulary: accelerator and mode in their own columns"


def test_a_relaxation_shows_exact_dollars_at_the_boundary() -> None:
    r = run("solve", FINETUNE, "--set", "budget.max_usd=1k")
    assert r.exit_code == 1
    line = next(x for x in r.stdout.splitlines() if x.strip().startswith("budget.max_usd") and "->" in x)
    assert "$1,000 -> $" in line and "(+$" in line
    frm, to = line.split("->")
    assert to.split()[0] != frm.split()[-1]


def test_progress_only_on_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    quiet = io.StringIO()
    with Spinner(quiet) as s:
        s.message = "solving"
        time.sleep(0.05)
    assert quiet.getvalue() == "", "nothing is drawn when stderr is not a terminal"
    tty = Tty()
    import solver.render.progress as progress
    old = progress.DELAY_SECONDS
    progress.DELAY_SECONDS = 0.0
    try:
        with Spinner(tty) as s:
            s.message = "solving b200/cloud"
            time.sleep(0.35)
    finally:
        progress.DELAY_SECONDS = old
    text = tty.getvalue()
    assert "solving b200/cloud" in text and text.endswith("\r\x1b[2K"), "the line is erased at the end"


def test_shell_completion_script() -> None:
    """The README's `eval "$(_PLAN_COMPLETE=bash_source plan)"` gets a bash completion function."""
    r = subprocess.run([sys.executable, "-c", "import cli; cli.main(prog_name='plan')"], cwd=REPO,
                       capture_output=True, text=True, timeout=60, env={**os.environ, "_PLAN_COMPLETE": "bash_source"})
    assert "_plan_completion" in r.stdout and "complete -o" in r.stdout, (r.stdout, r.stderr)


SLOW_README_COMMANDS = ("policy.deadline_confidence=0.9",)
"""README commands whose output is not re-run here (the README says they take over 10 s)."""


def _readme_examples() -> list[tuple[str, list[str]]]:
    """Every README command `$ plan …` in a code block with the output lines shown under it ("..." alone skipped)."""
    readme = (REPO / "README.md").read_text()
    found = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", readme, re.S):
        lines = block.split("\n")
        cmds = [k for k, line in enumerate(lines) if line.startswith("$ plan ")]
        for i, k in enumerate(cmds):
            end = cmds[i + 1] if i + 1 < len(cmds) else len(lines)
            shown = [x for x in lines[k + 1:end] if x.strip() and x.strip() != "..."]
            if shown and not any(s in lines[k] for s in SLOW_README_COMMANDS):
                found.append((lines[k][2:].split("  #")[0].strip(), shown))
    return found


@pytest.mark.parametrize("command,shown", _readme_examples(), ids=lambda v: v if isinstance(v, str) else "")
def test_the_readme_shows_what_plan_prints(command: str, shown: list[str], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Each README example's output is the real output of its command: every line it shows is a line of the output
    (a line it shortens with "..." is the start of one; "...the normal report, then:" skips), in the same order.
    Run from a folder that sees the checkout's constraints and tests, with the README's own quotes file and a plan
    saved as its first command saves it, at the 120 columns the README shows (pytest-xdist sets COLUMNS=80)."""
    for name in ("constraints", "tests", "catalogs"):
        (tmp_path / name).symlink_to(REPO / name)
    (tmp_path / "my-quotes.yaml").write_text("quotes:\n- {id: together-b200-reserved-91-180d, usd_per_gpu_hour: 7.50}\n")
    monkeypatch.chdir(tmp_path)
    if "plan.json" in command:
        assert CliRunner().invoke(main, ["solve", "constraints/datacenter.yaml", "--save", "plan.json"]).exit_code == 0
    r = CliRunner().invoke(main, shlex.split(command)[1:], env={"COLUMNS": "120"})
    assert r.exit_code in (0, 1), r.output
    printed = r.stdout.splitlines()
    at = 0
    for line in shown:
        if line.startswith("...") and line.rstrip().endswith(":") and not line.startswith("...the"):
            continue
        if line.startswith("...the"):
            continue
        prefix = line[:-3] if line.endswith("...") else None
        while at < len(printed) and not (printed[at] == line if prefix is None else printed[at].startswith(prefix)):
            at += 1
        assert at < len(printed), f"README line not in the output (or out of order): {line!r}"
        at += 1
