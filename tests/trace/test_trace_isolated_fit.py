"""The fit with all-reduces and backward timed alone: each term from what isolates it.

Hand-built traces (the helpers of ``test_trace_fit_rules``) with an ``isolated``
block whose answer follows on paper, and synthetic traces made with known
parameters (``synthetic.py``).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from synthetic import MIB, Truth, isolated_block, synthetic_document
from test_trace_fit_rules import _AB, _HALF, _document, _rank

from traces import (
    PredictionRefused,
    TraceError,
    compare,
    fit,
    from_document,
    predict_layout,
    refusal,
    validate_trace,
)


def _with_isolated(doc: dict, allreduce: list[tuple[int, list[float]]], alone: list[list[float]]):
    """``doc`` with an isolated block: (bytes, ms) per size, and backward alone's gradient
    times (ms from backward start, per parameter) of one rank per iteration."""
    doc = copy.deepcopy(doc)
    doc["isolated"] = {
        "allreduce": [{"bytes": b, "ms": ms} for b, ms in allreduce],
        "backward": [{"ranks": [{"backward_ms": max(r), "grad_ready": r}]} for r in alone],
    }
    validate_trace(doc)
    return doc


# All-reduces alone: 1 MB in 0.5 ms (one slow repetition, 9 ms, that the median ignores),
# 2 MB in 1 ms, 4 MB in 2 ms: the line T = 0 + S / (2e6 bytes per ms), i.e. 2 GB/s.
_ALLREDUCE = [(1_000_000, [0.5, 9.0, 0.5]), (2_000_000, [1.0, 1.0, 1.25]), (4_000_000, [2.0])]
# Backward alone: a (computed first) then b, 0.5 ms each; b's gradient at 0.5 + 0.5 = 1.
_ALONE = [[0.5, 1.0]] * 3


def _half_busy(n: int = 5):
    """``n`` iterations in which b (0.625 ms) runs half under a's transfer (0.5 to 0.8125)."""
    doc = _document(["a", "b"], _AB, [[_HALF]] * n)
    return from_document(_with_isolated(doc, _ALLREDUCE, _ALONE), "half")


def test_overhead_and_bandwidth_come_from_the_all_reduces_alone() -> None:
    f = fit([_half_busy()])
    assert f.transfer_source == "isolated" and f.backward_source == "alone"
    # Medians 0.5, 1 and 2 ms for 1, 2 and 4 MB lie on one line through 0: no overhead,
    # 2e6 bytes per ms = 2 GB/s, and the line leaves no residual.
    assert f.overhead_ms == pytest.approx(0.0, abs=1e-12)
    assert f.bandwidth_gbps == pytest.approx(2.0, rel=1e-9)
    assert f.isolated_quality.rms_ms == pytest.approx(0.0, abs=1e-12)
    assert f.isolated_quality.samples == 3
    # Predictions are trusted for the sizes timed: 1 to 4 MB.
    assert f.size_range == (1_000_000.0, 4_000_000.0)


def test_backward_comes_from_backward_alone_and_contention_from_the_overlap() -> None:
    f = fit([_half_busy()])
    # w = 0.5 and 0.5 from backward alone; five busy intervals (the least that
    # identifies it) identify contention. No free interval was needed.
    assert f.backward_ms == pytest.approx((0.5, 0.5), rel=1e-9)
    assert f.contention_identified and f.transfer_contention_identified
    # One factor c for backward and transfers alike, matched to when backward ended
    # (1.125). a's transfer (0.5 ms of work, no overhead) and b (0.5 ms) both start at 0.5
    # and slow each other alike, so both end at 0.5 + 0.5 (1 + c): 1.125 gives c = 0.25.
    assert f.rank_contention == pytest.approx((0.25,), rel=1e-9)
    assert f.transfer_contention == pytest.approx(0.25, rel=1e-9)
    # The pooled factor read off b's intervals (k = (1 - 0.5 / 0.625) / 0.5 = 0.4, c = 2/3)
    # is scaled alike: the one rank's 2/3 became 0.25.
    assert f.contention == pytest.approx(0.25, rel=1e-9)
    # A gloo run: two all-reduces in flight at once.
    assert f.concurrent_collectives == 2
    assert f.unidentified == ()


def test_the_matched_factor_reproduces_the_fitted_backward_end() -> None:
    f = fit([_half_busy()])
    p = predict_layout(f, _half_busy().bucket_parameters)
    assert p.compute_end_ms == pytest.approx(1.125, abs=1e-9)
    # ...and both transfers: a's ends with b at 1.125, b's 0.5 ms then run alone: 1.625.
    assert p.schedule.bucket_end.tolist() == pytest.approx([1.125, 1.625], abs=1e-9)


