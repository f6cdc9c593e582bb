"""Payments as they fall: a plan's cash as dated amounts, and by calendar quarter.

A plan's cash (`cost.py`: what is paid or committed) is the sum of its cash lines; this module says *when* each is
paid. A month is the cost model's month of 730 hours (`HOURS_PER_MONTH`), its payments fall on calendar dates (the
same day of each following month, or the month's last day when it has no such day):

- **bought hardware** — the servers, their network share and the hot spares bought with them: H_q, the hardware
  price of quote q's nodes = price × nodes × (1 + f)(1 + s) (f the network share of a multi-node cluster, s the hot
  spares per node). A deposit D_q = d_q × H_q on the order date, the balance H_q − D_q on the delivery date + t_q
  days (net terms); d = `money.deposit_pct` / 100 and t = `money.payment_terms_days`, or the quote's own
  `deposit_pct` and `payment_terms_days`;
- **rented capacity** — a cloud or managed plan's `compute` and `spares`, split over its quotes by price × nodes ×
  billed months: a bill at the start of each month of quote q's billed term B_q = max(run months, commit months)
  (`solve/plan.billed_months`), from the start: B_q bills of 1/B_q of its share (a last, partial month in
  proportion). A reservation bills its whole term however short the run;
- **holding bought hardware** — `support`, `facility` (cash for a colocation cage) and what the hardware lines hold
  beyond H (the hot spares' support and hall): monthly in arrears from the first delivery to the finish;
- **one-off lines** — `porting` and `rules`: on the start date;
- **every other cash line** — energy, storage, transfers, orchestration, operations, recovery, and the parts failures
  and the run's spread add: monthly in arrears over the run, at the end of each month from the start, the last
  share on the finish.

Each line's payments sum to its cash (the last payment of a line is what its earlier ones leave), so the payments
add up to the plan's cash. Quarters are calendar quarters (`2027-Q2`), every quarter from the first payment to the
last, each with the part that pays for bought hardware (deposits and balances).

The deposit's cost of capital (the cost line `deposit_capital`, `cost.deposit_capital_per_dollar`): a deposit is
paid L_q days before its hardware arrives (the quote's lead time at `assumptions.confidence`, the plan's order to
delivery), so it costs D_q × cost of capital %/yr × L_q / 365. The balance's net terms are cash timing only: the
cost of capital of the hardware is charged from delivery (`capital`). Sources: catalogs/assumptions.yaml
`money.deposit_pct` (deposits [nvidia-h200-prepayment], [gerlt-deposits]; none on credit terms) and
`money.payment_terms_days` (net 30: [supermicro-net30], [dell-payment-terms]).
"""

from __future__ import annotations

import calendar
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta

from ..inputs.assumptions import MoneyA
from ..inputs.catalog import Quote
from ..inputs.program import quarter_bounds, quarter_of
from ..inputs.units import HOURS_PER_MONTH

DAYS_PER_MONTH = HOURS_PER_MONTH / 24.0
"""The cost model's month in days (730 hours)."""
HARDWARE_LINES = ("compute", "network_storage", "spares")
"""Cash lines of bought hardware: its price (deposit and balance), and for the spares their support and hall."""
RENTED_LINES = ("compute", "spares")
"""Cash lines of rented capacity, billed monthly over each quote's billed term."""
HELD_LINES = ("support", "facility")
"""Cash lines of holding bought hardware, paid monthly from its first delivery to the finish."""
ONE_OFF_LINES = ("porting", "rules")
"""Cash lines paid once, on the start date (porting is done before it; a rule's `add_usd` is a one-off)."""


@dataclass(frozen=True)
class PaymentTerms:
    """When a purchase is paid: `deposit_pct` % of its price at order, the rest `payment_terms_days` after
    delivery."""

    deposit_pct: float
    payment_terms_days: float

    @property
    def deposit_share(self) -> float:
        return self.deposit_pct / 100.0


def quote_terms(q: Quote, money: MoneyA) -> PaymentTerms:
    """A bought quote's payment terms: its own `deposit_pct` and `payment_terms_days`, else the assumptions'."""
    return PaymentTerms(money.deposit_pct if q.deposit_pct is None else q.deposit_pct,
                        money.payment_terms_days if q.payment_terms_days is None else q.payment_terms_days)


