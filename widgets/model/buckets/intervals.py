"""The intervals a bucket timeline is drawn from, as typed columns.

Every interval carries its kind (an ``IntervalKind``), its lane (a ``Lane``),
the bucket it belongs to (``bucket``, -1 when none), the layer it belongs to
(``layer``, 1-based, 0 when none) and, for an order wait, the earlier bucket
it waits for (``waits_for``, -1 otherwise) as integer columns, so a view reads
ids and never parses a label. ``label`` is plain text for hover and export.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

import numpy as np

from ..timeline import Intervals

if TYPE_CHECKING:
    from .schedule import Schedule

NO_BUCKET = -1
NO_LAYER = 0


class IntervalKind(StrEnum):
    """What an interval is."""

    BACKWARD = "backward"  # one layer's backward
    FILLING = "filling"  # a bucket collecting gradients, first to last
    ORDER_WAIT = "waiting for bucket"  # ready, but an earlier bucket is not launched yet
    ENQUEUE = "enqueue"  # the host issuing collectives, this one last
    LINK_WAIT = "waiting"  # a launched bucket waiting for the link to be free
    TRANSFER = "transfer"  # a bucket's all-reduce on the link
    EXPOSED = "exposed"  # [backward end, communication end]: the exposed tail
    OPTIMIZER = "optimizer"  # the optimizer step
    NO_SYNC = "backward (no_sync)"  # a whole micro-batch's backward, no bucket reduced
    FORWARD = "forward"  # the next micro-batch's forward, between two backwards


class Lane(StrEnum):
    """Which row of the timeline an interval sits on."""

    COMPUTE = "compute"
    FILL = "fill"
    ORDER_WAIT = "order-wait"
    LINK_WAIT = "link-wait"
    LINK = "link"
    OPTIMIZER = "optimizer"


LANE_OF = {
    IntervalKind.BACKWARD: Lane.COMPUTE,
    IntervalKind.FILLING: Lane.FILL,
    IntervalKind.ORDER_WAIT: Lane.ORDER_WAIT,
    IntervalKind.ENQUEUE: Lane.ORDER_WAIT,
    IntervalKind.LINK_WAIT: Lane.LINK_WAIT,
    IntervalKind.TRANSFER: Lane.LINK,
    IntervalKind.EXPOSED: Lane.LINK,
    IntervalKind.OPTIMIZER: Lane.OPTIMIZER,
    IntervalKind.NO_SYNC: Lane.COMPUTE,
    IntervalKind.FORWARD: Lane.COMPUTE,
}


@dataclass(frozen=True)
class BucketIntervals(Intervals):
    """``Intervals`` plus integer ``bucket``, ``layer`` and ``waits_for`` columns.

    ``kind`` holds ``IntervalKind`` values and ``lane`` ``Lane`` values (both
    compare equal to their strings).
    """

    bucket: np.ndarray
    layer: np.ndarray
    waits_for: np.ndarray

    def __post_init__(self) -> None:
        super().__post_init__()
        if not len(self.bucket) == len(self.layer) == len(self.waits_for) == len(self.start):
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
            self.waits_for[sel],
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
        waits_for: np.typing.ArrayLike = NO_BUCKET,
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
                np.broadcast_to(np.asarray(waits_for, int), (n,)),
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
            np.concatenate([p[6] for p in parts]),
        )


def schedule_intervals(s: Schedule) -> BucketIntervals:
    """A schedule as typed intervals, times from the start of backward.

    In order: one ``BACKWARD`` per layer (backward order), one ``TRANSFER`` per
    bucket, a ``LINK_WAIT`` [launch_b, start_b] for each bucket queued behind
    the previous transfer, an ``ORDER_WAIT`` [ready_b, the latest earlier ready time]
    for each ready bucket held back by an earlier unready one (``waits_for`` names
    the bucket whose readiness it waited for), the ``EXPOSED`` tail [E, C] when
    positive, one ``FILLING`` per bucket from its first layer's backward start
    to its ready time, an ``ENQUEUE`` per bucket when the host enqueue time is
    positive (from when it may go to its launch: the host issuing this and
    earlier collectives one after another), and the ``OPTIMIZER`` step. With
    gradient accumulation the k - 1 micro-batches under ``no_sync()`` come first:
    for each, one ``NO_SYNC`` bar (its whole backward) and one ``FORWARD`` bar
    (the next micro-batch's forward).
    """
    order = np.arange(s.n_layers)[::-1]
    tol = 1e-9 * max(1.0, s.comm_end)
    buckets = np.arange(s.n_buckets)
    link_waits = np.flatnonzero(s.bucket_link_wait > tol)
    order_waits = np.flatnonzero(s.bucket_order_wait > tol)
    out = IntervalBuilder()
    out.add(
        IntervalKind.BACKWARD,
        s.layer_backward_start[order],
        s.layer_ready[order],
        [f"Layer {i + 1}" for i in order],
        bucket=s.layer_bucket[order],
        layer=order + 1,
    )
    out.add(
        IntervalKind.TRANSFER,
        s.bucket_start,
        s.bucket_end,
        [f"Bucket {b}" for b in buckets],
        bucket=buckets,
    )
    out.add(
        IntervalKind.LINK_WAIT,
        s.bucket_launch[link_waits],
        s.bucket_start[link_waits],
        [f"Bucket {b} waits" for b in link_waits],
        bucket=link_waits,
    )
    waited = s.bucket_waits_for[order_waits]
    out.add(
        IntervalKind.ORDER_WAIT,
        s.bucket_ready[order_waits],
        s.bucket_ready[order_waits] + s.bucket_order_wait[order_waits],
        [f"Bucket {b} waits for bucket {k}" for b, k in zip(order_waits, waited, strict=True)],
        bucket=order_waits,
        waits_for=waited,
    )
    if s.exposed_tail > 0:
        out.add(IntervalKind.EXPOSED, s.backward_end, s.comm_end, ["Exposed tail"])
    fill_start = [s.layer_backward_start[layers - 1].min() for layers in s.bucket_layers]
    out.add(
        IntervalKind.FILLING,
        fill_start,
        s.bucket_ready,
        [f"Bucket {b} filling" for b in buckets],
        bucket=buckets,
    )
    if s.enqueue_ms > 0:
        out.add(
            IntervalKind.ENQUEUE,
            s.bucket_ready + s.bucket_order_wait,
            s.bucket_launch,
            [f"Bucket {b} enqueued" for b in buckets],
            bucket=buckets,
        )
    if s.accumulation_steps > 1:
        e = s.micro_batch_backward_ms
        period = s.no_sync_ms / (s.accumulation_steps - 1)
        starts = np.arange(s.accumulation_steps - 1) * period
        micro = range(1, s.accumulation_steps)
        out.add(
            IntervalKind.NO_SYNC,
            starts,
            starts + e,
            [f"Micro-batch {j} backward (no_sync)" for j in micro],
        )
        out.add(
            IntervalKind.FORWARD,
            starts + e,
            starts + period,
            [f"Micro-batch {j + 1} forward" for j in micro],
        )
    out.add(
        IntervalKind.OPTIMIZER,
        s.optimizer_start,
        s.optimizer_start + s.optimizer_ms,
        ["Optimizer"],
    )
    return out.build()
