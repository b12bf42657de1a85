"""The widgets in a notebook, on anywidget: ``from widgets.notebook import QueueLab``.

Each class draws one widget in any notebook that renders anywidget (JupyterLab,
Notebook 7, VS Code, Colab, marimo), offline: its settings are its URL keys, checked
as a page checks them, and are traits in both directions (``w.arrival = 5``). Show
several in one cell with ``Column(a, b)`` or ``Row(a, b)`` (or ``display(a, b)``).
Needs the ``notebook`` extra (``pip install 'overlap-lab[notebook]'``).
"""

from __future__ import annotations

from .layout import Column, Row
from .widget import NotebookWidget, _notebook_widget

BucketTimeline = _notebook_widget("BucketTimeline", "bucket-timeline")
QueueLab = _notebook_widget("QueueLab", "queue-lab")
ManyRanks = _notebook_widget("ManyRanks", "ranks")
RealTrace = _notebook_widget("RealTrace", "trace")

#: Each widget's notebook class by its registry name (its route).
CLASSES: dict[str, type[NotebookWidget]] = {
    cls.widget_name: cls for cls in (BucketTimeline, QueueLab, ManyRanks, RealTrace)
}


def notebook_widget(name: str, **settings: object) -> NotebookWidget:
    """The widget named ``name`` in ``widgets.registry`` (``"queue-lab"``) with these settings."""
    return CLASSES[name](**settings)


__all__ = [
    "CLASSES",
    "BucketTimeline",
    "Column",
    "ManyRanks",
    "NotebookWidget",
    "QueueLab",
    "RealTrace",
    "Row",
    "notebook_widget",
]
