"""`plan catalog … --format json` is data, not the table's strings: numbers are numbers, keys are snake_case, and
each quote's figures are the catalog file's own (read here with yaml, not through the program's loader)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from click.testing import CliRunner

from cli import main

ROOT = Path(__file__).resolve().parent.parent
PRICE = {"buy": "price_usd", "cloud": "usd_per_gpu_hour", "managed": "usd_per_month"}


def _json(*args: str) -> list[dict]:
    r = CliRunner().invoke(main, ["catalog", *args, "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _number(v: object) -> float:
    """A catalog figure as written: 2.74, 88000, "88k", "3.2M" (the suffixes the bundled files use)."""
    if isinstance(v, str):
        scale = {"k": 1e3, "M": 1e6}[v[-1]]
        return float(v[:-1]) * scale
    assert isinstance(v, (int, float))
    return float(v)


def _keys(node: object) -> set[str]:
    if isinstance(node, dict):
        return set(node) | {k for v in node.values() for k in _keys(v)}
    if isinstance(node, list):
        return {k for v in node for k in _keys(v)}
    return set()


def test_quotes_are_typed_and_match_the_files() -> None:
    rows = {r["id"]: r for r in _json("quotes", "--as-of", "2026-12-01")}
    files = {q["id"]: q for f in sorted((ROOT / "catalogs" / "quotes").glob("*.yaml"))
             for q in yaml.safe_load(f.read_text())["quotes"]}
    assert set(rows) == set(files)
    for qid, q in files.items():
        row = rows[qid]
        assert isinstance(row["max_nodes"], int) and row["max_nodes"] == q["max_nodes"]
        assert row["lead_time_days"] == q["lead_time_days"]
        key = PRICE[q["mode"]]
        if key in q:
            assert row[key] == _number(q[key]) and isinstance(row[key], (int, float)), qid
        assert row["priced"] is (key in q)
        assert row["status"] in {"valid", "expiring", "expired", "not_yet_quoted"}
        assert row["valid_until"] == str(q["valid_until"])
    assert all(re.fullmatch(r"[a-z0-9_]+", k) for k in _keys(list(rows.values()))), "snake_case keys only"
    assert not any(isinstance(v, str) and v.startswith("$") for r in rows.values() for v in r.values())


def test_systems_and_accelerators_are_typed() -> None:
    systems = _json("systems")
    assert systems and all(isinstance(s["per_node"], int) for s in systems)
    accels = _json("accelerators")
    assert all(isinstance(a["quoted"], bool) for a in accels)
    assert all(isinstance(a["memory_gb"]["value"], (int, float)) for a in accels)
    assert all(re.fullmatch(r"[a-z0-9_]+", k) for k in _keys(systems) | _keys(accels))


def test_one_source_by_id() -> None:
    [entry] = _json("sources", "--id", "S132")
    assert entry["id"] == "S132" and entry["url"].startswith("https://")
