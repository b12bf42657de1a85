"""Gradient tensors by hand: sizes, registration, readiness and tied embeddings."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from widgets.model.buckets import (
    MB_PER_MIB,
    TensorKind,
    bias_mb,
    gradient_tensors,
    layer_ready_times,
)

W, B = "weight", "bias"


def test_units_and_kinds() -> None:
    assert MB_PER_MIB == 2**20 / 1e6
    assert [str(k) for k in TensorKind] == ["weight", "bias"]


def test_bias_of_a_square_linear_layer() -> None:
    # 4 (d^2 + d) bytes in all and 4 d of bias: d = 2 gives 24 bytes, 8 of them bias.
    np.testing.assert_allclose(bias_mb([24e-6, 4 * (100**2 + 100) / 1e6]), [8e-6, 400e-6])
    d = bias_mb(25.0) * 1e6 / 4  # 25 MB: d^2 + d = 6.25e6
    assert 4 * (d * d + d) == pytest.approx(25e6)


def test_ready_times_run_from_the_last_layer_and_scale_with_a_straggler() -> None:
    np.testing.assert_allclose(layer_ready_times([1.0, 2.0, 3.0]), [6.0, 5.0, 3.0])
    # 50 % slower: 1.5, 3, 4.5 ms; layer 3 at 4.5, layer 2 at 7.5, layer 1 at 9.
    np.testing.assert_allclose(layer_ready_times([1.0, 2.0, 3.0], 50.0), [9.0, 7.5, 4.5])


def test_worked_example_registered_3_1_2() -> None:
    t = gradient_tensors(np.ones(3), np.full(3, 25.0), registration=np.array([2, 3, 1]))
    b = bias_mb(25.0)
    assert t.layer.tolist() == [3, 3, 1, 1, 2, 2]  # w3 b3 w1 b1 w2 b2
    assert [str(k) for k in t.kind] == [W, B, W, B, W, B]
    np.testing.assert_allclose(t.size_mb, [25 - b, b] * 3)
    np.testing.assert_allclose(t.ready, [1.0, 1.0, 3.0, 3.0, 2.0, 2.0])
    assert t.readiness_order.tolist() == [1, 0, 5, 4, 3, 2]  # b3 w3 b2 w2 b1 w1
    np.testing.assert_allclose(t.layer_ready, [3.0, 2.0, 1.0])
    assert not t.shared.any()
    assert (len(t), t.n_layers) == (6, 3)
    assert t.layer_order().tolist() == [3, 1, 2]
    assert t.layers_by_readiness().tolist() == [3, 2, 1]


def test_tied_embeddings_one_shared_weight_and_the_heads_bias() -> None:
    t = gradient_tensors(np.ones(3), np.array([200.0, 25.0, 200.0]), tied_embeddings=True)
    assert t.layer.tolist() == [1, 1, 2, 2, 3]
    assert [str(k) for k in t.kind] == [W, B, W, B, B]
    assert t.shared.tolist() == [True, False, False, False, False]
    b200, b25 = bias_mb(200.0), bias_mb(25.0)
    np.testing.assert_allclose(t.size_mb, [200 - b200, b200, 25 - b25, b25, b200])
    np.testing.assert_allclose(t.ready, [3.0, 3.0, 2.0, 2.0, 1.0])
    assert t.layers_by_readiness().tolist() == [3, 2, 1]
    # Two layers: the second is the head.
    two = gradient_tensors(np.ones(2), np.array([200.0, 200.0]), tied_embeddings=True)
    assert two.layer.tolist() == [1, 1, 2]
    assert two.shared.tolist() == [True, False, False]
    # One layer cannot tie to itself.
    one = gradient_tensors(np.ones(1), np.array([25.0]), tied_embeddings=True)
    assert [str(k) for k in one.kind] == [W, B] and not one.shared.any()


def test_layers_by_readiness_with_a_layer_that_has_only_its_bias_ready_early() -> None:
    # The head's bias is ready first; layer 1's shared weight last: by last tensor, 3, 2, 1.
    t = gradient_tensors(np.array([1.0, 2.0, 4.0]), np.full(3, 25.0), tied_embeddings=True)
    np.testing.assert_allclose(t.layer_ready, [7.0, 6.0, 4.0])
    assert t.layers_by_readiness().tolist() == [3, 2, 1]
    assert t.readiness_order.tolist() == [4, 3, 2, 1, 0]


def test_registration_must_be_a_permutation() -> None:
    for bad in ([1, 1, 2], [1, 2], [0, 1, 2], [2, 3, 4]):
        with pytest.raises(ValueError, match="positions 1 to 3 once each"):
            gradient_tensors(np.ones(3), np.ones(3), registration=np.array(bad))


def test_the_record_is_frozen_and_compared_by_identity() -> None:
    t = gradient_tensors(np.ones(2), np.ones(2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.layer = np.zeros(0, int)
    # Compared by identity (array fields have no single truth value).
    assert t != gradient_tensors(np.ones(2), np.ones(2)) and t == t