def deposit_share_days(q: Quote, money: MoneyA, confidence: str) -> float:
    """d × L of a bought quote: its deposit share times the whole days from order to delivery (its lead time at the
    confidence the schedule uses, rounded up as the plan's dates are); 0 for rented capacity, and when capital
    costs nothing (the line is then absent)."""
    if q.mode != "buy" or money.cost_of_capital_pct_per_year <= 0:
        return 0.0
    return quote_terms(q, money).deposit_share * math.ceil(q.lead_days(confidence))


def deposit_capital_usd(deposit_usd: float, cost_of_capital_pct_per_year: float, days: float) -> float:
    """What a deposit costs while its hardware is on order: deposit × cost of capital %/yr × days / 365."""
    return deposit_usd * cost_of_capital_pct_per_year / 100.0 * days / 365.0


@dataclass(frozen=True)
class Order:
    """The bought nodes of one quote: their hardware price (servers, network share, hot spares), order and
    delivery dates, and payment terms."""

    ref: str
    hardware_usd: float
    ordered: date
    delivered: date
    terms: PaymentTerms

    @property
    def deposit_usd(self) -> float:
        return self.hardware_usd * self.terms.deposit_share

    @property
    def balance_usd(self) -> float:
        return self.hardware_usd - self.deposit_usd

    @property
    def balance_due(self) -> date:
        return self.delivered + timedelta(days=math.ceil(self.terms.payment_terms_days - 1e-9))

    @property
    def order_to_delivery_days(self) -> int:
        return (self.delivered - self.ordered).days


@dataclass(frozen=True)
class Billing:
    """The rented nodes of one quote: their share of the rented-capacity lines and their billed months."""

    ref: str
    weight: float
    """price × nodes × billed months: the share of `compute` and `spares` its bills carry."""
    billed_months: float


@dataclass(frozen=True)
class Spend:
    """What a plan's payments are made of: its cash lines (dollars), dates, and purchases or rentals."""

    cash: tuple[tuple[str, float], ...]
    start: date
    finish: date
    run_days: float
    purchases: tuple[Order, ...] = ()
    rentals: tuple[Billing, ...] = ()


@dataclass(frozen=True)
class Payment:
    """One dated amount: `what` is `deposit`, `balance`, `bill` (rented capacity), `monthly` or `once`."""

    day: date
    usd: float
    line: str
    """The cash line it pays (`hardware` for a deposit or a balance)."""
    what: str
    ref: str = ""
    """The quote of a deposit, a balance or a bill."""

    @property
    def hardware(self) -> bool:
        return self.what in ("deposit", "balance")


@dataclass(frozen=True)
class QuarterCash:
    """Cash paid in one calendar quarter (`2027-Q2`), with the part that pays for bought hardware."""

    quarter: str
    usd: float
    hardware_usd: float


def add_months(d: date, k: int) -> date:
    """The same day k calendar months later (the month's last day when it has no such day)."""
    y, m = divmod(d.month - 1 + k, 12)
    year, month = d.year + y, m + 1
    return date(year, month, min(d.day, calendar.monthrange(year, month)[1]))


def monthly(amount: float, first: date, months: float, *, in_advance: bool, last: date | None = None
            ) -> list[tuple[date, float]]:
    """`amount` in ⌈months⌉ payments, the k-th min(1, months − k) / months of it (the last takes what the others
    leave): in advance on first + k calendar months; in arrears on first + k + 1 months, the last on `last` (the
    end of the period). Nothing to spread (months ≤ 0): one payment, on `first` in advance, else on `last`."""
    end = last if last is not None else first
    count = max(1, math.ceil(months - 1e-9))
    if months <= 0 or count == 1:
        return [(first if in_advance else end, amount)]
    out, paid = [], 0.0
    for k in range(count):
        if k == count - 1:
            share = amount - paid
        else:
            share = amount * min(1.0, months - k) / months
            paid += share
        day = add_months(first, k) if in_advance else (end if k == count - 1 else min(add_months(first, k + 1), end))
        out.append((day, share))
    return out


def _split(amount: float, weights: list[float]) -> list[float]:
    """`amount` in proportion to `weights` (equal parts when they add to 0), the last part what the others leave."""
    total = sum(weights)
    parts = [amount * (w / total if total > 0 else 1.0 / len(weights)) for w in weights[:-1]]
    return parts + [amount - sum(parts)]


