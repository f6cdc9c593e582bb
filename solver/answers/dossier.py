"""`plan report`: everything the page forwarded to finance or leadership shows, gathered from the answers the other
commands give — the solve with its explanations (`report.solve_and_explain`, what `plan solve` prints), the chosen
plan's risk (`risk.analyse_plan`, what `plan risk` prints), the time–cost frontier (`frontier.frontier`, what `plan
frontier` prints) — plus what only the page needs: the chosen plan's cash by calendar quarter, the bibliography its
quotes cite and the assumptions the problem file overrides. Nothing here recomputes a figure another answer gives.

Cash by quarter is derived from the plan's cash lines and dates, by the convention of a program's quarters
(`render/program.all_quarters`) read for one run: bought hardware (its `compute` and `network_storage` cash) is paid
in the quarter it is delivered (the README: "paid for on delivery"), split over its quotes by their price × nodes;
one-off lines (`porting`, `rules`) fall on the start; every other cash line is spread evenly over the days it is
billed — the planned run, or a rented commitment's billed term when that is longer. It says when the money goes out,
to the day; it is not an invoice schedule.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from importlib import metadata

from ..estimate.cost import HOURS_PER_MONTH
from ..inputs.assumptions import bundled_leaves
from ..inputs.bibliography import Entry, cited, load_bibliography
from ..inputs.program import quarter_bounds, quarter_of
from ..inputs.problem import Problem
from ..solve.pipeline import SolveSettings
from ..solve.plan import Plan, Result, billed_months
from .frontier import FrontierPoint, frontier
from .report import solve_and_explain
from .risk import RiskReport, analyse_plan

UP_FRONT = ("compute", "network_storage", "spares")
"""Cash lines of bought hardware paid in full on delivery (hot spares are bought with the nodes they stand in
for; a rented plan's spares are billed as its nodes are, over the run)."""
AT_START = ("porting", "rules")
"""Cash lines paid once, when the run starts (porting is done before it; a rule's `add_usd` is a one-off)."""
DAYS_PER_MONTH = HOURS_PER_MONTH / 24.0


@dataclass(frozen=True)
class QuarterCash:
    """Cash paid in one calendar quarter (`2027-Q2`), with the part that pays for bought hardware."""

    quarter: str
    cash_usd: float
    hardware_usd: float


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
        return metadata.version("plan")
    except metadata.PackageNotFoundError:
        return "unknown"


def gather(problem: Problem, settings: SolveSettings, points: int = 6, bins: int = 12) -> Dossier:
    """Solve and explain the problem, take its chosen plan apart by scenarios, and trace its frontier (`points`
    finish dates); without a plan, the explanation alone (no risk, no frontier)."""
    ctx, result = solve_and_explain(problem, settings)
    plan = result.plan
    risk = analyse_plan(ctx, plan, bins) if plan is not None else None
    found = tuple(frontier(problem, settings, points)) if plan is not None else ()
    return Dossier(problem, result, risk, found, cash_by_quarter(plan) if plan is not None else None,
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


def _spread(spend: dict[str, float], first: date, days: float, amount: float) -> None:
    """`amount` spread evenly over `days` days from `first`, added to each quarter it overlaps."""
    if amount == 0:
        return
    if days <= 0:
        spend[quarter_of(first)] = spend.get(quarter_of(first), 0.0) + amount
        return
    rate = amount / days
    day, left = first, days
    while left > 1e-9:
        nxt = quarter_bounds(quarter_of(day))[1]
        span = min(left, float((nxt - day).days))
        spend[quarter_of(day)] = spend.get(quarter_of(day), 0.0) + rate * span
        left -= span
        day = nxt


def cash_by_quarter(plan: Plan) -> tuple[QuarterCash, ...]:
    """The plan's cash by calendar quarter (module docstring), every quarter from the first payment to the last;
    the quarters add up to the plan's cash."""
    spend: dict[str, float] = {}
    hardware: dict[str, float] = {}
    bought = [q for q in plan.quotes if q.mode == "buy"]
    run_days = plan.training_days
    billed = max([billed_months(q, plan.training_days * 24.0) * DAYS_PER_MONTH for q in plan.quotes
                  if q.mode != "buy"] or [run_days])
    for name, amount in plan.lines.cash.items():
        if name in UP_FRONT and bought:
            weight = sum(q.price * q.nodes for q in bought) or 1.0
            for q in bought:
                share = amount * q.price * q.nodes / weight
                when = q.delivered or q.ready
                _spread(spend, when, 0, share)
                _spread(hardware, when, 0, share)
        elif name in AT_START:
            _spread(spend, plan.start, 0, amount)
        else:
            _spread(spend, plan.start, max(run_days, billed) if name in UP_FRONT else run_days, amount)
    if not spend:
        return ()
    labels = sorted(spend)
    out, day = [], quarter_bounds(labels[0])[0]
    while quarter_of(day) <= labels[-1]:
        label = quarter_of(day)
        out.append(QuarterCash(label, spend.get(label, 0.0), hardware.get(label, 0.0)))
        day = quarter_bounds(label)[1]
    return tuple(out)


__all__ = ["Dossier", "QuarterCash", "Citation", "Override", "gather", "cash_by_quarter", "citations", "overrides",
           "tool_version"]
