"""The page shape every widget shares: a controls card beside a main column."""

from __future__ import annotations

from collections.abc import Iterable

import panel as pn
from bokeh.models import Div

from . import theme


def controls_card(*items: pn.viewable.Viewable) -> pn.Column:
    """The card of controls; it sits left on wide screens and on top on phones."""
    return pn.Column(
        *items,
        styles={"flex": "1 1 280px"},
        max_width=380,
        min_width=260,
        sizing_mode="stretch_width",
        css_classes=["ol-card"],
    )


def main_column(*items: pn.viewable.Viewable) -> pn.Column:
    """Readouts, plots and text, taking the rest of the width."""
    return pn.Column(
        *items, styles={"flex": "3 1 480px"}, min_width=280, sizing_mode="stretch_width"
    )


def readout_row(readouts: Iterable[Div], basis: int = 150) -> pn.FlexBox:
    """Readouts side by side, wrapping onto more rows as the width shrinks."""
    cell = {"sizing_mode": "stretch_width", "styles": {"flex": f"1 1 {basis}px"}, "margin": 0}
    return pn.FlexBox(
        *(pn.Column(div, **cell) for div in readouts),
        sizing_mode="stretch_width",
        flex_direction="row",
        gap="8px",
    )


def widget_layout(controls: pn.Column, main: pn.Column) -> pn.FlexBox:
    """Controls and main column, wrapping to one column on narrow screens."""
    return pn.FlexBox(
        controls,
        main,
        flex_wrap="wrap",
        sizing_mode="stretch_width",
        stylesheets=[theme.PAGE_CSS],
        gap="12px",
        margin=0,
    )
