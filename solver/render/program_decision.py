"""What the bake-offs are worth (`answers/program_decision.py`) as JSON (`program.decision`) and as text lines."""

from __future__ import annotations

import math
from typing import Any

from ..answers.program_decision import ProgramDecision
from ..inputs.units import usd


def decision_dict(d: ProgramDecision) -> dict[str, Any]:
    """`program.decision`: dollars rounded to the dollar, shares to 4 places (the same inputs give the same bytes)."""
    r = d.residual
    return {
        "workload": d.workload,
        "value_of_bakeoffs_usd": round(d.value_usd),
        "standard_error_usd": round(d.standard_error_usd),
        "expected_cost_now_usd": round(d.now_usd),
        "expected_cost_after_usd": round(d.after_usd),
        "information_usd": round(d.information_usd),
        "information_standard_error_usd": round(d.information_error_usd),
        "bakeoffs_cost_usd": round(d.gate_usd),
        "perfect_information_usd": round(d.perfect_information_usd),
        "decide_now": {"platform": d.now_platform, "plan": d.now_choice},
        "platform_shares": {acc: round(share, 4) for acc, share in d.shares},
        "residual_sigma": {"common": r.common, "platform": r.platform, "total": round(math.hypot(r.common, r.platform),
                                                                                        4)},
        "scenarios": d.scenarios,
        "seed": d.seed,
        "late_usd_per_day": round(d.late_usd_per_day),
        "plans": d.actions,
        "bakeoffs": [{"id": b, "accelerator": acc, **_worth(d, b)} for b, acc in d.bakeoffs],
    }


def _worth(d: ProgramDecision, bakeoff: str) -> dict[str, Any]:
    w = next((w for w in d.per_bakeoff if w.id == bakeoff), None)
    if w is None:
        return {"value_usd": None, "standard_error_usd": None}
    return {"value_usd": round(w.value_usd), "standard_error_usd": round(w.standard_error_usd)}


def _signed(x: float) -> str:
    return ("+" if x >= 0 else "-") + usd(abs(x))


def decision_text(d: ProgramDecision) -> list[str]:
    """A few lines under the decision gates: the choice now, the choice after, the value and its parts."""
    sigma = math.hypot(d.residual.common, d.residual.platform)
    verdict = "worth their cost and delay" if d.value_usd - 2 * d.standard_error_usd > 0 else \
        "not worth their cost and delay" if d.value_usd + 2 * d.standard_error_usd < 0 else \
        "within sampling error of break-even"
    shares = ", ".join(f"{acc} {share:.0%}" for acc, share in d.shares)
    lines = [f"What the bake-offs are worth ({d.scenarios:,} scenarios of each platform's MFU; after a bake-off, "
             f"σ {sigma:.2f} of {d.workload}'s MFU there stays unknown; a late day {usd(d.late_usd_per_day)}):",
             f"  decide now, without them: {d.now_choice}: expected {usd(d.now_usd)}",
             f"  decide after them: expected {usd(d.after_usd)}; the platform chosen: {shares}",
             f"  value of the bake-offs {_signed(d.value_usd)} ± {usd(d.standard_error_usd)} ({verdict}): what "
             f"they tell is worth {usd(d.information_usd)} (perfect knowledge: {usd(d.perfect_information_usd)}), "
             f"their runs and the wait cost {usd(d.gate_usd)}"]
    if d.per_bakeoff:
        each = ", ".join(f"{w.id} {_signed(w.value_usd)}" for w in d.per_bakeoff)
        lines.append(f"  each one's own worth (what deciding after the others alone loses without it): {each}")
    return lines


__all__ = ["decision_dict", "decision_text"]
