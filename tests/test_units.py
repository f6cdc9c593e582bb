"""Tests for solver/units.py: human quantities (`200B`, `$150M`, `410k`) and report formatting.

Expected values are the decimal meaning of each suffix (K=1e3, M=1e6, B=G=1e9, T=1e12, units.py docstring),
written out as arithmetic.
"""

from __future__ import annotations

import math

import pytest
from pydantic import TypeAdapter, ValidationError

from solver.inputs.units import MAX_MAGNITUDE, Count, Money, MoneyOrZero, parse_quantity, si, usd


# ---------------------------------------------------------------------------------------------- parse_quantity


@pytest.mark.parametrize("given, expected", [
    ("200B", 200 * 1e9),            # seed 000: a 200B-parameter model
    ("4T", 4 * 1e12),               # 4 trillion tokens
    ("150M", 150 * 1e6),
    ("$150M", 150 * 1e6),           # leading dollar sign on money
    ("150_000_000", 150 * 1000 * 1000),
    ("410k", 410 * 1e3),
    (1.5e9, 1.5 * 10 ** 9),         # plain YAML float passes through
    ("1,000", 1 * 1000),            # thousands separator
    ("70b", 70 * 1e9),              # suffixes are case-insensitive
    ("2G", 2 * 1e9),                # G is a synonym of B
    ("15.6T", 15.6 * 1e12),         # Llama 3 token count, decimal mantissa
    ("  405.85B  ", 405.85 * 1e9),  # surrounding whitespace is ignored
    ("$ 400k", 400 * 1e3),
    ("1e3", 1 * 1000),              # exponent notation
    ("2.5e2M", 250 * 1e6),
    (42, 42.0),                     # int
    ("0", 0.0),                     # zero parses (positivity is checked by the Count/Money types)
])
def test_parse_quantity_accepts(given, expected):
    value = parse_quantity(given)
    assert isinstance(value, float)
    assert value == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("bad", [
    "seventy",          # words
    "200 bilion",       # misspelt suffix: only single K/M/B/G/T letters are units
    "200 billion",
    "5X",               # unknown suffix
    "",                 # empty
    "   ",
    "nan",              # not a number even though float('nan') parses
    "inf",
    "-5",               # negative text
    "B",                # suffix without digits
    ".5B",              # needs a leading digit
    "$$5",
])
def test_parse_quantity_rejects_text(bad):
    with pytest.raises(ValueError, match="expected a number like"):
        parse_quantity(bad)


@pytest.mark.parametrize("bad", [True, False])
def test_parse_quantity_rejects_booleans(bad):
    # bool is a subclass of int in Python: YAML `params: yes` must not become 1.0
    with pytest.raises(ValueError, match="expected a number like"):
        parse_quantity(bad)


@pytest.mark.parametrize("bad", [None, [1], {"value": 1}])
def test_parse_quantity_rejects_other_types(bad):
    with pytest.raises(ValueError, match="expected a number like"):
        parse_quantity(bad)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_parse_quantity_rejects_non_finite_numbers(bad):
    with pytest.raises(ValueError, match="finite"):
        parse_quantity(bad)


@pytest.mark.parametrize("bad", [1e30, -1e30, "1e30", "2e9T", "1000001T"])
def test_parse_quantity_rejects_absurd_magnitudes(bad):
    with pytest.raises(ValueError, match="absurdly large"):
        parse_quantity(bad)


def test_parse_quantity_magnitude_limit_is_inclusive():
    # 1,000,000 T = 1e6 * 1e12 = 1e18, exactly the limit: accepted; one T more is rejected above
    assert MAX_MAGNITUDE == 1e18
    assert parse_quantity("1000000T") == 1e6 * 1e12


def test_parse_quantity_error_shows_the_example():
    with pytest.raises(ValueError) as err:
        parse_quantity("lots", example="150M")
    assert "150M" in str(err.value)
    assert "'lots'" in str(err.value)


# ---------------------------------------------------------------------------------------------- pydantic types


def test_count_type_parses_and_requires_positive():
    ta = TypeAdapter(Count)
    assert ta.validate_python("70B") == 70 * 1e9
    for bad in ("0", 0, -3, "seventy"):
        with pytest.raises(ValidationError):
            ta.validate_python(bad)


def test_money_types():
    assert TypeAdapter(Money).validate_python("$1.5M") == 1.5 * 1e6
    with pytest.raises(ValidationError):
        TypeAdapter(Money).validate_python("0")
    assert TypeAdapter(MoneyOrZero).validate_python("0") == 0.0
    with pytest.raises(ValidationError):
        TypeAdapter(MoneyOrZero).validate_python(-1)


# ---------------------------------------------------------------------------------------------- usd / si


@pytest.mark.parametrize("amount, expected", [
    (1.21e6, "$1.21M"),          # docstring examples
    (410e3, "$410k"),
    (999, "$999"),
    (2.5e9, "$2.50B"),           # >= 1e9: two decimals of billions
    (1_000_000_000, "$1.00B"),
    (1_000_000, "$1.00M"),       # >= 1e6: two decimals of millions
    (12_345, "$12k"),            # >= 1e4: whole thousands (12.345 -> 12)
    (10_000, "$10k"),
    (1_500, "$1.5k"),            # 1e3..1e4: one decimal of thousands
    (1_000, "$1.0k"),
    (0, "$0"),
    (42.4, "$42"),
    (-1.21e6, "-$1.21M"),        # sign before the dollar
    (-410e3, "-$410k"),
    (150e6, "$150.00M"),
])
def test_usd(amount, expected):
    assert usd(amount) == expected


@pytest.mark.parametrize("amount, expected", [
    (999_999, "$1.00M"),
    (999_999_999, "$1.00B"),
    (999.7, "$1.0k"),
])
def test_usd_rounding_at_unit_boundaries(amount, expected):
    # A compact amount should never show 1000 of a unit: it should roll over to the next unit.
    assert usd(amount) == expected


@pytest.mark.parametrize("n, expected", [
    (200e9, "200B"),
    (4e12, "4T"),
    (15.6e12, "15.6T"),
    (405.85e9, "406B"),     # 3 significant digits
    (7e6, "7M"),
    (410e3, "410K"),
    (12, "12"),
])
def test_si(n, expected):
    assert si(n) == expected


def test_parse_and_si_round_trip_for_model_sizes():
    for text in ("7B", "70B", "405B", "15T", "150M"):
        assert si(parse_quantity(text)) == text
        assert not math.isnan(parse_quantity(text))
