"""`plan report`: everything the page forwarded to finance or leadership shows, gathered from the answers the other
commands give — the solve with its explanations (`report.solve_and_explain`, what `plan solve` prints), the chosen
plan's risk (`risk.analyse_plan`, what `plan risk` prints), the time–cost frontier (`frontier.frontier`, what `plan
frontier` prints) — plus what only the page needs: the chosen plan's cash by calendar quarter, the bibliography its
quotes cite and the assumptions the problem file overrides. Nothing here recomputes a figure another answer gives.

Cash by quarter is the chosen plan's payments as they fall (`estimate/payments.py`, `Plan.cash_by_quarter`):
deposits at order, balances the payment terms' days after delivery, rented capacity billed monthly over its billed
term, everything else monthly over the run; the quarters add up to the plan's cash.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata

from .. import DISTRIBUTION
from ..estimate.payments import QuarterCash
from ..inputs.assumptions import bundled_leaves
from ..inputs.bibliography import Entry, cited, load_bibliography
from ..inputs.problem import Problem
from ..solve.pipeline import SolveSettings
from ..solve.plan import Plan, Result
from .frontier import FrontierPoint, frontier
from .report import solve_and_explain
from .risk import RiskReport, analyse_plan


@dataclass(frozen=True)
class Citation:
    """A bibliography entry a used quote cites, with the quotes that cite it."""

    id: str
    entry: Entry | None
    """None when the id is not in the bibliography (a user's own quote file may cite anything)."""
    quotes: tuple[str, ...]


@dataclass(frozen=True)
class Override:
    """An assumption the problem (or a `--set`) overrides: its path, value and where it was stated."""

    path: str
    """The assumption's path under the problem's `risk:` section (`risk.money.delay_cost_usd_per_day`)."""
    value: object
    where: str
    default: object
    """The bundled value it replaces."""


@dataclass(frozen=True)
class Dossier:
    """Everything `plan report` shows (module docstring), read by `render/report_html.py`."""

    problem: Problem
    result: Result
    risk: RiskReport | None
    frontier: tuple[FrontierPoint, ...]
    quarters: tuple[QuarterCash, ...] | None
    """None when the plan's cash cannot be placed in time (no plan)."""
    citations: tuple[Citation, ...]
    overrides: tuple[Override, ...]
    version: str


def tool_version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"


def gather(problem: Problem, settings: SolveSettings, points: int = 6, bins: int = 12) -> Dossier:
    """Solve and explain the problem, take its chosen plan apart by scenarios, and trace its frontier (`points`
    finish dates); without a plan, the explanation alone (no risk, no frontier)."""
    ctx, result = solve_and_explain(problem, settings)
    plan = result.plan
    risk = analyse_plan(ctx, plan, bins) if plan is not None else None
    found = tuple(frontier(problem, settings, points)) if plan is not None else ()
    return Dossier(problem, result, risk, found, plan.cash_by_quarter if plan is not None else None,
                   citations(plan) if plan is not None else (), overrides(problem), tool_version())


def citations(plan: Plan) -> tuple[Citation, ...]:
    """The bibliography ids the plan's quotes cite, in order of first citation."""
    bib = load_bibliography()
    by_id: dict[str, list[str]] = {}
    for q in plan.quotes:
        for cid in cited(q.source):
            users = by_id.setdefault(cid, [])
            if q.id not in users:
                users.append(q.id)
    return tuple(Citation(cid, bib.get(cid), tuple(users)) for cid, users in by_id.items())


def overrides(problem: Problem) -> tuple[Override, ...]:
    """The assumptions the problem's `risk:` section or a `--set` overrides, by path."""
    out = []
    bundled = bundled_leaves()[1]
    for path, leaf in sorted(problem.assumptions.leaves.items(), key=lambda kv: kv[0]):
        if leaf.overridden:
            where = leaf.source.removeprefix("overridden: ")
            default = bundled[path].value if path in bundled else None
            out.append(Override(".".join(("risk", *(str(p) for p in path))), leaf.value, where, default))
    return tuple(out)


__all__ = ["Dossier", "QuarterCash", "Citation", "Override", "gather", "citations", "overrides", "tool_version"]
