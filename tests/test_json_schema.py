"""`--format json` is typed and described (issue 42, part 6): every command's JSON validates against its JSON Schema
(draft 2020-12), shipped as package data (`solver/schemas/`) and printed by `plan schema`; keys are snake_case and no
value that is a number in meaning is a string ("$2.74/GPU-h", "12%", "0").

The schemas close the objects whose keys are fixed (`additionalProperties: false`: a plan, an alternative, a top
level), so a new field that no schema describes fails here until it is described. The validator below covers the
subset of JSON Schema the schemas use (and refuses any other keyword, so a schema cannot rely on one it ignores);
where the `jsonschema` package happens to be installed (it is not a dependency), the schemas are also checked
against the draft 2020-12 meta-schema and the outputs validated by it too.

About 40 s: each command runs once (module fixtures), in this process through click's runner.
"""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from cli import main
from solver.render import schemas

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((REPO / "constraints").glob("*.yaml"))
PROGRAMS = {"program-200b.yaml", "infeasible-program.yaml"}


# ------------------------------------------------------------------------------------------------ the validator

KNOWN = {"$schema", "$id", "$ref", "$defs", "title", "description", "type", "properties", "required",
         "additionalProperties", "propertyNames", "items", "prefixItems", "minItems", "enum", "const", "minimum",
         "maximum", "pattern", "format", "anyOf", "oneOf"}
TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _is_date(v: str) -> bool:
    try:
        return re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", v) is not None and date.fromisoformat(v) is not None
    except ValueError:
        return False