def test_nccl_runs_one_collective_at_a_time() -> None:
    doc = _with_isolated(_document(["a", "b"], _AB, [[_HALF]] * 5), _ALLREDUCE, _ALONE)
    doc["metadata"]["backend"] = "nccl"
    assert fit([from_document(doc, "nccl")]).concurrent_collectives == 1


def test_four_busy_intervals_do_not_identify_contention() -> None:
    f = fit([_half_busy(4)])
    assert not f.contention_identified and f.contention == 0.0
    assert f.unidentified[0] == (
        "backward contention: no fitted layout ran a transfer under backward"
    )
    # So a layout of two buckets, whose first transfer runs under backward, is refused...
    with pytest.raises(PredictionRefused, match=r"how much they slow backward"):
        compare(f, _half_busy())
    # ...while the baseline, which has no contention terms, can be asked.
    base = fit([_half_busy(4)], contention=False)
    assert compare(base, _half_busy())["refusal"] is None


def test_the_baseline_is_the_same_fit_without_contention() -> None:
    model, base = fit([_half_busy()]), fit([_half_busy()], contention=False)
    assert base.contention == 0.0 and base.transfer_contention == 0.0
    assert base.rank_contention == (0.0,) and not base.contention_terms
    for name in ("overhead_ms", "bandwidth_gbps", "backward_ms", "enqueue_ms", "finalize_ms"):
        assert getattr(base, name) == getattr(model, name), name


def test_sizes_outside_those_timed_alone_are_refused() -> None:
    f = fit([_half_busy()])
    assert refusal(f, [1_000_000, 4_000_000]) is None
    assert refusal(f, [4_080_000]) is None  # within the 2 % slack
    assert refusal(f, [4_100_000, 1_000_000]) == (
        "buckets of 3.91 MiB lie outside the all-reduce sizes timed alone (0.954 MiB to 3.81 MiB)"
    )


@pytest.fixture(scope="module")
def truth() -> Truth:
    # Transfers slowed 1.5x under backward, backward 1.5x under transfers (one factor both
    # ways, as the fit assumes), two all-reduces in flight at once (gloo's).
    return Truth(contention=0.5, transfer_contention=0.5, concurrent=2)


def _synthetic(truth: Truth, per_bucket: list[int], seed: int, isolated: bool = True):
    doc = synthetic_document(per_bucket, truth, seed=seed, iterations=16)
    if isolated:
        doc["isolated"] = isolated_block(truth, seed=seed, jitter=0.01)
    return from_document(doc, f"{len(per_bucket)} buckets")


def test_isolated_measurements_recover_every_term(truth: Truth) -> None:
    three, one = _synthetic(truth, [3] * 4, 1), _synthetic(truth, [12], 2)
    f = fit([three, one])
    assert f.unidentified == ()
    assert f.overhead_ms == pytest.approx(truth.overhead_ms, rel=0.1)
    assert f.bandwidth_gbps == pytest.approx(truth.bandwidth_gbps, rel=0.03)
    assert sum(f.backward_ms) == pytest.approx(sum(truth.backward_ms), rel=0.02)
    assert f.contention == pytest.approx(truth.contention, rel=0.15)
    assert f.transfer_contention == pytest.approx(truth.transfer_contention, abs=0.15)
    # Only the 12 and 48 MiB buckets overlapped, yet 4 MiB ones are timed alone: predictable.
    assert refusal(f, [4 * MIB] * 12) is None


def test_without_them_the_fit_says_what_it_could_not_identify(truth: Truth) -> None:
    three, one = _synthetic(truth, [3] * 4, 1, False), _synthetic(truth, [12], 2, False)
    f = fit([three, one])
    assert f.transfer_source == "overlap" and f.backward_source == "overlap"
    assert f.size_range == (12 * MIB, 48 * MIB)
    assert f.unidentified[0].startswith(
        "overhead and bandwidth: the traces hold no all-reduces timed alone"
    )
    assert "trusted only within the 12-48 MiB of the fitted buckets" in f.unidentified[0]
    # One layer per bucket is 4 MiB a bucket: outside, so refused, and the reason says so.
    target = _synthetic(truth, [1] * 12, 3, False)
    with pytest.raises(PredictionRefused) as refused:
        compare(f, target)
    assert str(refused.value).startswith(
        "12 buckets (12 buckets: 1+1+1+1+1+1+1+1+1+1+1+1 parameters): the fit cannot predict "
        "it: buckets of 4 MiB lie outside the fitted buckets' sizes (12 MiB to 48 MiB)"
    )
    anyway = compare(f, target, extrapolate=True)
    assert anyway["refusal"].startswith("buckets of 4 MiB lie outside")
    assert isinstance(refused.value, TraceError)  # the command line prints it as an error


