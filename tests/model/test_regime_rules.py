"""The regime and suggestion rules on rows built to sit exactly on each threshold."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from widgets.model.buckets import LATENCY_SHARE, REGIMES, TOLERANCE_MS, Regime, RegimeKind
from widgets.model.buckets.regimes import KINDS, SUGGESTIONS, regime_codes, suggestion_codes

TOL = 0.005  # half the readouts' 0.01 ms precision
LARGER, SMALLER, NONE = 0, 1, 2


def kinds(traffic, backward_end, overhead, hidden, last_wait, suggestion=None) -> list[str]:
    arrays = [np.asarray(a, float) for a in (traffic, backward_end, overhead, hidden, last_wait)]
    codes = regime_codes(*arrays, None if suggestion is None else np.asarray(suggestion))
    return [KINDS[int(c)].value for c in codes]


def test_thresholds_and_orders() -> None:
    assert TOLERANCE_MS == TOL and LATENCY_SHARE == 0.5
    assert REGIMES == (
        "communication-bound",
        "no overlap",
        "latency-bound",
        "link-saturated",
        "overlap-limited",
    )
    assert [s.value for s in SUGGESTIONS] == ["larger buckets", "smaller buckets", "none"]


def test_communication_bound_from_traffic_within_the_tolerance_of_backward() -> None:
    e = 10.0
    # Traffic exactly E - tol counts as reaching backward; a hair less does not.
    got = kinds([e - TOL, e - 2 * TOL, e + 1.0], [e, e, e], [1.0] * 3, [5.0] * 3, [0.0] * 3)
    assert got == ["communication-bound", "overlap-limited", "communication-bound"]


def test_no_overlap_when_hidden_is_at_most_the_tolerance() -> None:
    got = kinds([1.0] * 3, [10.0] * 3, [0.1] * 3, [TOL, 2 * TOL, 0.0], [0.0] * 3)
    assert got == ["no overlap", "overlap-limited", "no overlap"]


def test_latency_bound_needs_half_the_link_work_and_larger_buckets_suggested() -> None:
    # Link work = traffic + overhead; overhead exactly half of it counts.
    got = kinds(
        [1.0, 1.0, 1.0, 1.0],
        [10.0] * 4,
        [1.0, 0.5, 1.0, 1.0],
        [1.0] * 4,
        [0.0] * 4,
        [LARGER, LARGER, SMALLER, NONE],
    )
    assert got == ["latency-bound", "overlap-limited", "overlap-limited", "overlap-limited"]
    # Without a sweep no row is latency-bound.
    assert kinds([1.0], [10.0], [3.0], [1.0], [0.0]) == ["overlap-limited"]


def test_link_saturated_when_the_last_bucket_waited_more_than_the_tolerance() -> None:
    got = kinds([1.0] * 3, [10.0] * 3, [0.1] * 3, [1.0] * 3, [TOL, 2 * TOL, 0.0])
    assert got == ["overlap-limited", "link-saturated", "overlap-limited"]


def test_rules_are_tried_in_order() -> None:
    # Every condition holds: the first wins; then drop them one at a time.
    args = ([10.0], [10.0], [10.0], [0.0], [1.0], [LARGER])
    assert kinds(*args) == ["communication-bound"]
    assert kinds([1.0], [10.0], [10.0], [0.0], [1.0], [LARGER]) == ["no overlap"]
    assert kinds([1.0], [10.0], [10.0], [1.0], [1.0], [LARGER]) == ["latency-bound"]
    assert kinds([1.0], [10.0], [0.1], [1.0], [1.0], [LARGER]) == ["link-saturated"]


def test_suggestion_needs_a_gain_beyond_the_tolerance() -> None:
    setting = np.array([3.0, 3.0, 3.0, 3.0, 3.0])
    step = np.array([10.0, 10.0, 10.0, 10.0, 10.0])
    best_setting = np.array([6.0, 1.0, 6.0, 3.0, 1.0])
    best_step = np.array([9.0, 9.0, 10.0 - TOL, 9.0, 10.0 - 2 * TOL])
    codes = suggestion_codes(setting, step, best_setting, best_step)
    assert codes.tolist() == [LARGER, SMALLER, NONE, NONE, SMALLER]


def test_gain_and_defaults_on_the_record() -> None:
    fields = dict(
        kind=RegimeKind.OVERLAP_LIMITED,
        backward_end_ms=24.0,
        traffic_ms=21.0,
        overhead_ms=2.8,
        link_work_ms=23.8,
        overhead_share=2.8 / 23.8,
        hidden_ms=17.85,
        overlap_share=0.75,
        tail_ms=5.95,
        last_transfer_ms=5.95,
        last_link_wait_ms=0.0,
        last_launch_delay_ms=0.0,
        step_ms=43.95,
    )
    r = Regime(suggestion=None, best_step_ms=None, best_setting=None, **fields)
    assert r.gain_ms is None
    assert (r.latency_share, r.tolerance_ms) == (0.5, TOL)
    r = Regime(suggestion=None, best_step_ms=43.2, best_setting=2.0, **fields)
    assert r.gain_ms == 43.95 - 43.2
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.kind = RegimeKind.NO_OVERLAP
