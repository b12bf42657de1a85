"""A text field for one numeric ``param`` parameter.

The parameter's declaration is the whole specification: its label names the
field, its bounds validate what is typed, its doc is the help text. Bad input
leaves the model at its last valid value and says why right under the field.
"""

from __future__ import annotations

import html
import math

import panel as pn
import param

from . import theme
from .formatting import plain_number


def bounds_text(p: param.Number, unit: str) -> str:
    """``"0 to 1000 items/s"`` for a parameter's bounds."""
    lo, hi = p.bounds if p.bounds else (None, None)
    unit = f" {unit}" if unit else ""
    if lo is not None and hi is not None:
        return f"{plain_number(lo)} to {plain_number(hi)}{unit}"
    if lo is not None:
        return f"at least {plain_number(lo)}{unit}"
    if hi is not None:
        return f"at most {plain_number(hi)}{unit}"
    return unit.strip()


def parse_number(text: str, p: param.Parameter, unit: str = "") -> float | int | None:
    """Parse what a person typed for parameter ``p``; raise ValueError with a message for them.

    Accepts a decimal comma. Empty text means "no value" where the parameter
    allows None. The result is within the parameter's bounds.
    """
    raw = text.strip().replace(",", ".")
    if raw == "":
        if p.allow_None:
            return None
        raise ValueError(f"{p.label} needs a number ({bounds_text(p, unit)}).")
    try:
        value = float(raw)
    except ValueError:
        shown = text.strip()[:20]
        raise ValueError(f"“{shown}” is not a number. Enter {bounds_text(p, unit)}.") from None
    if not math.isfinite(value):
        raise ValueError(f"Enter a finite number ({bounds_text(p, unit)}).")
    if isinstance(p, param.Integer):
        if value != int(value):
            raise ValueError(f"{p.label} must be a whole number ({bounds_text(p, unit)}).")
        value = int(value)
    lo, hi = p.bounds if p.bounds else (None, None)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ValueError(f"{p.label} must be {bounds_text(p, unit)}.")
    return value


class NumberField(pn.viewable.Viewer):
    """The labelled input, help line and error message for one numeric parameter."""

    def __init__(
        self,
        owner: param.Parameterized,
        name: str,
        unit: str = "",
        hint: str | None = None,
        width: int | None = None,
    ):
        super().__init__()
        self.owner, self.param_name, self.unit = owner, name, unit
        self.spec: param.Number = owner.param[name]
        self.hint = hint if hint is not None else bounds_text(self.spec, unit)
        self.error: str = ""
        self.input = pn.widgets.TextInput(
            label=self.spec.label,
            value=plain_number(getattr(owner, name)),
            description=self.spec.doc,
            sizing_mode="stretch_width",
            width=width,
            css_classes=["ol-number-input"],
        )
        self.message = pn.pane.HTML(
            self._message_html(), margin=(0, 10, 6, 10), stylesheets=[theme.PAGE_CSS]
        )
        self.input.param.watch(self._typed, "value")
        owner.param.watch(self._model_changed, name)

    def _message_html(self) -> str:
        if self.error:
            return f'<div class="ol-error" role="alert">{html.escape(self.error)}</div>'
        return f'<div class="ol-hint">{html.escape(self.hint)}</div>'

    def _show(self, error: str) -> None:
        self.error = error
        self.message.object = self._message_html()

    def _typed(self, event: param.parameterized.Event) -> None:
        try:
            value = parse_number(event.new, self.spec, self.unit)
            self.owner.param.update({self.param_name: value})
        except ValueError as exc:
            self._show(str(exc))
            return
        self._show("")

    def _model_changed(self, event: param.parameterized.Event) -> None:
        text = plain_number(event.new)
        try:
            same = parse_number(self.input.value, self.spec, self.unit) == event.new
        except ValueError:
            same = False
        if not same:
            self.input.value = text
            self._show("")

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Column(self.input, self.message, margin=0, sizing_mode="stretch_width")
