"""What a solved program says about its decisions and its cash: each decision gate (`decide_after`) and when the
gated hardware is ordered or committed, the cash committed per quarter, and the warnings the plan carries.

The figures come from the decoded plan (`solve/program.py`), in days from `as_of`; the renderers read them by
attribute (`render/program.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from ..inputs.program import ProgramProblem, quarter_of
from ..model.program import rent_per_day
from ..solve.program import ProgramPlan


@dataclass(frozen=True)
class DecisionGate:
    """A workload whose hardware is decided after others finish (`decide_after`), as the plan carries it out."""

    workload: str
    after: tuple[str, ...]
    gates_finish: int
    """The day the last of its gates finishes: nothing of its hardware is ordered or committed before."""
    ordered: int | None
    """On owned nodes: the first order day of a lot of its system (None on rented capacity)."""
    commit_by: int | None
    """On a rented quote: the last day to commit it for the planned start, within the quote's validity (the start
    less the lead time and the rules' delays); None on owned nodes."""
    quote: str | None
    system: str


def decision_gates(pp: ProgramProblem, plan: ProgramPlan) -> tuple[DecisionGate, ...]:
    """Every gated workload of the program (file order) with the days its plan orders or commits hardware."""
    out = []
    for w in pp.spec.workloads:
        if not w.decide_after:
            continue
        run = plan.run(w.id)
        c = run.candidate
        gate = max(plan.run(g).end_day for g in w.decide_after)
        ordered = min((p.order_day for p in plan.purchases if p.quote.system == c.system), default=None) \
            if c.owned else None
        commit_by = None
        if c.commit_by is not None:
            commit_by = min(c.commit_by, run.start_day - c.commit_days)
        out.append(DecisionGate(w.id, tuple(w.decide_after), gate, ordered, commit_by, c.quote, c.system))
    return tuple(out)


def quarter_spend(pp: ProgramProblem, plan: ProgramPlan) -> dict[str, float]:
    """Cash committed per calendar quarter: a lot's capex in the quarter it is ordered, rent (the model's daily
    rate, `rent_per_day`) on each day a rental runs."""
    spend: dict[str, float] = {}
    for p in plan.purchases:
        label = quarter_of(pp.as_of + timedelta(days=p.order_day))
        spend[label] = spend.get(label, 0.0) + p.capex_usd
    for r in plan.runs:
        for d in range(r.start_day, r.end_day):
            label = quarter_of(pp.as_of + timedelta(days=d))
            spend[label] = spend.get(label, 0.0) + rent_per_day(r.candidate)
    return spend


def program_warnings(pp: ProgramProblem, plan: ProgramPlan) -> tuple[str, ...]:
    """The plan's warnings: spend in a quarter without a cap while `budget.per_quarter_usd` caps others (a
    quarter the caps were not written for, such as an order placed before the first capped quarter)."""
    caps = pp.spec.budget.per_quarter_usd
    if not caps:
        return ()
    capped = ", ".join(sorted(caps))
    return tuple(f"UNCAPPED QUARTER: the plan commits ${usd / 1e6:,.2f}M in {label}, a quarter without a cap "
                 f"(budget.per_quarter_usd caps {capped}); add {label} to the caps if finance limits it too"
                 for label, usd in sorted(quarter_spend(pp, plan).items())
                 if label not in caps and round(usd) > 0)


__all__ = ["DecisionGate", "decision_gates", "quarter_spend", "program_warnings"]
