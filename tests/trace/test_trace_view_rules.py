"""The trace view's rules to the letter: settings as the page shows them, a three-iteration
trace worked out by hand, the fit cache, the what-if's measured neighbour and the machine words.

Every expected value below is written out from the module's documented contract (settings as
the page and README.md list them, "iteration 0 is every event's median", "the rank that issued
a bucket last defines it", DDP's bucket filling) on inputs small enough to follow by hand.
"""

from __future__ import annotations

import dataclasses
import importlib
import json

import numpy as np
import pytest
from synthetic import (
    edited,
    synthetic_document,
    two_parameter_document,
    two_parameter_rank,
    worked_iteration,
)

from traces import QUANTITIES, fit, from_document, parse_trace
from traces.shipped import shipped
from widgets.model.settings import hint_of, is_setting, setting_names, unit_of

# Imported by name at run time: mutation runs choose their test files explicitly.
tv = importlib.import_module("widgets.trace_viewer." + "model")
words_of = importlib.import_module("widgets.trace_viewer." + "text")


# --- the settings, as the page shows them -----------------------------------------------------

# URL key -> (label, unit, hint under the field, bounds, default). The keys are the URL query
# keys README.md lists; the labels, units and hint are what the page shows beside each field.
SETTINGS = {
    "iteration": (
        "Iteration",
        "",
        "0: the median iteration; 1 to N: one recorded iteration",
        (0, 1000),
        0,
    ),
    "what_if_cap_mb": ("What-if bucket cap", "MiB", None, (1.0, 1024.0), 20.0),
    "trace": ("Shipped trace", "", None, None, "three-layers-per-bucket.json"),
}
# The shipped traces, in the order of traces/shipped/README.md's table.
SHIPPED = [
    "one-layer-per-bucket.json",
    "three-layers-per-bucket.json",
    "one-bucket.json",
    "mixed-5-5-2.json",
]


def test_the_settings_are_the_url_keys_in_page_order() -> None:
    assert setting_names(tv.TraceViewConfig) == list(SETTINGS)


@pytest.mark.parametrize("name", list(SETTINGS))
def test_each_setting_is_declared_as_the_page_shows_it(name: str) -> None:
    label, unit, hint, bounds, default = SETTINGS[name]
    p = tv.TraceViewConfig.param[name]
    assert is_setting(p)
    assert (p.label, unit_of(p), hint_of(p), p.default) == (label, unit, hint, default)
    if bounds is not None:
        assert p.bounds == bounds
    assert p.doc


def test_the_trace_setting_offers_the_shipped_traces() -> None:
    assert tv.TraceViewConfig.param["trace"].objects == SHIPPED


@pytest.mark.parametrize(
    ("name", "inside", "outside"),
    [("iteration", (0, 1000), (-1, 1001)), ("what_if_cap_mb", (1.0, 1024.0), (0.5, 1025.0))],
)
def test_bounds_take_their_ends_and_refuse_past_them(name, inside, outside) -> None:
    for value in inside:
        assert getattr(tv.TraceViewConfig(**{name: value}), name) == value
    for value in outside:
        with pytest.raises(ValueError):
            tv.TraceViewConfig(**{name: value})


def test_the_public_names() -> None:
    assert tv.__all__ == [
        "MEDIAN",
        "TraceError",
        "TraceViewConfig",
        "TraceViewResult",
        "WhatIf",
        "shipped_traces",
        "trace_view",
        "what_if",
    ]
    for name in tv.__all__:
        assert hasattr(tv, name)
    assert tv.MEDIAN == 0


# --- a three-iteration, two-rank trace by hand --------------------------------------------------


_rank = two_parameter_rank


