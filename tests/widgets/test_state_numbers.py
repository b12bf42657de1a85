"""The numbers a widget's state sends: floats rounded to six decimals."""

from __future__ import annotations

import numpy as np

from widgets.common.state_numbers import DECIMALS, state_number, state_numbers, state_rows


def test_numbers_are_plain_floats_to_six_decimals() -> None:
    assert DECIMALS == 6
    assert state_number(np.float64(1 / 3)) == 0.333333 and type(state_number(np.int64(2))) is float
    assert state_number(2.0000004) == 2.0 and state_number(2.0000006) == 2.000001
    assert state_numbers(np.array([[1.25, 2 / 3], [0.0, -1e-7]])) == [1.25, 0.666667, 0.0, -0.0]
    assert state_numbers([]) == []
    assert state_rows([[1 / 3, 1.0], [2.0, 3.5]]) == [[0.333333, 1.0], [2.0, 3.5]]
    assert state_rows([1.0, 2.0]) == [[1.0, 2.0]]
