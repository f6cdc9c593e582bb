"""A/B: this checkout against another one (e.g. the commit before a change), case by case, interleaved.

    python bench/ab.py --base /path/to/other/checkout [--sizes 10,100,1000,5000] [--repeats 3] [--json out.json]

Each case — the 200B problem of constraints/datacenter.yaml with N seeded random quotes (bench/solve.py's
`random_quotes`), without rules, with rules, and the explanation of the same problem with a $1k budget — runs in a
fresh process of each tree in turn (base, this, base, this, …), with garbage collection off for the whole case as
the console script runs a command. The reported time is the minimum over the repeats (the least disturbed run on a
noisy machine; CPU seconds, user + system, are reported beside it as they are less disturbed by other load, and the
median over the rounds of this tree's CPU time over the base's in the same round, which cancels slow drifts of the
host),
peak memory the maximum; the answers (plan, or conflict and relaxation) must be the same in both
trees. With `--count`, each case runs once per tree under valgrind (cachegrind, no cache simulation; both trees at
once) and the instructions executed are compared instead: a deterministic measure, for when the machine is too noisy
for wall time to resolve a 10% change. Trees from before the stage subpackages (solver/problem.py) are run through
their old API.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from solve import RULES, random_quotes  # noqa: E402

MEASURES = ("s", "cpu_s", "mb", "instructions")

CASE = """
import gc, json, resource, sys, time
gc.disable()
sys.path.insert(0, {root!r})
n, case, qfile, rules = {n}, {case!r}, {qfile!r}, {rules!r}
ru0 = resource.getrusage(resource.RUSAGE_SELF)
cpu0 = ru0.ru_utime + ru0.ru_stime
t0 = time.perf_counter()
{body}
out["s"] = round(time.perf_counter() - t0, 3)
ru = resource.getrusage(resource.RUSAGE_SELF)
out["cpu_s"] = round(ru.ru_utime + ru.ru_stime - cpu0, 3)
out["mb"] = round(ru.ru_maxrss / 1024, 1)
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


def run_case(tree: Path, n: int, case: str, qfile: str, *, count: bool = False) -> dict:
    """One case in a fresh interpreter of `tree`; with `count`, under cachegrind, adding the instructions executed."""
    old = (tree / "solver" / "problem.py").exists()
    body = (OLD_API if old else NEW_API).format(root=str(tree))
    rules = RULES if case == "rules" else ["rules=[]"]
    code = CASE.format(root=str(tree), n=n, case=case, qfile=qfile, rules=rules, body=body)
    cmd = [sys.executable, "-c", code]
    if count:
        cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", *cmd]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=tree)
    if out.returncode != 0:
        raise RuntimeError(f"{tree} {n} {case}: {out.stderr[-500:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if count:
        refs = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
        if refs is None:
            raise RuntimeError(f"{tree} {n} {case}: no instruction count in valgrind's report")
        result["instructions"] = int(refs.group(1).replace(",", ""))
    return result


def compile_tree(tree: Path) -> None:
    """Byte-compile a tree as pip does on install, so that neither side pays for compiling its sources on import
    (a checkout run with PYTHONDONTWRITEBYTECODE=1 otherwise recompiles every edited module on every run)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "solver"), str(tree / "cli.py")],
                   check=True, capture_output=True)


def answer_of(run: dict) -> dict:
    return {k: v for k, v in run.items() if k not in MEASURES}


def timed_row(base: Path, n: int, case: str, qfile: str, repeats: int) -> dict:
    runs: dict[str, list[dict]] = {"base": [], "this": []}
    for _ in range(repeats):
        for name, tree in (("base", base), ("this", ROOT)):
            runs[name].append(run_case(tree, n, case, qfile))
    answers = [answer_of(r) for r in runs["base"] + runs["this"]]
    row = {"quotes": n, "case": case,
           "base_s": min(r["s"] for r in runs["base"]), "this_s": min(r["s"] for r in runs["this"]),
           "base_cpu_s": min(r["cpu_s"] for r in runs["base"]), "this_cpu_s": min(r["cpu_s"] for r in runs["this"]),
           "base_mb": max(r["mb"] for r in runs["base"]), "this_mb": max(r["mb"] for r in runs["this"]),
           "same_answer": all(a == answers[0] for a in answers), "answer": answers[0]}
    row["change"] = f"{row['this_s'] / row['base_s'] - 1:+.0%}"
    row["cpu_change"] = f"{row['this_cpu_s'] / row['base_cpu_s'] - 1:+.0%}"
    paired = sorted(t["cpu_s"] / b["cpu_s"] for b, t in zip(runs["base"], runs["this"], strict=True))
    row["paired_cpu_change"] = f"{statistics.median(paired) - 1:+.0%}"
    return row


def counted_row(base: Path, n: int, case: str, qfile: str, pool: ThreadPoolExecutor) -> dict:
    futures = [pool.submit(run_case, tree, n, case, qfile, count=True) for tree in (base, ROOT)]
    base_run, this_run = (f.result() for f in futures)
    return {"quotes": n, "case": case, "base_instructions": base_run["instructions"],
            "this_instructions": this_run["instructions"],
            "change": f"{this_run['instructions'] / base_run['instructions'] - 1:+.1%}",
            "same_answer": answer_of(base_run) == answer_of(this_run), "answer": answer_of(base_run)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, type=Path)
    ap.add_argument("--sizes", default="10,100,1000,5000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--count", action="store_true",
                    help="count instructions under valgrind (deterministic; ~50x slower) instead of timing")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if args.count and shutil.which("valgrind") is None:
        sys.exit("--count needs valgrind on PATH")
    base = args.base.resolve()
    for tree in (base, ROOT):
        compile_tree(tree)
    rows = []
    with tempfile.TemporaryDirectory() as d, ThreadPoolExecutor(max_workers=2) as pool:
        for n in (int(s) for s in args.sizes.split(",") if s):
            qfile = str(Path(d) / f"q{n}.yaml")
            Path(qfile).write_text(yaml.safe_dump({"quotes": random_quotes(n)}))
            for case in ("plain", "rules", "explain"):
                row = (counted_row(base, n, case, qfile, pool) if args.count
                       else timed_row(base, n, case, qfile, args.repeats))
                print(json.dumps(row), flush=True)
                rows.append(row)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
