"""Several widgets in one notebook cell (a cell shows only its last expression)."""

from __future__ import annotations

from typing import Any

import ipywidgets

from .saved_copy import with_saved_copy_note
from .widget import NotebookWidget


class Column(ipywidgets.VBox):
    """The widgets one under another, each as wide as the cell: ``Column(a, b)``."""

    def __init__(self, *widgets: ipywidgets.DOMWidget, **kwargs: Any):
        kwargs.setdefault("layout", ipywidgets.Layout(width="100%"))
        for widget in widgets:
            if isinstance(widget, NotebookWidget):
                widget.layout = ipywidgets.Layout(margin="16px 0 8px 0")  # apart from the last
        super().__init__(list(widgets), **kwargs)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return with_saved_copy_note(super()._repr_mimebundle_(**kwargs))


class Row(ipywidgets.HBox):
    """The widgets side by side, wrapping onto the next line where the cell is too narrow."""

    def __init__(self, *widgets: ipywidgets.DOMWidget, **kwargs: Any):
        kwargs.setdefault("layout", ipywidgets.Layout(width="100%", flex_flow="row wrap"))
        for widget in widgets:
            widget.layout = ipywidgets.Layout(
                flex="1 1 480px", min_width="0", margin="0 16px 16px 0"
            )
        super().__init__(list(widgets), **kwargs)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return with_saved_copy_note(super()._repr_mimebundle_(**kwargs))
