"""Benchmark: a what-if grid of the 200B example on each executor (`plan sweep`).

    python bench/sweep.py                      # 100 points (10 budgets x 10 deadlines): about 5 minutes on 2 cores
    python bench/sweep.py --budgets 3 --deadlines 2 --executors local,process

Runs the same units (answers/sweep.py) in this process, on a pool of 2 processes and on a local Ray cluster with 2
CPUs, checks that the three JSON answers are byte-identical, and reports wall time, speed-up over one process, and
Ray's start-up (ray.init plus one empty task) apart from its work. The machine should be otherwise idle.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from solver import collect  # noqa: E402
from solver.answers.executors import Local, Processes, Ray  # noqa: E402
from solver.answers.sweep import parse_axis, run_unit, units  # noqa: E402
from solver.inputs.problem import load_problem  # noqa: E402
from solver.render.jsonout import sweep_dict, to_json  # noqa: E402
from solver.solve.pipeline import SolveSettings  # noqa: E402


def _noop(x: int) -> int:
    return x


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--budgets", type=int, default=10)
    ap.add_argument("--deadlines", type=int, default=10)
    ap.add_argument("--executors", default="local,process,ray")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    args = ap.parse_args()
    budgets = ",".join(f"{9 + 2.4 * i:g}M" for i in range(args.budgets))
    deadlines = ",".join((dt.date(2027, 6, 1) + dt.timedelta(days=30 * i)).isoformat() for i in range(args.deadlines))
    axes = [parse_axis(f"budget.max_usd={budgets}"), parse_axis(f"schedule.deadline={deadlines}")]
    problem = load_problem(ROOT / "constraints" / "datacenter.yaml")
    work = units(problem, axes, SolveSettings())
    rows_out = []
    digests = {}
    base = None
    for name in args.executors.split(","):
        extra: dict = {}
        with collect.paused():
            if name == "ray":
                import ray
                t0 = time.perf_counter()
                ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
                ray.get(ray.remote(_noop).remote(1))
                extra["startup_s"] = round(time.perf_counter() - t0, 2)
                ex: object = Ray(None, args.workers)
            else:
                ex = Local() if name == "local" else Processes(args.workers)
            t0 = time.perf_counter()
            rows = ex.map(run_unit, work)  # type: ignore[attr-defined]
            seconds = time.perf_counter() - t0
            if name == "ray":
                ray.shutdown()
        text = to_json(sweep_dict(problem, axes, rows))
        digests[name] = hashlib.sha256(text.encode()).hexdigest()[:16]
        base = base or seconds
        row = {"executor": name, "workers": 1 if name == "local" else args.workers, "points": len(work),
               "seconds": round(seconds, 2), "speedup": round(base / seconds, 2), "sha256": digests[name],
               "statuses": {s: sum(r.status == s for r in rows) for s in sorted({r.status for r in rows})}, **extra}
        print(json.dumps(row), flush=True)
        rows_out.append(row)
    print(json.dumps({"identical": len(set(digests.values())) == 1}))
    if args.json:
        Path(args.json).write_text(json.dumps(rows_out, indent=1) + "\n")


if __name__ == "__main__":
    main()
