"""Bucketing rules by hand: cutting by size, by count, by cap, and DDP's two orders."""

from __future__ import annotations

import numpy as np
import pytest

from widgets.model.buckets import (
    DDP_DEFAULT_CAP_MIB,
    DDP_FIRST_BUCKET_MIB,
    assign_by_cap,
    assign_by_count,
    cut_by_size,
    ddp_assignment,
    gradient_tensors,
    layer_assignment,
)
from widgets.model.buckets.bucketing import ddp_caps_mb


def test_ddp_defaults_in_mib_and_mb() -> None:
    assert (DDP_DEFAULT_CAP_MIB, DDP_FIRST_BUCKET_MIB) == (25.0, 1.0)
    assert ddp_caps_mb(None) == pytest.approx((1.048576, 26.2144))
    assert ddp_caps_mb(2.0) == pytest.approx((2.097152, 2.097152))


def test_a_bucket_closes_when_it_reaches_its_limit() -> None:
    # First limit 2: 1 + 1 reaches it exactly. Then limit 3: 1 + 1 + 1.
    assert cut_by_size([1.0] * 5, 2.0, 3.0).tolist() == [[0, 0, 1, 1, 1]]
    # One row per limit; a bucket overshoots by at most one item.
    assert cut_by_size([1.0] * 3, [1.0, 3.0], [1.0, 3.0]).tolist() == [[0, 1, 2], [0, 0, 0]]
    assert cut_by_size([2.0] * 3, [1.0, 10.0], 2.0).tolist() == [[0, 1, 2], [0, 0, 0]]
    assert cut_by_size([0.5, 3.0, 0.5, 0.5], 1.0, 1.0).tolist() == [[0, 0, 1, 1]]


def test_a_cap_must_be_positive() -> None:
    for first, rest in ((0.0, 1.0), (1.0, 0.0), (-1.0, 1.0), (1.0, -1.0)):
        with pytest.raises(ValueError, match=r"^a byte cap must be positive$"):
            cut_by_size([1.0], first, rest)


def test_by_count_from_the_last_layer_back() -> None:
    assert assign_by_count(5, 2).tolist() == [2, 1, 1, 0, 0]
    assert assign_by_count(5, np.array([1, 5])).tolist() == [[4, 3, 2, 1, 0], [0] * 5]
    assert assign_by_count(3, 1).tolist() == [2, 1, 0]
    with pytest.raises(ValueError, match=r"^a bucket holds at least one layer$"):
        assign_by_count(3, 0)
    with pytest.raises(ValueError, match=r"^a bucket holds at least one layer$"):
        assign_by_count(3, np.array([2, 0]))


def test_by_cap_whole_layers_from_the_last_back() -> None:
    assert assign_by_cap([1.0, 1.0, 1.0, 1.0], 2.0).tolist() == [1, 1, 0, 0]
    assert assign_by_cap([1.0, 1.0, 1.0], 2.0).tolist() == [1, 0, 0]
    assert assign_by_cap([1.0] * 4, np.array([2.0, 4.0])).tolist() == [[1, 1, 0, 0], [0] * 4]
    # Cut from layer 3 back: 1 + 1 reaches 2 (bucket 0), layer 1's 3 MB is bucket 1.
    assert assign_by_cap([3.0, 1.0, 1.0], 2.0).tolist() == [1, 0, 0]


def test_ddp_rebuilt_cuts_in_readiness_order() -> None:
    # Three 2 MB layers: registration w1 b1 w2 b2 w3 b3, readiness b3 w3 b2 w2 b1 w1.
    # First limit 1 MB: b3 + w3 = 2 closes bucket 0; then b2 + w2 + b1 + w1 = 4 >= 3.
    t = gradient_tensors(np.ones(3), np.full(3, 2.0))
    assert ddp_assignment(t, 1.0, 3.0, rebuilt=True).tolist() == [[1, 1, 1, 1, 0, 0]]
    rows = ddp_assignment(t, np.array([1.0, 100.0]), np.array([3.0, 100.0]), rebuilt=True)
    assert rows.tolist() == [[1, 1, 1, 1, 0, 0], [0] * 6]


def test_ddp_find_unused_cuts_in_registration_order_then_reverses() -> None:
    # w1 alone reaches 1 MB: bucket 0 of the cut; b1 w2 b2 w3 = 4 reach 3; b3 is left.
    # Reversed: b3 is bucket 0, w1 the last; layer 1's weight and bias are split.
    t = gradient_tensors(np.ones(3), np.full(3, 2.0))
    assert ddp_assignment(t, 1.0, 3.0, rebuilt=False).tolist() == [[2, 1, 1, 1, 1, 0]]
    rows = ddp_assignment(t, np.array([1.0, 100.0]), np.array([3.0, 100.0]), rebuilt=False)
    assert rows.tolist() == [[2, 1, 1, 1, 1, 0], [0] * 6]


def test_whole_layers_in_readiness_or_reverse_registration_order() -> None:
    # Layers registered 3, 1, 2 (tensors w3 b3 w1 b1 w2 b2), ready 3, 2, 1 (layer 3 first).
    t = gradient_tensors(np.ones(3), np.ones(3), registration=np.array([2, 3, 1]))
    # Rebuilt: layer 3 is bucket 0, layer 2 next, layer 1 last.
    rows = layer_assignment(t, [1, 2], rebuilt=True)
    assert rows.tolist() == [[0, 0, 2, 2, 1, 1], [0, 0, 1, 1, 0, 0]]
    # Reverse registration: layer 2 (registered last) first, then 1, then 3.
    rows = layer_assignment(t, [1, 2], rebuilt=False)
    assert rows.tolist() == [[2, 2, 1, 1, 0, 0], [1, 1, 0, 0, 0, 0]]
    assert layer_assignment(t, 3, rebuilt=True).tolist() == [[0] * 6]
    for bad in (0, [1, 0]):
        with pytest.raises(ValueError, match=r"^a bucket holds at least one layer$"):
            layer_assignment(t, bad, rebuilt=True)
