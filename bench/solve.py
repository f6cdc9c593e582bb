"""Benchmark: `plan solve` on problems of growing size, side by side with exhaustive enumeration.

    python bench/solve.py                 # the default sweep (about ten minutes on 2 cores)
    python bench/solve.py --sizes 10,100 --brute-limit 60

For each size it writes a quote file of N random quotes (seeded, so runs are comparable) over every system of the
bundled catalog, each with capacity up to 4,096 nodes, and solves the 200B problem of constraints/datacenter.yaml
against it, with and without rules. It reports universe (estimates) and model build time, CP-SAT solve time,
whether the optimum was proven, peak memory, and the exhaustive enumeration's time and optimum where it finishes
within --brute-limit seconds (they must agree). It also times the end-to-end CLI on the bundled examples
(median of 5, import time included) and the explanation of an infeasible problem at each size.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
import resource
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from solver import collect  # noqa: E402
from solver.answers.report import solve_and_explain  # noqa: E402
from solver.inputs.catalog import load_catalog  # noqa: E402
from solver.inputs.problem import load_problem  # noqa: E402
from solver.model.builder import build  # noqa: E402
from solver.solve.brute import brute_force  # noqa: E402
from solver.solve.pipeline import SolveSettings, prepare, solve_problem  # noqa: E402

SMALL_GRID = ["risk.node_grid.fine_until=12", "risk.node_grid.max_nodes=12", "risk.node_grid.step_until_512=4",
              "schedule.deadline=2029-12-31", "budget.max_usd=10B"]
RULES = ["rules=[{name: no-consumer-at-scale, when: {class: consumer, gpus: {gt: 64}}, then: forbid}, "
         "{name: amd-validation, when: {vendor: amd}, then: {delay_days: 45, add_usd: 400k}}, "
         "{name: prefer-owned, when: {mode: cloud}, then: {add_pct: 10}}]"]


def random_quotes(n: int, seed: int = 7) -> list[dict]:
    cat = load_catalog()
    rng = random.Random(seed)
    systems = sorted(cat.systems)
    out = []
    for i in range(n):
        sid = systems[i % len(systems)]
        mode = rng.choice(["buy", "cloud", "managed"])
        q: dict = {"id": f"bench-{i:05d}", "system": sid, "mode": mode, "vendor": f"vendor-{i % 37}",
                   "min_nodes": 1, "max_nodes": rng.choice([8, 64, 512, 4096]),
                   "lead_time_days": rng.randint(7, 200), "quoted_on": "2026-11-01", "valid_until": "2027-12-31",
                   "kind": rng.choice(["list", "street", "negotiated", "estimate"]), "source": "bench (synthetic)"}
        per_node = cat.systems[sid].per_node
        if mode == "buy":
            q["price_usd"] = round(per_node * rng.uniform(2_000, 60_000))
        elif mode == "cloud":
            q["usd_per_gpu_hour"] = round(rng.uniform(0.3, 12.0), 2)
        else:
            q["usd_per_month"] = round(per_node * rng.uniform(1_000, 8_000))
            q["commit_months"] = rng.choice([0, 3, 12])
        out.append(q)
    return out


def run_size(n: int, rules: bool, brute_limit: float, tmp: Path) -> dict:
    qfile = tmp / f"quotes-{n}.yaml"
    qfile.write_text(yaml.safe_dump({"quotes": random_quotes(n)}))
    sets = RULES if rules else ["rules=[]"]
    with collect.paused():  # as the console script runs a whole command
        t0 = time.perf_counter()
        problem = load_problem(ROOT / "constraints" / "datacenter.yaml", sets, quotes=[str(qfile)])
        settings = SolveSettings(alternatives=False)
        t1 = time.perf_counter()
        ctx = prepare(problem, settings)
        t2 = time.perf_counter()
        result = solve_problem(problem, settings, ctx)
        t3 = time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB
    u = ctx.universe
    plan = result.plan
    row = {"quotes": n, "rules": rules, "options": len(u.options),
           "points": sum(len(o.points) for o in u.options), "load_s": round(t1 - t0, 2),
           "estimates_s": round(t2 - t1, 2), "solve_s": round(t3 - t2, 2), "total_s": round(t3 - t0, 2),
           "status": result.status, "objective": result.objective,
           "plan": [plan.option, plan.nodes, round(plan.total_cost), plan.finish.isoformat()] if plan else None,
           "peak_mb": round(peak / 1e6, 1)}
    # Exhaustive enumeration over the same options and quotes: every split of every node count over every quote
    # explodes at 4,096 nodes, so the side-by-side runs on the same problem with node counts up to SMALL_GRID.
    small_problem = load_problem(ROOT / "constraints" / "datacenter.yaml", sets + SMALL_GRID, quotes=[str(qfile)])
    sctx = prepare(small_problem, settings)
    b = build(small_problem, sctx.universe, sctx.screen, sctx.unit)
    tc = time.perf_counter()
    small = solve_problem(small_problem, settings, sctx)
    row["small_cpsat_s"] = round(time.perf_counter() - tc, 2)
    row["small_objective"] = small.objective
    tb = time.perf_counter()
    try:
        cand = _with_timeout(lambda: brute_force(small_problem, sctx.universe, sctx.unit, cost_hi=b.cost_hi,
                                                 allocation_limit=10 ** 9), brute_limit)
        row["brute_s"] = round(time.perf_counter() - tb, 2)
        row["brute_objective"] = cand.objective if cand else None
        row["agree"] = (cand.objective if cand else None) == small.objective
    except TimeoutError:
        row["brute_s"] = None
        row["brute_objective"] = f"not finished in {brute_limit:g} s"
    return row


def _with_timeout(fn, seconds: float):
    import signal

    def handler(signum, frame):
        raise TimeoutError

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def explain_time(n: int, tmp: Path) -> dict:
    qfile = tmp / f"quotes-{n}.yaml"
    if not qfile.exists():
        qfile.write_text(yaml.safe_dump({"quotes": random_quotes(n)}))
    with collect.paused():  # as the console script runs a whole command
        t0 = time.perf_counter()
        problem = load_problem(ROOT / "constraints" / "infeasible-budget.yaml", ["budget.max_usd=1k"],
                               quotes=[str(qfile)])
        _ctx, r = solve_and_explain(problem, SolveSettings())
    return {"quotes": n, "status": r.status, "conflict": (r.explanation or {}).get("conflict"),
            "relaxation": [(x["group"], x["to"]) for x in (r.explanation or {}).get("relaxations", [])],
            "seconds": round(time.perf_counter() - t0, 2)}


def cli_median(file: str, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, str(ROOT / "cli.py"), "solve", str(ROOT / file)], capture_output=True,
                       check=False)
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times), 2)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10,100,1000,5000")
    ap.add_argument("--brute-limit", type=float, default=120.0)
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)  # N,rules: one case in this process
    args = ap.parse_args()
    if args.one:
        n, rules = args.one.split(",")
        with tempfile.TemporaryDirectory() as d:
            if rules == "explain":
                print(json.dumps(explain_time(int(n), Path(d))))
            else:
                print(json.dumps(run_size(int(n), rules == "1", args.brute_limit, Path(d))))
        return
    sizes = [int(s) for s in args.sizes.split(",") if s]  # --sizes "" measures the CLI medians only
    print(f"machine: {platform.machine()}, {platform.python_version()}, cpus: {__import__('os').cpu_count()}")
    rows = {"cli": {}, "solve": [], "explain": []}
    for f in sorted(p.name for p in (ROOT / "constraints").glob("*.yaml")):
        rows["cli"][f] = cli_median(f"constraints/{f}")
        print(f"cli median {f}: {rows['cli'][f]} s", flush=True)
    for n in sizes:  # each case in its own process: peak memory is per case, nothing is shared between cases
        for case in ("0", "1", "explain"):
            out = subprocess.run([sys.executable, __file__, "--one", f"{n},{case}", "--brute-limit",
                                  str(args.brute_limit)], capture_output=True, text=True, check=False)
            row = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else {
                "quotes": n, "case": case, "error": out.stderr.strip().splitlines()[-1:]}
            rows["explain" if case == "explain" else "solve"].append(row)
            print(json.dumps(row), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
