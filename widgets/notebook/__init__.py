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

__all__ = [
    "BucketTimeline",
    "Column",
    "ManyRanks",
    "NotebookWidget",
    "QueueLab",
    "RealTrace",
    "Row",
]
