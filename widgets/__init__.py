"""overlap-lab widgets. ``from widgets import QueueLab`` after ``pn.extension()``.

Views are imported lazily so that ``widgets.model`` stays usable without Panel.
"""

from __future__ import annotations

__all__ = ["BucketTimeline", "QueueLab"]


def __getattr__(name: str):
    if name == "QueueLab":
        from .queue_lab.component import QueueLab

        return QueueLab
    if name == "BucketTimeline":
        from .bucket_timeline.component import BucketTimeline

        return BucketTimeline
    raise AttributeError(name)
