"""The chosen plan's payments by calendar quarter, as a table of the `--verbose` report (`Plan.cash_by_quarter`,
`estimate/payments.py`): what is paid in each quarter and the part that pays for bought hardware."""

from __future__ import annotations

from tabulate import tabulate

from ..inputs.units import usd
from ..solve.plan import Plan

CASH_TITLE = ("Cash by quarter (payments as they fall: bought hardware a deposit at order and the balance the "
              "payment terms' days after delivery, rented capacity billed monthly over its billed term, the rest "
              "monthly over the run):")


def cash_table(p: Plan, fmt: str = "simple") -> str:
    """The plan's payments by calendar quarter, with the part that pays for bought hardware, and their total (the
    plan's cash)."""
    quarters = p.cash_by_quarter
    bought = any(q.hardware_usd for q in quarters)
    rows = [[q.quarter, usd(q.usd)] + ([usd(q.hardware_usd) if q.hardware_usd else "-"] if bought else [])
            for q in quarters]
    rows.append(["total", usd(sum(q.usd for q in quarters))]
                + ([usd(sum(q.hardware_usd for q in quarters))] if bought else []))
    head = ["quarter", "paid"] + (["of which hardware"] if bought else [])
    return tabulate(rows, headers=head, tablefmt=fmt, colalign=("left",) + ("right",) * (len(head) - 1),
                    disable_numparse=True)


def cash_section(p: Plan, markdown: bool) -> list[str]:
    """The table under its title, as lines of the terminal report or of Markdown (none for a plan without
    payments)."""
    if not p.payments:
        return []
    fmt = "github" if markdown else "simple"
    return ["## Cash by quarter", "", CASH_TITLE, "", cash_table(p, fmt), ""] if markdown else \
        [CASH_TITLE, cash_table(p, fmt), ""]


__all__ = ["CASH_TITLE", "cash_table", "cash_section"]
