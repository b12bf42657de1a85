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
        if isinstance(p, param.Boolean):
            self.input = pn.widgets.Checkbox.from_param(
                p, name=p.label, sizing_mode="stretch_width"
            )
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

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Column(self.input, self.message, margin=0, sizing_mode="stretch_width")


def control_for(owner: param.Parameterized, name: str) -> pn.viewable.Viewable:
    """A labelled control for ``owner.param[name]``: a number field, a checkbox or a menu."""
    if isinstance(owner.param[name], param.Boolean | param.Selector):
        return ChoiceField(owner, name)
    return NumberField(owner, name)
