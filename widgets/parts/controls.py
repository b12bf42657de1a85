"""The control for one parameter, chosen from its declaration."""

from __future__ import annotations

import panel as pn
import param

from .number_field import NumberField


def control_for(owner: param.Parameterized, name: str) -> pn.viewable.Viewable:
    """A labelled control for ``owner.param[name]``: a number field, a checkbox or a menu.

    Its visible label is the parameter's label, which is also its accessible
    name, and its description is the parameter's doc.
    """
    p = owner.param[name]
    if isinstance(p, param.Boolean):
        return pn.widgets.Checkbox.from_param(
            p, label=p.label, description=p.doc, sizing_mode="stretch_width"
        )
    if isinstance(p, param.Selector):
        return pn.widgets.Select.from_param(
            p, label=p.label, description=p.doc, sizing_mode="stretch_width"
        )
    return NumberField(owner, name)
