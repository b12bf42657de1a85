"""One check shared by the regime tests: a schedule's regime follows from its numbers."""

from __future__ import annotations

import numpy as np
import pytest

from widgets.model.buckets import (
    LATENCY_SHARE,
    TOLERANCE_MS,
    BucketConfig,
    RegimeKind,
    Schedule,
    Suggestion,
    SweepResult,
    ring_overhead_ms,
    ring_traffic_ms,
)

K = RegimeKind
REL = 1e-9


def check_consistent(config: BucketConfig, s: Schedule, sweep: SweepResult) -> None:
    """The regime and suggestion of ``s`` follow from its numbers and the sweep."""
    r = s.regime
    tol = TOLERANCE_MS
    # The deciding numbers, recomputed from the schedule's arrays.
    E = s.backward_end
    # All traffic: every gradient tensor once (summed in registration order, as the
    # model does, so a tie W == E is decided the same way).
    W = float(ring_traffic_ms(s.tensors.size_mb.sum(), config.ranks, config.bandwidth))
    bucket_w = float(ring_traffic_ms(s.bucket_size_mb.sum(), config.ranks, config.bandwidth))
    assert bucket_w == pytest.approx(W, rel=1e-12)
    # O for overhead, as in the regimes docstring.
    O = s.n_buckets * float(ring_overhead_ms(config.ranks, config.latency_ms))  # noqa: E741
    L = float(s.bucket_transfer_ms.sum())
    hidden = float(np.clip(np.minimum(s.bucket_end, E) - s.bucket_start, 0, None).sum())
    last_wait = float(s.bucket_link_wait[-1])
    last_transfer = float(s.bucket_transfer_ms[-1])
    tail = s.exposed_tail
    assert pytest.approx(W + O, rel=REL, abs=1e-9) == L
    for got, want in [
        (r.backward_end_ms, E),
        (r.traffic_ms, W),
        (r.overhead_ms, O),
        (r.link_work_ms, L),
        (r.hidden_ms, hidden),
        (r.overlap_share, hidden / L),
        (r.overhead_share, O / L),
        (r.tail_ms, tail),
        (r.last_transfer_ms, last_transfer),
        (r.last_link_wait_ms, last_wait),
        (r.step_ms, s.step_time),
    ]:
        assert got == pytest.approx(want, rel=REL, abs=1e-9)
    # The last bucket goes once backward ends (plus the host's enqueue time): the tail
    # is that launch delay, its wait for the link and its transfer.
    delay = float(s.bucket_launch[-1] - E)
    assert r.last_launch_delay_ms == pytest.approx(delay, rel=REL, abs=1e-9)
    assert delay >= config.enqueue_ms - 1e-9
    assert tail == pytest.approx(delay + last_wait + last_transfer, rel=REL, abs=1e-9)

    # The suggestion, from every setting of the knob.
    k = config.layers_per_bucket
    steps = sweep.step_time
    larger_faster = bool(np.any(steps[k:] < s.step_time - tol))
    smaller_faster = bool(np.any(steps[: k - 1] < s.step_time - tol))
    best = sweep.best_setting
    if r.suggestion == Suggestion.LARGER_BUCKETS:
        assert larger_faster and best > k
    elif r.suggestion == Suggestion.SMALLER_BUCKETS:
        assert smaller_faster and best < k
    else:
        assert r.suggestion == Suggestion.NONE
        assert not larger_faster and not smaller_faster
    assert r.best_step_ms == pytest.approx(steps.min(), rel=1e-12)
    assert r.gain_ms == pytest.approx(s.step_time - steps.min(), rel=REL, abs=1e-9)

    # The label: the first definition that holds, and each one's promise kept.
    expected = (
        K.COMMUNICATION_BOUND
        if E - tol <= W
        else K.NO_OVERLAP
        if hidden <= tol
        else K.LATENCY_BOUND
        if O >= LATENCY_SHARE * (W + O) and r.suggestion == Suggestion.LARGER_BUCKETS
        else K.LINK_SATURATED
        if last_wait > tol
        else K.OVERLAP_LIMITED
    )
    assert r.kind == expected, r
    if r.kind == K.COMMUNICATION_BOUND:
        assert tail >= W - E - 1e-9  # no bucketing hides it
    if r.kind == K.NO_OVERLAP:
        assert tail >= L - tol - 1e-9  # the whole link work is exposed
    if r.kind == K.LATENCY_BOUND:
        # Overhead at least half the link work is O >= W; 1e-9 ms allows the rounding of
        # O >= 0.5 (W + O) at a tie (O = 14.25, W = 14.250000000000002 was one).
        assert O >= W - 1e-9 and larger_faster  # "try larger buckets" is true
    if r.kind == K.LINK_SATURATED:
        assert tail - delay - last_transfer > tol - 1e-9  # "tail = last transfer" would be false
    if r.kind == K.OVERLAP_LIMITED:
        assert abs(tail - delay - last_transfer) <= tol + 1e-9  # "tail = last transfer" is true
    # Sweep row and single schedule agree.
    assert sweep.regime[k - 1] == r.kind
    assert sweep.suggestion[k - 1] == r.suggestion