# t0 (the later backward start): iteration 7 at 11 (rank 1), 8 at 112 (rank 0), 9 at 212 (rank 1).
# From each t0, (rank 0 | rank 1):
#   backward start   7: -1 | 0      8: 0 | -1      9: -2 | 0
#   gradient a, b    7: 3, 1 | 5, 2 8: 5, 2 | 4, 1 9: 3, 1 | 4, 2
#   issue b0, b1     7: 1.5, 3.5 | 2.5, 5.5   8: 2.5, 5.5 | 3, 4.5   9: 1.5, 3.5 | 2.5, 4.5
#   complete b0, b1  7: 5, 7       8: 6, 9       9: 6, 8        (both ranks)
#   return, optimizer start, end   7: 7.5, 8, 10   8: 9.5, 10, 12   9: 8.5, 9, 12
# Bucket 0 is issued last by rank 1 in all three iterations; bucket 1 by rank 1 in 7 and 9 and
# by rank 0 in 8.
DOC = two_parameter_document(
    [
        worked_iteration(7),
        {
            "iteration": 8,
            "other_load": 0.0,
            "ranks": [
                _rank(0, 100, 112, 117, 114, (114.5, 117.5), (118, 121), 121.5, (122, 124)),
                _rank(1, 101, 111, 116, 113, (115, 116.5), (118, 121), 121.5, (122, 124)),
            ],
        },
        {
            "iteration": 9,
            "other_load": 0.0,
            "ranks": [
                _rank(0, 200, 210, 215, 213, (213.5, 215.5), (218, 220), 220.5, (221, 224)),
                _rank(1, 201, 212, 216, 214, (214.5, 216.5), (218, 220), 220.5, (221, 224)),
            ],
        },
    ]
)


@pytest.fixture(scope="module")
def three():
    return parse_trace(json.dumps(DOC), name="three.json")


@pytest.fixture(scope="module")
def median(three):
    return tv.trace_view(three, [], iteration=tv.MEDIAN)


def test_the_median_iteration_is_every_events_middle_value(median) -> None:
    r = median
    assert r.iteration is None and r.iteration_label == "median of 3 iterations"
    # Rank 1 started backward last in two of the three iterations.
    assert r.late_rank == 1
    np.testing.assert_allclose(r.backward_start, [-1, 0])  # medians of (-1, 0, -2), (0, -1, 0)
    np.testing.assert_allclose(r.layer_end, [[3, 1], [4, 2]])
    # b runs from backward start to its gradient, then a from b's gradient to its own.
    np.testing.assert_allclose(r.layer_start, [[1, -1], [2, 0]])
    np.testing.assert_allclose(r.bucket_ready, [[1, 3], [2, 4]])
    np.testing.assert_allclose(r.bucket_issue, [[1.5, 3.5], [2.5, 4.5]])
    np.testing.assert_allclose(r.bucket_complete, [[6, 8], [6, 8]])
    np.testing.assert_allclose(r.backward_return, [8.5, 8.5])
    np.testing.assert_allclose(r.optimizer_start, [9, 9])
    np.testing.assert_allclose(r.optimizer_end, [12, 12])
    np.testing.assert_array_equal(r.defining_rank, [1, 1])
    assert (r.n_ranks, r.n_buckets) == (2, 2)


def test_defining_counts_are_per_rank_and_bucket_over_the_iterations(median) -> None:
    # Rows are ranks, columns buckets: rank 0 issued bucket 1 last once (iteration 8),
    # rank 1 bucket 0 three times and bucket 1 twice.
    assert median.defining_counts.shape == (2, 2)
    np.testing.assert_array_equal(median.defining_counts, [[0, 1], [3, 2]])


def test_one_recorded_iteration_is_drawn_from_its_own_t0(three) -> None:
    r = tv.trace_view(three, [], iteration=2)
    assert r.iteration == 1 and r.iteration_label == "iteration 8 (2 of 3)"
    assert r.late_rank == 0
    np.testing.assert_allclose(r.backward_start, [0, -1])
    np.testing.assert_allclose(r.layer_end, [[5, 2], [4, 1]])
    np.testing.assert_allclose(r.layer_start, [[2, 0], [1, -1]])
    np.testing.assert_array_equal(r.defining_rank, [1, 0])
    # The counts cover every iteration, whichever one is drawn.
    np.testing.assert_array_equal(r.defining_counts, [[0, 1], [3, 2]])


