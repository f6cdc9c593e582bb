"""One pricing path: a program of one workload is the single run, priced by the same code.

Every bundled single-run example (`workload:`) is rewritten as a program whose only workload is that one
(`workloads: [{id: main, workload: ...}]`, every other section unchanged) and both are solved: the JSON answers are
the same, byte for byte (on 2,000 scenarios, the same on both sides), apart from where each setting was
written (file and line)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from cli import main

ROOT = Path(__file__).resolve().parent.parent
SINGLE = sorted(p.name for p in (ROOT / "constraints").glob("*.yaml")
                if "workload" in yaml.safe_load(p.read_text()))


def _without_places(node: Any) -> Any:
    """The answer with every `where` (file:line of a setting) left out: the two files differ in layout only."""
    if isinstance(node, dict):
        return {k: _without_places(v) for k, v in node.items() if k != "where"}
    if isinstance(node, list):
        return [_without_places(v) for v in node]
    return node


def _solve(path: Path) -> dict[str, Any]:
    r = CliRunner().invoke(main, ["solve", str(path), "--format", "json", "--scenarios", "2000"])
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)


def test_every_single_run_example_is_checked() -> None:
    assert len(SINGLE) >= 5, SINGLE


@pytest.mark.parametrize("name", SINGLE)
def test_a_program_of_one_workload_is_the_single_run(tmp_path: Path, name: str) -> None:
    spec = yaml.safe_load((ROOT / "constraints" / name).read_text())
    workload = spec.pop("workload")
    program = {**spec, "workloads": [{"id": "main", "workload": workload}]}
    path = tmp_path / name
    path.write_text(yaml.safe_dump(program, sort_keys=False))
    single, one = _solve(ROOT / "constraints" / name), _solve(path)
    assert one["status"] == single["status"]
    assert json.dumps(_without_places(one), sort_keys=True) == json.dumps(_without_places(single), sort_keys=True)
