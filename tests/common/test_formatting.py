"""Numbers as text: worked by hand, one case per rule."""

from __future__ import annotations

import dataclasses
import math

import pytest

from widgets.common.formatting import (
    COUNT,
    ITEMS,
    ITEMS_PER_SECOND,
    MILLISECONDS,
    PERCENT,
    SECONDS,
    Quantity,
    plain_number,
)


@pytest.mark.parametrize(
    ("quantity", "value", "signed", "text"),
    [
        (SECONDS, 4.0, False, "4.00 s"),
        (SECONDS, 1.005, False, "1.00 s"),  # binary 1.005 is just below: rounds down
        (MILLISECONDS, 12.345, False, "12.35 ms"),
        (MILLISECONDS, -1.5, False, "−1.50 ms"),
        (ITEMS_PER_SECOND, 1.0, True, "+1.00 items/s"),
        (ITEMS_PER_SECOND, -1.0, True, "−1.00 items/s"),
        (ITEMS_PER_SECOND, -0.004, True, "+0.00 items/s"),  # never "−0.00"
        (SECONDS, -0.004, False, "0.00 s"),
        (SECONDS, -0.006, False, "−0.01 s"),
        (PERCENT, 49.6, False, "50 %"),
        (PERCENT, -0.4, False, "0 %"),
        (COUNT, 3.0, False, "3"),
        (COUNT, -2.0, True, "−2"),
        (Quantity("x", digits=3), 0.0015, False, "0.002 x"),
    ],
)
def test_quantity_text(quantity: Quantity, value: float, signed: bool, text: str) -> None:
    assert quantity(value, signed=signed) == text


@pytest.mark.parametrize("value", [None, math.inf, -math.inf, math.nan])
def test_missing_or_infinite_is_a_dash(value) -> None:
    assert SECONDS(value) == "—"
    assert COUNT(value, signed=True) == "—"


def test_default_digits_and_js_spec() -> None:
    assert Quantity("s").digits == 2
    assert SECONDS.js_spec() == {"digits": 2, "unit": "s"}
    assert PERCENT.js_spec() == {"digits": 0, "unit": "%"}
    assert COUNT.js_spec() == {"digits": 0, "unit": ""}


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, ""),
        (4.0, "4"),
        (2.5, "2.5"),
        (0.001, "0.001"),
        (1234567.0, "1.23457e+06"),
        (-3.0, "-3"),
        (12, "12"),
    ],
)
def test_plain_number(value, text: str) -> None:
    assert plain_number(value) == text


def test_unsigned_by_default_and_the_declared_units() -> None:
    assert SECONDS(4.0) == "4.00 s"
    assert ITEMS(1.0) == "1.00 items"
    assert MILLISECONDS(2.0) == "2.00 ms"


def test_a_quantity_is_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        SECONDS.digits = 3  # type: ignore[misc]