class Validator:
    """The subset of draft 2020-12 the schemas use: type (one or a list), properties, required,
    additionalProperties (false or a schema), propertyNames, items (a schema or false), prefixItems, minItems,
    enum, const, minimum, maximum, pattern, format "date", $ref to `#/$defs/…`, anyOf, oneOf. Annotations ($schema,
    $id, title, description) are ignored; any other keyword is an error of the schema."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.unknown = sorted(self._keywords(root) - KNOWN)

    def _keywords(self, node: Any) -> set[str]:
        if isinstance(node, list):
            return set().union(*(self._keywords(v) for v in node)) if node else set()
        if not isinstance(node, dict):
            return set()
        found = set(node)
        for key, value in node.items():
            if key in ("properties", "$defs"):
                found |= set().union(*(self._keywords(v) for v in value.values())) if value else set()
            elif key in ("items", "additionalProperties", "propertyNames", "prefixItems", "anyOf", "oneOf"):
                found |= self._keywords(value)
        return found

    def errors(self, value: Any, schema: Any = None, path: str = "$") -> list[str]:
        schema = self.root if schema is None else schema
        if schema is True or schema == {}:
            return []
        if schema is False:
            return [f"{path}: not allowed here"]
        out: list[str] = []
        if "$ref" in schema:
            ref = schema["$ref"]
            assert ref.startswith("#/$defs/"), f"only local references: {ref}"
            out += self.errors(value, self.root["$defs"][ref[len("#/$defs/"):]], path)
        if "type" in schema:
            kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(TYPES[k](value) for k in kinds):
                return out + [f"{path}: {type(value).__name__} {value!r:.60} is not {'/'.join(kinds)}"]
        if "const" in schema and value != schema["const"]:
            out.append(f"{path}: {value!r:.60} is not {schema['const']!r}")
        if "enum" in schema and value not in schema["enum"]:
            out.append(f"{path}: {value!r:.60} is not one of {schema['enum']}")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if "minimum" in schema and value < schema["minimum"]:
                out.append(f"{path}: {value} < {schema['minimum']}")
            if "maximum" in schema and value > schema["maximum"]:
                out.append(f"{path}: {value} > {schema['maximum']}")
        if isinstance(value, str):
            if "pattern" in schema and re.search(schema["pattern"], value) is None:
                out.append(f"{path}: {value!r:.60} does not match {schema['pattern']}")
            if schema.get("format") == "date" and not _is_date(value):
                out.append(f"{path}: {value!r:.60} is not a date (YYYY-MM-DD)")
        if isinstance(value, dict):
            out += self._object(value, schema, path)
        if isinstance(value, list):
            out += self._array(value, schema, path)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                passing = [s for s in schema[key] if not self.errors(value, s, path)]
                if not passing or (key == "oneOf" and len(passing) > 1):
                    found = "no" if not passing else f"{len(passing)}"
                    out.append(f"{path}: {found} branch of {key} matches; first branch: "
                               f"{self.errors(value, schema[key][0], path)[:3]}")
        return out

    def _object(self, value: dict[str, Any], schema: dict[str, Any], path: str) -> list[str]:
        out = [f"{path}: '{k}' is required" for k in schema.get("required", []) if k not in value]
        props = schema.get("properties", {})
        for k, v in value.items():
            if "propertyNames" in schema:
                out += self.errors(k, schema["propertyNames"], f"{path}.{k} (the key)")
            if k in props:
                out += self.errors(v, props[k], f"{path}.{k}")
            elif "additionalProperties" in schema:
                extra = schema["additionalProperties"]
                out += ([f"{path}: '{k}' is not described by the schema"] if extra is False
                        else self.errors(v, extra, f"{path}.{k}"))
        return out

    def _array(self, value: list[Any], schema: dict[str, Any], path: str) -> list[str]:
        out = []
        if len(value) < schema.get("minItems", 0):
            out.append(f"{path}: fewer than {schema['minItems']} items")
        first = schema.get("prefixItems", [])
        for i, v in enumerate(value):
            if i < len(first):
                out += self.errors(v, first[i], f"{path}[{i}]")
            elif "items" in schema:
                out += self.errors(v, schema["items"], f"{path}[{i}]")
        return out


def check(name: str, data: Any) -> None:
    v = Validator(schemas.bundled(name))
    assert v.unknown == [], f"{name}: keywords the validator does not know: {v.unknown}"
    errors = v.errors(data)
    assert errors == [], f"{name}: {len(errors)} errors:\n" + "\n".join(errors[:25])


def test_the_validator_catches_what_it_should() -> None:
    v = Validator({"$defs": {"d": {"type": "string", "format": "date"}}, "type": "object", "required": ["a"],
                   "additionalProperties": False,
                   "properties": {"a": {"type": "integer", "minimum": 0},
                                  "b": {"anyOf": [{"$ref": "#/$defs/d"}, {"type": "null"}]},
                                  "c": {"type": "array", "prefixItems": [{"enum": ["x"]}], "items": False},
                                  "m": {"type": "object", "additionalProperties": {"type": "number"},
                                        "propertyNames": {"pattern": "^[a-z_]+$"}},
                                  "o": {"oneOf": [{"type": "number"}, {"type": "integer"}]}}})
    assert v.errors({"a": 1, "b": None, "c": ["x"], "m": {"ok": 1.5}}) == []
    assert v.errors({"a": 1, "b": "2027-02-30"})  # not a date
    assert v.errors({"a": -1}) and v.errors({"a": True}) and v.errors({"a": 1.0}) and v.errors({})
    assert v.errors({"a": 1, "z": 0})                           # not described
    assert v.errors({"a": 1, "c": ["x", "y"]}) and v.errors({"a": 1, "c": ["y"]})
    assert v.errors({"a": 1, "m": {"ok": "1"}}) and v.errors({"a": 1, "m": {"Bad": 1}})
    assert v.errors({"a": 1, "o": 3}) and v.errors({"a": 1, "o": 2.5}) == []  # oneOf: exactly one


# ---------------------------------------------------------------------------------------- the program's output

def run(*args: str, codes: tuple[int, ...] = (0,)) -> Any:
    r = CliRunner().invoke(main, [*args, "--format", "json"])
    assert r.exit_code in codes, (args, r.exit_code, r.output[-2000:])
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every bundled example solved once (two of them saved, and the second compared to the first)."""
    folder = tmp_path_factory.mktemp("saved")
    out: dict[str, Any] = {"folder": folder}
    for path in EXAMPLES:
        extra: list[str] = []
        if path.name == "datacenter.yaml":
            extra = ["--save", str(folder / "a.json")]
        out[path.name] = run("solve", str(path), *extra, codes=(0, 1))
    out["compared"] = run("solve", str(REPO / "constraints" / "datacenter.yaml"), "--set", "budget.max_usd=60M",
                          "--save", str(folder / "b.json"), "--compare-to", str(folder / "a.json"))
    return out


