"""Markdown for every command that prints a report (issue 42): `plan risk`, `plan sensitivity`, `plan estimate`,
`plan diff` and `plan catalog` take `--format markdown` (as solve, explain, frontier and sweep do): a heading,
GitHub tables where the text has tables, code blocks for histograms and diffs. And a break-even price carries its
unit, in the text and in the JSON."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from cli import main

ROOT = Path(__file__).resolve().parent.parent
DATACENTER = str(ROOT / "constraints" / "datacenter.yaml")


def _run(*args: str) -> str:
    r = CliRunner().invoke(main, list(args), env={"COLUMNS": "120"})
    assert r.exit_code == 0, r.output
    return r.stdout


def _has_github_table(text: str) -> bool:
    return any(line.startswith("|--") or line.startswith("|:-") for line in text.splitlines())


def test_risk_in_markdown_has_a_heading_code_block_and_table() -> None:
    md = _run("risk", DATACENTER, "--format", "markdown")
    assert md.startswith("## Risk of the chosen plan")
    assert md.count("```") == 2 and _has_github_table(md)
    assert "reserved" in md.splitlines()[0] and "cloud-reserved" not in md.splitlines()[0]


def test_sensitivity_in_markdown_and_break_evens_with_units() -> None:
    md = _run("sensitivity", DATACENTER, "--no-sweeps", "--format", "markdown")
    assert md.startswith("## Break-even prices") and _has_github_table(md)
    assert "/GPU-h" in md
    data = json.loads(_run("sensitivity", DATACENTER, "--no-sweeps", "--format", "json"))
    for row in data["break_even"]:
        assert row["unit"] in ("usd per GPU-hour", "usd per node", "usd per node-month"), row
        if row["unit"] == "usd per GPU-hour" and row["break_even"] is not None:
            assert f"${row['break_even']:,.2f}/GPU-h" in md


def test_estimate_and_catalog_in_markdown() -> None:
    md = _run("estimate", "--accelerator", "h100-sxm", "--gpus", "64", "--params", "7B", "--tokens", "1T",
              "--format", "markdown")
    assert md.startswith("## Estimate") and _has_github_table(md)
    cat = _run("catalog", "systems", "--format", "markdown")
    assert cat.startswith("## Catalog: systems") and _has_github_table(cat) and "dgx-b200" in cat


def test_diff_in_markdown_is_a_diff_block(tmp_path: Path) -> None:
    saved = tmp_path / "plan.json"
    r = CliRunner().invoke(main, ["solve", DATACENTER, "--save", str(saved)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["diff", str(saved), str(saved), "--format", "markdown"])
    assert r.exit_code == 0, r.output      # the same plan: exit 0
    assert r.stdout.startswith("## Changes from") and "```diff\n" in r.stdout and r.stdout.rstrip().endswith("```")
