"""What is read off a trace per iteration, and how quiet iterations and spreads are chosen."""

from __future__ import annotations

import copy
import dataclasses
import re

import numpy as np
import pytest
from synthetic import synthetic_document

from traces import TraceError, from_document, measure, quiet_iterations, summarize


def test_a_tail_is_never_negative() -> None:
    # One bucket of all twelve layers; in the first iteration rank 0 keeps
    # computing after the all-reduce has completed: its last gradient moves to
    # 1 ms before backward returns, later than the completion. Compute ends
    # after communication, so the exposed tail is 0, not negative.
    doc = synthetic_document([12], iterations=2)
    rank = doc["iterations"][0]["ranks"][0]
    complete = rank["buckets"][0]["complete"]
    rank["backward_return"] = round(complete + 3.0, 3)
    rank["optimizer_start"] = round(complete + 3.05, 3)
    rank["grad_ready"][0] = round(complete + 2.0, 3)
    m = measure(from_document(doc, "late compute"))
    assert m.compute_end_ms[0] > m.communication_end_ms[0]
    assert m.exposed_tail_ms[0] == 0.0
    assert m.exposed_tail_ms[1] > 0.0


def _with_loads(loads: list[float]):
    doc = synthetic_document([3] * 4, iterations=len(loads))
    for it, load in zip(doc["iterations"], loads, strict=True):
        it["other_load"] = load
    return from_document(doc, "loads")


def test_an_iteration_exactly_at_the_load_limit_is_kept() -> None:
    t = _with_loads([0.25, 0.5, 0.0])
    assert quiet_iterations(t, 0.25).tolist() == [True, False, True]
    assert quiet_iterations(t, None).tolist() == [True, True, True]


def test_a_trace_with_no_quiet_iteration_says_how_busy_it_was() -> None:
    t = _with_loads([0.5, 0.75])
    message = (
        "loads: in every iteration other processes kept more than 25% of the cores busy "
        "(least: 50%); record it again on a quieter machine, or allow more with "
        "--max-other-load"
    )
    with pytest.raises(TraceError, match=f"^{re.escape(message)}$"):
        quiet_iterations(t, 0.25)


def test_summary_is_median_quartiles_and_extremes() -> None:
    # Five values: linear-interpolation quartiles of 1..5 are 2 and 4 exactly.
    s = summarize(np.array([5.0, 1.0, 4.0, 2.0, 3.0]))
    assert (s.median, s.q25, s.q75, s.low, s.high, s.n) == (3.0, 2.0, 4.0, 1.0, 5.0, 5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.median = 0.0  # type: ignore[misc]


def test_measurements_are_a_frozen_record_compared_by_identity() -> None:
    doc = synthetic_document([12], iterations=2)
    a = measure(from_document(doc, "a"))
    b = measure(from_document(copy.deepcopy(doc), "b"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.t0 = np.zeros(2)  # type: ignore[misc]
    assert a != b and a == a  # arrays inside are not compared element by element
    assert len({a, b}) == 2
