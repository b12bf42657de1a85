"""Collectives in flight at once: gloo's worker threads, and latency hidden behind bytes.

Hand-worked schedules (times in whole or half milliseconds, exact in floating
point) and invariants that any schedule must keep (hypothesis).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from widgets.model.ranks import rank_schedule


def _one_per_layer(layers: list[float], transfer: float, **kw):
    n = len(layers)
    return rank_schedule(layers, np.arange(n), [transfer] * n, **kw)


def test_the_second_transfer_waits_on_its_peers_while_the_first_moves_its_bytes() -> None:
    # The docstring's example: layers of 4 and 1 ms, transfers of 4 ms of which 2 are
    # latency. Transfer 0: 4 to 6 latency, 6 to 8 bytes. Transfer 1 starts at 5 (layer B
    # ready), its latency ends at 7 and its bytes wait for transfer 0's: 8 to 10.
    s = _one_per_layer([4.0, 1.0], 4.0, concurrent=2, latency_ms=2.0)
    assert s.bucket_start.tolist() == [4.0, 5.0]
    assert s.bucket_end.tolist() == [8.0, 10.0]
    assert s.exposed_tail == 5.0
    # One at a time: 4 to 8, then 8 to 12.
    s = _one_per_layer([4.0, 1.0], 4.0, concurrent=1, latency_ms=2.0)
    assert s.bucket_start.tolist() == [4.0, 8.0]
    assert s.bucket_end.tolist() == [8.0, 12.0]


def test_a_third_collective_waits_for_a_free_worker() -> None:
    # Layers of 4, 1 and 1 ms. Transfers 0 and 1 as above (4-8, 5-10). Bucket 2 is ready
    # at 6, but both workers are busy until transfer 0 ends at 8: latency 8-10, bytes
    # 10-12.
    s = _one_per_layer([4.0, 1.0, 1.0], 4.0, concurrent=2, latency_ms=2.0)
    assert s.bucket_start.tolist() == [4.0, 5.0, 8.0]
    assert s.bucket_end.tolist() == [8.0, 10.0, 12.0]
    # With three workers it starts at 6; its latency ends at 8 and its bytes wait for
    # transfer 1's: 10-12 all the same (bytes are the bottleneck).
    s = _one_per_layer([4.0, 1.0, 1.0], 4.0, concurrent=3, latency_ms=2.0)
    assert s.bucket_start.tolist() == [4.0, 5.0, 6.0]
    assert s.bucket_end.tolist() == [8.0, 10.0, 12.0]


def test_backward_is_slowed_while_any_collective_is_in_flight() -> None:
    # c = 1 (backward at half speed under a transfer), c_t = 0. Layers A 4, B 1, C 4 ms.
    # A ready at 4; transfer 0 runs 4-8. B (1 ms) at half speed: ready at 6; transfer 1
    # starts at 6, latency 6-8, bytes 8-10. The link is busy 4-10 without a gap, so C,
    # from 6, does 2 ms of work by 10 and the other 2 at full speed: ready at 12.
    # Transfer 2: latency 12-14, bytes 14-16.
    s = _one_per_layer([4.0, 1.0, 4.0], 4.0, concurrent=2, latency_ms=2.0, contention=1.0)
    assert s.layer_ready[0].tolist() == [4.0, 6.0, 12.0]
    assert s.bucket_start.tolist() == [4.0, 6.0, 12.0]
    assert s.bucket_end.tolist() == [8.0, 10.0, 16.0]
    assert s.exposed_tail == 4.0


def test_transfer_contention_slows_the_latency_and_the_bytes_alike() -> None:
    # c = 0, c_t = 1 (a transfer at half speed while the rank computes), layers of 4 ms.
    # Transfer 0 from 4: its 2 ms of latency at half speed while B computes (4-8) end at
    # 8, its 2 ms of bytes at full speed 8-10. Transfer 1 from 8 (B ready): latency 8-10,
    # bytes 10-12. One at a time: transfer 0 has done 2 of its 4 ms by 8 and ends at 10,
    # transfer 1 runs 10-14.
    kw = {"latency_ms": 2.0, "transfer_contention": 1.0}
    s = _one_per_layer([4.0, 4.0], 4.0, concurrent=2, **kw)
    assert s.bucket_end.tolist() == [10.0, 12.0]
    s = _one_per_layer([4.0, 4.0], 4.0, concurrent=1, **kw)
    assert s.bucket_end.tolist() == [10.0, 14.0]


def test_latency_longer_than_the_transfer_is_the_whole_transfer() -> None:
    s = _one_per_layer([4.0, 1.0], 1.0, concurrent=2, latency_ms=3.0)
    # Each transfer is 1 ms of latency and no bytes: 4-5 and 5-6.
    assert s.bucket_end.tolist() == [5.0, 6.0]


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"concurrent": 0}, "at least one collective"),
        ({"concurrent": 1.5}, "whole number"),
        ({"concurrent": True}, "whole number"),
        ({"latency_ms": -1.0}, "latency"),
        ({"latency_ms": float("nan")}, "latency"),
    ],
)
def test_bad_concurrency_is_refused(kw: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _one_per_layer([1.0, 1.0], 1.0, **kw)


_times = st.floats(0.0, 8.0, allow_nan=False).map(lambda x: round(x, 2))


@st.composite
def _schedules(draw):
    n_layers = draw(st.integers(1, 7))
    ranks = draw(st.integers(1, 3))
    work = [[draw(_times) for _ in range(n_layers)] for _ in range(ranks)]
    cuts = (
        sorted(draw(st.sets(st.integers(1, n_layers - 1), max_size=n_layers - 1)))
        if n_layers > 1
        else []
    )
    bucket = np.searchsorted(cuts, np.arange(n_layers), side="right")
    transfer = [draw(_times) for _ in range(len(cuts) + 1)]
    latency = draw(_times)
    return np.array(work), bucket, transfer, latency


@settings(max_examples=150, deadline=None)
@given(_schedules())
def test_one_at_a_time_ignores_the_latency(case) -> None:
    work, bucket, transfer, latency = case
    kw = {"contention": 0.5, "transfer_contention": 0.75}
    a = rank_schedule(work, bucket, transfer, **kw)
    b = rank_schedule(work, bucket, transfer, concurrent=1, latency_ms=latency, **kw)
    assert np.array_equal(a.bucket_end, b.bucket_end)
    assert np.array_equal(a.layer_ready, b.layer_ready)


@settings(max_examples=150, deadline=None)
@given(_schedules(), st.integers(2, 4))
def test_collectives_in_flight_keep_the_link_rules(case, concurrent: int) -> None:
    work, bucket, transfer, latency = case
    kw = {"concurrent": concurrent, "latency_ms": latency}
    s = rank_schedule(work, bucket, transfer, **kw)
    lat = np.minimum(latency, np.asarray(transfer))
    end, start = s.bucket_end, s.bucket_start
    # Every collective starts once launched everywhere, and once a worker is free.
    assert np.all(start >= s.bucket_launch.max(axis=0) - 1e-9)
    assert np.all(start[concurrent:] >= end[:-concurrent] - 1e-9)
    # Bytes move one bucket at a time, in bucket order, after the bucket's latency.
    bytes_start = end - (np.asarray(transfer) - lat)
    assert np.all(bytes_start >= start + lat - 1e-9)
    assert np.all(bytes_start[1:] >= end[:-1] - 1e-9)
    # Without contention, hiding latency never ends communication later than one at a
    # time, and saves at most every latency but the first.
    one = rank_schedule(work, bucket, transfer)
    assert s.comm_end <= one.comm_end + 1e-9
    assert s.comm_end >= one.comm_end - lat[1:].sum() - 1e-9
    # Backward does not depend on communication when nothing contends.
    assert np.array_equal(s.layer_ready, one.layer_ready)