def test_the_what_if_cap_defaults_to_twenty_mib(three) -> None:
    assert tv.trace_view(three, []).what_if.cap_mb == 20.0


def test_end_is_the_later_of_the_measurement_and_the_model(median) -> None:
    # The model's optimizer starts at its backward return (30) and runs after_return (5):
    # 35 ms, past the measured optimizer end (12) and last completion (8).
    model = dataclasses.replace(
        median,
        fit=dataclasses.replace(median.fit, after_return_ms=5.0),
        prediction=dataclasses.replace(median.prediction, quantities={"backward_return_ms": 30.0}),
    )
    assert model.predicted_optimizer_start == 30.0
    assert model.end_ms == 35.0
    # A model ending at 3 + 1 = 4 ms: the measured optimizer end (12) is the last thing drawn.
    early = dataclasses.replace(
        median,
        fit=dataclasses.replace(median.fit, after_return_ms=1.0),
        prediction=dataclasses.replace(median.prediction, quantities={"backward_return_ms": 3.0}),
    )
    assert early.end_ms == 12.0


def test_results_are_frozen_records_compared_by_identity(median) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        median.late_rank = 0
    same_fields = dataclasses.replace(median)
    assert same_fields != median and same_fields == same_fields
    assert len({median, same_fields}) == 2  # hashable by identity


