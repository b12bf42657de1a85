"""The trace view's numbers, worked out by hand on a two-iteration, two-rank trace."""

from __future__ import annotations

import json

import numpy as np
import pytest
from synthetic import (
    synthetic_document,
    two_parameter_document,
    two_parameter_rank,
    worked_iteration,
)

from traces import from_document, measure, parse_trace, summarize
from widgets.trace_viewer.model import MEDIAN, TraceViewConfig, shipped_traces, trace_view, what_if
from widgets.trace_viewer.text import machine_summary, shares_cores

_rank = two_parameter_rank


# Iteration 5: rank 1 starts backward last (t0 = 11). Iteration 6: rank 0 does (t0 = 112).
HAND = two_parameter_document(
    [
        worked_iteration(5),
        {
            "iteration": 6,
            "other_load": 0.0,
            "ranks": [
                _rank(0, 100, 112, 117, 114, (115, 117.5), (118, 121), 121.5, (122, 124)),
                _rank(1, 101, 111, 116, 113, (113.5, 116.5), (118, 121), 121.5, (122, 124)),
            ],
        },
    ],
    warmup_iterations=5,
    model="two parameters by hand",
)


@pytest.fixture(scope="module")
def hand():
    return parse_trace(json.dumps(HAND), name="hand.json")


def test_single_iteration_lanes_from_its_own_t0(hand) -> None:
    r = trace_view(hand, [], iteration=1)
    assert r.iteration == 0 and r.iteration_label == "iteration 5 (1 of 2)"
    assert r.late_rank == 1
    np.testing.assert_allclose(r.backward_start, [-1, 0])
    # Gradient b is ready first: it runs from backward start, then a from b's gradient.
    np.testing.assert_allclose(r.layer_start, [[1, -1], [2, 0]])
    np.testing.assert_allclose(r.layer_end, [[3, 1], [5, 2]])
    np.testing.assert_allclose(r.bucket_ready, [[1, 3], [2, 5]])
    np.testing.assert_allclose(r.bucket_issue, [[1.5, 3.5], [2.5, 5.5]])
    np.testing.assert_allclose(r.bucket_complete, [[5, 7], [5, 7]])
    np.testing.assert_array_equal(r.defining_rank, [1, 1])
    np.testing.assert_allclose(r.backward_return, [7.5, 7.5])
    np.testing.assert_allclose(r.optimizer_end, [10, 10])
    # compute end 5, communication end 7, return 7.5, forward 11 - 1, last optimizer end 10.
    assert r.measured == pytest.approx(
        {
            "backward_return_ms": 7.5,
            "communication_end_ms": 7.0,
            "exposed_tail_ms": 2.0,
            "step_ms": 20.0,
        }
    )


def test_second_iteration_has_the_other_late_rank(hand) -> None:
    r = trace_view(hand, [], iteration=2)
    assert r.late_rank == 0
    np.testing.assert_allclose(r.bucket_issue, [[3, 5.5], [1.5, 4.5]])
    np.testing.assert_array_equal(r.defining_rank, [0, 0])
    assert r.measured == pytest.approx(
        {
            "backward_return_ms": 9.5,
            "communication_end_ms": 9.0,
            "exposed_tail_ms": 4.0,
            "step_ms": 24.0,
        }
    )
    # A number past the last iteration shows the last one.
    assert trace_view(hand, [], iteration=9).iteration == 1


