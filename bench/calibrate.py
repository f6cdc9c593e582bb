"""Calibration of the throughput estimate: centre and spread fitted on published runs, judged on runs kept out.

    python bench/calibrate.py

1. Every run of catalogs/calibration.yaml is estimated with the centre switched off (no calibration factor) to
   read its residual y = ln(real MFU / modelled MFU).
2. On the fitting part (two runs of every three, `calibration.fitting_part`), candidate error models are compared by
   leave-one-out (coverage of P10-P90, median width, median error, interval score) and the chosen one — the centre
   by the chip's FLOPs per byte of memory bandwidth, its slope varying with the model's size — is fitted: its
   coefficients and σ are what catalogs/assumptions.yaml carries (`uncertainty.mfu_centre`, `mfu_sigma.common`);
   the script says whether they match.
3. The product's own bands (`plan estimate`, with the catalog's assumptions) are scored on the held-out runs,
   against the previous, uncalibrated model (one spread σ = 0.30 for every run, no centre).
The README's "Calibration" section and bench/README.md quote its output.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from solver.estimate.calibration import (BandScore, check_runs, feature_scores, fit_centre,  # noqa: E402
                                         fitting_part, log_mfu_ratio, score_checks)
from solver.inputs.assumptions import load_assumptions  # noqa: E402
from solver.inputs.calibration import load_calibration  # noqa: E402
from solver.inputs.catalog import load_catalog  # noqa: E402

OFF = {"intercept": 0.0, "per_log_balance": 0.0, "per_log_balance_log_params": 0.0}
UNCALIBRATED = {"uncertainty": {"mfu_sigma": {"common": 0.30}, "mfu_centre": OFF}}
"""The model before this calibration: no centre, one spread of 0.30 for every run."""


def _row(name: str, s: BandScore) -> str:
    return (f"  {name:<34} {s.runs:>4}  {s.coverage:>6.0%}  {s.median_width:>6.2f}x  {s.median_abs_error:>7.0%}"
            f"  {s.interval_score:>6.3f}")


def main() -> None:
    cal, cat = load_calibration(), load_catalog([])
    runs = cal.gpu_hour_runs
    zero = load_assumptions({"uncertainty": {"mfu_centre": OFF}}).values
    centre = zero.uncertainty.mfu_centre
    y = [log_mfu_ratio(c) for c in check_runs(cal, cat, zero)]

    def balance(acc: str) -> float:
        a = cat.accelerators[acc]
        return float(a.bf16_tflops.value) / float(a.memory_bw_tbs.value)

    feats = {"balance": [math.log(balance(r.accelerator) / centre.balance_ref) for r in runs],
             "size": [math.log(r.params / centre.params_ref) for r in runs],
             "scale": [math.log(r.gpus / 1024) for r in runs],
             "tokens_per_gpu": [math.log(r.tokens / r.gpus / 1e9) for r in runs]}
    feats["balance x size"] = [b * s for b, s in zip(feats["balance"], feats["size"], strict=True)]
    fit_i, held_i = fitting_part(len(runs))
    print(f"{len(runs)} published runs: {len(fit_i)} to fit, {len(held_i)} held out "
          f"({', '.join(runs[i].id for i in held_i)})")
    print(f"balance (dense BF16 FLOPs per byte) of the runs' chips: "
          f"{', '.join(sorted({f'{r.accelerator} {balance(r.accelerator):.0f}' for r in runs}))}")

    print("\nCandidate error models on the fitting part, leave-one-out (band in log MFU):")
    print(f"  {'features of the centre':<34} {'runs':>4}  {'inside':>6}  {'width':>7}  {'|error|':>7}  {'score':>6}")
    ys = [y[i] for i in fit_i]
    cands = {"none (one spread)": [], "balance": ["balance"], "balance + balance x size": ["balance", "balance x size"],
             "balance + size + balance x size": ["balance", "size", "balance x size"],
             "balance + size": ["balance", "size"],
             "balance + scale": ["balance", "scale"], "balance + tokens/GPU": ["balance", "tokens_per_gpu"],
             "size": ["size"], "scale": ["scale"]}
    scores = feature_scores(ys, {k: [[feats[f][i] for i in fit_i] for f in v] for k, v in cands.items()})
    for k, s in scores.items():
        print(_row(k, s))

    chosen = ["balance", "balance x size"]
    fit = fit_centre(ys, [[feats[f][i] for i in fit_i] for f in chosen], chosen)
    a = load_assumptions().values
    shipped = a.uncertainty.mfu_centre
    print(f"\nFitted on the fitting part: ln(real/modelled MFU) = {fit.coefficients[0]:+.3f} + ln(balance / "
          f"{centre.balance_ref:g}) x ({fit.coefficients[1]:+.3f} {fit.coefficients[2]:+.3f} ln(params / "
          f"{centre.params_ref:.0e})), sigma {fit.sigma:.3f}")
    print(f"In catalogs/assumptions.yaml:    intercept {shipped.intercept:+.3f}, per_log_balance "
          f"{shipped.per_log_balance:+.3f}, per_log_balance_log_params {shipped.per_log_balance_log_params:+.3f}, "
          f"sigma {a.uncertainty.mfu_sigma.common:.3f}; balance clamped to [{shipped.balance_min:g}, "
          f"{shipped.balance_max:g}], params to [{shipped.params_min:.2g}, {shipped.params_max:.3g}]")
    same = (round(fit.coefficients[0], 3) == round(shipped.intercept, 3)
            and round(fit.coefficients[1], 3) == round(shipped.per_log_balance, 3)
            and round(fit.coefficients[2], 3) == round(shipped.per_log_balance_log_params, 3)
            and round(fit.sigma, 3) == round(a.uncertainty.mfu_sigma.common, 3))
    print("  -> the catalog carries this fit" if same else "  -> MISMATCH: update catalogs/assumptions.yaml")

    now = check_runs(cal, cat, a)
    before = check_runs(cal, cat, load_assumptions(UNCALIBRATED).values)
    print("\nThe product's P10-P90 bands of GPU-hours (plan estimate), scored:")
    print(f"  {'model / runs':<34} {'runs':>4}  {'inside':>6}  {'width':>7}  {'|error|':>7}  {'score':>6}")
    for name, part in (("held out", held_i), ("fitting part", fit_i), ("all", list(range(len(runs))))):
        print(_row(f"calibrated, {name}", score_checks([now[i] for i in part])))
        print(_row(f"uncalibrated, {name}", score_checks([before[i] for i in part])))
    print("\nHeld-out runs:")
    for i in held_i:
        c, b = now[i], before[i]
        print(f"  {c.run.id:<20} {c.run.accelerator:<10} published {c.run.gpu_hours:>12,.0f}  estimate "
              f"{c.estimate:>12,.0f} ({c.error:+.0%}; was {b.error:+.0%})  P10-P90 {c.p10:>12,.0f}-{c.p90:<12,.0f} "
              f"{'inside' if c.inside else 'OUTSIDE'}")


if __name__ == "__main__":
    main()
