"""Fitting synthetic traces made with known parameters recovers them; predictions follow."""

from __future__ import annotations

import numpy as np
import pytest
from synthetic import QUANTITY_NAMES, Truth, edited, synthetic_document

from traces import (
    TraceError,
    buckets_for_cap,
    compare,
    error_pct,
    fit,
    from_document,
    measure,
    predict_layout,
)

LAYOUTS = {"one": [1] * 12, "all": [12], "three": [3] * 4, "mixed": [5, 5, 2]}


def _traces(truth: Truth, **kw) -> dict:
    return {
        name: from_document(synthetic_document(per, truth, seed=i, **kw), name)
        for i, (name, per) in enumerate(LAYOUTS.items())
    }


@pytest.fixture(scope="module")
def truth() -> Truth:
    return Truth()


@pytest.fixture(scope="module")
def traces(truth: Truth) -> dict:
    return _traces(truth)


def test_measured_quantities_of_a_synthetic_trace(traces) -> None:
    m = measure(traces["three"])
    # t0 is the later rank's backward start, so the other rank starts 2 ms before.
    np.testing.assert_allclose(m.backward_start.min(axis=1), -2.0, atol=1e-6)
    np.testing.assert_allclose(m.backward_start.max(axis=1), 0.0, atol=1e-6)
    # The later rank defines every bucket here (same speed, later start).
    assert np.all(m.bucket_defining_rank == m.late_rank[:, None])
    np.testing.assert_allclose(m.forward_ms, 12.0, atol=1e-6)
    np.testing.assert_allclose(m.backward_return_ms, m.communication_end_ms + 0.5, atol=2e-3)
    assert np.all(m.exposed_tail_ms == np.maximum(0, m.communication_end_ms - m.compute_end_ms))
    np.testing.assert_allclose(m.step_ms, 12.0 + m.backward_return_ms + 8.05, atol=2e-3)


@pytest.mark.parametrize("pair", [("one", "all"), ("three", "all"), ("one", "mixed")])
def test_fit_recovers_known_parameters(truth: Truth, traces, pair) -> None:
    f = fit([traces[n] for n in pair])
    assert f.separable and f.contention_identified
    assert f.overhead_ms == pytest.approx(truth.overhead_ms, rel=0.05)
    assert f.bandwidth_gbps == pytest.approx(truth.bandwidth_gbps, rel=0.05)
    assert f.contention == pytest.approx(truth.contention, rel=0.1)
    # Every rank is slowed alike here, so the most and least slowed agree.
    np.testing.assert_allclose(f.rank_contention, [truth.contention] * 2, rtol=0.15)
    assert f.transfer_contention == pytest.approx(truth.transfer_contention, abs=0.1)
    np.testing.assert_allclose(f.backward_ms, truth.backward_ms, rtol=0.05)
    assert f.enqueue_ms == pytest.approx(truth.enqueue_ms, abs=0.01)
    assert f.start_skew_ms == pytest.approx(truth.skew_ms, abs=0.01)
    assert f.forward_ms == pytest.approx(truth.forward_ms, abs=0.01)
    assert f.finalize_ms == pytest.approx(truth.finalize_ms, abs=0.01)
    assert f.after_return_ms == pytest.approx(truth.optimizer_ms + 0.05, abs=0.01)
    assert f.order == tuple(range(12))[::-1]
    assert f.backward_quality.r2 > 0.9 and f.transfer_quality.r2 > 0.99
    assert f.iterations_used == 24 and f.iterations_dropped == 0


def test_a_different_truth_is_recovered_too() -> None:
    truth = Truth(
        overhead_ms=3.0, bandwidth_gbps=0.5, contention=1.5, transfer_contention=0.0, skew_ms=5.0
    )
    t = _traces(truth)
    f = fit([t["one"], t["all"]])
    assert f.overhead_ms == pytest.approx(3.0, rel=0.05)
    assert f.bandwidth_gbps == pytest.approx(0.5, rel=0.05)
    assert f.contention == pytest.approx(1.5, rel=0.1)
    assert f.transfer_contention == pytest.approx(0.0, abs=0.1)


@pytest.mark.parametrize("target", ["three", "mixed"])
def test_predicting_a_third_layout(traces, target) -> None:
    f = fit([traces["one"], traces["all"]])
    result = compare(f, traces[target])
    assert set(result["quantities"]) == QUANTITY_NAMES
    for q in result["quantities"].values():
        assert set(q) >= {"predicted", "measured", "error_pct", "spread"}
        assert abs(q["error_pct"]) < 2.0  # only the per-iteration jitter differs
        assert q["spread"]["q25"] <= q["measured"] <= q["spread"]["q75"]
        assert q["spread"]["iterations"] == 12


