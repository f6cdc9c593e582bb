"""Benchmark: the deadline as a chance constraint (`policy.deadline_confidence`) on catalog-shaped quote lists.

    python bench/risk.py                         # 1,000 quotes at confidences none, 0.8, 0.9 (a few minutes)
    python bench/risk.py --quotes 200 --confidence 0.9

Quotes are copies of the bundled catalog's priced, valid quotes with seeded spreads (price ×0.8–1.25, lead time
p50 ×0.5–2 with the p90/p50 ratio kept or 1.5–4 where the quote has none, capacity ×0.25–4, validity ±90 days,
each copy its own fabric), so every accelerator, system, mode and contract appears in the proportions of real
quotes. For each confidence it solves `constraints/datacenter.yaml` against them (the bundled quotes replaced)
and reports the wall time of the whole solve, the status, the plan and its P(deadline) over the problem's own
scenarios. The target of issue 11: proven optimal in under 5 s at 1,000 quotes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from solver import collect  # noqa: E402
from solver.answers.risk import draws_for, plan_risk  # noqa: E402
from solver.inputs.catalog import load_catalog  # noqa: E402
from solver.inputs.problem import load_problem  # noqa: E402
from solver.solve.pipeline import SolveSettings, prepare, solve_problem  # noqa: E402

AS_OF = dt.date(2026, 12, 1)


def catalog_shaped_quotes(n: int, seed: int = 11, sources: bool = False) -> list[dict]:
    """n copies of bundled quotes (round robin over a seeded shuffle) with the spreads of the module docstring; each
    copy's `source` is a short fixed text, or with `sources` its bundled quote's own (100–300 characters, which a
    YAML writer wraps over several lines)."""
    cat = load_catalog()
    base = [q for q in cat.quotes.values() if q.priced and not q.expired(AS_OF)]
    rng = random.Random(seed)
    rng.shuffle(base)
    out = []
    for i in range(n):
        q = base[i % len(base)].model_dump(mode="json", exclude_none=True)
        factor = rng.uniform(0.8, 1.25)
        for f in ("price_usd", "usd_per_gpu_hour", "usd_per_month"):
            if f in q:
                q[f] = round(q[f] * factor, 2)
        p50 = max(1.0, q["lead_time_days"] * rng.uniform(0.5, 2.0))
        ratio = q["lead_time_p90_days"] / q["lead_time_days"] if q.get("lead_time_p90_days") and \
            q["lead_time_days"] > 0 else rng.uniform(1.5, 4.0)
        q["lead_time_days"], q["lead_time_p90_days"] = round(p50, 1), round(min(p50 * ratio, 900.0), 1)
        q["max_nodes"] = max(q.get("min_nodes", 1), round(q["max_nodes"] * rng.choice([0.25, 0.5, 1, 2, 4])))
        valid = dt.date.fromisoformat(q["valid_until"]) + dt.timedelta(days=rng.randint(-90, 90))
        q["valid_until"] = max(valid, AS_OF + dt.timedelta(days=7)).isoformat()
        q["id"] = f"{q['id']}-c{i:05d}"
        if q["mode"] != "buy":
            q["fabric"] = f"fab-{i:05d}"
        if not sources:
            q["source"] = "bench (catalog-shaped copy)"
        out.append(q)
    return out


def run(n: int, confidence: float | None, qfile: Path) -> dict:
    sets = ["rules=[]"] + ([f"policy.deadline_confidence={confidence}"] if confidence else [])
    with collect.paused():
        t0 = time.perf_counter()
        problem = load_problem(ROOT / "constraints" / "datacenter.yaml", sets, quotes=[str(qfile)])
        settings = SolveSettings(alternatives=False)
        ctx = prepare(problem, settings)
        result = solve_problem(problem, settings, ctx)
        seconds = time.perf_counter() - t0
        plan = result.plan
        p = plan_risk(ctx, plan, draws_for(problem)).p_deadline if plan else None
    cuts = sum(len(c) for c in ctx.cuts.values())
    return {"quotes": n, "confidence": confidence, "status": result.status, "seconds": round(seconds, 2),
            "plan": [plan.option, plan.nodes, round(plan.total_cost), plan.finish.isoformat()] if plan else None,
            "p_deadline": p, "cuts": cuts,
            "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3, 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quotes", type=int, default=1000)
    ap.add_argument("--confidence", default="none,0.8,0.9")
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        qfile = Path(d) / "quotes.yaml"
        qfile.write_text(yaml.safe_dump({"quotes": catalog_shaped_quotes(args.quotes)}))
        for c in args.confidence.split(","):
            row = run(args.quotes, None if c == "none" else float(c), qfile)
            print(json.dumps(row), flush=True)
            rows.append(row)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
