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


def _parse_choice(text: str, p: param.Selector) -> str:
    """One of a selector's choices, matched exactly, else without regard to case."""
    choices = [str(c) for c in p.objects]
    wanted = text.strip()
    if wanted in choices:
        return wanted
    folded = {c.casefold(): c for c in choices}
    if wanted.casefold() in folded:
        return folded[wanted.casefold()]
    raise ValueError(f"{p.label} must be one of: {', '.join(choices)}.")


def parse_number(text: str, p: param.Parameter) -> float | int | str | None:
    """Parse what a person typed for parameter ``p``; raise ValueError with a message for them.

    Accepts a decimal comma. Empty text means "no value" where the parameter
    allows None. The result is within the parameter's bounds. A selector's
    value is one of its choices, by name.
    """
    if isinstance(p, param.Selector):
        return _parse_choice(text, p)
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
    if isinstance(p, param.Integer):
        if value != int(value):
            raise ValueError(f"{p.label} must be a whole number ({bounds_text(p)}).")
        value = int(value)
    lo, hi = p.bounds if p.bounds else (None, None)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ValueError(f"{p.label} must be {bounds_text(p)}.")
    return value
