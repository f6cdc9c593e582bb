"""A/B: this checkout against another one (e.g. the commit before a change), case by case, interleaved.

    python bench/ab.py --base /path/to/other/checkout [--sizes 10,100,1000,5000] [--repeats 3] [--json out.json]

Each case — the 200B problem of constraints/datacenter.yaml with N seeded random quotes (bench/solve.py's
`random_quotes`), without rules, with rules, and the explanation of the same problem with a $1k budget — runs in a
fresh process of each tree in turn (base, this, base, this, …), with garbage collection off for the whole case as
the console script runs a command. The reported time is the minimum over the repeats (the least disturbed run on a
noisy machine), peak memory the maximum; the answers (plan, or conflict and relaxation) must be the same in both
trees. Trees from before the stage subpackages (solver/problem.py) are run through their old API.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from solve import RULES, random_quotes  # noqa: E402

CASE = """
import gc, json, resource, sys, time
gc.disable()
sys.path.insert(0, {root!r})
n, case, qfile, rules = {n}, {case!r}, {qfile!r}, {rules!r}
t0 = time.perf_counter()
{body}
out["s"] = round(time.perf_counter() - t0, 3)
out["mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
print(json.dumps(out))
"""

NEW_API = """
from solver.answers.report import solve_and_explain
from solver.inputs.problem import load_problem
from solver.solve.pipeline import SolveSettings, prepare, solve_problem
if case == "explain":
    p = load_problem({root!r} + "/constraints/infeasible-budget.yaml", ["budget.max_usd=1k"], quotes=[qfile])
    _c, r = solve_and_explain(p, SolveSettings())
    out = {{"status": r.status, "conflict": r.explanation["conflict"],
            "to": [x["to"] for x in r.explanation["relaxations"]]}}
else:
    p = load_problem({root!r} + "/constraints/datacenter.yaml", rules, quotes=[qfile])
    s = SolveSettings(alternatives=False)
    r = solve_problem(p, s, prepare(p, s))
    out = {{"status": r.status, "plan": [r.plan.option, r.plan.nodes, round(r.plan.total_cost),
                                        r.plan.finish.isoformat()]}}
"""

OLD_API = """
from solver.problem import load_problem
from solver.solve import SolveSettings, solve_problem
if case == "explain":
    lp = load_problem({root!r} + "/constraints/infeasible-budget.yaml", ["budget.max_usd=1k"])
    r = solve_problem(lp, SolveSettings(extra_quotes=(qfile,)))
    out = {{"status": r.status, "conflict": r.explanation["conflict"],
            "to": [x["to"] for x in r.explanation["relaxations"]]}}
else:
    lp = load_problem({root!r} + "/constraints/datacenter.yaml", rules)
    r = solve_problem(lp, SolveSettings(alternatives=False, extra_quotes=(qfile,)))
    out = {{"status": r.status, "plan": [r.plan.option, r.plan.nodes, round(r.plan.total_cost),
                                        r.plan.finish.isoformat()]}}
"""


def run_case(tree: Path, n: int, case: str, qfile: str) -> dict:
    old = (tree / "solver" / "problem.py").exists()
    body = (OLD_API if old else NEW_API).format(root=str(tree))
    rules = RULES if case == "rules" else ["rules=[]"]
    code = CASE.format(root=str(tree), n=n, case=case, qfile=qfile, rules=rules, body=body)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=tree)
    if out.returncode != 0:
        raise RuntimeError(f"{tree} {n} {case}: {out.stderr[-500:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, type=Path)
    ap.add_argument("--sizes", default="10,100,1000,5000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for n in (int(s) for s in args.sizes.split(",") if s):
            qfile = str(Path(d) / f"q{n}.yaml")
            Path(qfile).write_text(yaml.safe_dump({"quotes": random_quotes(n)}))
            for case in ("plain", "rules", "explain"):
                runs: dict[str, list[dict]] = {"base": [], "this": []}
                for _ in range(args.repeats):
                    for name, tree in (("base", args.base.resolve()), ("this", ROOT)):
                        runs[name].append(run_case(tree, n, case, qfile))
                answers = [{k: v for k, v in r.items() if k not in ("s", "mb")} for r in runs["base"] + runs["this"]]
                row = {"quotes": n, "case": case, "base_s": min(r["s"] for r in runs["base"]),
                       "this_s": min(r["s"] for r in runs["this"]),
                       "base_mb": max(r["mb"] for r in runs["base"]), "this_mb": max(r["mb"] for r in runs["this"]),
                       "same_answer": all(a == answers[0] for a in answers), "answer": answers[0]}
                row["change"] = f"{row['this_s'] / row['base_s'] - 1:+.0%}"
                print(json.dumps(row), flush=True)
                rows.append(row)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