def test_what_if_records_are_frozen_compared_by_identity_and_worded() -> None:
    one = tv.WhatIf(48.0, (np.arange(12),), {}, None, None)
    twin = tv.WhatIf(48.0, one.bucket_parameters, {}, None, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.cap_mb = 4.0
    assert one != twin and len({one, twin}) == 2
    assert one.n_buckets == 1 and one.layout == "1 bucket: 12 parameters"
    two = tv.WhatIf(24.0, (np.arange(6), np.arange(6, 12)), {}, None, None)
    assert two.layout == "2 buckets: 6+6 parameters"


# --- the fit: shipped choices once per process, anything else every time ------------------------


def test_a_shipped_trace_reuses_its_fit_on_the_others() -> None:
    config = tv.TraceViewConfig(trace="one-bucket.json")
    first, again = config.result(), config.result()
    assert again.fit is first.fit
    assert not first.fitted_on_self and not again.fitted_on_self


def test_traces_that_are_not_the_shipped_objects_are_fitted_afresh() -> None:
    # The same files read again have the shipped names but are other objects: not cached.
    files = shipped()
    others = [
        parse_trace(files[name].read_bytes(), name=name)
        for name in ("one-layer-per-bucket.json", "one-bucket.json")
    ]
    shown = tv.shipped_traces()["mixed-5-5-2.json"]
    first = tv.trace_view(shown, others)
    again = tv.trace_view(shown, others)
    assert again.fit is not first.fit
    assert not first.fitted_on_self and not again.fitted_on_self


# --- the what-if beside a recorded trace ------------------------------------------------------

# Twelve 4 MiB parameters, computed from 11 down to 0. DDP closes a bucket once it holds the
# cap: at 11 MiB after three parameters (12 >= 11, 8 < 11), so 11 MiB gives 3+3+3+3, the
# layout of a trace recorded at 12 MiB; at 8 MiB after two, six buckets.


@pytest.fixture(scope="module")
def threes():
    return from_document(synthetic_document([3, 3, 3, 3], seed=3), "threes.json")


@pytest.fixture(scope="module")
def fitted(threes):
    return fit([threes], max_other_load=None)


def test_a_trace_of_the_same_layout_is_measured_beside_another_cap(fitted, threes) -> None:
    w = tv.what_if(fitted, 11.0, [threes])
    assert w.layout == "4 buckets: 3+3+3+3 parameters"
    assert w.measured_name == "threes.json" and set(w.measured) == set(QUANTITIES)


def test_the_same_count_of_other_buckets_is_not_the_same_layout(fitted) -> None:
    # Four buckets of 1+5+3+3 parameters, recorded at 4 MiB: not what 11 MiB makes.
    uneven = from_document(synthetic_document([1, 5, 3, 3], seed=4), "uneven.json")
    w = tv.what_if(fitted, 11.0, [uneven])
    assert w.measured is None and w.measured_name is None


def test_a_trace_recorded_at_the_asked_cap_is_measured_whatever_its_layout(fitted) -> None:
    # A 3+3+3+3 trace that says it was recorded at 8 MiB (where DDP would make 2+2+...).
    doc = edited(synthetic_document([3, 3, 3, 3], seed=5), "metadata.bucket_cap_mb", 8.0)
    said = from_document(doc, "said-8.json")
    w = tv.what_if(fitted, 8.0, [said])
    assert w.n_buckets == 6
    assert w.measured_name == "said-8.json"


# --- the machine in words, and whether its cores are shared -------------------------------------


def _with_metadata(trace, metadata: dict):
    """The same two-rank trace with other metadata (as a file of another machine would say)."""
    return dataclasses.replace(trace, document={**trace.document, "metadata": metadata})


@pytest.mark.parametrize(
    ("metadata", "words"),
    [
        (
            {
                "world_size": 2,
                "backend": "nccl",
                "device": "cuda",
                "cpu_count": 1,
                "threads_per_rank": 2,
            },
            "2 ranks, nccl backend, device cuda, 1 CPU core, 2 threads per rank",
        ),
        # The recorder notes OpenMP's wait policy; any other value is shown as it is.
        (
            {
                "backend": "gloo",
                "cpu_count": 2,
                "threads_per_rank": 2,
                "omp_wait_policy": "passive",
            },
            "2 ranks, gloo backend, device cpu, 2 CPU cores, 2 threads per rank, "
            "OpenMP threads sleep while they wait (OMP_WAIT_POLICY=PASSIVE)",
        ),
        (
            {"backend": "gloo", "omp_wait_policy": "ACTIVE"},
            "2 ranks, gloo backend, device cpu, "
            "OpenMP threads spin while they wait (OMP_WAIT_POLICY=ACTIVE)",
        ),
        (
            {"backend": "gloo", "omp_wait_policy": "turbo"},
            "2 ranks, gloo backend, device cpu, OMP_WAIT_POLICY=turbo",
        ),
        ({"backend": "gloo", "omp_wait_policy": None}, "2 ranks, gloo backend, device cpu"),
        # Nothing said: the trace's own ranks, an unknown backend, and the CPU.
        ({}, "2 ranks, unknown backend, device cpu"),
        # The rank count is the metadata's, as recorded.
        ({"world_size": 4, "backend": "gloo"}, "4 ranks, gloo backend, device cpu"),
    ],
)
def test_machine_summary(three, metadata, words) -> None:
    assert words_of.machine_summary(_with_metadata(three, metadata)) == words


@pytest.mark.parametrize(
    ("metadata", "shared"),
    [
        # A GPU run never shares the CPU cores between compute and communication.
        ({"device": "cuda", "cpu_count": 1, "threads_per_rank": 1}, False),
        # No device said: a CPU run; 2 ranks x (1 + 1) threads on 1 core.
        ({"cpu_count": 1, "threads_per_rank": 1}, True),
        # 2 ranks x (1 compute + 1 gloo) threads = 4: exactly 4 cores are enough, 3 are not.
        ({"device": "cpu", "cpu_count": 4, "threads_per_rank": 1}, False),
        ({"device": "cpu", "cpu_count": 3, "threads_per_rank": 1}, True),
        ({"device": "cpu", "cpu_count": 5, "threads_per_rank": 1}, False),
        # 2 x (4 + 1) = 10 threads on 8 cores.
        ({"device": "cpu", "cpu_count": 8, "threads_per_rank": 4}, True),
        # Threads per rank unknown: one each, so 5 cores are enough for 4 threads.
        ({"device": "cpu", "cpu_count": 5}, False),
        # Cores unknown: assume they are shared.
        ({"device": "cpu", "threads_per_rank": 1}, True),
    ],
)
def test_shares_cores(three, metadata, shared) -> None:
    assert words_of.shares_cores(_with_metadata(three, metadata)) is shared
