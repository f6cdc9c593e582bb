"""Is the chosen plan a property of the problem or of the dice? Every bundled single-run example solved at 10,000
and 100,000 scenarios (and any other counts given): the chosen option, its nodes, the objective and its sampling
error at each.

    python bench/stability.py                       # 10,000 and 100,000
    python bench/stability.py --counts 2000,10000,100000

Issue 38's requirement: the same plan at 10,000 and 100,000 on every example (tests/test_scenarios.py checks two
of them at the small end). Results are quoted in bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--counts", default="10000,100000")
    args = ap.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    same = True
    for f in sorted((ROOT / "constraints").glob("*.yaml")):
        if "workload" not in yaml.safe_load(f.read_text()):   # programs have `workloads:`
            continue
        rows = []
        for n in counts:
            t0 = time.perf_counter()
            r = subprocess.run([sys.executable, str(ROOT / "cli.py"), "solve", str(f), "--scenarios", str(n),
                                "--format", "json"], capture_output=True, text=True, cwd=ROOT)
            d = json.loads(r.stdout)
            p = d.get("plan") or {}
            risk = p.get("risk") or {}
            rows.append((n, p.get("option"), p.get("nodes"), risk.get("objective_usd"),
                         risk.get("objective_std_error_usd"), round(time.perf_counter() - t0, 2)))
        plans = {(o, k) for _n, o, k, *_ in rows}
        same = same and len(plans) == 1
        for n, o, k, obj, se, s in rows:
            print(f"{f.name:<34} {n:>7,} scenarios  {str(o):<28} {str(k):>4} nodes  objective {obj}  ± {se}  {s} s")
        print(f"{'':<34} {'same plan' if len(plans) == 1 else 'DIFFERENT PLANS'}")
    print("every example: the same plan at every count" if same else "some example changed its plan")


if __name__ == "__main__":
    main()
