"""Ranks whose readiness order differs still launch rank 0's buckets, in index order."""

from __future__ import annotations

import numpy as np
import pytest

from widgets.many_ranks import model as rv


def config(**overrides) -> rv.RanksConfig:
    return rv.SCENARIOS.load(rv.READINESS, **overrides)


def test_rank_orders_differ() -> None:
    orders = config().rank_orders() + 1  # as layer numbers
    assert orders[0].tolist() == [12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]
    assert orders[1].tolist() == [11, 12, 9, 10, 7, 8, 5, 6, 3, 4, 1, 2]


def test_two_ranks_launch_identical_buckets_in_the_same_order() -> None:
    c = config()
    r = c.result()
    # Rank 0's buckets on both ranks: {12, 11, 10}, {9, 8, 7}, {6, 5, 4}, {3, 2, 1}.
    assert [b.tolist() for b in r.bucket_layers] == [[12, 11, 10], [9, 8, 7], [6, 5, 4], [3, 2, 1]]
    # Rank 1's own order would have cut {11, 12, 9}, {10, 7, 8}, {5, 6, 3}, {4, 1, 2}.
    own = r.own_buckets[1]
    assert [sorted((np.flatnonzero(own == b) + 1).tolist()) for b in range(4)] == [
        [9, 11, 12],
        [7, 8, 10],
        [3, 5, 6],
        [1, 2, 4],
    ]
    assert r.ranks_cutting_otherwise == [1]
    s = r.schedule
    # Ready on rank 0 at 6, 12, 18, 24; on rank 1 (layers every 2 ms in its order) at
    # 8 (layer 10 is its 4th), 12, 20, 24. Each rank launches in bucket-index order.
    assert s.bucket_ready[0] == pytest.approx([6, 12, 18, 24])
    assert s.bucket_ready[1] == pytest.approx([8, 12, 20, 24])
    assert np.all(np.diff(s.bucket_launch, axis=1) > 0)
    # Transfers of 5.95 ms: 8.05-14.00, 14.00-19.95, 20.05-26.00, 26.00-31.95.
    assert s.bucket_start == pytest.approx([8.05, 14.0, 20.05, 26.0])
    assert s.bucket_end == pytest.approx([14.0, 19.95, 26.0, 31.95])
    # Latest rank per bucket: rank 1, a tie (lowest listed), rank 1, a tie.
    assert r.defining_ranks.tolist() == [1, 0, 1, 0]


def test_iteration_zero_is_one_bucket_after_backward() -> None:
    r = config(iteration=0).result()
    assert r.n_buckets == 1
    # 300 MB: 2 x 7 x 0.05 + 2 x 7/8 x 300/25 = 21.70 ms, from 24.05 (both done, enqueued).
    assert r.schedule.bucket_start == pytest.approx([24.05])
    assert r.schedule.bucket_end == pytest.approx([45.75])
    assert r.ranks_cutting_otherwise == []


def test_tree_on_many_ranks_by_hand() -> None:
    # 512 ring ranks, tree: 2 x 9 x 0.05 + 2 x 75/25 = 0.9 + 6 = 6.9 ms per bucket.
    c = config(ranks=512, algorithm="tree")
    assert c.transfer_ms() == pytest.approx([6.9] * 4)
