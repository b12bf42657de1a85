"""The intervals a bucket timeline is drawn from, as typed columns.

Every interval carries its kind (an ``IntervalKind``), its lane (a ``Lane``),
the bucket it belongs to (``bucket``, -1 when none) and the layer it belongs to
(``layer``, 1-based, 0 when none) as integer columns, so a view reads ids and
never parses a label. ``label`` is kept as plain text for hover and export.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from ..timeline import Intervals

NO_BUCKET = -1
NO_LAYER = 0


class IntervalKind(StrEnum):
    """What an interval is."""

    BACKWARD = "backward"  # one layer's backward
    FILLING = "filling"  # a bucket collecting gradients, first to last
    LINK_WAIT = "waiting"  # a launched bucket waiting for the link to be free
    TRANSFER = "transfer"  # a bucket's all-reduce on the link
    EXPOSED = "exposed"  # [backward end, communication end]: the exposed tail
    OPTIMIZER = "optimizer"  # the optimizer step


class Lane(StrEnum):
    """Which row of the timeline an interval sits on."""

    COMPUTE = "compute"
    FILL = "fill"
    LINK_WAIT = "link-wait"
    LINK = "link"
    OPTIMIZER = "optimizer"


LANE_OF = {
    IntervalKind.BACKWARD: Lane.COMPUTE,
    IntervalKind.FILLING: Lane.FILL,
    IntervalKind.LINK_WAIT: Lane.LINK_WAIT,
    IntervalKind.TRANSFER: Lane.LINK,
    IntervalKind.EXPOSED: Lane.LINK,
    IntervalKind.OPTIMIZER: Lane.OPTIMIZER,
}


@dataclass(frozen=True)
class BucketIntervals(Intervals):
    """``Intervals`` plus integer ``bucket`` and ``layer`` columns.

    ``kind`` holds ``IntervalKind`` values and ``lane`` ``Lane`` values (both
    compare equal to their strings).
    """

    bucket: np.ndarray
    layer: np.ndarray

    def __post_init__(self) -> None:
        super().__post_init__()
        if not len(self.bucket) == len(self.layer) == len(self.start):
            raise ValueError("all interval arrays must have the same length")

    def of_kind(self, kind: IntervalKind) -> BucketIntervals:
        """The intervals of one kind, in order."""
        sel = self.kind == kind
        return BucketIntervals(
            self.start[sel],
            self.end[sel],
            self.lane[sel],
            self.label[sel],
            self.kind[sel],
            self.bucket[sel],
            self.layer[sel],
        )


class IntervalBuilder:
    """Collects groups of intervals of one kind, then freezes them into columns."""

    def __init__(self) -> None:
        self._parts: list[tuple] = []

    def add(
        self,
        kind: IntervalKind,
        start: np.typing.ArrayLike,
        end: np.typing.ArrayLike,
        labels: list[str],
        *,
        bucket: np.typing.ArrayLike = NO_BUCKET,
        layer: np.typing.ArrayLike = NO_LAYER,
    ) -> None:
        """Add ``len(labels)`` intervals of ``kind``; ids broadcast when given once."""
        n = len(labels)
        self._parts.append(
            (
                np.broadcast_to(np.asarray(start, float), (n,)),
                np.broadcast_to(np.asarray(end, float), (n,)),
                kind,
                labels,
                np.broadcast_to(np.asarray(bucket, int), (n,)),
                np.broadcast_to(np.asarray(layer, int), (n,)),
            )
        )

    def build(self) -> BucketIntervals:
        """All intervals added so far, in the order they were added."""
        parts = self._parts
        kinds = [p[2] for p in parts for _ in p[3]]
        return BucketIntervals(
            np.concatenate([p[0] for p in parts]),
            np.concatenate([p[1] for p in parts]),
            np.array([LANE_OF[k] for k in kinds], dtype=object),
            np.array([label for p in parts for label in p[3]], dtype=str),
            np.array(kinds, dtype=object),
            np.concatenate([p[4] for p in parts]),
            np.concatenate([p[5] for p in parts]),
        )