def test_an_isolated_block_must_match_the_trace() -> None:
    doc = _document(["a", "b"], _AB, [[_rank(0.0, [0.5, 1.0], [1.0, 1.5], [1.5, 2.0])]])
    with pytest.raises(TraceError, match=r"^trace\.isolated\.allreduce\[1\]\.bytes: 1 is listed"):
        _with_isolated(doc, [(1, [1.0]), (1, [2.0])], _ALONE)
    with pytest.raises(
        TraceError, match=r"^trace\.isolated\.backward\[0\]\.ranks\[0\]\.grad_ready: 1 times"
    ):
        _with_isolated(doc, _ALLREDUCE, [[0.5]])
    bad = copy.deepcopy(doc)
    bad["isolated"] = {
        "allreduce": [],
        "backward": [{"ranks": [{"backward_ms": 0.75, "grad_ready": [0.5, 1.0]}]}],
    }
    with pytest.raises(TraceError, match=r"grad_ready\[1\]: 1.0 is after backward returned"):
        validate_trace(bad)
    bad["isolated"]["backward"][0]["ranks"] *= 2  # two ranks in a one-rank trace
    with pytest.raises(TraceError, match=r"ranks: 2 entries for metadata.world_size 1$"):
        validate_trace(bad)
    negative = copy.deepcopy(doc)
    negative["isolated"] = {"allreduce": [{"bytes": 8, "ms": [-1.0]}], "backward": []}
    with pytest.raises(TraceError, match=r"^trace\.isolated\.allreduce\[0\]\.ms\[0\]: must be"):
        validate_trace(negative)


def test_a_trace_without_the_block_has_no_isolated_arrays() -> None:
    t = from_document(_document(["a", "b"], _AB, [[_HALF]]))
    assert not t.has_isolated and t.isolated_bytes is None and t.alone_grad_ready is None
    with_block = _half_busy()
    assert with_block.has_isolated
    np.testing.assert_array_equal(with_block.isolated_bytes, [1_000_000, 2_000_000, 4_000_000])
    np.testing.assert_array_equal(with_block.isolated_ms[0], [0.5, 9.0, 0.5])
    assert with_block.alone_grad_ready.shape == (3, 1, 2)


def test_finalize_grows_with_the_last_bucket_along_a_line() -> None:
    from traces.fit_isolated import finalize_line

    # Layouts whose last bucket is 4 MiB (finalize 1, 1, 1.2 ms: median 1) and 12 MiB
    # (3 ms), and backward alone's one bucket of 48 MiB (12 ms): on the line 0.25 ms per
    # MiB through 0, which least squares finds exactly.
    last = np.array([4, 4, 4, 12, 12, 12]) * MIB
    f0, f1 = finalize_line(last, np.array([1, 1, 1.2, 3, 3, 3]), (48 * MIB, 12.0))
    assert f0 == pytest.approx(0.0, abs=1e-9) and f1 == pytest.approx(0.25, rel=1e-9)
    # A line that falls with size (1 ms at 4 MiB, 0 at 48 MiB) gives way to the median.
    f0, f1 = finalize_line(np.array([4, 4]) * MIB, np.array([1.0, 1.5]), (48 * MIB, 0.0))
    assert (f0, f1) == (1.25, 0.0)


def test_a_hand_trace_with_backward_alone_keeps_a_constant_finalize() -> None:
    f = fit([_half_busy()])
    # The hand trace returns 0.25 ms after the last event, with a 1 MB last bucket;
    # backward alone returns with its last gradient (0 ms, 2 MB): the line would fall,
    # so finalize is the 0.25 ms measured, for every size.
    assert f.finalize_ms == 0.25 and f.finalize_ms_per_mib == 0.0
    assert f.finalize_for(48 * MIB) == 0.25


