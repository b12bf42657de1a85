"""The one place numbers become text on the server: quantities with their units.

The browser formats readouts with the same rule (``widgets/common/js/rules.js``,
``fmt``), from the ``digits`` and ``unit`` declared here (see ``js_spec``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


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


def layer_span(layers) -> str:
    """A bucket's layers, highest first: ``"12–10"``, ``"4"``, or ``"12, 11, 6"`` when not a run."""
    import numpy as np

    layers = np.unique(np.asarray(layers))[::-1]
    if len(layers) == 1:
        return f"{layers[0]}"
    if layers[0] - layers[-1] == len(layers) - 1:
        return f"{layers[0]}–{layers[-1]}"
    return ", ".join(str(n) for n in layers)


def layers_phrase(layers) -> str:
    """``"layers 12–10"`` or ``"layer 4"``."""
    return f"layer{'s' if len(layers) > 1 else ''} {layer_span(layers)}"