def _purchases(s: Spend, hardware_cash: float) -> list[Payment]:
    """Deposits and balances of the purchases; the hardware lines' cash beyond their price (the spares' support and
    hall) monthly from the first delivery to the finish."""
    out = []
    for p in s.purchases:
        out.append(Payment(p.ordered, p.deposit_usd, "hardware", "deposit", p.ref))
        out.append(Payment(p.balance_due, p.balance_usd, "hardware", "balance", p.ref))
    rest = hardware_cash - sum(p.hardware_usd for p in s.purchases)
    if abs(rest) > 1e-6 * max(1.0, abs(hardware_cash)):
        out += _held(s, "spares", rest)
    elif out:   # float residue of the split: on the last balance, so that the payments add up to the lines
        last = out[-1]
        out[-1] = Payment(last.day, last.usd + rest, last.line, last.what, last.ref)
    return out


def _held(s: Spend, line: str, amount: float) -> list[Payment]:
    first = min(p.delivered for p in s.purchases)
    months = max(0, (s.finish - first).days) / DAYS_PER_MONTH
    return [Payment(d, x, line, "monthly") for d, x in monthly(amount, first, months, in_advance=False,
                                                                last=s.finish)]


def _rented(s: Spend, line: str, amount: float) -> list[Payment]:
    parts = _split(amount, [r.weight for r in s.rentals])
    return [Payment(d, x, line, "bill", r.ref) for r, part in zip(s.rentals, parts, strict=True)
            for d, x in monthly(part, s.start, r.billed_months, in_advance=True)]


def payments(s: Spend) -> tuple[Payment, ...]:
    """Every payment of the plan (module docstring), in date order (then line, then quote: the same order for the
    same inputs)."""
    out: list[Payment] = []
    lines = dict(s.cash)
    if s.purchases:
        out += _purchases(s, sum(lines.pop(n, 0.0) for n in HARDWARE_LINES))
        for n in HELD_LINES:
            if n in lines:
                out += _held(s, n, lines.pop(n))
    elif s.rentals:
        for n in RENTED_LINES:
            if n in lines:
                out += _rented(s, n, lines.pop(n))
    run_months = s.run_days / DAYS_PER_MONTH
    for n, amount in lines.items():
        if n in ONE_OFF_LINES:
            out.append(Payment(s.start, amount, n, "once"))
        else:
            out += [Payment(d, x, n, "monthly") for d, x in monthly(amount, s.start, run_months, in_advance=False,
                                                                    last=s.finish)]
    return tuple(sorted((p for p in out if p.usd != 0.0), key=lambda p: (p.day, p.line, p.ref, p.what)))


def by_quarter(paid: Iterable[Payment]) -> tuple[QuarterCash, ...]:
    """The payments by calendar quarter, every quarter from the first payment to the last (empty ones at 0)."""
    spend: dict[str, float] = {}
    hardware: dict[str, float] = {}
    for p in paid:
        label = quarter_of(p.day)
        spend[label] = spend.get(label, 0.0) + p.usd
        if p.hardware:
            hardware[label] = hardware.get(label, 0.0) + p.usd
    if not spend:
        return ()
    labels = sorted(spend)
    out, day = [], quarter_bounds(labels[0])[0]
    while quarter_of(day) <= labels[-1]:
        label = quarter_of(day)
        out.append(QuarterCash(label, spend.get(label, 0.0), hardware.get(label, 0.0)))
        day = quarter_bounds(label)[1]
    return tuple(out)


def quarters_of(cash: Mapping[str, float], payments_: Iterable[Payment]) -> tuple[QuarterCash, ...]:
    """`by_quarter`, checked to add up to the cash lines it places (a bug here would misstate when money goes
    out)."""
    got = by_quarter(payments_)
    total = sum(cash.values())
    if abs(sum(q.usd for q in got) - total) > 1e-6 * max(1.0, abs(total)):
        raise AssertionError(f"payments add up to {sum(q.usd for q in got):,.2f}, not the cash {total:,.2f}")
    return got


__all__ = ["PaymentTerms", "Order", "Billing", "Spend", "Payment", "QuarterCash", "quote_terms",
           "deposit_share_days", "deposit_capital_usd", "add_months", "monthly", "payments", "by_quarter",
           "quarters_of", "DAYS_PER_MONTH"]
