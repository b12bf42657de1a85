"""Ring, tree and auto all-reduce costs, against hand-computed values and invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from widgets.model.buckets import BucketConfig, step_schedule
from widgets.model.buckets.cost import allreduce_ms, allreduce_parts, tree_allreduce_ms


def test_ring_at_two_ranks_by_hand() -> None:
    # 2(p-1) alpha + 2(p-1)/p n/B = 2 x 0.01 + 1 x 10/10 = 1.02 ms.
    assert allreduce_ms(10.0, 2, 10.0, 0.01, "ring") == pytest.approx(1.02)
    # Tree at p = 2: 2 x floor(log2 2) x 0.01 + 2 x 10/10 = 2.02 ms; auto takes the ring.
    assert allreduce_ms(10.0, 2, 10.0, 0.01, "tree") == pytest.approx(2.02)
    assert allreduce_ms(10.0, 2, 10.0, 0.01, "auto") == pytest.approx(1.02)


def test_tree_at_512_ranks_by_hand() -> None:
    # log2 512 = 9: 2 x 9 x 0.014 + 2 x 25/50 = 0.252 + 1.0 = 1.252 ms.
    assert tree_allreduce_ms(25.0, 512, 50.0, 0.014) == pytest.approx(1.252)
    # The ring pays 2 x 511 steps: 14.308 + 2 x 511/512 x 0.5 = 15.306 ms.
    assert allreduce_ms(25.0, 512, 50.0, 0.014, "ring") == pytest.approx(15.306046875)
    assert allreduce_ms(25.0, 512, 50.0, 0.014, "auto") == pytest.approx(1.252)


def test_tree_depth_is_floor_of_log2() -> None:
    # 1000 ranks: floor(log2 1000) = 9 hops (NCCL's log2i), so 18 steps of 0.001 ms.
    assert tree_allreduce_ms(0.0, 1000, 1.0, 0.001) == pytest.approx(0.018)


def test_auto_picks_per_bucket() -> None:
    # 64 ranks, 0.01 ms a step, 100 GB/s. A 1 MB bucket: ring 1.26 + 0.0197 = 1.2797,
    # tree 0.12 + 0.02 = 0.14 -> tree. A 1000 MB bucket: ring 1.26 + 19.6875 = 20.9475,
    # tree 0.12 + 20 = 20.12 -> tree; at 10 000 MB: ring 198.135, tree 200.12 -> ring.
    overhead, traffic, tree = allreduce_parts([1.0, 1000.0, 10000.0], 64, 100.0, 0.01, "auto")
    assert tree.tolist() == [True, True, False]
    assert (overhead + traffic) == pytest.approx([0.14, 20.12, 1.26 + 196.875])


def test_unknown_algorithm_is_refused() -> None:
    with pytest.raises(ValueError):
        allreduce_ms(1.0, 8, 1.0, 0.01, "butterfly")


sizes = st.floats(min_value=0.001, max_value=1e5)
ranks = st.integers(min_value=2, max_value=4096)
bandwidths = st.floats(min_value=0.01, max_value=1e4)
latencies = st.floats(min_value=0.0, max_value=100.0)


@settings(deadline=None)  # timing on a shared machine is not what is tested
@given(sizes, ranks, bandwidths, latencies)
def test_auto_is_never_dearer_than_either(n: float, p: int, b: float, a: float) -> None:
    auto = allreduce_ms(n, p, b, a, "auto")
    assert auto <= allreduce_ms(n, p, b, a, "ring")
    assert auto <= allreduce_ms(n, p, b, a, "tree")
    assert auto == min(allreduce_ms(n, p, b, a, "ring"), allreduce_ms(n, p, b, a, "tree"))


@settings(deadline=None)
@given(sizes, sizes, ranks, bandwidths, latencies, st.sampled_from(["ring", "tree", "auto"]))
def test_costs_grow_with_bytes(n1: float, n2: float, p: int, b: float, a: float, algo: str):
    lo, hi = sorted((n1, n2))
    assert allreduce_ms(lo, p, b, a, algo) <= allreduce_ms(hi, p, b, a, algo)


def test_bucket_timeline_tree_transfer_by_hand() -> None:
    # 12 layers of 25 MB, 3 per bucket (75 MB buckets), 512 ranks, 50 GB/s, 0.014 ms:
    # each tree transfer is 0.252 + 2 x 75/50 = 3.252 ms; the ring's 14.308 + 2.99707.
    tree = step_schedule(
        BucketConfig(
            layers_per_bucket=3, ranks=512, bandwidth=50.0, latency_ms=0.014, algorithm="tree"
        )
    )
    assert tree.bucket_transfer_ms == pytest.approx([3.252] * 4)
    assert tree.bucket_tree.tolist() == [True] * 4
    ring = step_schedule(
        BucketConfig(layers_per_bucket=3, ranks=512, bandwidth=50.0, latency_ms=0.014)
    )
    assert ring.bucket_transfer_ms == pytest.approx([14.308 + 2 * 511 / 512 * 1.5] * 4)
    assert not ring.bucket_tree.any()
    # Latency part: 4 tree transfers x 0.252 ms.
    assert tree.overhead_ms == pytest.approx(4 * 0.252)
    assert tree.traffic_ms == pytest.approx(12 * 25 * 2 / 50)


def test_auto_mixes_within_one_step() -> None:
    # 8 ranks, 1 ms a step, 10 GB/s, one layer per bucket. Bucket 0 (layer 2, 1 MB):
    # ring 14 + 0.175 = 14.175, tree 6 + 0.2 = 6.2 -> tree. Bucket 1 (layer 1, 1000 MB):
    # ring 14 + 175 = 189, tree 6 + 200 = 206 -> ring.
    config = BucketConfig(
        n_layers=2,
        layers_per_bucket=1,
        ranks=8,
        bandwidth=10.0,
        latency_ms=1.0,
        algorithm="auto",
        layer_grad_mb=np.array([1000.0, 1.0]),
        layer_backward_ms=np.array([1.0, 1.0]),
    )
    s = step_schedule(config)
    assert s.bucket_tree.tolist() == [True, False]
    assert s.bucket_transfer_ms == pytest.approx([6.2, 189.0])


def test_average_service_rate_follows_the_algorithm() -> None:
    from widgets.model.buckets import average_rates

    # Ring over 8 ranks at 25 GB/s: 25 x 8 / 14 = 14.29 MB/ms; tree: 25 / 2 = 12.5.
    assert average_rates(BucketConfig())[1] == pytest.approx(25 * 8 / 14)
    assert average_rates(BucketConfig(algorithm="tree"))[1] == pytest.approx(12.5)
    # Auto at 8 ranks and 0.05 ms: every 75 MB bucket goes by ring (5.95 < 0.3 + 6).
    assert average_rates(BucketConfig(algorithm="auto"))[1] == pytest.approx(25 * 8 / 14)
