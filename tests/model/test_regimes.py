"""Regimes never contradict the numbers: hand-found cases, every preset, random configurations.

Every check recomputes the deciding numbers from the schedule's own arrays (not
from the ``Regime`` record) and the suggestion from the whole sweep, then
asserts the label and the suggestion follow the definitions in
``widgets.model.buckets.regimes``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from regime_check import check_consistent

from widgets.bucket_timeline.model import PRESET_DESCRIPTIONS, PRESETS
from widgets.model.buckets import (
    LATENCY_SHARE,
    TOLERANCE_MS,
    BucketConfig,
    RegimeKind,
    Schedule,
    Suggestion,
    ring_overhead_ms,
    ring_traffic_ms,
    step_schedule,
    sweep_layers_per_bucket,
)

K = RegimeKind
REL = 1e-9


def schedule_at(config: BucketConfig, k: int) -> Schedule:
    """The schedule with ``k`` layers per bucket as the knob (no byte cap: the hardware
    presets cut by DDP's cap, which would make the cap the knob instead)."""
    config.layers_per_bucket = k
    config.bucket_cap_mb = None
    config.ddp_bucketing = False
    return step_schedule(config)


# --- issue 7 §1: the cases found by hand -------------------------------------------------


@pytest.mark.parametrize("name", ["Overlap works", "Link saturated", "Latency-bound"])
def test_one_bucket_is_no_overlap_not_overlap_limited(name: str) -> None:
    c = PRESETS.load(name)
    s = schedule_at(c, 12)
    assert s.overlap_fraction == 0.0
    assert s.regime.kind == K.NO_OVERLAP
    assert s.regime.suggestion == Suggestion.SMALLER_BUCKETS
    if name == "Overlap works":
        assert s.exposed_tail == pytest.approx(21.7, rel=REL)  # 0.7 + 1.75 * 300 / 25


def test_embedding_one_per_bucket_does_not_claim_tail_equals_last_transfer() -> None:
    s = schedule_at(PRESETS.load("Embedding layer"), 1)
    # Layer 1: 0.7 + 1.75 * 200 / 50 = 7.70 ms, ready at 23. Layer 2's bucket
    # (0.7 + 0.875 = 1.575 ms) starts at 22 + ... and the queue ahead of layer 1 ends at
    # 23.575: layer 1 waits 0.575 ms, so the tail is 8.275 ms, not 7.70.
    assert s.bucket_transfer_ms[-1] == pytest.approx(7.7, rel=REL)
    assert s.exposed_tail == pytest.approx(8.275, rel=REL)
    assert s.regime.last_link_wait_ms == pytest.approx(0.575, rel=REL)
    assert s.regime.kind == K.LINK_SATURATED


def test_latency_bound_at_the_sweeps_best_does_not_say_try_larger_buckets() -> None:
    c = PRESETS.load("Latency-bound")
    sweep = sweep_layers_per_bucket(c)
    assert sweep.best_setting == 2
    s = schedule_at(c, 2)
    assert np.all(sweep.step_time[2:] > s.step_time)  # every larger setting is slower
    # 6 buckets of 10 MB: T = 2.8 + 0.7 = 3.5 ms, ready every 4 ms: no queue.
    assert s.exposed_tail == pytest.approx(3.5, rel=REL) == s.bucket_transfer_ms[-1]
    assert s.regime.suggestion == Suggestion.NONE
    assert s.regime.kind == K.OVERLAP_LIMITED
    # The preset itself (1 per bucket) is latency-bound, and larger really is faster.
    first = schedule_at(c, 1)
    assert first.regime.kind == K.LATENCY_BOUND
    assert first.regime.suggestion == Suggestion.LARGER_BUCKETS
    assert first.regime.best_step_ms == pytest.approx(41.5, rel=REL)


def test_labels_along_the_overlap_works_sweep() -> None:
    c = PRESETS.load("Overlap works")
    sweep = sweep_layers_per_bucket(c)
    S, OL, N = K.LINK_SATURATED, K.OVERLAP_LIMITED, K.NO_OVERLAP
    assert list(sweep.regime) == [S, S, OL, OL, S, OL, S, S, S, S, S, N]
    # Where the label changes, the deciding number changed character: k = 4 and 6
    # leave the last bucket (3 and 6 layers) alone on the link, k = 5 leaves a 2-layer
    # bucket queued 5.45 ms behind a 5-layer one (ready at 20, 9.45 ms long).
    waits = [schedule_at(c, k).regime.last_link_wait_ms for k in (4, 5, 6)]
    np.testing.assert_allclose(waits, [0.0, 5.45, 0.0], atol=1e-9)
    assert sweep.last_bucket_layers.tolist() == [1, 2, 3, 4, 2, 6, 5, 4, 3, 2, 1, 12]


def test_labels_follow_the_numbers_along_every_preset_sweep() -> None:
    """Adjacent settings share a label exactly when their deciding facts agree."""
    for name in PRESETS:
        c = PRESETS.load(name)
        facts = []
        for k in range(1, c.n_layers + 1):
            r = schedule_at(c, k).regime
            facts.append(
                (
                    r.traffic_ms >= r.backward_end_ms,
                    r.hidden_ms <= TOLERANCE_MS,
                    r.overhead_share >= LATENCY_SHARE and r.suggestion == Suggestion.LARGER_BUCKETS,
                    r.last_link_wait_ms > TOLERANCE_MS,
                    r.kind,
                )
            )
        for a, b in itertools.pairwise(facts):
            if a[:4] == b[:4]:
                assert a[4] == b[4], name


def test_link_saturated_preset_is_saturated_at_every_split() -> None:
    sweep = sweep_layers_per_bucket(PRESETS.load("Link saturated"))
    assert set(sweep.regime[:-1]) == {K.LINK_SATURATED}  # 12 per bucket: no overlap
    assert sweep.regime[-1] == K.NO_OVERLAP


def test_fast_compute_description_matches_its_sweep() -> None:
    c = PRESETS.load("Fast compute: transfers queue")
    sweep = sweep_layers_per_bucket(c)
    desc = PRESET_DESCRIPTIONS["Fast compute: transfers queue"]
    assert "at most bucket sizes transfers queue" in desc and "at least 4.30 ms" in desc
    saturated = np.sum(sweep.regime == K.LINK_SATURATED)
    assert saturated > len(sweep.setting) / 2  # "at most bucket sizes"
    assert f"{sweep.exposed_tail.min():.2f}" == "4.30"  # k = 3: 3 buckets queue, 4.30 ms


def test_sawtooth_numbers_of_the_latency_bound_sweep() -> None:
    sweep = sweep_layers_per_bucket(PRESETS.load("Latency-bound"))
    np.testing.assert_allclose(
        sweep.step_time,
        [53.8, 41.5, 41.85, 42.2, 42.05, 42.9, 42.55, 42.2, 41.85, 43.8, 45.8, 45.0],
        rtol=1e-12,
    )
    # ceil(12 / k) buckets: equal counts repeat, the last bucket's size moves.
    assert sweep.n_buckets.tolist() == [12, 6, 4, 3, 3, 2, 2, 2, 2, 2, 2, 1]
    assert sweep.last_bucket_layers.tolist() == [1, 2, 3, 4, 2, 6, 5, 4, 3, 2, 1, 12]
    np.testing.assert_allclose(sweep.last_bucket_mb, 5.0 * sweep.last_bucket_layers)


# --- every preset x every bucket size ----------------------------------------------------


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_and_bucket_size_is_consistent(name: str) -> None:
    c = PRESETS.load(name, ddp_bucketing=False)
    sweep = sweep_layers_per_bucket(c)
    for k in range(1, c.n_layers + 1):
        check_consistent(c, schedule_at(c, k), sweep)


# --- random configurations ---------------------------------------------------------------

positive = st.floats(0.05, 50.0, allow_nan=False)


@st.composite
def configs(draw) -> BucketConfig:
    """Random configurations: any profile, link and bucket size."""
    n = draw(st.integers(2, 12), label="layers")
    k = draw(st.integers(1, n), label="layers per bucket")
    return BucketConfig(
        n_layers=n,
        layers_per_bucket=k,
        layer_backward_ms=np.array(draw(st.lists(positive, min_size=n, max_size=n))),
        layer_grad_mb=np.array(draw(st.lists(positive, min_size=n, max_size=n))),
        ranks=draw(st.integers(2, 64)),
        bandwidth=draw(st.floats(0.05, 500.0)),
        latency_ms=draw(st.sampled_from([0.0, 0.001, 0.01, 0.05, 0.2, 1.0])),
        straggler_pct=draw(st.sampled_from([0.0, 0.0, 25.0, 100.0])),
        forward_ms=draw(st.floats(0.0, 20.0)),
        optimizer_ms=draw(st.floats(0.0, 5.0)),
    )


@st.composite
def saturated_configs(draw) -> BucketConfig:
    """Link-saturated by construction: uniform layers, two or more buckets, traffic a
    share u < 1 of backward (so not communication-bound) and per-transfer overhead
    making each transfer (1 + v) times the backward between two buckets' ready times,
    so every bucket after the first waits for the link."""
    n = draw(st.integers(2, 12), label="layers")
    k = draw(st.integers(1, n // 2), label="layers per bucket")
    # Ranges that keep the derived bandwidth and latency inside their bounds.
    b = draw(st.floats(0.1, 5.0), label="backward per layer")
    size = draw(st.floats(0.5, 50.0), label="size per layer")
    ranks = draw(st.integers(2, 64))
    u = draw(st.floats(0.2, 0.95), label="traffic / backward")
    v = draw(st.floats(0.05, 1.0), label="transfer / gap - 1")
    gap = k * b
    bandwidth = float(ring_traffic_ms(k * size, ranks, 1.0)) / (u * gap)
    latency = (1.0 - u + v) * gap / float(ring_overhead_ms(ranks, 1.0))
    return BucketConfig(
        n_layers=n,
        layers_per_bucket=k,
        backward_ms=b,
        grad_mb=size,
        ranks=ranks,
        bandwidth=bandwidth,
        latency_ms=latency,
        forward_ms=draw(st.floats(0.0, 20.0)),
        optimizer_ms=draw(st.floats(0.0, 5.0)),
    )


@settings(max_examples=1500, deadline=None)
@given(configs())
def test_random_configurations_are_consistent(c: BucketConfig) -> None:
    s = step_schedule(c)
    event(f"regime: {s.regime.kind}")
    event(f"suggestion: {s.regime.suggestion}")
    event("buckets: one" if s.n_buckets == 1 else "buckets: several")
    check_consistent(c, s, sweep_layers_per_bucket(c))


@settings(max_examples=800, deadline=None)
@given(saturated_configs())
def test_saturated_configurations_are_consistent(c: BucketConfig) -> None:
    s = step_schedule(c)
    # The strategy does what it says: several buckets, every one after the first
    # waits for the link, and the traffic alone fits in backward.
    assert s.n_buckets >= 2
    assert np.all(s.bucket_link_wait[1:] > 0)
    assert s.regime.kind != K.COMMUNICATION_BOUND
    event(f"regime: {s.regime.kind}")
    check_consistent(c, s, sweep_layers_per_bucket(c))


@settings(max_examples=300, deadline=None)
@given(configs())
def test_every_row_of_a_random_sweep_is_consistent(c: BucketConfig) -> None:
    sweep = sweep_layers_per_bucket(c)
    for k in range(1, c.n_layers + 1):
        check_consistent(c, schedule_at(c, k), sweep)


def test_a_link_wait_at_the_tolerance_is_judged_alike_by_model_and_check() -> None:
    # Found by hypothesis: T = 2 x 0.0275 + 1/20 = 0.105 ms; layer 2 ready at 0.1, layer 1
    # at 0.2; bucket 1 starts at 0.205, a link wait of 0.005 ms, exactly the tolerance in
    # real numbers, a rounding above it in floats. The check allows the same rounding.
    c = BucketConfig(
        n_layers=2,
        layers_per_bucket=1,
        backward_ms=0.10000000000000002,  # hypothesis's values, a rounding off 0.1, 20, 0.0275
        grad_mb=1.0,
        bandwidth=19.999999999999996,
        latency_ms=0.027500000000000007,
        ranks=2,
        forward_ms=0.0,
        optimizer_ms=0.0,
    )
    s = step_schedule(c)
    assert s.regime.last_link_wait_ms == pytest.approx(0.005, abs=1e-12)
    check_consistent(c, s, sweep_layers_per_bucket(c))


def test_a_latency_bound_tie_in_floating_point_is_consistent() -> None:
    # Found by the search above: overhead 6 x 2.375 = 14.25 ms against traffic
    # 2 x 6 x 0.99999 / 2 / 0.42104842105263157 = 14.250000000000002 ms: equal on paper.
    c = BucketConfig(
        backward_ms=2.5,
        bandwidth=0.42104842105263157,
        grad_mb=0.99999,
        latency_ms=1.1875,
        layers_per_bucket=1,
        n_layers=6,
        ranks=2,
        enqueue_ms=0.0,
        forward_ms=0.0,
        optimizer_ms=0.0,
        straggler_pct=0.0,
    )
    s = step_schedule(c)
    assert s.regime.kind == K.LATENCY_BOUND
    check_consistent(c, s, sweep_layers_per_bucket(c))