@pytest.fixture(scope="module")
def outputs(saved: dict[str, Any]) -> dict[str, Any]:
    """Each command's JSON, once: (schema name, data) by what was run."""
    dc = str(REPO / "constraints" / "datacenter.yaml")
    prog = str(REPO / "tests" / "programs" / "small.yaml")
    out: dict[str, tuple[str, Any]] = {}
    for path in EXAMPLES:
        out[f"solve {path.name}"] = ("program" if path.name in PROGRAMS else "solve", saved[path.name])
    out["solve --compare-to"] = ("solve", saved["compared"])
    out["solve tests/infeasible/budget_and_deadline.yaml"] = (
        "solve", run("solve", str(REPO / "tests" / "infeasible" / "budget_and_deadline.yaml"), codes=(1,)))
    out["risk"] = ("risk", run("risk", dc))
    out["risk program"] = ("risk", run("risk", prog))
    out["frontier --points 3"] = ("frontier", run("frontier", str(REPO / "constraints" / "start-2027.yaml"),
                                                  "--points", "3"))
    out["frontier program"] = ("frontier", run("frontier", prog, "--points", "2"))
    out["sensitivity --no-sweeps"] = ("sensitivity", run("sensitivity", dc, "--no-sweeps"))
    out["sensitivity --sweep"] = ("sensitivity", run(
        "sensitivity", str(REPO / "constraints" / "lora-small.yaml"), "--top", "1", "--sweep", "lead_time_days",
        "--executor", "local"))
    out["sensitivity program"] = ("sensitivity", run("sensitivity", prog, "--sweep", "lead_time_days", "--executor",
                                                     "local"))
    out["sweep"] = ("sweep", run("sweep", str(REPO / "constraints" / "finetune-70b.yaml"), "--set-grid",
                                 "budget.max_usd=1k,100M", "--executor", "local"))
    out["estimate"] = ("estimate", run("estimate", "--accelerator", "h100-sxm", "--gpus", "512", "--params", "70B",
                                       "--tokens", "15T"))
    out["estimate unworkable"] = ("estimate", run("estimate", "--accelerator", "rtx-4090", "--gpus", "100000",
                                                  "--params", "1T", "--tokens", "15T"))
    out["diff"] = ("diff", run("diff", str(saved["folder"] / "a.json"), str(saved["folder"] / "b.json"),
                               codes=(0, 1)))
    for what in ("accelerators", "systems", "quotes", "sources"):
        out[f"catalog {what}"] = (f"catalog-{what}", run("catalog", what, "--as-of", "2026-12-01"))
    return out


def test_every_schema_is_exercised(outputs: dict[str, Any]) -> None:
    assert {name for name, _data in outputs.values()} == set(schemas.names())


@pytest.mark.parametrize("what", ["solve " + p.name for p in EXAMPLES] + [
    "solve --compare-to", "solve tests/infeasible/budget_and_deadline.yaml", "risk", "risk program",
    "frontier --points 3", "frontier program", "sensitivity --no-sweeps", "sensitivity --sweep",
    "sensitivity program", "sweep", "estimate", "estimate unworkable", "diff", "catalog accelerators",
    "catalog systems", "catalog quotes", "catalog sources"])
def test_the_json_validates_against_its_schema(outputs: dict[str, Any], what: str) -> None:
    name, data = outputs[what]
    check(name, data)


def test_the_outputs_cover_the_optional_parts(outputs: dict[str, Any]) -> None:
    """What the examples above are there for: an infeasible answer, a comparison, alternatives with risk."""
    infeasible = outputs["solve infeasible-budget.yaml"][1]
    assert infeasible["status"] == "infeasible" and infeasible["plan"] is None
    assert infeasible["explanation"]["relaxations"]
    assert outputs["solve infeasible-program.yaml"][1]["explanation"]["relaxations"]
    assert "diff" in outputs["solve --compare-to"][1]
    plan = outputs["solve datacenter.yaml"][1]
    assert plan["alternatives"] and all("risk" in a for a in plan["alternatives"])
    assert outputs["risk program"][1]["kind"] == "program"
    assert outputs["estimate unworkable"][1]["workable"] is False and outputs["estimate"][1]["workable"] is True
    assert [p["conflict"] is not None for p in outputs["sweep"][1]["points"]] == [True, False]


# ---------------------------------------------------------------------------------------- typed values, keys

DATA_KEYS = re.compile(r"\.(quotes|per_workload|platform_shares|sweeps|set|lines)$|^\$\[\d+\]\.quotes$")
"""Objects whose keys are data (quote ids, workload ids, `--set` paths, accelerator ids), not field names."""
NUMBER_TEXT = re.compile(r"^[-+~≈]?\$[0-9][0-9,]*(\.[0-9]+)?\s*[kKMB]?(/[A-Za-z-]+)?$|"
                         r"^[-+~≈]?[0-9][0-9,]*(\.[0-9]+)?\s*(%|[kKMBT]|x|×|h|d|days?|kW|GB|TB)?$")
"""A string that is a number in meaning: `$2.74/GPU-h`, `12%`, `0`, `1,200`, `4.5k`, `+30 d`."""
TEXT_AS_TYPED = re.compile(r"\.axes\[\d+\]\.values\[\d+\]$|\.points\[\d+\]\.set\.|\.published$")
"""Text as it was given, echoed: a sweep's `--set-grid` values (`50M`, typed on the command line, as `--set` takes
them), a source's publication date as the source states it (`2024`, `undated`)."""
SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")


