"""Benchmark: programs (several workloads on one calendar) with `plan solve`, end to end (issue 13's targets).

    python bench/program.py                      # the cases below, one process each
    python bench/program.py --json bench/program-results.json

Cases (each the console command in full — loading, the per-workload estimates, the CP-SAT solves, the independent
check, rendering — with wall time, exit status, candidate counts and peak memory, max RSS of that process):

- `program-200b`: constraints/program-200b.yaml (5 workloads, bought lots, a power step, two quarterly caps);
- `program-10`: bench/program-10.yaml (10 workloads, 36 months at daily resolution, the bundled catalog);
- `single`: constraints/datacenter.yaml, a single-workload file, which must solve no slower than before programs
  existed (compare with the same case run from the previous commit: `--root` of a checkout of it);
- `risk-200b`, `frontier-200b`, `sensitivity-200b`: `plan risk`, `plan frontier` and `plan sensitivity` of the
  5-workload example (sensitivity's sweeps on the default process pool: its peak is the parent's alone);
- `confidence-200b`, `confidence-10`: the two programs under `policy.deadline_confidence=0.8` (up-front bounds and
  lazy cuts); `confidence-frontier-200b` its frontier (every date met at the confidence); `confidence-200b-0.9`,
  infeasible at 0.9 (the TPU bake-off's port), explained with the policy-widening check and the confident
  relaxation of its deadline.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CASES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "program-200b": ("solve", "constraints/program-200b.yaml", ()),
    "program-10": ("solve", "bench/program-10.yaml", ()),
    "single": ("solve", "constraints/datacenter.yaml", ()),
    "risk-200b": ("risk", "constraints/program-200b.yaml", ()),
    "frontier-200b": ("frontier", "constraints/program-200b.yaml", ()),
    "sensitivity-200b": ("sensitivity", "constraints/program-200b.yaml", ()),
    "confidence-200b": ("solve", "constraints/program-200b.yaml", ("--set", "policy.deadline_confidence=0.8")),
    "confidence-10": ("solve", "bench/program-10.yaml", ("--set", "policy.deadline_confidence=0.8")),
    "confidence-frontier-200b": ("frontier", "constraints/program-200b.yaml",
                                 ("--set", "policy.deadline_confidence=0.8")),
    "confidence-200b-0.9": ("solve", "constraints/program-200b.yaml", ("--set", "policy.deadline_confidence=0.9"))}

RUN = """
import json, resource, sys, time
sys.path.insert(0, {root!r})
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]  # run that checkout's code
t = time.perf_counter()
from cli import main
try:
    code = main.main({args!r}, standalone_mode=False)
except SystemExit as e:
    code = e.code
wall = time.perf_counter() - t
print(json.dumps({{"wall_s": round(wall, 2), "exit": code,
                   "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}}), file=sys.stderr)
"""


def run_case(root: Path, name: str, command: str, path: str, extra: tuple[str, ...], timeout: float) -> dict:
    args = [command, str(root / path) if name == "single" else str(ROOT / path), *extra, "--format", "json"]
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", RUN.format(root=str(root), args=args)], cwd=root,
                          capture_output=True, text=True, timeout=timeout)
    stats = json.loads(proc.stderr.strip().splitlines()[-1])
    row = {"case": name, **stats, "process_s": round(time.perf_counter() - t, 2)}
    try:
        out = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return row
    row["status"] = out.get("status")
    if "program" in out and out["program"]:
        row["candidates"] = sum(out["candidates"]["per_workload"].values())
        row["cost_usd"] = out["program"]["cost_usd"]
        row["bought_lots"] = sum(p["lots"] for p in out["program"]["purchases"])
    elif out.get("plan"):
        row["cost_usd"] = out["plan"].get("total_cost_usd")
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--root", default=str(ROOT), help="checkout whose `plan` runs the single-workload case")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    rows = []
    for name in a.cases.split(","):
        for _ in range(a.repeat):
            row = run_case(Path(a.root) if name == "single" else ROOT, name, *CASES[name], a.timeout)
            print(json.dumps(row), flush=True)
            rows.append(row)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
