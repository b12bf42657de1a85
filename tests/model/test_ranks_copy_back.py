"""The schedule's optional copy-back: after its backward, each rank copies the reduced buckets
back into the gradients, and the copies slow the transfers still running (``copy_back_ms``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from widgets.model.ranks import rank_schedule


def test_one_rank_worked_example() -> None:
    # Layers of 4 ms, a bucket each, transfers of 2 ms, c_t = 1. Transfer 0 runs from 4 at
    # half speed while layer 2 computes (4-8): its 2 ms take until 8. Backward ends at 8 and
    # transfer 1 starts. Bucket 0 is copied back 8-10: transfer 1 does 1 ms of work by 10
    # and the other 1 ms at full speed, ending at 11 instead of 10.
    kw = dict(transfer_contention=1.0)
    without = rank_schedule([4.0, 4.0], [0, 1], [2.0, 2.0], **kw)
    s = rank_schedule([4.0, 4.0], [0, 1], [2.0, 2.0], copy_back_ms=[2.0, 2.0], **kw)
    assert without.bucket_end.tolist() == [8.0, 10.0]
    assert s.bucket_end.tolist() == [8.0, 11.0]
    assert s.backward_end.tolist() == [8.0]
    assert s.exposed_tail == 3.0 and without.exposed_tail == 2.0


def test_each_rank_copies_after_its_own_backward_and_the_bucket() -> None:
    # Two ranks, two layers, a bucket each, c = 0, c_t = 1; transfers 1 and 4 ms, bucket 0
    # copied back in 3 ms. Gradients: rank 0 at 2 and 4, rank 1 at 2 and 8.
    # Transfer 0 starts at 2; both ranks compute then: 1 ms of work takes 2-4.
    # Transfer 1 starts at 8 (rank 1's last gradient). Copies of bucket 0: rank 0 from
    # max(4, 4) = 4 to 7, rank 1 from max(8, 4) = 8 to 11. No rank computes after 8, but
    # rank 1 copies 8-11: 1.5 ms of work by 11, then 2.5 ms at full speed: ends at 13.5
    # (12 without copies). Rank 0's copy, over by 8, changes nothing.
    backward = [[2.0, 2.0], [2.0, 6.0]]
    kw = dict(transfer_contention=1.0)
    without = rank_schedule(backward, [0, 1], [1.0, 4.0], **kw)
    s = rank_schedule(backward, [0, 1], [1.0, 4.0], copy_back_ms=[3.0, 0.0], **kw)
    assert without.bucket_end.tolist() == [4.0, 12.0]
    assert s.bucket_end.tolist() == [4.0, 13.5]
    assert s.backward_end.tolist() == [4.0, 8.0]


def test_copies_queue_behind_each_other_on_a_rank() -> None:
    # One rank, three layers of 1 ms, a bucket each, transfers 0.5 ms, c_t = 1.
    # Transfer 0 from 1 at half speed while computing: ends at 2; transfer 1 from 2: ends
    # at 3. Backward ends at 3 and transfer 2 starts. Copies: bucket 0 3-5, bucket 1 5-7
    # (it waits for the first). Transfer 2 runs at half speed throughout: ends at 4.
    # With copies of 0.25 ms: 3-3.25 and 3.25-3.5, half speed for 0.5 ms (0.25 of work),
    # then 0.25 ms at full speed: ends at 3.75.
    kw = dict(transfer_contention=1.0)
    s = rank_schedule([1.0] * 3, [0, 1, 2], [0.5] * 3, copy_back_ms=[2.0, 2.0, 0.0], **kw)
    assert s.bucket_end.tolist() == [2.0, 3.0, 4.0]
    s = rank_schedule([1.0] * 3, [0, 1, 2], [0.5] * 3, copy_back_ms=[0.25, 0.25, 9.0], **kw)
    assert s.bucket_end.tolist() == [2.0, 3.0, 3.75]


def test_rejects_bad_copy_back_times() -> None:
    with pytest.raises(ValueError, match="one copy-back time per bucket"):
        rank_schedule([1.0, 1.0], [0, 1], [1.0, 1.0], copy_back_ms=[1.0])
    for bad in ([1.0, -1.0], [1.0, np.nan], [np.inf, 0.0]):
        with pytest.raises(ValueError, match="finite and non-negative"):
            rank_schedule([1.0, 1.0], [0, 1], [1.0, 1.0], copy_back_ms=bad)


_config = st.fixed_dictionaries(
    {
        "ranks": st.integers(1, 3),
        "layers": st.integers(1, 6),
        "seed": st.integers(0, 10_000),
        "c": st.floats(0.0, 3.0),
        "c_t": st.floats(0.0, 3.0),
    }
)


def _random_case(cfg: dict):
    rng = np.random.default_rng(cfg["seed"])
    work = rng.uniform(0.1, 5.0, (cfg["ranks"], cfg["layers"]))
    cuts = np.sort(rng.choice(cfg["layers"], rng.integers(0, cfg["layers"]), replace=False))
    bucket = np.zeros(cfg["layers"], int)
    for cut in cuts[cuts > 0]:
        bucket[cut:] += 1
    n = bucket.max() + 1
    transfer = rng.uniform(0.1, 4.0, n)
    copies = rng.uniform(0.0, 4.0, n)
    start = -rng.uniform(0.0, 1.0, cfg["ranks"])
    return work, bucket, transfer, copies, start


@settings(max_examples=60, deadline=None)
@given(_config)
def test_zero_copies_change_nothing(cfg) -> None:
    work, bucket, transfer, _, start = _random_case(cfg)
    kw = dict(start_ms=start, contention=cfg["c"], transfer_contention=cfg["c_t"])
    a = rank_schedule(work, bucket, transfer, **kw)
    b = rank_schedule(work, bucket, transfer, copy_back_ms=np.zeros(transfer.size), **kw)
    assert np.array_equal(a.bucket_end, b.bucket_end)
    assert np.array_equal(a.backward_end, b.backward_end)


@settings(max_examples=60, deadline=None)
@given(_config)
def test_copies_only_delay_transfers_and_need_transfer_contention(cfg) -> None:
    work, bucket, transfer, copies, start = _random_case(cfg)
    # Without backward contention, backward does not depend on the transfers: copies leave
    # it alone and can only make transfers end later, never before.
    kw = dict(start_ms=start, contention=0.0, transfer_contention=cfg["c_t"])
    a = rank_schedule(work, bucket, transfer, **kw)
    b = rank_schedule(work, bucket, transfer, copy_back_ms=copies, **kw)
    assert np.array_equal(a.backward_end, b.backward_end)
    assert np.all(b.bucket_end >= a.bucket_end - 1e-9)
    # A transfer is slowed at most (1 + c_t) times, copies or not.
    assert np.all(b.bucket_duration_ms <= (1 + cfg["c_t"]) * transfer + 1e-9)
    # Without transfer contention a copy slows nothing, whatever c.
    kw = dict(start_ms=start, contention=cfg["c"], transfer_contention=0.0)
    a = rank_schedule(work, bucket, transfer, **kw)
    b = rank_schedule(work, bucket, transfer, copy_back_ms=copies, **kw)
    assert np.array_equal(a.bucket_end, b.bucket_end)
