"""Several widgets in one notebook cell (a cell shows only its last expression)."""

from __future__ import annotations

import ipywidgets


def Column(*widgets: ipywidgets.DOMWidget) -> ipywidgets.VBox:
    """The widgets one under another, each as wide as the cell."""
    return ipywidgets.VBox(list(widgets), layout=ipywidgets.Layout(width="100%"))


def Row(*widgets: ipywidgets.DOMWidget) -> ipywidgets.HBox:
    """The widgets side by side, wrapping onto the next line where the cell is too narrow."""
    layout = ipywidgets.Layout(width="100%", flex_flow="row wrap")
    for widget in widgets:
        widget.layout = ipywidgets.Layout(flex="1 1 480px", min_width="0", margin="0 16px 16px 0")
    return ipywidgets.HBox(list(widgets), layout=layout)
