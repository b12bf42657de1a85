"""Typed text to a setting's value, or the message the person sees: worked by hand."""

from __future__ import annotations

import param
import pytest

from widgets.common.parsing import bounds_text, parse_number
from widgets.model.settings import setting


class S(param.Parameterized):
    rate = param.Number(2.0, bounds=(0, 1000), label="Arrival rate", metadata=setting("items/s"))
    ranks = param.Integer(8, bounds=(2, 4096), label="Ranks", metadata=setting())
    low = param.Number(1.0, bounds=(0.5, None), label="Low", metadata=setting("ms"))
    high = param.Number(1.0, bounds=(None, 10), label="High", metadata=setting("ms"))
    free = param.Number(1.0, label="Free", metadata=setting("ms"))
    bare = param.Number(1.0, label="Bare", metadata=setting())
    maybe = param.Number(None, allow_None=True, bounds=(0, 5), label="Maybe", metadata=setting())


P = S.param


def test_bounds_text() -> None:
    assert bounds_text(P.rate) == "0 to 1000 items/s"
    assert bounds_text(P.ranks) == "2 to 4096"
    assert bounds_text(P.low) == "at least 0.5 ms"
    assert bounds_text(P.high) == "at most 10 ms"
    assert bounds_text(P.free) == "ms"
    assert bounds_text(P.bare) == ""


@pytest.mark.parametrize(
    ("p", "text", "value"),
    [
        ("rate", "4", 4.0),
        ("rate", " 2,5 ", 2.5),
        ("rate", "0", 0.0),
        ("rate", "1000", 1000.0),
        ("rate", "1e3", 1000.0),
        ("ranks", "2", 2),
        ("ranks", "4096", 4096),
        ("ranks", "8.0", 8),
        ("low", "0.5", 0.5),
        ("high", "10", 10.0),
        ("high", "-5", -5.0),
        ("free", "-1e6", -1e6),
        ("maybe", "", None),
        ("maybe", "  ", None),
    ],
)
def test_accepted(p: str, text: str, value) -> None:
    got = parse_number(text, P[p])
    assert got == value
    assert type(got) is type(value)


@pytest.mark.parametrize(
    ("p", "text", "message"),
    [
        ("rate", "", "Arrival rate needs a number (0 to 1000 items/s)."),
        ("rate", "abc", "“abc” is not a number. Enter 0 to 1000 items/s."),
        ("rate", " " + "x" * 30 + " ", f"“{'x' * 20}” is not a number. Enter 0 to 1000 items/s."),
        ("rate", "nan", "Enter a finite number (0 to 1000 items/s)."),
        ("rate", "inf", "Enter a finite number (0 to 1000 items/s)."),
        ("rate", "-1", "Arrival rate must be 0 to 1000 items/s."),
        ("rate", "1000.001", "Arrival rate must be 0 to 1000 items/s."),
        ("ranks", "2.5", "Ranks must be a whole number (2 to 4096)."),
        ("ranks", "1", "Ranks must be 2 to 4096."),
        ("ranks", "4097", "Ranks must be 2 to 4096."),
        ("low", "0.4", "Low must be at least 0.5 ms."),
        ("high", "10.5", "High must be at most 10 ms."),
        ("maybe", "6", "Maybe must be 0 to 5."),
    ],
)
def test_refused_with_a_message(p: str, text: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_number(text, P[p])
    assert str(info.value) == message
