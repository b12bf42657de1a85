"""The ``Schedule`` record built from one row of the engine: defaults, checks, identity."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from widgets.model.buckets.schedule import build_schedule, schedule_arrays
from widgets.model.buckets.tensors import TensorKind, gradient_tensors

LINK = {"ranks": 2, "bandwidth": 10.0, "latency_ms": 0.5}


def test_schedule_arrays_defaults_add_nothing_to_the_step() -> None:
    # Two layers of 2 ms, one bucket each: with no forward, optimizer, enqueue or
    # straggler, the step is max(E, C) and the record says the extras are zero.
    s = schedule_arrays([2.0, 2.0], [1.0, 1.0], [1, 0], **LINK)
    assert (s.forward_ms, s.optimizer_ms, s.enqueue_ms) == (0.0, 0.0, 0.0)
    assert s.layer_backward_ms.tolist() == [2.0, 2.0]
    assert s.step_time == max(s.backward_end, s.comm_end) == s.optimizer_start
    assert s.backward_end == 4.0
    # Bucket 0 (layer 2) is ready at 2 and launched at once; bucket 1 at 4.
    assert s.bucket_ready.tolist() == [2.0, 4.0]
    assert s.bucket_launch.tolist() == [2.0, 4.0]


def test_build_schedule_defaults_add_nothing_to_the_step() -> None:
    tensors = gradient_tensors(np.array([2.0]), np.array([1.0]))
    s = build_schedule(
        tensors, np.zeros(len(tensors), int), backward_ms=[2.0], layer_grad_mb=[1.0], **LINK
    )
    assert (s.forward_ms, s.optimizer_ms, s.enqueue_ms) == (0.0, 0.0, 0.0)
    assert s.layer_backward_ms.tolist() == [2.0]  # no straggler stretch
    assert s.step_time == s.comm_end  # one bucket launched when backward ends
    assert s.bucket_launch.tolist() == [2.0]
    # A current setting without a best one gives no suggestion (and no error).
    with_setting = build_schedule(
        tensors,
        np.zeros(len(tensors), int),
        backward_ms=[2.0],
        layer_grad_mb=[1.0],
        setting=1.0,
        **LINK,
    )
    assert with_setting.regime.suggestion is None
    assert with_setting.regime.best_setting is None


def test_a_layer_is_drawn_in_its_weights_bucket() -> None:
    # One layer whose bias (ready first) is in bucket 0 and weight in bucket 1.
    tensors = gradient_tensors(np.array([2.0]), np.array([1.0]))
    assert [k for k in tensors.kind] == [TensorKind.WEIGHT, TensorKind.BIAS]
    s = build_schedule(tensors, np.array([1, 0]), backward_ms=[2.0], layer_grad_mb=[1.0], **LINK)
    assert s.layer_bucket.tolist() == [1]


@pytest.mark.parametrize(
    "backward, grad",
    [
        ([1.0, 2.0], [1.0]),  # lengths differ
        ([[1.0, 2.0]], [[1.0, 2.0]]),  # same shape, but two-dimensional
        ([], []),  # no layers
    ],
)
def test_layer_arrays_are_checked_one_by_one(backward, grad) -> None:
    with pytest.raises(
        ValueError, match=r"^give one backward time and one gradient size per layer$"
    ):
        schedule_arrays(backward, grad, [0] * max(1, len(backward)), **LINK)


@pytest.mark.parametrize(
    "backward, grad",
    [([0.0, 1.0], [1.0, 1.0]), ([1.0, 1.0], [1.0, -1.0]), ([1.0, 1.0], [1.0, 0.0])],
)
def test_each_profile_must_be_positive(backward, grad) -> None:
    with pytest.raises(ValueError, match=r"^backward times and gradient sizes must be positive$"):
        schedule_arrays(backward, grad, [0, 0], **LINK)


def test_bucket_numbers_must_have_no_gaps() -> None:
    tensors = gradient_tensors(np.array([2.0]), np.array([1.0]))
    with pytest.raises(
        ValueError,
        match=r"^give each tensor a bucket, numbering buckets 0, 1, \.\.\. without gaps$",
    ):
        build_schedule(tensors, np.array([0, 2]), backward_ms=[2.0], layer_grad_mb=[1.0], **LINK)


def test_a_schedule_is_a_frozen_record_compared_by_identity() -> None:
    a = schedule_arrays([2.0, 2.0], [1.0, 1.0], [1, 0], **LINK)
    b = schedule_arrays([2.0, 2.0], [1.0, 1.0], [1, 0], **LINK)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.step_time = 0.0  # type: ignore[misc]
    # Arrays inside: equal content must not be compared element-wise (that raises).
    assert a != b and a == a
    assert len({a, b}) == 2


def test_one_bucket_index_per_layer() -> None:
    with pytest.raises(ValueError, match=r"^give one bucket index per layer$"):
        schedule_arrays([1.0, 1.0], [1.0, 1.0], [0], **LINK)


def test_a_straggler_stretches_every_layer() -> None:
    # 50 % slower: layers of 2 ms take 3 ms, so backward ends at 6.
    s = schedule_arrays([2.0, 2.0], [1.0, 1.0], [1, 0], straggler_pct=50.0, **LINK)
    assert s.layer_backward_ms.tolist() == [3.0, 3.0]
    assert s.backward_end == 6.0


def test_a_tied_head_is_drawn_in_its_own_biass_bucket() -> None:
    # Tied embeddings, two layers: layer 1's weight (shared with the head), layer 1's
    # bias, and the head's (layer 2's) bias, which is its only tensor. Layer 1 is drawn
    # in its weight's bucket (1), the head in its bias's bucket (0).
    tensors = gradient_tensors(np.array([2.0, 2.0]), np.array([1.0, 1.0]), tied_embeddings=True)
    assert tensors.layer.tolist() == [1, 1, 2]
    assert [k for k in tensors.kind] == [TensorKind.WEIGHT, TensorKind.BIAS, TensorKind.BIAS]
    s = build_schedule(
        tensors, np.array([1, 1, 0]), backward_ms=[2.0, 2.0], layer_grad_mb=[1.0, 1.0], **LINK
    )
    assert s.layer_bucket.tolist() == [1, 0]