def test_the_slowest_rank_of_backward_alone_gets_its_own_scale() -> None:
    # Two ranks; backward alone's totals per iteration (10, 12), (11, 9), (10, 14), with
    # each rank's two gradients at half and all of its total. Slowest rank first: medians
    # of (12, 11, 14) = 12 and of (10, 9, 10) = 10; the median total of all six is 10.5,
    # so the scales are 12 / 10.5 and 10 / 10.5. Each interval is half a total: medians
    # 5.25 and 5.25, which already add up to 10.5.
    doc = _document(["a", "b"], _AB, [[_HALF, _HALF]] * 5)
    doc["isolated"] = {
        "allreduce": [{"bytes": b, "ms": ms} for b, ms in _ALLREDUCE],
        "backward": [
            {"ranks": [{"backward_ms": t, "grad_ready": [t / 2, t]} for t in pair]}
            for pair in ((10.0, 12.0), (11.0, 9.0), (10.0, 14.0))
        ],
    }
    f = fit([from_document(doc)])
    assert f.rank_backward_scale == pytest.approx((12 / 10.5, 10 / 10.5), rel=1e-12)
    assert f.backward_ms == pytest.approx((5.25, 5.25), rel=1e-12)
    np.testing.assert_allclose(f.backward_matrix(), [[6.0, 6.0], [5.0, 5.0]], rtol=1e-12)


def test_the_copy_back_rate_is_backward_alones_return_per_mib() -> None:
    # Backward alone returns 0.5 ms after its last gradient (1.0 -> 1.5) in every
    # iteration: copying the whole 2 MB gradient back, 2e6 / 2^20 MiB, so
    # 0.5 * 2^20 / 2e6 ms per MiB. Without that (returns with the last gradient), 0:
    # nothing is copied in the schedule.
    assert fit([_half_busy()]).copy_back_ms_per_mib == 0.0
    assert fit([_half_busy()]).copy_back_ms([1_000_000]) is None
    doc = _with_isolated(_document(["a", "b"], _AB, [[_HALF]] * 5), _ALLREDUCE, _ALONE)
    for it in doc["isolated"]["backward"]:
        it["ranks"][0]["backward_ms"] = 1.5
    f = fit([from_document(doc)])
    assert f.copy_back_ms_per_mib == pytest.approx(0.5 * MIB / 2e6, rel=1e-12)
    assert f.copy_back_ms([1_000_000, 2_000_000]) == pytest.approx([0.25, 0.5], rel=1e-12)
    # The baseline measures it too; with no transfer contention it slows nothing.
    assert fit([from_document(doc)], contention=False).copy_back_ms_per_mib == (
        f.copy_back_ms_per_mib
    )


def test_the_prediction_runs_the_schedule_with_the_copies() -> None:
    from dataclasses import replace

    doc = _with_isolated(_document(["a", "b"], _AB, [[_HALF]] * 5), _ALLREDUCE, _ALONE)
    for it in doc["isolated"]["backward"]:
        it["ranks"][0]["backward_ms"] = 1.5
    # w = 0.5 and 0.5, 1 MB transfers of 0.5 ms, copies of 0.25 ms; c set to 2/3 and c_t
    # to 1. a ends at 0.5 and its transfer starts; b runs at 0.6 of its speed
    # and ends at 0.5 + 0.5 / 0.6 = 4/3, when the transfer, at half speed, has done
    # 5/12 of its 0.5 ms: it ends at 4/3 + 1/12 = 17/12. Transfer 1 starts then; bucket
    # 0 is copied back 17/12 to 20/12, at half speed 0.125 ms of work, then 0.375 ms at
    # full speed: it ends at 20/12 + 0.375 (without the copy at 17/12 + 0.5).
    f = replace(fit([from_document(doc)]), rank_contention=(2 / 3,), transfer_contention=1.0)
    layout = [np.array([0]), np.array([1])]
    s = predict_layout(f, layout).schedule
    assert s.bucket_end == pytest.approx([17 / 12, 20 / 12 + 0.375], rel=1e-9)
    s = predict_layout(replace(f, copy_back_ms_per_mib=0.0), layout).schedule
    assert s.bucket_end == pytest.approx([17 / 12, 17 / 12 + 0.5], rel=1e-9)


def test_the_page_says_transfer_contention_is_backwards() -> None:
    from widgets.trace_viewer.text import fit_terms

    def why(f, term: str) -> tuple[bool, str]:
        row = next(r for r in fit_terms(f) if r["term"] == term)
        return row["fitted"], row["why"]

    f = fit([_half_busy()])
    assert why(f, "contention") == (True, "matched to when the fitted layouts' backward ended")
    assert why(f, "transfer_contention") == (
        True,
        "the most slowed rank's backward contention: shared cores slow both alike",
    )
    # Four busy intervals identify neither.
    f = fit([_half_busy(4)])
    for term in ("contention", "transfer_contention"):
        assert why(f, term) == (False, "no fitted layout ran a transfer under backward")
