"""Bootstrap intervals over iterations: resampling, percentiles, and what they say of a fit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic import Truth, isolated_block, synthetic_document

from traces import fit, from_document, resample_trace
from traces.bootstrap import intervals, resamples_of


def _trace(seed: int = 0, isolated: bool = True, per_bucket=(3, 3, 3, 3), **kw):
    doc = synthetic_document(list(per_bucket), Truth(), seed=seed, iterations=8, **kw)
    if isolated:
        doc["isolated"] = isolated_block(
            Truth(), seed=seed, repetitions=5, jitter=kw.get("jitter", 0.03)
        )
    return from_document(doc, f"t{seed}")


def test_a_resample_takes_the_iterations_at_the_drawn_positions() -> None:
    t = _trace()
    r = resample_trace(t, np.array([2, 2, 0]), np.array([4, 0]), np.array([1]))
    # The synthetic iterations are numbered 5, 6, ...: positions 2, 2, 0 are 7, 7, 5.
    assert r.iteration.tolist() == [7, 7, 5]
    np.testing.assert_array_equal(r.grad_ready, t.grad_ready[[2, 2, 0]])
    np.testing.assert_array_equal(r.complete, t.complete[[2, 2, 0]])
    assert r.isolated_ms[0].tolist() == [t.isolated_ms[0][4], t.isolated_ms[0][0]]
    np.testing.assert_array_equal(r.alone_grad_ready, t.alone_grad_ready[[1]])
    assert r.bucket_parameters is t.bucket_parameters  # the layout is not resampled


def test_traces_of_one_run_draw_the_same_positions() -> None:
    # Same iteration numbers (the layouts alternated in one run): a round stays together.
    a, b = _trace(0), _trace(1, per_bucket=(12,))
    for sample in resamples_of([a, b], 5, seed=3):
        assert sample[0].iteration.tolist() == sample[1].iteration.tolist()


def test_the_same_seed_gives_the_same_resamples() -> None:
    one = [s[0].iteration.tolist() for s in resamples_of([_trace()], 4, seed=7)]
    two = [s[0].iteration.tolist() for s in resamples_of([_trace()], 4, seed=7)]
    assert one == two and len({tuple(x) for x in one}) > 1


def test_intervals_are_the_5th_and_95th_percentiles() -> None:
    # 0, 1, ..., 100: numpy's linear percentile puts the 5th at 5 and the 95th at 95;
    # a tuple-valued term gets one interval per entry.
    values = [{"x": float(v), "pair": (float(v), 2.0 * v)} for v in range(101)]
    got = intervals(values)
    assert got == {"x": (5.0, 95.0), "pair[0]": (5.0, 95.0), "pair[1]": (10.0, 190.0)}
    assert intervals([]) == {}


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=40))
def test_an_interval_lies_within_the_values_and_is_ordered(xs) -> None:
    low, high = intervals([{"x": x} for x in xs])["x"]
    assert min(xs) - 1e-6 <= low <= high <= max(xs) + 1e-6


def test_identical_iterations_give_an_interval_of_no_width() -> None:
    # No jitter: every iteration (and repetition) is the same, so every resample fits the
    # same numbers and each interval is the point estimate itself.
    t = _trace(jitter=0.0)
    t = resample_trace(t, np.zeros(t.n_iterations, int))  # eight copies of iteration 0
    f = fit([t], resamples=10)
    assert f.resamples == 10
    assert f.uncertainty["overhead_ms"] == pytest.approx((f.overhead_ms,) * 2, abs=1e-9)
    assert f.uncertainty["contention"] == pytest.approx((f.contention,) * 2, abs=1e-9)


def test_the_point_estimate_lies_in_its_interval_and_terms_are_all_there() -> None:
    f = fit([_trace(0), _trace(1, per_bucket=(12,))], resamples=30)
    expected = {
        "backward_total_ms",
        "overhead_ms",
        "bandwidth_gbps",
        "contention",
        "rank_contention[0]",
        "rank_contention[1]",
        "transfer_contention",
        "enqueue_ms",
        "finalize_ms",
        "finalize_ms_per_mib",
        "copy_back_ms_per_mib",
    }
    assert set(f.uncertainty) == expected
    for name in ("overhead_ms", "bandwidth_gbps", "contention", "transfer_contention"):
        low, high = f.uncertainty[name]
        assert low <= getattr(f, name) <= high, name
    assert fit([_trace(0)]).uncertainty == {}  # no resamples asked, none made