def test_median_iteration_takes_every_event_median(hand) -> None:
    r = trace_view(hand, [], iteration=MEDIAN)
    assert r.iteration is None and r.iteration_label == "median of 2 iterations"
    np.testing.assert_allclose(r.backward_start, [-0.5, -0.5])
    np.testing.assert_allclose(r.layer_end, [[4, 1.5], [4.5, 1.5]])
    np.testing.assert_allclose(r.layer_start, [[1.5, -0.5], [1.5, -0.5]])
    # Bucket 0: rank 0 at (1.5 + 3) / 2 = 2.25, rank 1 at (2.5 + 1.5) / 2 = 2.
    np.testing.assert_allclose(r.bucket_issue[:, 0], [2.25, 2.0])
    np.testing.assert_array_equal(r.defining_rank, [0, 1])
    # Each rank defined each bucket in one of the two iterations.
    np.testing.assert_array_equal(r.defining_counts, [[1, 1], [1, 1]])
    assert r.measured == pytest.approx(
        {
            "backward_return_ms": 8.5,
            "communication_end_ms": 8.0,
            "exposed_tail_ms": 3.0,
            "step_ms": 22.0,
        }
    )
    # With no other trace of the same parameters, the model is fitted on this one.
    assert r.fitted_on_self and r.fit.sources == ("hand.json",)


def test_model_ranks_put_the_late_rank_first(hand) -> None:
    r = trace_view(hand, [], iteration=1)
    assert [r.model_rank(k) for k in range(2)] == [1, 0]
    r = trace_view(hand, [], iteration=2)
    assert [r.model_rank(k) for k in range(2)] == [0, 1]


def test_machine_words_and_shared_cores(hand) -> None:
    assert machine_summary(hand) == (
        "2 ranks, gloo backend, device cpu, 2 CPU cores, 1 thread per rank, torch 2.13.0+cpu"
    )
    # Two ranks of one compute thread plus gloo's work need more than two cores.
    assert shares_cores(hand)
    roomy = json.loads(json.dumps(HAND))
    roomy["metadata"]["cpu_count"] = 16
    assert not shares_cores(parse_trace(json.dumps(roomy)))


@pytest.fixture(scope="module")
def synthetic():
    return {
        k: from_document(synthetic_document(layout, seed=i), f"{k}.json")
        for i, (k, layout) in enumerate(
            {"cap4": [1] * 12, "cap12": [3, 3, 3, 3], "cap48": [12]}.items()
        )
    }


def test_what_if_layout_and_the_measured_trace_beside_it(synthetic) -> None:
    r = trace_view(synthetic["cap4"], [synthetic["cap48"]], 0, 12.0, [synthetic["cap12"]])
    assert not r.fitted_on_self and r.fit.sources == ("cap48.json",)
    w = r.what_if
    # 12 MiB of 4 MiB gradients: buckets of three, in readiness order 11, 10, 9...
    assert w.layout == "4 buckets: 3+3+3+3 parameters"
    assert [list(b) for b in w.bucket_parameters] == [[11, 10, 9], [8, 7, 6], [5, 4, 3], [2, 1, 0]]
    m = measure(synthetic["cap12"])
    assert w.measured_name == "cap12.json"
    assert w.measured["exposed_tail_ms"] == summarize(m.exposed_tail_ms).median
    # 8 MiB has no recorded trace: nothing measured beside it.
    w8 = what_if(r.fit, 8.0, list(synthetic.values()))
    assert w8.layout == "6 buckets: 2+2+2+2+2+2 parameters" and w8.measured is None


def test_what_if_prediction_is_the_fit_of_that_layout(synthetic) -> None:
    r = trace_view(synthetic["cap4"], [synthetic["cap48"], synthetic["cap12"]], 0, 4.0)
    # At 4 MiB the layout is the shown trace's own: the same prediction.
    assert r.what_if.predicted == pytest.approx(r.prediction.quantities)
    assert r.what_if.measured_name == "cap4.json"


def test_settings_result_fits_a_shipped_trace_on_the_others() -> None:
    c = TraceViewConfig(trace="one-bucket.json", what_if_cap_mb=4.0)
    r = c.result()
    assert r.trace.name == "one-bucket.json"
    assert set(r.fit.sources) == set(shipped_traces()) - {"one-bucket.json"}
    assert r.what_if.measured_name == "one-layer-per-bucket.json"
    # An upload is fitted on every shipped trace.
    up = c.result(uploaded=shipped_traces()["one-bucket.json"])
    assert set(up.fit.sources) == set(shipped_traces())
