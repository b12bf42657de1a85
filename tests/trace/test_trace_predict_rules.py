"""The prediction's documented rules, each on a hand-made fit whose answer follows by hand.

A ``Fit`` is built field by field here (no fitting): with every contention
factor 0 the schedule is plain FIFO, so each transfer starts when the last rank
has launched it and the link is free, and every time is a sum of a few binary
fractions of a millisecond. The package's public names are pinned too.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from synthetic import NAMES, edited, synthetic_document

import traces as trace
from traces import (
    FORMAT,
    QUANTITIES,
    VERSION,
    Fit,
    FitQuality,
    Prediction,
    TraceError,
    buckets_for_cap,
    compare,
    error_pct,
    from_document,
    predict_layout,
)

MIB = 1024 * 1024
#: 1 MiB of bucket data per ms: bandwidth is in GB/s = 1e6 bytes per ms.
ONE_MIB_PER_MS = MIB / 1e6


def _fit(**changes) -> Fit:
    """A FIFO fit (no contention) of four parameters ``a`` .. ``d``, two ranks.

    Backward computes d, c, b, a (``order``) taking 1, 3, 1 and 2 ms; their
    gradients are 2, 1, 2 and 1 MiB; a transfer of S MiB takes 0.5 + S ms.
    """
    quality = FitQuality(r2=1.0, rms_ms=0.0, samples=1)
    base = {
        "parameter_names": ("a", "b", "c", "d"),
        "parameter_bytes": (1 * MIB, 2 * MIB, 1 * MIB, 2 * MIB),
        "order": (3, 2, 1, 0),
        "backward_ms": (2.0, 1.0, 3.0, 1.0),
        "overhead_ms": 0.5,
        "bandwidth_gbps": ONE_MIB_PER_MS,
        "contention": 0.0,
        "transfer_contention": 0.0,
        "rank_contention": (0.0, 0.0),
        "enqueue_ms": 0.25,
        "start_skew_ms": 1.0,
        "forward_ms": 10.0,
        "finalize_ms": 0.5,
        "after_return_ms": 3.0,
        "world_size": 2,
        "backward_quality": quality,
        "transfer_quality": quality,
        "separable": True,
        "contention_identified": True,
        "sources": ("x.json", "y.json"),
    }
    base.update(changes)
    return Fit(**base)


# ---------------------------------------------------------------- the package's public names

#: The public API, module by module (see the package docstring).
PUBLIC = {
    # schema: the format's constants, the JSON Schema and its checks
    "FORMAT",
    "VERSION",
    "TraceError",
    "check_consistency",
    "check_schema",
    "schema",
    "validate_trace",
    # load
    "MAX_TRACE_BYTES",
    "Trace",
    "from_document",
    "load_trace",
    "parse_trace",
    "write_trace",
    # trim
    "keep_quietest",
    # measure
    "QUANTITIES",
    "Measured",
    "Summary",
    "measure",
    "quiet_iterations",
    "summarize",
    # fit
    "Fit",
    "FitQuality",
    "TERMS",
    "fit",
    "term_values",
    # bootstrap
    "resample_trace",
    # identify
    "PredictionRefused",
    "check_predictable",
    "refusal",
    # predict
    "Prediction",
    "buckets_for_cap",
    "compare",
    "error_pct",
    "predict_layout",
    # chrome
    "to_chrome_trace",
}


def test_all_lists_exactly_the_public_names_and_each_exists() -> None:
    assert len(trace.__all__) == len(set(trace.__all__))  # no name twice
    assert set(trace.__all__) == PUBLIC
    for name in trace.__all__:
        assert getattr(trace, name) is not None, name
    namespace: dict = {}
    exec("from traces import *", namespace)  # what a star import binds
    assert set(namespace) - {"__builtins__"} == PUBLIC


def test_format_constants_match_the_schema_file() -> None:
    # Each schema file: "format" is the constant "overlap-lab-trace", "version" its number;
    # version 2 is the one written.
    for number in (1, 2):
        path = Path(trace.__file__).with_name(f"schema_v{number}.json")
        props = json.loads(path.read_text())["properties"]
        assert FORMAT == "overlap-lab-trace" == props["format"]["const"]
        assert props["version"]["const"] == number
    assert VERSION == 2


# ---------------------------------------------------------------------- buckets_for_cap


def _sized(order: tuple[int, ...], nbytes: tuple[int, ...]) -> Fit:
    names = tuple(f"p{i}" for i in range(len(nbytes)))
    n = len(nbytes)
    return _fit(
        parameter_names=names,
        parameter_bytes=nbytes,
        order=order,
        backward_ms=(1.0,) * n,
    )


def test_a_bucket_closes_once_it_reaches_the_cap_not_before() -> None:
    # Cap 1 MiB. In readiness order p2 (1 MiB - 1 byte) leaves the first bucket
    # one byte short, so p0 (1 byte) joins it and brings it to exactly 1 MiB:
    # it closes. p3 and p1 fill the second the same way; p4 opens a third.
    f = _sized(order=(2, 0, 3, 1, 4), nbytes=(1, 1, MIB - 1, MIB - 1, 5))
    buckets = buckets_for_cap(f, 1)
    assert [b.tolist() for b in buckets] == [[2, 0], [3, 1], [4]]
    assert all(b.dtype.kind == "i" for b in buckets)


def test_the_cap_applies_to_the_first_bucket_too() -> None:
    # DDP's own first bucket is small (1 MiB); after the rebuild with an explicit
    # cap, the first bucket takes parameters up to the cap like every other.
    # Cap 0.5 MiB, 256 KiB parameters: two per bucket.
    kib = 1024
    f = _sized(order=(5, 4, 3, 2, 1, 0), nbytes=(256 * kib,) * 6)
    assert [b.tolist() for b in buckets_for_cap(f, 0.5)] == [[5, 4], [3, 2], [1, 0]]
    # A parameter bigger than the cap fills a bucket alone.
    big = _sized(order=(1, 0, 2), nbytes=(MIB, 3 * MIB, MIB))
    assert [b.tolist() for b in buckets_for_cap(big, 2)] == [[1], [0, 2]]


@pytest.mark.parametrize("cap", [0, 0.0, -1.0])
def test_a_cap_must_be_positive(cap) -> None:
    with pytest.raises(ValueError, match=r"^a bucket cap must be positive$"):
        buckets_for_cap(_fit(), cap)


# ----------------------------------------------------------------------- predict_layout


def test_a_fifo_layout_predicts_the_closed_form_schedule() -> None:
    # Buckets [d, c] and [b, a]. Rank 0 starts at 0, rank 1 one ms earlier (skew).
    # Ready (order d, c, b, a; 1, 3, 1, 2 ms): rank 0 at 1, 4, 5, 7; rank 1 at 0, 3, 4, 6.
    # Bucket 0 (d 2 MiB + c 1 MiB): ready 4 and 3, launched 4.25 and 3.25 (enqueue
    #   0.25); starts 4.25, takes 0.5 + 3 ms, ends 7.75.
    # Bucket 1 (b 2 MiB + a 1 MiB): launched 7.25 and 6.25; the link is busy until
    #   7.75, so it runs 7.75 to 11.25.
    # C = 11.25, E = 7 (rank 0), tail 4.25; backward return = 11.25 + 0.5 = 11.75;
    # step = forward 10 + 11.75 + after return 3 = 24.75.
    p = predict_layout(_fit(), [np.array([3, 2]), np.array([1, 0])])
    assert isinstance(p, Prediction)
    assert p.quantities == pytest.approx(
        {
            "backward_return_ms": 11.75,
            "communication_end_ms": 11.25,
            "exposed_tail_ms": 4.25,
            "step_ms": 24.75,
        },
        abs=1e-12,
    )
    assert set(p.quantities) == set(QUANTITIES)
    assert p.compute_end_ms == pytest.approx(7.0, abs=1e-12)
    np.testing.assert_allclose(p.schedule.backward_start, [0.0, -1.0])
    np.testing.assert_allclose(p.schedule.bucket_start, [4.25, 7.75])
    np.testing.assert_allclose(p.schedule.bucket_end, [7.75, 11.25])
    np.testing.assert_allclose(p.schedule.layer_ready, [[7, 5, 4, 1], [6, 4, 3, 0]])


def test_backward_return_waits_for_backward_when_it_ends_last() -> None:
    # One bucket of everything (6 MiB): rank 0's gradients are all ready at 7,
    # rank 1's at 6; launched 7.25, it runs 7.25 to 13.75 (0.5 + 6 ms).
    # With finalize 2 and after return 0: step = 10 + 15.75 = 25.75.
    p = predict_layout(_fit(finalize_ms=2.0, after_return_ms=0.0), [np.arange(4)])
    assert p.quantities["communication_end_ms"] == pytest.approx(13.75)
    assert p.quantities["backward_return_ms"] == pytest.approx(15.75)
    assert p.quantities["exposed_tail_ms"] == pytest.approx(6.75)
    assert p.quantities["step_ms"] == pytest.approx(25.75)
    # Tiny transfers end before backward does: backward return is E + finalize.
    fast = _fit(overhead_ms=0.0, bandwidth_gbps=1e6, finalize_ms=2.0)
    q = predict_layout(fast, [np.array([3, 2]), np.array([1, 0])]).quantities
    assert q["exposed_tail_ms"] == pytest.approx(0.25, abs=1e-3)  # 7.25 + 6e-6 vs 7
    assert q["backward_return_ms"] == pytest.approx(7.25 + 2.0, abs=1e-3)


@pytest.mark.parametrize(
    "buckets", [[np.array([3, 2]), np.array([1])], [np.array([0, 1, 2])], [np.array([], int)]]
)
def test_every_parameter_needs_a_bucket(buckets) -> None:
    with pytest.raises(TraceError, match=r"^every parameter needs a bucket$"):
        predict_layout(_fit(), buckets)


def test_a_prediction_is_frozen_and_compared_by_identity() -> None:
    p = predict_layout(_fit(), [np.arange(4)])
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.compute_end_ms = 0.0  # type: ignore[misc]
    # It holds arrays and a dict: equality is identity, and it hashes like any object.
    twin = Prediction(p.quantities, p.schedule, p.compute_end_ms)
    assert twin != p and p == p
    assert len({p, twin}) == 2


# -------------------------------------------------------------------------------- error_pct


def test_error_pct_is_signed_percent_of_the_measurement() -> None:
    assert error_pct(110.0, 100.0) == pytest.approx(10.0)
    assert error_pct(90.0, 100.0) == pytest.approx(-10.0)
    assert error_pct(3.0, 2.0) == pytest.approx(50.0)
    assert error_pct(2.0, 1.0) == pytest.approx(100.0)
    assert error_pct(0.5, 1.0) == pytest.approx(-50.0)
    assert error_pct(1.0, -2.0) == pytest.approx(-150.0)  # divides by the signed measurement


def test_error_pct_of_a_zero_measurement() -> None:
    assert error_pct(0.0, 0.0) == 0.0
    assert error_pct(0, 0) == 0.0
    assert error_pct(3.0, 0.0) == float("inf")
    assert error_pct(1.0, 0.0) == float("inf")
    assert error_pct(-1.0, 0.0) == float("inf")


# ---------------------------------------------------------------------------------- compare

#: One bucket of all twelve parameters, like the synthetic ``[12]`` layout: 48 MiB.
#: Every parameter 1 ms of backward, 1 ms of transfer per 4 MiB, overhead 0.5.
#: Rank 0 ready at 12, rank 1 (skew 2) at 10: launched at 12 (no enqueue), the
#: transfer runs 12 to 24.5; backward return 24.5 + 0.5 = 25; step = 12 + 25 + 177.6178.
PREDICTED_STEP = 214.6178


def _twelve_fit(**changes) -> Fit:
    twelve = {
        "parameter_names": tuple(NAMES),
        "parameter_bytes": (4 * MIB,) * 12,
        "order": tuple(range(12))[::-1],
        "backward_ms": (1.0,) * 12,
        "bandwidth_gbps": 4 * ONE_MIB_PER_MS,
        "enqueue_ms": 0.0,
        "start_skew_ms": 2.0,
        "forward_ms": 12.0,
        "after_return_ms": PREDICTED_STEP - 37.0,
    }
    return _fit(**{**twelve, **changes})


def _target(other_loads=(0.0, 0.0, 0.0, 0.5)):
    """A one-bucket synthetic trace whose step (ms) is set by hand in each iteration.

    The step runs from the late rank's forward start (12 ms before its backward
    start t0) to the last optimizer end: both ranks' optimizer ends are put at
    t0 + X, so the step is 12 + X. The loud last iteration (other load 0.5) is
    500 ms long.
    """
    steps = [212.4444, 211.1111, 212.0004, 500.0]
    doc = synthetic_document([12], iterations=4, jitter=0.0)
    for i, (step, load) in enumerate(zip(steps, other_loads, strict=True)):
        t0 = max(r["backward_start"] for r in doc["iterations"][i]["ranks"])
        for r in range(2):
            doc = edited(doc, f"iterations[{i}].ranks[{r}].optimizer_end", t0 + step - 12.0)
        doc = edited(doc, f"iterations[{i}].other_load", load)
    return from_document(doc, "target.json")


def test_compare_reports_rounded_medians_and_spread_of_quiet_iterations() -> None:
    result = compare(_twelve_fit(), _target())
    assert set(result) == {"quantities", "refusal", "target", "target_layout", "fitted_on"}
    assert result["refusal"] is None
    assert result["target"] == "target.json"
    assert result["target_layout"] == "1 bucket: 12 parameters"
    assert result["fitted_on"] == ["x.json", "y.json"]
    assert list(result["quantities"]) == list(QUANTITIES)
    for q in result["quantities"].values():
        assert set(q) == {"predicted", "measured", "error_pct", "spread"}
        assert set(q["spread"]) == {"q25", "q75", "min", "max", "iterations"}
        assert q["spread"]["iterations"] == 3  # the loud iteration is left out (0.5 > 0.25)
    assert result["quantities"]["communication_end_ms"]["predicted"] == pytest.approx(24.5)
    assert result["quantities"]["exposed_tail_ms"]["predicted"] == pytest.approx(12.5)
    assert result["quantities"]["backward_return_ms"]["predicted"] == pytest.approx(25.0)
    step = result["quantities"]["step_ms"]
    # Quiet steps 211.1111, 212.0004, 212.4444: median 212.0004; quartiles halfway
    # between neighbours (linear interpolation): 211.55575 and 212.2224. Every
    # number is rounded to 3 decimals, the error to 2.
    assert step["predicted"] == pytest.approx(214.618, abs=1e-9)
    assert step["measured"] == pytest.approx(212.0, abs=1e-9)
    assert step["spread"]["q25"] == pytest.approx(211.556, abs=1e-9)
    assert step["spread"]["q75"] == pytest.approx(212.222, abs=1e-9)
    assert step["spread"]["min"] == pytest.approx(211.111, abs=1e-9)
    assert step["spread"]["max"] == pytest.approx(212.444, abs=1e-9)
    # Error against the unrounded median: 100 * 2.6174 / 212.0004 = 1.23462...
    assert step["error_pct"] == pytest.approx(1.23, abs=1e-9)


def test_compare_keeps_every_iteration_on_request() -> None:
    # With no load limit the 500 ms iteration counts: 4 steps, max 500, median
    # halfway between 212.0004 and 212.4444 = 212.2224.
    step = compare(_twelve_fit(), _target(), max_other_load=None)["quantities"]["step_ms"]
    assert step["spread"]["iterations"] == 4
    assert step["spread"]["max"] == pytest.approx(500.0)
    assert step["measured"] == pytest.approx(212.222, abs=1e-9)
    # A limit of 0.5 keeps it too; 0.4 does not.
    assert (
        compare(_twelve_fit(), _target(), 0.5)["quantities"]["step_ms"]["spread"]["iterations"] == 4
    )
    assert (
        compare(_twelve_fit(), _target(), 0.4)["quantities"]["step_ms"]["spread"]["iterations"] == 3
    )


def test_compare_by_default_leaves_out_iterations_over_a_quarter_load() -> None:
    # Loads 0.25 (kept: at most a quarter) and 0.3 (left out) besides two quiet ones.
    target = _target(other_loads=(0.0, 0.25, 0.0, 0.3))
    step = compare(_twelve_fit(), target)["quantities"]["step_ms"]
    assert step["spread"]["iterations"] == 3
    assert step["spread"]["max"] == pytest.approx(212.444, abs=1e-9)


def test_compare_refuses_a_target_of_other_parameters() -> None:
    f = _twelve_fit(parameter_names=tuple(f"layer{i}" for i in range(12)))
    with pytest.raises(TraceError, match=r"^target\.json: its parameters differ from the fitted"):
        compare(f, _target())