def test_contention_explains_what_a_fifo_fit_misses(truth: Truth, traces) -> None:
    # Without the contention terms, the same transfers and backward predict a
    # different tail: the terms are what make the third layout come out right.
    f = fit([traces["one"], traces["all"]])
    from dataclasses import replace

    plain = replace(f, contention=0.0, rank_contention=(0.0, 0.0), transfer_contention=0.0)
    measured = compare(f, traces["three"])["quantities"]["exposed_tail_ms"]["measured"]
    with_terms = predict_layout(f, traces["three"].bucket_parameters)
    without = predict_layout(plain, traces["three"].bucket_parameters)
    err_with = abs(error_pct(with_terms.quantities["exposed_tail_ms"], measured))
    err_without = abs(error_pct(without.quantities["exposed_tail_ms"], measured))
    assert err_with < 2.0 < 10.0 < err_without


def test_one_layout_cannot_separate_everything(traces) -> None:
    f = fit([traces["one"]])
    assert not f.separable  # every bucket 4 MiB: overhead and bandwidth are one number
    assert f.overhead_ms == 0.0
    assert not f.contention_identified  # every layer but the first overlaps a transfer
    assert f.contention == 0.0


def test_noisy_iterations_are_left_out(truth: Truth) -> None:
    doc = synthetic_document([3] * 4, truth, iterations=6)
    for i in (1, 4):  # a busy machine: these iterations are slow and say so
        doc = edited(doc, f"iterations[{i}].other_load", 0.9)
    quiet = from_document(doc, "quiet")
    all_of_it = from_document(synthetic_document([12], truth, iterations=6), "all")
    f = fit([quiet, all_of_it], max_other_load=0.25)
    assert f.iterations_used == 10 and f.iterations_dropped == 2
    everything = fit([quiet, all_of_it], max_other_load=None)
    assert everything.iterations_used == 12
    busy = from_document(synthetic_document([12], truth, iterations=3, other_load=0.8), "busy")
    with pytest.raises(TraceError, match=r"busy: in every iteration other processes .* 25%"):
        fit([busy])


def test_fit_refuses_traces_of_different_models(truth: Truth) -> None:
    a = from_document(synthetic_document([12], truth, iterations=2), "a")
    doc = synthetic_document([12], Truth(world_size=3), iterations=2)
    b = from_document(doc, "b")
    with pytest.raises(TraceError, match="b: 3 ranks, a has 2"):
        fit([a, b])
    with pytest.raises(TraceError, match="at least one trace"):
        fit([])


@pytest.mark.parametrize(
    ("cap", "layout"), [(4, [1] * 12), (12, [3] * 4), (20, [5, 5, 2]), (48, [12]), (13, [4, 4, 4])]
)
def test_buckets_for_a_cap_follow_ddp(traces, cap, layout) -> None:
    f = fit([traces["one"], traces["all"]])
    buckets = buckets_for_cap(f, cap)
    assert [len(b) for b in buckets] == layout
    assert buckets[0].tolist()[0] == 11  # the first gradient ready goes first
    for name, per in LAYOUTS.items():
        if name in ("three", "mixed"):
            same = buckets_for_cap(f, {"three": 12, "mixed": 20}[name])
            assert [b.tolist() for b in same] == [
                m.tolist() for m in traces[name].bucket_parameters
            ]
            assert [len(b) for b in same] == per


def test_unequal_ranks_are_recovered_most_slowed_first() -> None:
    # Each iteration a random rank loses more of its core (c = 1.2) than the
    # other (c = 0.3): the fit finds both factors, most slowed first, and the
    # prediction waits for the slower rank, as the measurement does.
    truth = Truth(contention=0.7, rank_contention=(1.2, 0.3))
    t = _traces(truth)
    f = fit([t["one"], t["all"]])
    np.testing.assert_allclose(f.rank_contention, [1.2, 0.3], rtol=0.15)
    assert 0.3 < f.contention < 1.2
    result = compare(f, t["three"])["quantities"]
    assert abs(result["backward_return_ms"]["error_pct"]) < 2.0
    assert abs(result["exposed_tail_ms"]["error_pct"]) < 5.0
    # The pooled factor for every rank predicts an earlier end of backward.
    from dataclasses import replace

    pooled = replace(f, rank_contention=(f.contention, f.contention))
    late = predict_layout(f, t["three"].bucket_parameters).compute_end_ms
    early = predict_layout(pooled, t["three"].bucket_parameters).compute_end_ms
    assert early < late - 1.0
