"""overlap-lab widgets. ``from widgets import QueueLab`` after ``pn.extension()``.

Every registered widget's view is exported, imported on first use, so that
``widgets.model`` and the registry stay usable without Panel.
"""

from __future__ import annotations

#: The view of every widget in ``widgets.registry.WIDGETS`` (a test checks they agree).
__all__ = ["BucketTimeline", "QueueLab", "RanksView", "TraceView"]


def __getattr__(name: str):
    if name in __all__:
        from .registry import WIDGETS

        for spec in WIDGETS.values():
            if spec.view.endswith(f":{name}"):
                return spec.view_class()
    raise AttributeError(f"module 'widgets' has no attribute {name!r}")
