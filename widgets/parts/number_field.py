"""A text field for one numeric ``param`` parameter.

The parameter's declaration is the whole specification: its label names the
field, its bounds validate what is typed, its doc is the help text, and its
metadata gives the unit and the hint under the field. Bad input leaves the
model at its last valid value and says why right under the field.
"""

from __future__ import annotations

import html

import panel as pn
import param

from ..model.settings import hint_of
from . import theme
from .formatting import plain_number
from .parsing import bounds_text, parse_number


class NumberField(pn.viewable.Viewer):
    """The labelled input, help line and error message for one numeric parameter."""

    def __init__(self, owner: param.Parameterized, name: str):
        super().__init__()
        self.owner, self.param_name = owner, name
        self.spec: param.Number = owner.param[name]
        self.hint = hint_of(self.spec) or bounds_text(self.spec)
        self.error: str = ""
        self.input = pn.widgets.TextInput(
            label=self.spec.label,
            value=plain_number(getattr(owner, name)),
            description=self.spec.doc,
            sizing_mode="stretch_width",
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
            value = parse_number(event.new, self.spec)
            self.owner.param.update({self.param_name: value})
        except ValueError as exc:
            self._show(str(exc))
            return
        self._show("")

    def _model_changed(self, event: param.parameterized.Event) -> None:
        try:
            same = parse_number(self.input.value, self.spec) == event.new
        except ValueError:
            same = False
        if not same:
            self.input.value = plain_number(event.new)
            self._show("")

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Column(self.input, self.message, margin=0, sizing_mode="stretch_width")
