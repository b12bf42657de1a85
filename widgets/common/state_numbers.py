"""Numbers as a widget's state sends them: plain floats, rounded to ``DECIMALS``.

The page is sent short numbers; six decimals keep a nanosecond of a millisecond
(or a microsecond of a second), far below what any readout or chart shows.
"""

from __future__ import annotations

import numpy as np

DECIMALS = 6


def state_number(value: float) -> float:
    """One number for the state."""
    return round(float(value), DECIMALS)


def state_numbers(values: np.typing.ArrayLike) -> list[float]:
    """A flat list of numbers for the state (any array, flattened)."""
    return [state_number(v) for v in np.asarray(values, float).ravel()]


def state_rows(values: np.typing.ArrayLike) -> list[list[float]]:
    """A 2-D array as rows of numbers for the state."""
    return [state_numbers(row) for row in np.atleast_2d(np.asarray(values, float))]
