"""The fit's documented rules, each on a tiny hand-built trace whose answer follows by hand.

Every trace here is small enough to work out on paper: a few parameters, one or
two ranks, times in binary fractions of a millisecond (exact in floating point),
so a fitted number can be compared with its hand-derived value to many digits.
Times in the helper are relative to each rank's iteration; ``_document`` adds a
clock offset per iteration, as a recorder would.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from traces import (
    FORMAT,
    Fit,
    TraceError,
    fit,
    from_document,
    validate_trace,
)

# The fit calls a parameter seen free (free of transfers) after five free intervals:
# the median of fewer is one stray interval away from several times the layer's time.
SEEN_FREE = 5


def _rank(start: float, ready: list[float], issue: list[float], complete: list[float]) -> dict:
    """One rank of one iteration (times relative to the iteration)."""
    return {"start": start, "ready": ready, "issue": issue, "complete": complete}


def _document(
    params: list[str],
    buckets: list[tuple[int, list[str]]],
    iterations: list[list[dict]],
    *,
    other_load: float | None = 0.0,
) -> dict:
    """A valid trace document: ``buckets`` is (bytes, parameter names) per bucket, and each
    iteration lists its ranks as made by ``_rank``."""
    its = []
    for i, ranks in enumerate(iterations):
        clock = 100.0 + 64.0 * i  # exact: the relative times survive the subtraction
        out = []
        for r, rk in enumerate(ranks):
            back = clock + rk["start"]
            ret = clock + max([*rk["ready"], *rk["complete"]]) + 0.25
            out.append(
                {
                    "rank": r,
                    "forward_start": back - 1.0,
                    "backward_start": back,
                    "backward_return": ret,
                    "optimizer_start": ret,
                    "optimizer_end": ret + 1.0,
                    "grad_ready": [clock + t for t in rk["ready"]],
                    "buckets": [
                        {
                            "index": b,
                            "bytes": nbytes,
                            "parameters": members,
                            "issue": clock + rk["issue"][b],
                            "enqueued": clock + rk["issue"][b],
                            "complete": clock + rk["complete"][b],
                        }
                        for b, (nbytes, members) in enumerate(buckets)
                    ],
                }
            )
        its.append({"iteration": 3 + i, "other_load": other_load, "ranks": out})
    doc = {
        "format": FORMAT,
        "version": 1,  # a version-1 document: still read
        "time_unit": "ms",
        "metadata": {
            "torch_version": "hand-built",
            "backend": "gloo",
            "world_size": len(iterations[0]),
            "bucket_cap_mb": 1.0,
            "cpu_count": 2,
            "threads_per_rank": 1,
            "origin_ns": 0,
        },
        "parameters": [{"name": n, "bytes": 1_000_000} for n in params],
        "iterations": its,
    }
    validate_trace(doc)
    return doc


def _trace(params, buckets, iterations, name: str = "t", **kw):
    return from_document(_document(params, buckets, iterations, **kw), name)


# --- transfers: overhead, bandwidth, the a < 0 fallback, one size only ----------------------

# One rank, two parameters in two buckets of 1 MB and 2 MB; backward ends (at 2 ms) before
# either transfer starts, so no compute slows them and each duration is its transfer time.
_TWO_SIZES = [(1_000_000, ["a"]), (2_000_000, ["b"])]


def _after_compute(d0: float, d1: float):
    """Transfers of ``d0`` and ``d1`` ms, back to back from 3 ms, after backward (0 to 2)."""
    rk = _rank(0.0, [1.0, 2.0], [3.0, 3.0 + d0], [3.0 + d0, 3.0 + d0 + d1])
    return _trace(["a", "b"], _TWO_SIZES, [[rk]])


def test_overhead_and_bandwidth_of_two_sizes_are_exact() -> None:
    # 1.5 ms for 1 MB and 2.5 ms for 2 MB: T = 0.5 + S / 1e6, i.e. 0.5 ms overhead and
    # 1e6 bytes per ms = 1 GB/s. An overhead below 1 ms is kept (only a < 0 is refused).
    f = fit([_after_compute(1.5, 2.5)])
    assert f.separable
    assert f.overhead_ms == pytest.approx(0.5, rel=1e-9)
    assert f.bandwidth_gbps == pytest.approx(1.0, rel=1e-9)
    # transfer_ms is a + S / (GB/s * 1e6): 0.5 + 1 and 0.5 + 3.
    np.testing.assert_allclose(f.transfer_ms([1_000_000, 3_000_000]), [1.5, 3.5], rtol=1e-9)
    # The line goes through both points: R^2 = 1, no residual.
    assert f.transfer_quality.r2 == pytest.approx(1.0, abs=1e-9)
    assert f.transfer_quality.rms_ms == pytest.approx(0.0, abs=1e-9)
    assert f.transfer_quality.samples == 2
    # Both gradient intervals last 1 ms (0-1, 1-2): no spread, so R^2 is undefined (nan),
    # and the prediction (1 ms each, all free of transfers) leaves no residual.
    assert math.isnan(f.backward_quality.r2)
    assert f.backward_quality.rms_ms == pytest.approx(0.0, abs=1e-12)
    assert f.backward_quality.samples == 2
    assert f.backward_ms == pytest.approx((1.0, 1.0))
    assert not f.contention_identified and f.contention == 0.0


def test_a_negative_overhead_falls_back_to_bandwidth_only() -> None:
    # 0.5 ms for 1 MB, 1.5 ms for 2 MB: the line through both has a = -0.5 < 0, so a = 0 and
    # the slope is least squares through the origin: sum(S T) / sum(S^2)
    # = (1e6 * 0.5 + 2e6 * 1.5) / (1e12 + 4e12) = 0.7e-6 ms per byte -> 1 / 0.7 GB/s.
    f = fit([_after_compute(0.5, 1.5)])
    assert f.overhead_ms == 0.0
    assert f.bandwidth_gbps == pytest.approx(1 / 0.7, rel=1e-9)
    # Predicted 0.7 and 1.4 ms against 0.5 and 1.5: residuals -0.2 and 0.1, so
    # SSE = 0.05, SST = 2 * 0.5^2 = 0.5, R^2 = 1 - 0.05 / 0.5 = 0.9, RMS = sqrt(0.05 / 2).
    q = f.transfer_quality
    assert q.r2 == pytest.approx(0.9, rel=1e-9)
    assert q.rms_ms == pytest.approx(0.025**0.5, rel=1e-9)
    assert q.samples == 2


def test_one_size_gives_bandwidth_only_from_the_mean_work() -> None:
    # One 4 MB bucket sent once, 2 ms after backward: with one size there is no overhead,
    # and the bandwidth is 4e6 bytes / 2 ms = 2 GB/s.
    rk = _rank(0.0, [1.0], [1.5], [3.5])
    f = fit([_trace(["a"], [(4_000_000, ["a"])], [[rk]])])
    assert not f.separable
    assert f.overhead_ms == 0.0
    assert f.bandwidth_gbps == pytest.approx(2.0, rel=1e-9)
    # A single duration has no spread: R^2 undefined, and the prediction is exact.
    assert math.isnan(f.transfer_quality.r2)
    assert f.transfer_quality.rms_ms == pytest.approx(0.0, abs=1e-12)
    assert f.iterations_used == 1 and f.iterations_dropped == 0


def test_transfers_that_take_no_time_cannot_be_fitted() -> None:
    # Every transfer completes as it is issued: no positive bandwidth explains that.
    rk = _rank(0.0, [1.0], [1.5], [1.5])
    t = _trace(["a"], [(4_000_000, ["a"])], [[rk]])
    with pytest.raises(
        TraceError, match=r"^the transfers could not be fitted \(no positive bandwidth\)$"
    ):
        fit([t])


# --- transfer contention: the grid and its finer refinement ----------------------------------

# Truth for the next two tests: every transfer is 2 ms of work (one size, so no overhead);
# while the rank computes it runs at 1 / (1 + 0.125) = 8/9 of full speed.
C_T = 0.125  # on the finer grid's 0.005 steps, between the coarse grid's 0.05 steps


def test_transfer_contention_between_coarse_grid_points_is_recovered_exactly() -> None:
    # One rank; parameter a is ready at 1 ms and its 1 MB bucket starts then, while b
    # computes until h. By h the transfer has done h / 1.125 ms of work, the rest at full
    # speed: h = 1.125 leaves 1 ms (end 3.125), h = 0.5625 leaves 1.5 ms (end 3.0625). b's
    # bucket follows after backward, 2 ms at full speed. Only c_t = 0.125 makes every
    # transfer 2 ms of work, so the refined grid (about the best coarse point, 0.1 or
    # 0.15) finds it exactly, and the predicted durations are the measured ones.
    same = [(1_000_000, ["a"]), (1_000_000, ["b"])]
    its = [
        [_rank(0.0, [1.0, 2.125], [1.0, 3.125], [3.125, 5.125])],
        [_rank(0.0, [1.0, 1.5625], [1.0, 3.0625], [3.0625, 5.0625])],
    ]
    f = fit([_trace(["a", "b"], same, its)])
    assert not f.separable and f.overhead_ms == 0.0
    assert f.transfer_contention == pytest.approx(C_T, abs=1e-9)
    assert f.bandwidth_gbps == pytest.approx(0.5, rel=1e-9)  # 1e6 bytes in 2 ms
    assert f.transfer_quality.rms_ms == pytest.approx(0.0, abs=1e-9)


def test_a_rank_computing_from_the_instant_a_transfer_starts_slows_it() -> None:
    # The one rank launches its only bucket the moment backward starts (0 ms) and
    # computes until h: the rank counts as computing from that very instant, so the
    # transfer runs at 8/9 speed from its start. h = 1.125: 1 ms of work by then, the
    # other 1 ms after (end 2.125); h = 0.5625: 0.5 ms, then 1.5 ms (end 2.0625).
    its = [
        [_rank(0.0, [1.125], [0.0], [2.125])],
        [_rank(0.0, [0.5625], [0.0], [2.0625])],
    ]
    f = fit([_trace(["a"], [(1_000_000, ["a"])], its)])
    assert f.transfer_contention == pytest.approx(C_T, abs=1e-9)
    assert f.bandwidth_gbps == pytest.approx(0.5, rel=1e-9)
    assert f.transfer_quality.rms_ms == pytest.approx(0.0, abs=1e-9)


# --- backward time and contention -------------------------------------------------------------

# Two parameters a (computed first) and b, one bucket each; one rank.
_AB = [(1_000_000, ["a"]), (1_000_000, ["b"])]
# Iteration with both intervals free: a 0-0.5, b 0.5-1; both transfers after backward.
_FREE = _rank(0.0, [0.5, 1.0], [1.0, 1.5], [1.5, 2.0])
# Iteration where b (0.5-1.125, 0.625 ms) is under a's transfer (0.5-0.8125) half the time.
_HALF = _rank(0.0, [0.5, 1.125], [0.5, 1.125], [0.8125, 1.625])


def test_a_parameter_seen_free_fewer_than_five_times_does_not_count_as_free() -> None:
    # Four free intervals of b are not enough to call b seen free: no parameter was
    # seen both free and busy, so contention is not identified (c = 0) and b's time
    # is the median of all five of its intervals, 0.5 (four of 0.5, one of 0.625).
    f = fit([_trace(["a", "b"], _AB, [[_FREE]] * (SEEN_FREE - 1) + [[_HALF]])])
    assert not f.contention_identified
    assert f.contention == 0.0
    assert f.backward_ms == pytest.approx((0.5, 0.5), rel=1e-9)
    # One more free interval and it counts: the same data then identifies c = 2/3.
    f = fit([_trace(["a", "b"], _AB, [[_FREE]] * SEEN_FREE + [[_HALF]])])
    assert f.contention_identified


def test_contention_from_a_half_busy_sub_millisecond_interval() -> None:
    # w_a = 0.5 (always free), w_b = 0.5 (its free intervals). b's busy interval:
    # d = 0.625, phi = 0.3125 / 0.625 = 0.5 (exactly the busy threshold), so
    # k = (1 - 0.5 / 0.625) / 0.5 = 0.4 and c = k / (1 - k) = 2/3. b was seen free the
    # five times the fit needs. Backward times below 1 ms are kept as they are.
    f = fit([_trace(["a", "b"], _AB, [[_FREE]] * SEEN_FREE + [[_HALF]])])
    assert f.contention_identified
    assert f.contention == pytest.approx(2 / 3, rel=1e-9)
    assert f.rank_contention == pytest.approx((2 / 3,), rel=1e-9)
    assert f.backward_ms == pytest.approx((0.5, 0.5), rel=1e-9)
    assert f.to_dict()["backward_total_ms"] == pytest.approx(1.0, rel=1e-9)
    # Predicted intervals 0.5, 0.5, 0.5 and 0.5 / (1 - 0.4 * 0.5) = 0.625: all exact.
    assert f.backward_quality.r2 == pytest.approx(1.0, abs=1e-9)
    assert f.backward_quality.rms_ms == pytest.approx(0.0, abs=1e-9)
    assert f.backward_quality.samples == 2 * (SEEN_FREE + 1)


def test_every_rank_gets_the_pooled_factor_when_no_iteration_had_all_ranks_busy() -> None:
    # Rank 0 as above; rank 1 starts backward 2 ms earlier and is done (a -2 to -1.5,
    # b -1.5 to -1) before any transfer: it never computes under one. No iteration has
    # every rank busy, so both ranks get the pooled c = 2/3.
    early = _rank(-2.0, [-1.5, -1.0], [-1.5, -1.0], [1.5, 2.0])
    early_2 = _rank(-2.0, [-1.5, -1.0], [-1.5, -1.0], [0.8125, 1.625])
    f = fit([_trace(["a", "b"], _AB, [[_FREE, early]] * SEEN_FREE + [[_HALF, early_2]])])
    assert f.contention == pytest.approx(2 / 3, rel=1e-9)
    assert f.rank_contention == pytest.approx((2 / 3, 2 / 3), rel=1e-9)
    assert f.start_skew_ms == pytest.approx(2.0)


def test_a_huge_contention_is_capped_at_k_095() -> None:
    # b takes 20 ms, all under a's transfer, after a free 0.5 ms: k = 1 - 0.5 / 20 = 0.975,
    # beyond the cap k <= 0.95, so c = 0.95 / 0.05 = 19 (pooled and per rank alike).
    slow = _rank(0.0, [0.5, 20.5], [0.5, 21.0], [21.0, 21.5])
    f = fit([_trace(["a", "b"], _AB, [[_FREE]] * SEEN_FREE + [[slow]])])
    assert f.contention == pytest.approx(19.0, rel=1e-9)
    assert f.rank_contention == pytest.approx((19.0,), rel=1e-9)


def test_an_interval_exactly_a_tenth_busy_counts_as_free_and_rounds_are_few() -> None:
    # a: 0-1 in both iterations, free. b: 1-3.5 (2.5 ms) with a's transfer over its last
    # 0.25 ms: phi = 0.1 exactly, the free threshold, so b counts as seen free and
    # w_b = 2.5 (1 - 0.1 k). Then b: 1-5 (4 ms) with a's transfer over 1-3: phi = 0.5, busy.
    # Each round: w_b from the last k, then k' = (1 - w_b / 4) / 0.5 = 0.75 + 0.125 k.
    # From k = 0 the fit runs four rounds (it does not iterate to the fixed point 6/7):
    # k1 = 0.75, k2 = 0.84375, k3 = 0.85546875, k4 = 0.85693359375, and the reported
    # w_b is the fourth round's, from k3.
    tenth = _rank(0.0, [1.0, 3.5], [3.25, 3.75], [3.75, 4.25])
    busy = _rank(0.0, [1.0, 5.0], [1.0, 5.0], [3.0, 5.5])
    f = fit([_trace(["a", "b"], _AB, [[tenth]] * SEEN_FREE + [[busy]])])
    assert f.contention_identified
    k4 = 0.85693359375
    assert f.contention == pytest.approx(k4 / (1 - k4), rel=1e-9)
    assert f.backward_ms == pytest.approx((1.0, 2.5 * (1 - 0.1 * 0.85546875)), rel=1e-9)


# --- errors and the data classes ----------------------------------------------------------


def test_errors_name_the_traces_exactly() -> None:
    rk = _rank(0.0, [1.0], [1.5], [3.5])
    a = _trace(["a"], [(4_000_000, ["a"])], [[rk]], name="first")
    b = _trace(["z"], [(4_000_000, ["z"])], [[rk]], name="second")
    with pytest.raises(TraceError, match=r"^second: its parameters differ from first's$"):
        fit([a, b])
    with pytest.raises(TraceError, match=r"^fit needs at least one trace$"):
        fit([])


def test_fit_and_its_quality_are_frozen_and_default_to_no_provenance() -> None:
    rk = _rank(0.0, [1.0], [1.5], [3.5])
    f = fit([_trace(["a"], [(4_000_000, ["a"])], [[rk]])])
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.overhead_ms = 1.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.transfer_quality.r2 = 1.0  # type: ignore[misc]
    # Made directly, without sources or iteration counts, a Fit has none.
    skip = {"sources", "iterations_used", "iterations_dropped"}
    given = {x.name: getattr(f, x.name) for x in dataclasses.fields(Fit) if x.name not in skip}
    bare = Fit(**given)
    assert bare.sources == () and bare.iterations_used == 0 and bare.iterations_dropped == 0
