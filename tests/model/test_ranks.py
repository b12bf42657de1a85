"""The event-driven many-rank schedule: hand-computed cases and invariants."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from widgets.model.buckets import assign_by_count, ring_allreduce_ms, schedule_arrays
from widgets.model.ranks import _advance, rank_schedule


def test_two_partial_stragglers_define_different_buckets() -> None:
    # The worked example of RankSchedule: rank 0 slow early, rank 1 slow late.
    s = rank_schedule([[2, 2, 1, 1], [1, 1, 3, 3]], [0, 0, 1, 1], [1, 1])
    assert s.layer_ready.tolist() == [[2, 4, 5, 6], [1, 2, 5, 8]]
    assert s.bucket_ready.tolist() == [[4, 6], [2, 8]]
    assert s.bucket_defining_rank.tolist() == [0, 1]
    assert s.bucket_start.tolist() == [4, 8]
    assert s.bucket_end.tolist() == [5, 9]
    assert s.backward_end.tolist() == [6, 8]
    assert s.comm_end == 9 and s.optimizer_start == 9
    assert s.idle_ms.tolist() == [3, 1]
    assert s.exposed_tail == 1
    assert s.bucket_link_wait.tolist() == [0, 0]


def test_twelve_layers_two_partial_stragglers() -> None:
    # Issue 8's case: one rank slow on layers 12-7, another on 6-1, a fast third.
    # Index 0 is layer 1; backward runs from layer 12 down at 1 ms a layer; rank 0
    # takes 1.5 ms on layers 12-7, rank 1 2 ms on layers 6-1. Two layers per
    # bucket, 0.5 ms transfers.
    n = 12
    work = np.ones((3, n))
    work[0, 6:] = 1.5
    work[1, :6] = 2.0
    s = rank_schedule(work, assign_by_count(n, 2), np.full(6, 0.5), order=np.arange(n)[::-1])
    # Rank 0: layers 12..7 ready at 1.5, 3, ..., 9, then 10..15. Rank 1: 1..6,
    # then 8, 10, ..., 18. Rank 2: 1..12.
    assert s.bucket_ready.tolist() == [
        [3, 6, 9, 11, 13, 15],
        [2, 4, 6, 10, 14, 18],
        [2, 4, 6, 8, 10, 12],
    ]
    assert s.bucket_defining_rank.tolist() == [0, 0, 0, 0, 1, 1]
    assert s.bucket_start.tolist() == [3, 6, 9, 11, 14, 18]
    assert s.backward_end.tolist() == [15, 18, 12]
    assert s.optimizer_start == 18.5
    assert s.idle_ms.tolist() == [3.5, 0.5, 6.5]  # the fast rank waits 6.5 ms
    assert s.exposed_tail == 0.5


def test_launch_waits_for_earlier_buckets_and_adds_enqueue() -> None:
    # One rank; bucket 1's layer (computed first) is ready before bucket 0's.
    s = rank_schedule([1.0, 3.0], [1, 0], [2.0, 2.0], enqueue_ms=0.5)
    assert s.bucket_ready.tolist() == [[4.0, 1.0]]
    assert s.bucket_launch.tolist() == [[4.5, 4.5]]
    assert s.bucket_start.tolist() == [4.5, 6.5]
    assert s.bucket_end.tolist() == [6.5, 8.5]


def test_a_late_start_delays_that_rank_only() -> None:
    s = rank_schedule([[1, 1], [1, 1]], [0, 0], [1], start_ms=[0, 3])
    assert s.backward_end.tolist() == [2, 5]
    assert s.bucket_defining_rank.tolist() == [1]
    assert s.idle_ms.tolist() == [4, 1]


def test_contention_more_overlap_but_slower() -> None:
    # The worked example of rank_schedule: overhead 1 ms + 1 ms per layer's data.
    two = rank_schedule([4.0, 4.0], [0, 1], [2.0, 2.0], contention=3.0)
    assert two.layer_ready.tolist() == [[4.0, 9.5]]
    assert two.bucket_start.tolist() == [4.0, 9.5]
    assert two.comm_end == 11.5
    assert two.slowdown_ms.tolist() == [1.5]
    one = rank_schedule([4.0, 4.0], [0, 0], [3.0], contention=3.0)
    assert one.comm_end == 11.0
    assert two.overlap_fraction == 0.5 and one.overlap_fraction == 0.0
    assert two.optimizer_start > one.optimizer_start


def test_contention_across_several_transfers_and_ranks() -> None:
    # c = 1 (half speed while busy). Rank 0: layers of 2, 2, 2; rank 1: 1, 1, 4.
    # Buckets one per layer, transfers 1 ms.
    s = rank_schedule([[2, 2, 2], [1, 1, 4]], [0, 1, 2], [1, 1, 1], contention=1.0)
    # Bucket 0: ready 2 (r0) and 1 (r1) -> link 2-3. Rank 0 layer 2 starts at 2,
    # 1 ms busy does 0.5, then 1.5 free -> 4.5. Rank 1 layer 2 starts at 1, free
    # until 2 (1 ms of work): ready at 2, before the link is busy.
    assert s.layer_ready[:, 1].tolist() == [4.5, 2.0]
    # Bucket 1: launches 4.5 and 2 -> link 4.5-5.5. Rank 0 layer 3 from 4.5:
    # 1 ms busy does 0.5, 1.5 free -> 7. Rank 1 layer 3 from 2: 2-3 busy does
    # 0.5, 3-4.5 free does 1.5, 4.5-5.5 busy does 0.5, then 1.5 free -> 7.
    assert s.layer_ready[:, 2].tolist() == [7.0, 7.0]
    assert s.bucket_start.tolist() == [2.0, 4.5, 7.0]
    assert s.comm_end == 8.0
    assert s.slowdown_ms.tolist() == [1.0, 1.0]


def test_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="each hold a layer"):
        rank_schedule([1, 1], [0, 2], [1, 1, 1])
    with pytest.raises(ValueError, match="contention"):
        rank_schedule([1, 1], [0, 0], [1], contention=-1)
    with pytest.raises(ValueError, match="order"):
        rank_schedule([1, 1], [0, 0], [1], order=[0, 0])
    with pytest.raises(ValueError, match="non-negative"):
        rank_schedule([1, -1], [0, 0], [1])


# --- invariants ----------------------------------------------------------------


@st.composite
def configurations(draw, max_ranks: int = 5, max_layers: int = 10):
    n_ranks = draw(st.integers(1, max_ranks))
    n_layers = draw(st.integers(1, max_layers))
    times = st.floats(0.01, 20.0, allow_nan=False)
    work = np.array(draw(st.lists(times, min_size=n_ranks * n_layers, max_size=n_ranks * n_layers)))
    work = work.reshape(n_ranks, n_layers)
    # Buckets: any grouping of layers, renumbered so that every index is used.
    raw = np.array(
        draw(st.lists(st.integers(0, n_layers - 1), min_size=n_layers, max_size=n_layers))
    )
    _, bucket = np.unique(raw, return_inverse=True)
    n_buckets = int(bucket.max()) + 1
    transfer = np.array(
        draw(st.lists(st.floats(0.0, 20.0), min_size=n_buckets, max_size=n_buckets))
    )
    order = np.array(draw(st.permutations(range(n_layers))))
    start = np.array(draw(st.lists(st.floats(0.0, 10.0), min_size=n_ranks, max_size=n_ranks)))
    enqueue = draw(st.floats(0.0, 1.0))
    contention = draw(st.one_of(st.just(0.0), st.floats(0.0, 4.0)))
    transfer_contention = draw(st.one_of(st.just(0.0), st.floats(0.0, 4.0)))
    return work, bucket, transfer, order, start, enqueue, contention, transfer_contention


@settings(max_examples=300, deadline=None)
@given(configurations())
def test_invariants(config) -> None:
    work, bucket, transfer, order, start, enqueue, c, c_t = config
    s = rank_schedule(
        work,
        bucket,
        transfer,
        order=order,
        start_ms=start,
        enqueue_ms=enqueue,
        contention=c,
        transfer_contention=c_t,
    )
    tol = 1e-9 * max(1.0, s.optimizer_start)
    # Layers run back to back in order on each rank, never faster than normal speed.
    for r in range(s.n_ranks):
        starts, ends = s.layer_start[r, order], s.layer_ready[r, order]
        assert starts[0] == start[r]
        np.testing.assert_array_equal(starts[1:], ends[:-1])
        assert np.all(ends - starts >= work[r, order] - tol)
        assert np.all(ends - starts <= (1 + c) * work[r, order] + tol)
    # A bucket is ready on a rank when its last gradient is; globally at the max.
    for b in range(s.n_buckets):
        np.testing.assert_array_equal(
            s.bucket_ready[:, b], s.layer_ready[:, bucket == b].max(axis=1)
        )
    # Launches follow bucket-index order on every rank, after readiness.
    assert np.all(np.diff(s.bucket_launch, axis=1) >= 0)
    assert np.all(s.bucket_launch >= s.bucket_ready + enqueue - tol)
    # A collective starts after every rank launched it and the previous one ended.
    assert np.all(s.bucket_start >= s.bucket_launch.max(axis=0))
    assert np.all(s.bucket_start[1:] >= s.bucket_end[:-1])
    # A transfer takes its time, up to (1 + c_t) times that while ranks compute.
    assert np.all(s.bucket_duration_ms >= transfer - tol)
    assert np.all(s.bucket_duration_ms <= (1 + c_t) * transfer + tol)
    if c_t == 0:
        np.testing.assert_allclose(s.bucket_duration_ms, transfer, atol=tol)
    else:
        # Slowed exactly while somebody computes: a transfer after every backward
        # ended runs at full speed.
        after = s.bucket_start >= s.backward_end.max()
        np.testing.assert_allclose(s.bucket_duration_ms[after], transfer[after], atol=tol)
    defining_launch = s.bucket_launch[s.bucket_defining_rank, np.arange(s.n_buckets)]
    np.testing.assert_array_equal(defining_launch, s.bucket_launch.max(axis=0))
    # The optimizer never starts before the last completion or any backward end.
    assert s.optimizer_start >= s.bucket_end.max()
    assert s.optimizer_start >= s.backward_end.max()
    assert np.all(s.idle_ms >= 0) and s.idle_ms.min() == pytest.approx(
        s.optimizer_start - s.backward_end.max()
    )
    # Contention only slows backward; without it backward takes exactly its work.
    assert np.all(s.slowdown_ms >= -tol)
    if c == 0:
        np.testing.assert_allclose(s.slowdown_ms, 0.0, atol=tol)


@settings(max_examples=200, deadline=None)
@given(configurations(max_ranks=1))
def test_one_rank_without_contention_is_the_closed_form(config) -> None:
    work, bucket, transfer, order, *_ = config
    s = rank_schedule(work, bucket, transfer, order=order)
    ready = np.cumsum(work[0, order])  # backward back to back
    np.testing.assert_array_equal(s.layer_ready[0, order], ready)
    end_prev = -np.inf
    for b in range(s.n_buckets):
        ready_b = s.layer_ready[0, bucket == b].max()
        launch_b = s.bucket_ready[0, : b + 1].max()
        assert s.bucket_start[b] == max(launch_b, end_prev)  # exactly, not approximately
        end_prev = s.bucket_start[b] + transfer[b]
        assert s.bucket_end[b] == end_prev
        assert s.bucket_ready[0, b] == ready_b


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.floats(0.1, 20.0), min_size=1, max_size=16),
    st.floats(0.1, 50.0),
    st.integers(1, 16),
    st.integers(2, 64),
    st.floats(1.0, 100.0),
    st.floats(0.0, 1.0),
)
def test_one_rank_matches_the_bucket_timeline(backward, size, per_bucket, ranks, bw, lat) -> None:
    n = len(backward)
    assignment = assign_by_count(n, min(per_bucket, n))
    timeline = schedule_arrays(
        backward, np.full(n, size), assignment, ranks=ranks, bandwidth=bw, latency_ms=lat
    )
    s = rank_schedule(
        np.asarray(backward)[None, :],
        assignment,
        timeline.bucket_transfer_ms,
        order=np.arange(n)[::-1],
    )
    np.testing.assert_array_equal(s.layer_ready[0], timeline.layer_ready)
    np.testing.assert_allclose(s.bucket_start, timeline.bucket_start, rtol=1e-12)
    np.testing.assert_allclose(s.bucket_end, timeline.bucket_end, rtol=1e-12)
    assert s.exposed_tail == pytest.approx(timeline.exposed_tail, rel=1e-12, abs=1e-12)
    assert s.optimizer_start == pytest.approx(timeline.optimizer_start, rel=1e-12)
    assert s.overlap_fraction == pytest.approx(timeline.overlap_fraction, rel=1e-9, abs=1e-12)


def test_ring_cost_is_the_callers() -> None:
    # The engine takes transfer times as given: the caller's alpha-beta cost.
    t = ring_allreduce_ms(np.array([10.0, 20.0]), 4, 10.0, 0.1)
    s = rank_schedule([1.0, 1.0], [0, 1], t)
    np.testing.assert_allclose(s.bucket_end - s.bucket_start, t)


def test_transfer_contention_worked_example() -> None:
    s = rank_schedule([4.0, 4.0], [0, 1], [2.0, 2.0], contention=1.0, transfer_contention=1.0)
    assert s.bucket_start.tolist() == [4.0, 10.0]
    assert s.bucket_end.tolist() == [8.0, 12.0]
    assert s.layer_ready.tolist() == [[4.0, 10.0]]
    assert s.bucket_duration_ms.tolist() == [4.0, 2.0]


def test_transfer_contention_lasts_while_any_rank_computes() -> None:
    # Two ranks, c = 0, c_t = 2: a transfer runs at 1/3 speed while any rank
    # computes (an all-reduce moves at its slowest participant's pace). Rank 0
    # computes 1 then 1; rank 1 computes 1 then 4. Bucket 0 (first layers)
    # starts at 1; rank 1 computes until 5, so by then 4/3 ms of its 2 ms are
    # done, and the last 2/3 ms at full speed end it at 5 + 2/3.
    s = rank_schedule([[1, 1], [1, 4]], [0, 1], [2.0, 1.0], transfer_contention=2.0)
    assert s.bucket_start[0] == 1.0
    assert s.bucket_end[0] == pytest.approx(5 + 2 / 3, rel=1e-12)
    assert s.bucket_start[1] == s.bucket_end[0]  # ready at 5, waits for the link
    assert s.bucket_end[1] == pytest.approx(6 + 2 / 3)


def test_rejects_each_bad_input_with_its_own_message() -> None:
    shape = r"^backward_ms is \(ranks, layers\) or \(layers,\)$"
    for bad in ([], [[[1.0]]]):
        with pytest.raises(ValueError, match=shape):
            rank_schedule(bad, [0], [1.0])
    for bad in ([1.0, np.inf], [1.0, np.nan], [1.0, -1.0]):
        with pytest.raises(ValueError, match=r"^backward times must be finite and non-negative$"):
            rank_schedule(bad, [0, 0], [1.0])
    for bad in ([0], [0.0, 0.0], [[0, 0]]):
        with pytest.raises(ValueError, match=r"^give one integer bucket index per layer$"):
            rank_schedule([1.0, 1.0], bad, [1.0])
    for bad in ([np.inf], [np.nan], [-1.0]):
        with pytest.raises(ValueError, match=r"^transfer times must be finite and non-negative$"):
            rank_schedule([1.0, 1.0], [0, 0], bad)
    with pytest.raises(
        ValueError, match=r"^buckets 0\.\.1 must each hold a layer \(one per transfer\)$"
    ):
        rank_schedule([1.0, 1.0], [1, 1], [1.0, 1.0])


def test_advance_skips_only_the_busy_intervals_already_over() -> None:
    # From 2.5, 1 ms of work with (1, 2) over and (3, 6) ahead at half speed (slow = 2):
    # 0.5 ms done by 3, the other 0.5 ms takes 1 ms there: done at 4, still in interval 1.
    assert _advance(2.5, 1.0, [(1.0, 2.0), (3.0, 6.0)], 0, 2.0) == (4.0, 1)
    # Two intervals over before it starts, then one ahead.
    busy = [(0.0, 1.0), (1.5, 2.0), (3.0, 6.0)]
    assert _advance(2.5, 1.0, busy, 0, 2.0) == (4.0, 2)
    # Past every interval: full speed.
    assert _advance(7.0, 1.0, busy, 0, 2.0) == (8.0, 3)


def test_the_record_is_frozen_and_compared_by_identity() -> None:
    s = rank_schedule([1.0, 1.0], [0, 1], [1.0, 1.0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.comm_end = 0.0
    assert s != rank_schedule([1.0, 1.0], [0, 1], [1.0, 1.0]) and s == s


def test_overlap_fraction_by_hand() -> None:
    # One rank: layer 0 ready at 1, its 0.5 ms transfer 1-1.5 hidden; layer 1 ready at 2,
    # 2-2.5 exposed. Half of 1 ms of transfers is hidden.
    s = rank_schedule([1.0, 1.0], [0, 1], [0.5, 0.5])
    assert s.overlap_fraction == 0.5
    assert rank_schedule([1.0], [0], [0.0]).overlap_fraction == 0.0  # no transfer time at all


def test_rejects_bad_options_with_their_own_messages() -> None:
    args = ([1.0, 1.0], [0, 0], [1.0])
    with pytest.raises(ValueError, match=r"^order must list every layer index once$"):
        rank_schedule(*args, order=[1, 1])
    with pytest.raises(ValueError, match=r"^backward start times must be finite$"):
        rank_schedule(*args, start_ms=np.inf)
    with pytest.raises(ValueError, match=r"^enqueue cost must be finite and non-negative$"):
        rank_schedule(*args, enqueue_ms=-0.5)
    with pytest.raises(ValueError, match=r"^contention must be finite and non-negative$"):
        rank_schedule(*args, contention=np.nan)
    with pytest.raises(ValueError, match=r"^contention must be finite and non-negative$"):
        rank_schedule([[1.0], [1.0]], [0], [1.0], contention=[1.0, -0.5])
    with pytest.raises(ValueError, match=r"^give one contention factor, or one per rank \(2\)$"):
        rank_schedule([[1.0], [1.0]], [0], [1.0], contention=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"^transfer contention must be finite and non-negative$"):
        rank_schedule(*args, transfer_contention=-1.0)
    # A layer with no backward work is allowed: both gradients are ready at 1.
    assert rank_schedule([0.0, 1.0], [0, 0], [1.0]).layer_ready.tolist() == [[0.0, 1.0]]


def test_both_contentions_slow_each_other_for_the_whole_transfer() -> None:
    # One rank, c = c_t = 1, layers of 4 ms, transfers 4 and 2 ms. Transfer 0 from 4 runs at
    # half speed while layer B computes at half speed: both end at 12 (B's 4 ms take 8,
    # the transfer's 4 ms take 8). Transfer 1 then runs alone, 12-14.
    s = rank_schedule([4.0, 4.0], [0, 1], [4.0, 2.0], contention=1.0, transfer_contention=1.0)
    assert s.layer_ready.tolist() == [[4.0, 12.0]]
    assert s.bucket_start.tolist() == [4.0, 12.0]
    assert s.bucket_end.tolist() == [12.0, 14.0]


def test_busy_intervals_and_a_transfer_after_backward_at_full_speed() -> None:
    s = rank_schedule([1.0, 1.0], [0, 1], [0.5, 0.5])
    assert s.busy_intervals.tolist() == [[1.0, 1.5], [2.0, 2.5]]
    # c_t = 1, but the only transfer starts when the rank's backward ends: full speed.
    s = rank_schedule([1.0], [0], [2.0], transfer_contention=1.0)
    assert (s.bucket_start.tolist(), s.bucket_end.tolist()) == ([1.0], [3.0])


def test_a_rank_starting_as_the_transfer_starts_counts_as_computing() -> None:
    # c_t = 1 over 2 ranks. Rank 1 starts at 5 with a 0 ms first layer (bucket 0), then 4 ms.
    # Transfer 0 starts at 5 with rank 1 computing until 9: 2 ms at half speed, 5-9.
    # Transfer 1 (ready at 2 and 9) then runs alone at full speed, 9-10.
    s = rank_schedule(
        [[1.0, 1.0], [0.0, 4.0]], [0, 1], [2.0, 1.0], start_ms=[0.0, 5.0], transfer_contention=1.0
    )
    assert s.bucket_start.tolist() == [5.0, 9.0]
    assert s.bucket_end.tolist() == [9.0, 10.0]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(0.01, 20.0), min_size=1, max_size=16),
    st.data(),
)
def test_one_rank_contiguous_buckets_start_at_max_of_ready_and_previous_end(work, data) -> None:
    # Buckets of consecutive layers in backward order: ready_b grows with b, so
    # the closed form is start_b = max(ready_b, end_(b-1)), exactly.
    n = len(work)
    cuts = sorted(data.draw(st.sets(st.integers(1, n - 1), max_size=n - 1)) if n > 1 else set())
    bucket = np.zeros(n, int)
    for c in cuts:
        bucket[c:] += 1
    transfer = np.array(
        data.draw(st.lists(st.floats(0.0, 20.0), min_size=len(cuts) + 1, max_size=len(cuts) + 1))
    )
    s = rank_schedule(work, bucket, transfer)
    end_prev = -np.inf
    for b in range(s.n_buckets):
        ready_b = float(np.cumsum(work)[bucket == b].max())
        assert s.bucket_ready[0, b] == ready_b
        assert s.bucket_start[b] == max(ready_b, end_prev)
        end_prev = s.bucket_start[b] + transfer[b]
        assert s.bucket_end[b] == end_prev
    assert s.exposed_tail == max(0.0, end_prev - float(np.cumsum(work)[-1]))


def test_a_one_ms_transfer_is_slowed_by_computing_ranks_too() -> None:
    # One rank, c_t = 1: transfer 0 (1 ms) from 1 runs at half speed while layer 2 computes
    # until 5: it ends at 3. Transfer 1 is ready at 5 and runs alone, 5-6.
    s = rank_schedule([1.0, 4.0], [0, 1], [1.0, 1.0], transfer_contention=1.0)
    assert s.bucket_end.tolist() == [3.0, 6.0]


def test_contention_per_rank_by_hand():
    """Two ranks, two layers of 4 ms, one bucket per layer, transfers of 2 ms.

    Rank 0 is slowed by c = 3 (a quarter speed), rank 1 by c = 1 (half speed).
    Layer A is ready on both at 4; transfer 0 runs 4-6. Layer B: rank 0 does
    0.5 ms of it by 6 and the other 3.5 ms at full speed, ready at 9.5; rank 1
    does 1 ms by 6, ready at 9. Transfer 1 waits for rank 0: 9.5-11.5.
    """
    s = rank_schedule([[4.0, 4.0], [4.0, 4.0]], [0, 1], [2.0, 2.0], contention=[3.0, 1.0])
    assert s.layer_ready.tolist() == [[4.0, 9.5], [4.0, 9.0]]
    assert s.bucket_start.tolist() == [4.0, 9.5]
    assert s.bucket_end.tolist() == [6.0, 11.5]
    assert s.bucket_defining_rank.tolist() == [0, 0]
    assert s.contention.tolist() == [3.0, 1.0]
    # One factor for all ranks is the same as that factor given per rank.
    same = rank_schedule([[4.0, 4.0], [4.0, 4.0]], [0, 1], [2.0, 2.0], contention=3.0)
    assert same.layer_ready.tolist() == [[4.0, 9.5], [4.0, 9.5]]
