"""Benchmark: `plan solve` end to end on marketplace-sized, catalog-shaped quote lists (issue 12's targets).

    python bench/scale.py                                   # 1,000 and 10,000 quotes, four cases each
    python bench/scale.py --sizes 1000 --cases base,budget-5M
    python bench/scale.py --sizes 100000 --timeout 600 --json bench/scale-results.json

Quotes are `bench/risk.py`'s catalog-shaped copies of the bundled catalog (every accelerator, system, mode and
contract in the proportions of real quotes; price ×0.8–1.25, lead time ×0.5–2, capacity ×0.25–4, validity ±90 days,
each rented copy on its own fabric), written to one file and passed with `--quotes` to the 200B problem of
`constraints/datacenter.yaml` (its rules off, so the copies are not named by them). Each case is one process
running the console command in full — loading, the solve, the runners-up, the reasons every other option cannot
work, the risk table, and for an infeasible problem its explanation — and reports wall time, exit status, the plan
or conflict, and peak memory (max RSS of that process). Cases:

- base: as written; deadline: `schedule.deadline=2027-03-01`; budget-20M / budget-5M: `budget.max_usd`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from risk import catalog_shaped_quotes  # noqa: E402

CASES = {"base": [], "deadline": ["schedule.deadline=2027-03-01"], "budget-20M": ["budget.max_usd=20M"],
         "budget-5M": ["budget.max_usd=5M"]}

RUN = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
t0 = time.perf_counter()
import cli
try:
    cli.main.main({args!r}, standalone_mode=False)
    code = 0
except SystemExit as e:
    code = e.code
print(json.dumps({{"exit": code, "seconds": time.perf_counter() - t0,
                   "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3}}), file=sys.stderr)
"""


def run_case(qfile: Path, sets: list[str], timeout: float) -> dict:
    args = ["solve", str(ROOT / "constraints" / "datacenter.yaml"), "--quotes", str(qfile), "--set", "rules=[]",
            "--format", "json"] + [a for s in sets for a in ("--set", s)]
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-c", RUN.format(root=str(ROOT), args=args)], capture_output=True,
                           text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"status": f"killed after {timeout:g} s", "seconds": None}
    wall = time.perf_counter() - t0
    meta = json.loads(p.stderr.strip().splitlines()[-1])
    out = json.loads(p.stdout) if p.stdout.strip().startswith("{") else {}
    plan = out.get("plan") or {}
    expl = out.get("explanation") or {}
    return {"status": out.get("status"), "exit": meta["exit"], "seconds": round(wall, 2),
            "in_process_seconds": round(meta["seconds"], 2), "peak_mb": round(meta["peak_mb"]),
            "plan": [plan["option"], plan["nodes"], plan["cost_usd"]["total"]] if plan else None,
            "conflict": expl.get("conflict"), "proven": expl.get("proven") if expl else None}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds before a case is killed")
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for n in [int(s) for s in args.sizes.split(",") if s]:
            qfile = Path(d) / f"quotes-{n}.yaml"
            qfile.write_text(yaml.dump({"quotes": catalog_shaped_quotes(n)},
                                       Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False))
            for case in args.cases.split(","):
                row = {"quotes": n, "case": case, **run_case(qfile, CASES[case], args.timeout)}
                print(json.dumps(row), flush=True)
                rows.append(row)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
