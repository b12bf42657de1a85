"""The bucket timeline's intervals on a two-layer step worked out by hand."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from widgets.model.buckets import BucketIntervals, IntervalKind, schedule_arrays, schedule_intervals


@pytest.fixture
def intervals() -> BucketIntervals:
    # Layer 2 (backward 0-1) is bucket 1, layer 1 (1-2) bucket 0. T = 2 x 0.25 + 1 = 1.5.
    # Bucket 0: ready 2, launched 2 + 0.5 = 2.5, on the link 2.5-4. Bucket 1: ready 1 but
    # held back by bucket 0 until 2, launched max(1, 2.5) + 0.5 = 3, waits for the link
    # 3-4, runs 4-5.5. E = 2, C = 5.5: exposed 2-5.5, optimizer 5.5-6.5.
    s = schedule_arrays(
        [1.0, 1.0],
        [1.0, 1.0],
        [0, 1],
        ranks=2,
        bandwidth=1.0,
        latency_ms=0.25,
        enqueue_ms=0.5,
        optimizer_ms=1.0,
    )
    return schedule_intervals(s)


def test_every_interval_by_hand(intervals: BucketIntervals) -> None:
    rows = list(
        zip(
            [str(k) for k in intervals.kind],
            [str(lane) for lane in intervals.lane],
            intervals.start.tolist(),
            intervals.end.tolist(),
            intervals.label.tolist(),
            intervals.bucket.tolist(),
            intervals.layer.tolist(),
            intervals.waits_for.tolist(),
            strict=True,
        )
    )
    assert rows == [
        ("backward", "compute", 0.0, 1.0, "Layer 2", 1, 2, -1),
        ("backward", "compute", 1.0, 2.0, "Layer 1", 0, 1, -1),
        ("transfer", "link", 2.5, 4.0, "Bucket 0", 0, 0, -1),
        ("transfer", "link", 4.0, 5.5, "Bucket 1", 1, 0, -1),
        ("waiting", "link-wait", 3.0, 4.0, "Bucket 1 waits", 1, 0, -1),
        ("waiting for bucket", "order-wait", 1.0, 2.0, "Bucket 1 waits for bucket 0", 1, 0, 0),
        ("exposed", "link", 2.0, 5.5, "Exposed tail", -1, 0, -1),
        ("filling", "fill", 1.0, 2.0, "Bucket 0 filling", 0, 0, -1),
        ("filling", "fill", 0.0, 1.0, "Bucket 1 filling", 1, 0, -1),
        ("enqueue", "order-wait", 2.0, 2.5, "Bucket 0 enqueued", 0, 0, -1),
        ("enqueue", "order-wait", 2.0, 3.0, "Bucket 1 enqueued", 1, 0, -1),
        ("optimizer", "optimizer", 5.5, 6.5, "Optimizer", -1, 0, -1),
    ]


def test_of_kind_keeps_every_column(intervals: BucketIntervals) -> None:
    waits = intervals.of_kind(IntervalKind.ORDER_WAIT)
    assert isinstance(waits, BucketIntervals)
    assert (waits.start.tolist(), waits.end.tolist()) == ([1.0], [2.0])
    assert (waits.bucket.tolist(), waits.layer.tolist(), waits.waits_for.tolist()) == (
        [1],
        [0],
        [0],
    )
    assert waits.label.tolist() == ["Bucket 1 waits for bucket 0"]
    assert [str(x) for x in waits.lane] == ["order-wait"]
    assert len(intervals.of_kind(IntervalKind.TRANSFER)) == 2


def test_no_enqueue_no_tail_no_waits() -> None:
    # One 1 MB layer, 2 ranks, 10 GB/s, no latency: T = 0.1, ready at 1: 1-1.1, tail 0.1.
    s = schedule_arrays([1.0], [1.0], [0], ranks=2, bandwidth=10.0, latency_ms=0.0)
    kinds = [str(k) for k in schedule_intervals(s).kind]
    assert kinds == ["backward", "transfer", "exposed", "filling", "optimizer"]
    # 2 layers, a bucket each, 100 GB/s: each 0.01 ms transfer ends before the next is ready.
    s = schedule_arrays([1.0, 1.0], [1.0, 1.0], [1, 0], ranks=2, bandwidth=100.0, latency_ms=0.0)
    kinds = [str(k) for k in schedule_intervals(s).kind]
    assert kinds == ["backward"] * 2 + ["transfer"] * 2 + ["exposed"] + ["filling"] * 2 + [
        "optimizer"
    ]


def test_columns_of_one_length_and_frozen(intervals: BucketIntervals) -> None:
    with pytest.raises(ValueError, match=r"^all interval arrays must have the same length$"):
        BucketIntervals(
            *(np.zeros(1) for _ in range(5)), np.zeros(1, int), np.zeros(2, int), np.zeros(1, int)
        )
    with pytest.raises(ValueError, match=r"^all interval arrays must have the same length$"):
        BucketIntervals(
            *(np.zeros(1) for _ in range(5)), np.zeros(2, int), *(np.zeros(1, int),) * 2
        )
    with pytest.raises(ValueError, match=r"^all interval arrays must have the same length$"):
        BucketIntervals(
            *(np.zeros(1) for _ in range(5)), *(np.zeros(1, int),) * 2, np.zeros(0, int)
        )
    with pytest.raises(dataclasses.FrozenInstanceError):
        intervals.bucket = np.zeros(0, int)
