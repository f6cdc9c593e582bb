"""Where `plan solve FILE`'s wall time goes: interpreter start, imports, and the run itself.

Each sample is a fresh interpreter that imports what the command imports, then runs the command in-process
(`cli.main`); the end-to-end column times `python cli.py solve FILE` from outside, like bench/solve.py.

    python bench/startup.py constraints/datacenter.yaml --runs 9
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SNIPPET = """
import time, sys, io, contextlib, json
t0 = time.perf_counter()
import cli
import solver.inputs.problem, solver.solve.pipeline, solver.answers.report, solver.render.text
t1 = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    try:
        cli.main(["solve", sys.argv[1]], standalone_mode=False)
    except SystemExit:
        pass
t2 = time.perf_counter()
print(json.dumps({"imports": t1 - t0, "run": t2 - t1}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?", default="constraints/datacenter.yaml")
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()
    rows: dict[str, list[float]] = {"interpreter": [], "imports": [], "run": [], "end_to_end": []}
    for _ in range(args.runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        rows["interpreter"].append(time.perf_counter() - t)
        out = subprocess.run([sys.executable, "-c", SNIPPET, args.file], capture_output=True, text=True, cwd=ROOT,
                             check=True)
        d = json.loads(out.stdout.strip().splitlines()[-1])
        rows["imports"].append(d["imports"])
        rows["run"].append(d["run"])
        t = time.perf_counter()
        subprocess.run([sys.executable, "cli.py", "solve", args.file], capture_output=True, cwd=ROOT, check=False)
        rows["end_to_end"].append(time.perf_counter() - t)
    for k, v in rows.items():
        print(f"{k:12s} median {statistics.median(v):.3f} s   min {min(v):.3f}   max {max(v):.3f}")


if __name__ == "__main__":
    main()
