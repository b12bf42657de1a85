"""The queue lab's picture on the index: the default queue's length over its run."""

from __future__ import annotations

from widgets.common.picture import Line
from widgets.model.fluid_queue import FluidQueue


def picture() -> Line:
    """The default queue's length over its run."""
    q = FluidQueue()
    xs, ys = q.series.vertices(q.run_horizon())
    return Line("The queue's length over a run: it drains, then stays empty", xs, ys)
