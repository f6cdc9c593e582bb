"""Saved plans and diffs: unchanged inputs say "no change"; a quote edit is named as the cause."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from cli import main

ROOT = Path(__file__).resolve().parent.parent
PROBLEM = str(ROOT / "constraints" / "finetune-70b.yaml")


def test_save_then_compare_unchanged_reports_no_change(tmp_path: Path) -> None:
    saved = tmp_path / "plan.json"
    r = CliRunner().invoke(main, ["solve", PROBLEM, "--save", str(saved)])
    assert r.exit_code == 0
    data = json.loads(saved.read_text())
    assert data["schema_version"] == 4 and data["inputs"]["digest"] and data["result"]["plan"]
    assert [p.name for p in tmp_path.iterdir()] == ["plan.json"], "no temporary file may be left behind"
    r = CliRunner().invoke(main, ["solve", PROBLEM, "--compare-to", str(saved)])
    assert r.exit_code == 0 and "no change" in r.stdout
    assert "CHOSEN" in r.stdout, "--compare-to adds the diff to the normal output, it does not replace it"


def test_quote_price_change_is_named_as_the_cause(tmp_path: Path) -> None:
    saved = tmp_path / "plan.json"
    CliRunner().invoke(main, ["solve", PROBLEM, "--save", str(saved)])
    plan = json.loads(saved.read_text())["result"]["plan"]
    chosen = plan["quotes"][0]["id"]
    price = plan["quotes"][0]["price"]
    qf = tmp_path / "q.yaml"   # a partial override: only the field that changes
    qf.write_text(yaml.safe_dump({"quotes": [{"id": chosen, "usd_per_gpu_hour": round(price * 3, 2)}]}))
    r = CliRunner().invoke(main, ["solve", PROBLEM, "--quotes", str(qf), "--compare-to", str(saved), "--save",
                                  str(tmp_path / "new.json")])
    assert r.exit_code == 0, r.output
    assert f"~ quote {chosen} (used): price {price:,.2f} -> {round(price * 3, 2):,.2f}" in r.stdout
    assert "CHOSEN" in r.stdout
    assert "None" not in r.stdout and "{'" not in r.stdout, "no Python reprs in the diff"
    d = CliRunner().invoke(main, ["diff", str(saved), str(tmp_path / "new.json"), "--format", "json"])
    diff = json.loads(d.stdout)
    assert diff["same_inputs"] is False
    assert any(c["kind"] == "quote" and c["id"] == chosen and c["field"] == "price" for c in diff["causes"])


def test_compare_to_a_plan_of_another_problem_warns(tmp_path: Path) -> None:
    saved = tmp_path / "other.json"
    assert CliRunner().invoke(main, ["solve", str(ROOT / "constraints" / "lora-small.yaml"), "--save",
                                     str(saved)]).exit_code == 0
    r = CliRunner().invoke(main, ["solve", PROBLEM, "--compare-to", str(saved)])
    assert r.exit_code == 0
    names = [yaml.safe_load((ROOT / "constraints" / f).read_text())["name"] for f in ("lora-small.yaml",
                                                                                     "finetune-70b.yaml")]
    assert f"the saved plan is of problem '{names[0]}', this is '{names[1]}'" in r.stdout


def test_compare_to_keeps_the_conflict_on_an_infeasible_rerun(tmp_path: Path) -> None:
    saved = tmp_path / "plan.json"
    assert CliRunner().invoke(main, ["solve", PROBLEM, "--save", str(saved)]).exit_code == 0
    r = CliRunner().invoke(main, ["solve", PROBLEM, "--set", "budget.max_usd=10", "--compare-to", str(saved)])
    assert r.exit_code == 1
    assert "Conflict" in r.stdout and "budget.max_usd" in r.stdout
    assert "~ status" in r.stdout and "infeasible" in r.stdout


def test_saved_plan_missing_fields_is_one_line_naming_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"kind": "plan-result", "schema_version": 3}))
    r = CliRunner().invoke(main, ["solve", PROBLEM, "--compare-to", str(bad)])
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "inputs" in r.stderr and str(bad) in r.stderr
    r = CliRunner().invoke(main, ["diff", str(bad), str(bad)])
    assert r.exit_code == 2 and "Traceback" not in r.output


def test_compare_to_a_file_that_is_not_a_saved_plan(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text("{}")
    r = CliRunner().invoke(main, ["solve", PROBLEM, "--compare-to", str(bad)])
    assert r.exit_code == 2 and "not a saved plan" in r.stderr


def test_warm_start_hint_never_changes_the_answer() -> None:
    """A hint (right, or infeasible) only warms the search: the proven optimum is the same."""
    from solver.inputs.problem import load_problem
    from solver.render.jsonout import result_dict, to_json
    from solver.solve.pipeline import Hint, SolveSettings, solve_problem
    problem = load_problem(PROBLEM)
    base = solve_problem(problem, SolveSettings(alternatives=False))
    p = base.plan
    good = Hint(p.option, p.nodes, tuple((q.id, q.nodes) for q in p.quotes))
    bad = Hint(p.option, p.nodes, (("no-such-quote", 999),))
    wrong = Hint("dgx-h100/cloud", 1, ())
    for hint in (good, bad, wrong):
        r = solve_problem(problem, SolveSettings(alternatives=False, hint=hint))
        assert to_json(result_dict(r)) == to_json(result_dict(base))


def test_expired_quote_is_not_used_unless_allowed(tmp_path: Path) -> None:
    q = yaml.safe_load((ROOT / "catalogs" / "quotes" / "cloud.yaml").read_text())["quotes"]
    q = next(x for x in q if x["id"] == "lambda-b200-8x-ondemand")
    q.update(id="old-bargain", usd_per_gpu_hour=0.5, quoted_on="2026-01-01", valid_until="2026-06-30")
    qf = tmp_path / "q.yaml"
    qf.write_text(yaml.safe_dump({"quotes": [q]}))
    r = CliRunner().invoke(main, ["solve", PROBLEM, "--quotes", str(qf), "--format", "json"])
    out = json.loads(r.stdout)
    assert all(x["id"] != "old-bargain" for x in out["plan"]["quotes"])
    assert {"id": "old-bargain", "valid_until": "2026-06-30"} in out["expired_quotes"]
    text = CliRunner().invoke(main, ["solve", PROBLEM, "--quotes", str(qf)]).stdout
    assert "expired before 2026-12-01 and not used" in text and "old-bargain" not in text
    verbose = CliRunner().invoke(main, ["solve", PROBLEM, "--quotes", str(qf), "--verbose"]).stdout
    assert "old-bargain (2026-06-30)" in verbose
    r = CliRunner().invoke(main, ["solve", PROBLEM, "--quotes", str(qf), "--allow-expired", "--format", "json"])
    out = json.loads(r.stdout)
    assert any(x["id"] == "old-bargain" for x in out["plan"]["quotes"])
    assert any("EXPIRED QUOTE: old-bargain" in w for w in out["warnings"])
