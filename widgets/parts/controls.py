"""The control for one parameter, chosen from its declaration."""

from __future__ import annotations

import html

import panel as pn
import param

from ..model.settings import hint_of
from . import theme
from .number_field import NumberField


class ChoiceField(pn.viewable.Viewer):
    """A checkbox (for a yes/no parameter) or a menu (for a choice), with its help line.

    The parameter's label names the control and is its accessible name; the
    hint under it is the parameter's hint, or its doc.
    """

    def __init__(self, owner: param.Parameterized, name: str):
        super().__init__()
        p = owner.param[name]
        self.owner, self.param_name = owner, name
        if isinstance(p, param.Boolean):
            # A one-option checkbox group: Bokeh wraps each of its boxes in a <label>,
            # so the visible text is the box's accessible name (a lone Checkbox's is not).
            self.input = pn.widgets.CheckBoxGroup(
                options=[p.label],
                value=[p.label] if getattr(owner, name) else [],
                sizing_mode="stretch_width",
                margin=(8, 10, 0, 10),
            )
            self.input.param.watch(self._checked, "value")
            owner.param.watch(self._model_changed, name)
        else:
            self.input = pn.widgets.Select.from_param(
                p, label=p.label, description=p.doc, sizing_mode="stretch_width"
            )
        self.hint = hint_of(p) or p.doc
        self.message = pn.pane.HTML(
            f'<div class="ol-hint">{html.escape(self.hint)}</div>',
            margin=(0, 10, 6, 10),
            stylesheets=[theme.PAGE_CSS],
        )

    @property
    def checked(self) -> bool:
        """Whether the box (of a yes/no parameter) is ticked."""
        return bool(self.input.value)

    def _checked(self, event: param.parameterized.Event) -> None:
        setattr(self.owner, self.param_name, bool(event.new))

    def _model_changed(self, event: param.parameterized.Event) -> None:
        if bool(event.new) != self.checked:
            self.input.value = list(self.input.options) if event.new else []

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Column(self.input, self.message, margin=0, sizing_mode="stretch_width")


def control_for(owner: param.Parameterized, name: str) -> pn.viewable.Viewable:
    """A labelled control for ``owner.param[name]``: a number field, a checkbox or a menu."""
    if isinstance(owner.param[name], param.Boolean | param.Selector):
        return ChoiceField(owner, name)
    return NumberField(owner, name)
