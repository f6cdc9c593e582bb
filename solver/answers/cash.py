"""A program's payments as they fall, by calendar quarter (`estimate/payments.py`'s conventions, read for a
program's plan).

A program's quarterly caps (`budget.per_quarter_usd`) limit what it *commits* in a quarter — a lot's capex in the
quarter it is ordered, rent on the days a run uses it (`program_gates.quarter_spend`, what the model constrains) —
and this is what it *pays*, quarter by quarter:

- each bought lot: a deposit (`money.deposit_pct`, or its quote's own, of its capex) on its order day, the balance
  `money.payment_terms_days` (or its quote's) after delivery; the rest of its cash (support, a colocation cage's
  hall for the days held) monthly in arrears from delivery to the program's end;
- each run: its cash monthly over its days — rented capacity billed at the start of each month of the run, a run on
  owned nodes (energy, operations) in arrears;
- porting, once per software stack: on the first start of a run on it.

The payments add up to the program's cash. The deposits' cost of capital is not charged in a program (a lot's cost
is its held-days table: `estimate/program_holding.py`); a single run's plan charges it (`deposit_capital`).
"""

from __future__ import annotations

from datetime import date, timedelta

from ..estimate.payments import DAYS_PER_MONTH, Order, Payment, QuarterCash, by_quarter, monthly, quote_terms
from ..inputs.program import ProgramProblem
from ..solve.program import ProgramPlan


def program_payments(pp: ProgramProblem, plan: ProgramPlan) -> tuple[Payment, ...]:
    """Every payment of the program's plan (module docstring), in date order."""
    money = pp.first.assumptions.values.money
    catalog = pp.first.catalog.quotes

    def day(d: int) -> date:
        return pp.as_of + timedelta(days=d)

    end = day(plan.end_day)
    out: list[Payment] = []
    for p in plan.purchases:
        qid = p.quote.quote
        lot = Order(qid, p.capex_usd, day(p.order_day), day(p.delivered_day), quote_terms(catalog[qid], money))
        out += [Payment(lot.ordered, lot.deposit_usd, "hardware", "deposit", qid),
                Payment(lot.balance_due, lot.balance_usd, "hardware", "balance", qid)]
        held = (end - lot.delivered).days / DAYS_PER_MONTH
        out += [Payment(d, x, "holding", "monthly", qid)
                for d, x in monthly(p.cash_usd - p.capex_usd, lot.delivered, held, in_advance=False, last=end)]
    for r in plan.runs:
        c = r.candidate
        months = (r.end_day - r.start_day) / DAYS_PER_MONTH
        what = "monthly" if c.owned else "bill"
        out += [Payment(d, x, r.workload, what, c.quote or "")
                for d, x in monthly(c.cash_usd, day(r.start_day), months, in_advance=not c.owned,
                                    last=day(r.end_day))]
    for key, usd in plan.porting:
        first = min((r.start_day for r in plan.runs if r.candidate.porting_key == key), default=0)
        out.append(Payment(day(first), usd, f"porting {key}", "once"))
    return tuple(sorted((p for p in out if p.usd != 0.0), key=lambda p: (p.day, p.line, p.ref, p.what)))


def program_quarters(pp: ProgramProblem, plan: ProgramPlan) -> tuple[QuarterCash, ...]:
    """The program's payments by calendar quarter (they add up to its cash)."""
    return by_quarter(program_payments(pp, plan))


__all__ = ["program_payments", "program_quarters"]
