"""Calibration report: the time estimate against published training runs (catalogs/calibration.yaml).

    python bench/calibrate.py            # per-run table, summary, the MFU-spread scan with leave-one-out coverage

Prints, for every run with published GPU-hours, the estimate at the median MFU, its P10-P90 band over the
uncertainty model's scenarios and whether the published figure falls inside; then, for a grid of common MFU spreads,
the share of runs inside their band, and a leave-one-out check of the spread's choice (the smallest spread with at
least 80% of the other runs inside, tested on the run left out). The README's "Calibration" section quotes it.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from solver.estimate.calibration import check_runs, summarise  # noqa: E402
from solver.estimate.compute import utilisation  # noqa: E402
from solver.inputs.assumptions import load_assumptions  # noqa: E402
from solver.inputs.calibration import load_calibration  # noqa: E402
from solver.inputs.catalog import load_catalog  # noqa: E402

GRID = [0.20, 0.25, 0.275, 0.30, 0.325, 0.35, 0.40, 0.45, 0.50]
TARGET = 0.80


def main() -> None:
    cal, cat = load_calibration(), load_catalog([])
    a = load_assumptions().values
    checks = check_runs(cal, cat, a)
    print(f"{'run':<20} {'accelerator':<10} {'GPUs':>6} {'published':>12} {'estimate':>12} {'error':>7}  "
          f"{'P10':>12} {'P90':>12}  inside  basis")
    for c in checks:
        r = c.run
        print(f"{r.id:<20} {r.accelerator:<10} {r.gpus:>6} {r.gpu_hours:>12,.0f} {c.estimate:>12,.0f} "
              f"{c.error:>+7.0%}  {c.p10:>12,.0f} {c.p90:>12,.0f}  {'yes' if c.inside else 'NO ':<6}  {r.basis}")
    s = summarise(checks)
    print(f"\n{s.runs} runs: median |error| {s.median_abs_error:.0%}, worst {s.worst_abs_error:.0%} ({s.worst_run}), "
          f"inside P10-P90 {s.share_inside:.0%}, median ln(published/estimate) {s.median_log_ratio:+.3f}")
    inside: dict[float, list[bool]] = {}
    for sigma in GRID:
        aa = load_assumptions({"uncertainty": {"mfu_sigma": {"common": sigma}}}).values
        inside[sigma] = [c.inside for c in check_runs(cal, cat, aa)]
        print(f"common MFU sigma {sigma:.3f}: {sum(inside[sigma]) / len(checks):.0%} inside")
    held = 0
    for k in range(len(checks)):
        others = [s for s in GRID if sum(v for i, v in enumerate(inside[s]) if i != k) / (len(checks) - 1) >= TARGET]
        chosen = others[0] if others else GRID[-1]
        held += inside[chosen][k]
    print(f"leave-one-out: {held} of {len(checks)} runs ({held / len(checks):.0%}) inside the band of a spread "
          "chosen without them")
    print("\nPublished MFU against the model's (where the accelerator is in the catalog):")
    for m in cal.mfu_points:
        if m.accelerator is None or m.accelerator not in cat.accelerators:
            print(f"  {m.id:<26} published {m.mfu}  ({m.hardware}: not in the catalog)")
            continue
        acc = cat.accelerators[m.accelerator]
        u = utilisation(software=acc.software, accel_class=acc.cls, params=m.params, seq_len=4096, precision="bf16",
                        has_fp8=acc.fp8_tflops.value is not None, method="pretrain", c=a.compute)
        print(f"  {m.id:<26} published {m.mfu}  model {u.value:.3f} per node (before scale-out)")


if __name__ == "__main__":
    main()
