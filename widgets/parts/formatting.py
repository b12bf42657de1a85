"""The one place numbers become text: quantities with units, and readout markup.

The browser animates a few readouts while playing; it formats them with the
same rule, from the ``digits`` and ``unit`` declared here (see ``js_spec``).
"""

from __future__ import annotations

import html
import itertools
import math
from dataclasses import dataclass

_ids = itertools.count()


@dataclass(frozen=True)
class Quantity:
    """How one kind of number is shown: fixed decimals and a unit."""

    unit: str
    digits: int = 2

    def __call__(self, value: float | None, signed: bool = False) -> str:
        """``4.0`` -> ``"4.00 s"``; ``None`` or a non-finite value -> an em dash."""
        if value is None or not math.isfinite(value):
            return "—"
        # Never print "-0.00": a value that rounds to zero is shown as zero.
        value = 0.0 if round(value, self.digits) == 0 else value
        text = f"{value:+.{self.digits}f}" if signed else f"{value:.{self.digits}f}"
        text = text.replace("-", "−")
        return f"{text} {self.unit}" if self.unit else text

    def js_spec(self) -> dict:
        """The rule for the browser's formatter (``toFixed(digits)`` and the unit)."""
        return {"digits": self.digits, "unit": self.unit}


SECONDS = Quantity("s")
MILLISECONDS = Quantity("ms")
ITEMS = Quantity("items")
ITEMS_PER_SECOND = Quantity("items/s")
PERCENT = Quantity("%", digits=0)
COUNT = Quantity("", digits=0)


def plain_number(value: float | None) -> str:
    """A number as a person would type it back (no padding, no unit)."""
    if value is None:
        return ""
    return f"{value:.6g}"


def new_id(prefix: str) -> str:
    """An element id unique within this process."""
    return f"{prefix}-{next(_ids)}"


VALUE_SLOT = "{value}"


def readout_html(label: str, value: str, element_id: str, note: str = "") -> str:
    """A labelled readout whose accessible name is its visible label.

    ``value`` may be ``VALUE_SLOT`` to make a template for the browser to fill.
    """
    note_html = f'<span class="ol-note">{html.escape(note)}</span>' if note else ""
    value_html = value if value == VALUE_SLOT else html.escape(value)
    return (
        f'<div class="ol-readout"><span class="ol-label" id="{element_id}">'
        f"{html.escape(label)}</span>"
        f'<output class="ol-value" aria-labelledby="{element_id}">{value_html}</output>'
        f"{note_html}</div>"
    )
