"""When a quote's capacity is ordered, when it arrives, how long it waits, and how late it may come.

The schedule uses one lead-time figure per quote (`assumptions.confidence`, p90 by default): a quote's capacity is
*ready* `ready_offset` days after its order (lead time at that confidence, plus installation for bought hardware).
The plan's *planned start* is the latest of its floors (earliest start, porting, every used quote's readiness, plus
the rules' delays); orders are placed so as to meet it:

- Rented capacity (cloud, managed) is requested as soon as the rules' delays (validation, approvals) are over: at
  day `delay`. Nothing is billed before the start, so there is no reason to wait.
- Bought hardware is paid for and held from delivery, so it is ordered just in time — `ready_offset` days before the
  planned start — unless the quote expires first: then it is ordered on its last valid day and waits
  (`wait_days`) between readiness and the start. Waiting is therefore charged only when the quote forces it.

The real lead time L is uncertain: lognormal through the quote's p50 and p90, capped at a high quantile
(`assumptions.lead_time_cap_quantile`: later than that an order is cancelled and re-sourced;
`cost.expected_excess_days`). The *allowance* is the time between the order and the planned start that delivery
(and installation) may take; the expected slip past the planned start is E[max(0, L − allowance)] days. Scheduling
on p90 leaves only the tail beyond p90; capacity ordered long before the start (beyond the cap) leaves none.
"""

from __future__ import annotations

import math
from datetime import date

from ..inputs.assumptions import Assumptions, MoneyA
from ..inputs.catalog import Quote
from .cost import expected_excess_days, slip_premium


def install_days(mode: str, accel_class: str, a: Assumptions) -> float:
    """Days from delivery to production: racking, cabling, burn-in for bought hardware; none for rented."""
    return float(a.install_days[accel_class]) if mode == "buy" else 0.0  # type: ignore[index]


def ready_offset(q: Quote, accel_class: str, a: Assumptions) -> int:
    """Days from order to usable capacity: lead time at the confidence, plus installation."""
    return math.ceil(q.lead_days(a.confidence) + install_days(q.mode, accel_class, a))


def order_by_day(q: Quote, as_of: date) -> int | None:
    """The last day (after `as_of`) the quote can be ordered at its price; None when it no longer binds (an
    expired quote the user chose to use with --allow-expired)."""
    day = (q.valid_until - as_of).days
    return day if day >= 0 else None


def order_day(q: Quote, start_day: int, delay_days: int, offset: int, order_by: int | None) -> int:
    """The day the capacity is ordered for a plan that starts on `start_day` (see module docstring)."""
    if q.mode != "buy":
        return delay_days
    just_in_time = start_day - offset
    return just_in_time if order_by is None else min(order_by, just_in_time)


def wait_days(q: Quote, start_day: int, offset: int, order_by: int | None) -> int:
    """Days bought hardware is ready before the planned start because the quote had to be ordered by its
    `valid_until`; 0 for rented capacity."""
    if q.mode != "buy" or order_by is None:
        return 0
    return max(0, start_day - order_by - offset)


def allowance_days(q: Quote, accel_class: str, a: Assumptions, start_day: int, delay_days: int,
                   order_by: int | None) -> float:
    """Days between the order and the planned start left for delivery (installation taken out)."""
    return allowance_with(q, start_day, delay_days, ready_offset(q, accel_class, a),
                          install_days(q.mode, accel_class, a), order_by)


def allowance_with(q: Quote, start_day: int, delay_days: int, offset: int, install: float,
                   order_by: int | None) -> float:
    """`allowance_days` given the quote's ready offset and installation days (a model computes them once)."""
    return start_day - order_day(q, start_day, delay_days, offset, order_by) - install


def slip_for(q: Quote, a: Assumptions, money: MoneyA, allowance: float) -> float:
    """The quote's delivery-slip premium in dollars when `allowance` days are left for its delivery."""
    return slip_premium(q.lead_time_days, q.lead_time_p90_days, allowance, money, a.lead_time_cap_quantile)


def quote_slip(q: Quote, accel_class: str, a: Assumptions, money: MoneyA, start_day: int, delay_days: int,
               order_by: int | None) -> float:
    """The quote's delivery-slip premium in dollars for a plan starting on `start_day`."""
    return slip_for(q, a, money, allowance_days(q, accel_class, a, start_day, delay_days, order_by))


__all__ = ["expected_excess_days", "install_days", "ready_offset", "order_by_day", "order_day", "wait_days",
           "allowance_days", "allowance_with", "slip_for", "quote_slip"]
