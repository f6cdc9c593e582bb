"""Human quantities in YAML: `200B`, `4T`, `150M`, `"$150M"`, `150_000_000`, `410k`.

Suffixes are decimal (K=1e3, M=1e6, B=G=1e9, T=1e12), the convention of model cards ("70B parameters",
"15.6T tokens") and price sheets. Anything else is an error that shows an example of what works.
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator

HOURS_PER_MONTH = 730.0
"""Hours of the month every figure in months is read with (8,760 / 12): commitments, terms, managed prices."""

_SUFFIX = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
_RE = re.compile(r"^\$?\s*((?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+(?:_[0-9]+)*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)"
                 r"\s*([kKmMbBgGtT]?)$")
MAX_MAGNITUDE = 1e18


def parse_quantity(value: Any, example: str = "70B") -> float:
    """Parse a number with an optional K/M/B/T suffix and optional leading `$`."""
    if isinstance(value, bool):
        raise ValueError(f"expected a number like {example}, got {value!r}")
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:
            raise ValueError(f"a number with {len(str(abs(int(value))))} digits is absurdly large "
                             f"(limit {MAX_MAGNITUDE:.0e})") from None
    elif isinstance(value, str):
        match = _RE.match(value.strip())
        if not match:
            raise ValueError(f"expected a number like {example}, got {value!r}")
        digits, suffix = match.groups()
        number = float(digits.replace("_", "").replace(",", "")) * _SUFFIX[suffix.lower()]
    else:
        raise ValueError(f"expected a number like {example}, got {type(value).__name__}")
    if not math.isfinite(number):
        raise ValueError(f"expected a finite number like {example}, got {value!r}")
    if abs(number) > MAX_MAGNITUDE:
        raise ValueError(f"{value!r} is absurdly large (limit {MAX_MAGNITUDE:.0e})")
    return number


def _positive(v: float) -> float:
    if v <= 0:
        raise ValueError(f"expected a positive number, got {v:g}")
    return v


def _non_negative(v: float) -> float:
    if v < 0:
        raise ValueError(f"expected a number >= 0, got {v:g}")
    return v


def _count(example: str) -> BeforeValidator:
    return BeforeValidator(lambda v: parse_quantity(v, example))


Count = Annotated[float, _count("70B"), AfterValidator(_positive)]
"""A positive count such as parameters or tokens."""
Money = Annotated[float, _count("150M"), AfterValidator(_positive)]
"""A positive amount of US dollars."""
MoneyOrZero = Annotated[float, _count("400k"), AfterValidator(_non_negative)]
PositiveFloat = Annotated[float, _count("0.08"), AfterValidator(_positive)]
NonNegFloat = Annotated[float, _count("0"), AfterValidator(_non_negative)]


DATE_MIN = date(1990, 1, 1)
DATE_MAX = date(2100, 12, 31)
"""Dates `plan` accepts anywhere (problem files, catalogs, `--set`): from before the first accelerator in the
catalog to well past any plannable horizon. Outside this range date arithmetic stops meaning anything (a year-1
`as_of` would use 2026 quotes 2,025 years early) or overflows (`9999-12-30` plus a lead time)."""


def _as_date(v: Any) -> date:
    if isinstance(v, date) and not isinstance(v, datetime):
        d = v
    elif isinstance(v, str):
        try:
            d = date.fromisoformat(v.strip())
        except ValueError:
            raise ValueError(f"expected a date like 2027-01-04, got {v!r}") from None
    else:
        raise ValueError(f"expected a date like 2027-01-04, got {v!r}")
    if not DATE_MIN <= d <= DATE_MAX:
        raise ValueError(f"date {d} is outside the range plan works with ({DATE_MIN} to {DATE_MAX})")
    return d


Date = Annotated[date, BeforeValidator(_as_date)]


def usd(amount: float) -> str:
    """Compact dollars for reports: $1.21M, $410k, $999. A figure never shows 1000 of a unit."""
    a = abs(amount)
    sign = "-" if amount < 0 and round(a) > 0 else ""
    if round(a / 1e9, 2) >= 1:
        return f"{sign}${a / 1e9:.2f}B"
    if round(a / 1e6, 2) >= 1:
        return f"{sign}${a / 1e6:.2f}M"
    if round(a / 1e3) >= 10:
        return f"{sign}${a / 1e3:.0f}k"
    if round(a) >= 1000:
        return f"{sign}${a / 1e3:.1f}k"
    return f"{sign}${a:,.0f}"


def si(n: float) -> str:
    """200e9 -> 200B, 4e12 -> 4T (for parameters and tokens)."""
    for div, suf in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(n) >= div:
            v = n / div
            return f"{v:.3g}{suf}"
    return f"{n:.3g}"
