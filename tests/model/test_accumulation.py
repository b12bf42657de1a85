"""Gradient accumulation with no_sync(): buckets reduced once per k micro-batches."""

from __future__ import annotations

import pytest

from widgets.model.buckets import (
    BucketConfig,
    IntervalKind,
    schedule_intervals,
    step_schedule,
    sweep_layers_per_bucket,
)


def test_four_micro_batches_reduce_once() -> None:
    # Defaults: 12 layers of 2 ms (E = 24), 3 per bucket, forward 12, optimizer 2. One
    # micro-batch: four 5.95 ms transfers, C = 24 + 5.95 = 29.95, step 12 + 29.95 + 2 = 43.95.
    one = step_schedule(BucketConfig(layers_per_bucket=3))
    assert one.step_time == pytest.approx(43.95)
    four = step_schedule(BucketConfig(layers_per_bucket=3, accumulation_steps=4))
    # Three micro-batches under no_sync first, each forward + backward = 12 + 24 = 36 ms:
    # the last backward starts at 108; step = 12 + 108 + 29.95 + 2 = 151.95.
    assert four.no_sync_ms == pytest.approx(108.0)
    assert four.step_time == pytest.approx(151.95)
    assert four.comm_end == pytest.approx(108.0 + 29.95)
    assert four.exposed_tail == pytest.approx(5.95)
    # Still four transfers: once per step, not once per micro-batch.
    iv = schedule_intervals(four)
    assert len(iv.of_kind(IntervalKind.TRANSFER).start) == 4
    assert four.bucket_start.min() >= 108.0
    nosync = iv.of_kind(IntervalKind.NO_SYNC)
    assert nosync.start.tolist() == pytest.approx([0.0, 36.0, 72.0])
    assert nosync.end.tolist() == pytest.approx([24.0, 60.0, 96.0])
    forward = iv.of_kind(IntervalKind.FORWARD)
    assert forward.start.tolist() == pytest.approx([24.0, 60.0, 96.0])
    assert forward.end.tolist() == pytest.approx([36.0, 72.0, 108.0])
    # Per micro-batch the step costs 151.95 / 4 = 37.99 ms against 43.95 without.
    assert four.step_time / 4 == pytest.approx(37.9875)


def test_one_step_is_unchanged() -> None:
    s = step_schedule(BucketConfig(accumulation_steps=1))
    assert s.no_sync_ms == 0.0
    assert len(schedule_intervals(s).of_kind(IntervalKind.NO_SYNC).start) == 0


def test_sweep_adds_the_same_micro_batches() -> None:
    base = sweep_layers_per_bucket(BucketConfig())
    four = sweep_layers_per_bucket(BucketConfig(accumulation_steps=4))
    assert four.step_time == pytest.approx(base.step_time + 108.0)
    assert four.best_setting == base.best_setting


def test_bounds() -> None:
    with pytest.raises(ValueError):
        BucketConfig(accumulation_steps=0)
    with pytest.raises(ValueError):
        BucketConfig(accumulation_steps=65)
