"""Text a person typed (or put in a URL) turned into a setting's value, or a message for them.

Pure Python: the lesson checker and the registry use it without Panel or Bokeh.
"""

from __future__ import annotations

import math

import param

from ..model.settings import unit_of
from .formatting import plain_number


def bounds_text(p: param.Number) -> str:
    """``"0 to 1000 items/s"`` for a parameter's bounds and unit."""
    lo, hi = p.bounds if p.bounds else (None, None)
    unit = unit_of(p)
    unit = f" {unit}" if unit else ""
    if lo is not None and hi is not None:
        return f"{plain_number(lo)} to {plain_number(hi)}{unit}"
    if lo is not None:
        return f"at least {plain_number(lo)}{unit}"
    if hi is not None:
        return f"at most {plain_number(hi)}{unit}"
    return unit.strip()


def parse_number(text: str, p: param.Parameter) -> float | int | None:
    """Parse what a person typed for parameter ``p``; raise ValueError with a message for them.

    Accepts a decimal comma. Empty text means "no value" where the parameter
    allows None. The result is within the parameter's bounds.
    """
    raw = text.strip().replace(",", ".")
    if raw == "":
        if p.allow_None:
            return None
        raise ValueError(f"{p.label} needs a number ({bounds_text(p)}).")
    try:
        value = float(raw)
    except ValueError:
        shown = text.strip()[:20]
        raise ValueError(f"“{shown}” is not a number. Enter {bounds_text(p)}.") from None
    if not math.isfinite(value):
        raise ValueError(f"Enter a finite number ({bounds_text(p)}).")
    value += 0.0  # "-0" is zero, and is shown and linked as 0
    if isinstance(p, param.Integer):
        if value != int(value):
            raise ValueError(f"{p.label} must be a whole number ({bounds_text(p)}).")
        value = int(value)
    lo, hi = p.bounds if p.bounds else (None, None)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ValueError(f"{p.label} must be {bounds_text(p)}.")
    return value


_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


def parse_setting(text: str, p: param.Parameter) -> object:
    """Parse text (typed, or from a URL) for any setting: a number, a yes/no or a choice.

    Raises ValueError with a message for the person who wrote it.
    """
    if isinstance(p, param.Boolean):
        word = text.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
        raise ValueError(f"{p.label} is true or false, not “{text.strip()[:20]}”.")
    if isinstance(p, param.Selector):
        names = {str(o): o for o in p.objects}
        if text.strip() in names:
            return names[text.strip()]
        raise ValueError(f"{p.label} is one of {', '.join(names)}.")
    return parse_number(text, p)
