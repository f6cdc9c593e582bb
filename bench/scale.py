"""Benchmark: `plan solve` end to end on marketplace-sized, catalog-shaped quote lists (issue 12's targets).

    python bench/scale.py                                   # 1,000 and 10,000 quotes, four cases each
    python bench/scale.py --sizes 1000 --cases base,budget-5M
    python bench/scale.py --sizes 100000 --timeout 600 --json bench/scale-results.json
    python bench/scale.py --formats json --command "explain --why-not h100-sxm"   # or "frontier"

Quotes are `bench/risk.py`'s catalog-shaped copies of the bundled catalog (every accelerator, system, mode and
contract in the proportions of real quotes; price ×0.8–1.25, lead time ×0.5–2, capacity ×0.25–4, validity ±90 days,
each rented copy on its own fabric), written to one file and passed with `--quotes` to the 200B problem of
`constraints/datacenter.yaml` (its rules off, so the copies are not named by them). Each case is one process
running the console command in full (`python cli.py`, the `plan` script's own entry point) — loading, the solve,
the runners-up, the reasons every other option cannot work, the risk table, and for an infeasible problem its
explanation — and reports wall time, exit status, the plan or conflict, and peak memory: the max RSS of the
command's own process, and with `--pss` (Linux) the peak of the proportional set size summed over it and the
processes it forks to solve pairs side by side (`--processes`), sampled every 10 ms — shared pages counted once,
so it is the memory the command takes from the machine. Reading /proc that often takes CPU from the forked
searches, so quote times from a run without `--pss`. (Until 2026-12-03 a case called `cli.main` in a Python
process of its own: that process then collected garbage and tore the interpreter down, which the `plan` script
skips, 0.5–0.6 s more at 1,000 quotes than the command a user runs.) Cases:

- base: as written; deadline: `schedule.deadline=2027-03-01`; budget-20M / budget-5M: `budget.max_usd`;
  deadline-infeasible: `schedule.deadline=2027-01-20`; discount / discount-5M: a −10 % rule on rented capacity
  (`add_pct`), alone and with the $5M budget (these three only with `--cases`).

`--formats yaml,json` runs each case on the quotes written as YAML and as JSON (`*.json`, read by the json module).
`--sources` keeps each copy's bundled `source` text (100–300 characters) instead of a short fixed one: PyYAML's
writer wraps such texts over two to four lines, as a real feed's YAML has them.

The package's bytecode is compiled first, as `pip install .` does and as any run after the first does where
`PYTHONDONTWRITEBYTECODE` is not set: a checkout run with it set (this sandbox sets it) compiles every module of
the package on every start, 0.15–0.2 s that no installed `plan` pays. `--no-compile` measures that case too.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import shlex
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from risk import catalog_shaped_quotes  # noqa: E402

DISCOUNT = "rules=[{name: rebate, when: {mode: cloud}, then: {add_pct: -10}}]"
CASES = {"base": [], "deadline": ["schedule.deadline=2027-03-01"], "budget-20M": ["budget.max_usd=20M"],
         "budget-5M": ["budget.max_usd=5M"], "deadline-infeasible": ["schedule.deadline=2027-01-20"],
         "discount": [DISCOUNT], "discount-5M": [DISCOUNT, "budget.max_usd=5M"]}
DEFAULT_CASES = "base,deadline,budget-20M,budget-5M"
"""The issue's four cases; the others (an infeasible deadline, a 10 % rebate on rented capacity alone and with the
$5M budget) on request with `--cases`."""

def _tree_pss_kb(pid: int) -> int:
    """Proportional set size of a process and its descendants, in kB (0 where /proc cannot tell)."""
    total = 0
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                total += int(line.split()[1])
    except OSError:
        return total
    return total + sum(_tree_pss_kb(int(k)) for k in kids)


def run_case(qfile: Path, sets: list[str], timeout: float, extra: list[str] | None = None, pss: bool = False,
             command: str = "solve") -> dict:
    verb, *options = shlex.split(command)
    args = [verb, str(ROOT / "constraints" / "datacenter.yaml"), "--quotes", str(qfile), "--set", "rules=[]",
            "--format", "json"] + [a for s in sets for a in ("--set", s)] + options + (extra or [])
    with tempfile.TemporaryFile("w+") as out_f, tempfile.TemporaryFile("w+") as err_f:  # no pipe to fill up
        t0 = time.perf_counter()
        # The console command itself (`entry`: it leaves by os._exit, without tearing the interpreter down), as the
        # `plan` script runs it; wait4 gives this child's own peak resident size.
        proc = subprocess.Popen([sys.executable, str(ROOT / "cli.py"), *args], stdout=out_f, stderr=err_f, text=True,
                                cwd=ROOT)
        peak_pss = 0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > timeout:
                proc.kill()
                os.wait4(proc.pid, 0)
                proc.returncode = -9
                return {"status": f"killed after {timeout:g} s", "seconds": None}
            if pss:
                peak_pss = max(peak_pss, _tree_pss_kb(proc.pid))
            time.sleep(0.01)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out_f.seek(0)
        err_f.seek(0)
        p = subprocess.CompletedProcess(proc.args, proc.returncode, out_f.read(), err_f.read())
    out = json.loads(p.stdout) if p.stdout.strip().startswith("{") else {}
    plan = out.get("plan") or {}
    expl = out.get("explanation") or {}
    return {"status": out.get("status"), "exit": p.returncode, "seconds": round(wall, 2),
            "peak_mb": round(usage.ru_maxrss / 1e3),
            "peak_pss_mb_all_processes": round(peak_pss / 1e3) if peak_pss else None,
            "plan": [plan["option"], plan["nodes"], plan["cost_usd"]["total"]] if plan else None,
            "conflict": expl.get("conflict"), "proven": expl.get("proven") if expl else None}


def compile_package() -> None:
    """Byte-compile `solver/` and `cli.py` into their `__pycache__` folders (see the module docstring)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "solver"), str(ROOT / "cli.py")],
                   check=True, capture_output=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--cases", default=DEFAULT_CASES, help=f"of {', '.join(CASES)}")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds before a case is killed")
    ap.add_argument("--formats", default="yaml", help="yaml, json or yaml,json: how the quotes are written")
    ap.add_argument("--processes", type=int, default=None, help="passed to plan solve (default: its own)")
    ap.add_argument("--pss", action="store_true", help="sample the memory of the process tree (costs CPU)")
    ap.add_argument("--command", default="solve",
                    help='the plan command and its options, e.g. "frontier" or "explain --why-not h100-sxm"')
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    ap.add_argument("--no-compile", action="store_true", help="do not byte-compile the package first")
    ap.add_argument("--sources", action="store_true",
                    help="keep each copy's bundled source text (long, wrapped in YAML) instead of a short one")
    args = ap.parse_args()
    if not args.no_compile:
        compile_package()
    rows = []
    extra = ["--processes", str(args.processes)] if args.processes else []
    with tempfile.TemporaryDirectory() as d:
        for n in [int(s) for s in args.sizes.split(",") if s]:
            quotes = catalog_shaped_quotes(n, sources=args.sources)
            for fmt in args.formats.split(","):
                qfile = Path(d) / f"quotes-{n}.{fmt}"
                if fmt == "json":
                    qfile.write_text(json.dumps({"quotes": quotes}, default=str))
                else:
                    qfile.write_text(yaml.dump({"quotes": quotes}, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                                               sort_keys=False))
                for case in args.cases.split(","):
                    row = {"quotes": n, "format": fmt, "case": case, "command": args.command,
                           **run_case(qfile, CASES[case], args.timeout, extra, args.pss, args.command)}
                    print(json.dumps(row), flush=True)
                    rows.append(row)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