def _walk(value: Any, path: str = "$") -> Any:
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, f"{path}[{i}]")


def test_keys_are_snake_case(outputs: dict[str, Any]) -> None:
    bad = []
    for what, (_name, data) in outputs.items():
        for path, value in _walk(data):
            if isinstance(value, dict) and not DATA_KEYS.search(path):
                bad += [f"{what}: {path}.{k}" for k in value if not SNAKE.match(k)]
    assert bad == [], bad[:20]


def test_no_number_is_a_string(outputs: dict[str, Any]) -> None:
    """Free text (a note, a warning) may hold numbers in a sentence; a value that is only a number, a price or a
    share must be a number."""
    bad = []
    for what, (_name, data) in outputs.items():
        for path, value in _walk(data):
            if isinstance(value, str) and NUMBER_TEXT.search(value.strip()) and not TEXT_AS_TYPED.search(path):
                bad.append(f"{what}: {path} = {value!r}")
    assert bad == [], bad[:20]


# ------------------------------------------------------------------------------------------ the schema files

def test_each_schema_is_closed_where_its_keys_are_fixed() -> None:
    """The top level, a plan and an alternative list their keys: a field no schema describes fails the tests."""
    common = schemas.raw("common")["$defs"]
    for name in ("plan", "alternative", "plan_quote", "risk", "explanation", "plan_diff"):
        assert common[name]["additionalProperties"] is False, name
    for name in schemas.names():
        s = schemas.bundled(name)
        tops = [s] if "type" in s else [s["$defs"][r["$ref"].split("/")[-1]] for r in s.get("oneOf", [])]
        for top in tops:
            items = top.get("items", top)
            assert items.get("additionalProperties") is False, name
    plan = common["plan"]["properties"]
    assert plan["start"] == {"type": "string", "format": "date", "description": "the day training starts"}
    assert plan["nodes"]["type"] == "integer" and plan["training_days"]["type"] == "number"
    assert "0 to 1" in common["risk"]["properties"]["p_deadline"]["description"]


def test_every_key_has_a_type() -> None:
    def walk(node: Any, where: str) -> Any:
        if isinstance(node, dict):
            for k, v in node.get("properties", {}).items():
                if not any(key in v for key in ("type", "$ref", "anyOf", "oneOf", "const", "enum")) and \
                        "any JSON value" not in v.get("description", ""):
                    yield f"{where}.{k}"
            for v in node.values():
                yield from walk(v, where)
        elif isinstance(node, list):
            for v in node:
                yield from walk(v, where)

    untyped = [p for name in ["common", *schemas.names()] for p in walk(schemas.raw(name), name)]
    assert untyped == [], untyped


def test_the_schemas_are_valid_draft_2020_12() -> None:
    """With the jsonschema package, where it is installed (not a dependency): each bundled schema is valid against
    the meta-schema, and the outputs validate by it too."""
    jsonschema = pytest.importorskip("jsonschema")
    for name in schemas.names():
        jsonschema.Draft202012Validator.check_schema(schemas.bundled(name))


def test_jsonschema_agrees(outputs: dict[str, Any]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    for what, (name, data) in outputs.items():
        v = jsonschema.Draft202012Validator(schemas.bundled(name), format_checker=jsonschema.FormatChecker())
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in v.iter_errors(data)]
        assert errors == [], (what, errors[:5])


# ------------------------------------------------------------------------------------------------ plan schema

def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def test_plan_schema_prints_the_solve_schema_by_default() -> None:
    r = invoke("schema")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data == schemas.bundled("solve")
    assert data["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert "common.schema.json" not in r.stdout, "self-contained: every reference is local"
    r = invoke("schema", "catalog", "quotes")
    assert r.exit_code == 0 and json.loads(r.stdout) == schemas.bundled("catalog-quotes")


def test_plan_schema_lists_them() -> None:
    r = invoke("schema", "--list")
    assert r.exit_code == 0, r.output
    listed = [line.split()[0] for line in r.stdout.splitlines() if line and not line.startswith("plan ")]
    assert listed == schemas.names()
    assert {"solve", "program", "risk", "frontier", "sensitivity", "sweep", "estimate", "diff",
            "catalog-quotes"} <= set(listed)


@pytest.mark.parametrize("args, hint", [(["slove"], "did you mean 'solve'"),
                                        (["catalog"], "plan schema catalog accelerators|quotes|sources|systems"),
                                        (["xyzzy"], "the schemas: catalog-accelerators")])
def test_an_unknown_schema_is_one_line_exit_2(args: list[str], hint: str) -> None:
    r = invoke("schema", *args)
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and hint in r.stderr, r.stderr
