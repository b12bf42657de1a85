"""The ranks view's model: scenarios worked by hand, invariants, and the bucket timeline's case.

Units are MB, GB/s and ms. A ring all-reduce of S MB over p ranks takes
2(p-1)·latency + 2(p-1)/p · S / bandwidth; 8 ranks, 0.05 ms, 25 GB/s:
0.7 ms plus 1.75 ms per 25 MB.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from widgets.many_ranks.model import (
    CONTENTION,
    DATA_LOADING,
    DISAGREE,
    JITTER,
    ONE_SLOW,
    SCENARIOS,
    TWO_PARTIAL,
    Collective,
    RanksConfig,
    sweep_layers_per_bucket,
)
from widgets.model.buckets import step_schedule

REL = 1e-9  # equal up to rounding: the two models sum in different orders
TIMED = [s for s in SCENARIOS if s != DISAGREE]


def close(actual, expected) -> None:
    np.testing.assert_allclose(np.asarray(actual, float), expected, rtol=REL, atol=REL)


# --- hand-computed scenarios ---------------------------------------------------------


def test_one_slow_rank_with_the_enqueue_cost() -> None:
    # Every launch is 0.05 ms after readiness: starts 8.15, 16.25, 24.35, 32.45.
    r = SCENARIOS.load(ONE_SLOW).result()
    s = r.schedule
    close(s.bucket_launch[0], [8.15, 16.25, 24.35, 32.45])
    close(s.bucket_launch[1], [5.45, 10.85, 16.25, 21.65])
    close(s.bucket_start, [8.15, 16.25, 24.35, 32.45])
    close(s.bucket_end, [14.1, 22.2, 30.3, 38.4])
    close(s.idle_ms, [6.0, 16.8, 16.8, 16.8])
    close(r.fastest_idle_ms, 16.8)
    # A timer around the call sees 0.05 ms; bucket 3 takes 5.95 ms from issue to
    # completion on rank 0 and 16.75 ms on the on-time ranks.
    close(s.bucket_end[3] - s.bucket_launch[:, 3], [5.95, 16.75, 16.75, 16.75])
    close(r.issue_to_completion(1), [8.65, 11.35, 14.05, 16.75])
    close(s.exposed_tail, 6.0)


def test_one_slow_rank_shows_the_on_time_ranks_waiting() -> None:
    # Rank 0: 1.8 x 1.5 = 2.7 ms a layer, buckets ready at 8.1, 16.2, 24.3, 32.4;
    # each 75 MB transfer takes 0.7 + 5.25 = 5.95 ms, so the last ends at 38.35.
    r = SCENARIOS.load(ONE_SLOW, enqueue_ms=0.0).result()
    s = r.schedule
    close(r.global_ready, [8.1, 16.2, 24.3, 32.4])
    close(s.bucket_start, [8.1, 16.2, 24.3, 32.4])
    close(s.bucket_end, [14.05, 22.15, 30.25, 38.35])
    assert s.bucket_defining_rank.tolist() == [0, 0, 0, 0]
    close(s.backward_end, [32.4, 21.6, 21.6, 21.6])
    close(s.idle_ms, [5.95, 16.75, 16.75, 16.75])
    assert r.fastest_rank == 1
    close(r.fastest_idle_ms, 16.75)
    close(r.step_time, 12 + 38.35 + 2)


def test_two_partial_stragglers_define_different_buckets() -> None:
    # Rank 0 takes 3 ms on layers 12-7, then 2; rank 1 takes 2 ms on 12-7, then 4.
    # Buckets of 2 layers: rank 0 has them at 6, 12, 18, 22, 26, 30; rank 1 at
    # 4, 8, 12, 20, 28, 36; ranks 2 and 3 at 4, 8, ..., 24. Transfers of 50 MB
    # take 0.7 + 3.5 = 4.2 ms.
    r = SCENARIOS.load(TWO_PARTIAL, enqueue_ms=0.0).result()
    s = r.schedule
    close(s.bucket_ready[0], [6, 12, 18, 22, 26, 30])
    close(s.bucket_ready[1], [4, 8, 12, 20, 28, 36])
    close(s.bucket_ready[2], [4, 8, 12, 16, 20, 24])
    assert s.bucket_defining_rank.tolist() == [0, 0, 0, 0, 1, 1]
    assert len(set(s.bucket_defining_rank.tolist())) == 2
    close(r.global_ready, [6, 12, 18, 22, 28, 36])
    # Bucket 3 is ready at 22 but bucket 2 holds the link until 22.2.
    close(s.bucket_start, [6, 12, 18, 22.2, 28, 36])
    close(s.bucket_link_wait, [0, 0, 0, 0.2, 0, 0])
    close(s.bucket_end, [10.2, 16.2, 22.2, 26.4, 32.2, 40.2])
    close(s.idle_ms, [10.2, 4.2, 16.2, 16.2])
    close(r.step_time, 54.2)


def test_data_loading_delays_one_rank() -> None:
    # Rank 0 starts 6 ms late; 2 ms layers, so its backward ends at 30 and the
    # last 5.95 ms transfer at 35.95; the other ranks end at 24.
    r = SCENARIOS.load(DATA_LOADING, enqueue_ms=0.0).result()
    s = r.schedule
    assert s.bucket_defining_rank.tolist() == [0, 0, 0, 0]
    close(s.bucket_start, [12, 18, 24, 30])
    close(s.idle_ms, [5.95, 11.95, 11.95, 11.95])
    close(r.step_time, 12 + 35.95 + 2)


def test_jitter_is_reproducible_and_moves_the_defining_rank() -> None:
    a = SCENARIOS.load(JITTER).result().schedule
    b = SCENARIOS.load(JITTER).result().schedule
    close(a.bucket_end, b.bucket_end)
    assert len(set(a.bucket_defining_rank.tolist())) > 1
    c = SCENARIOS.load(JITTER, seed=2).result().schedule
    assert not np.allclose(a.bucket_end, c.bucket_end)
    work, _ = SCENARIOS.load(JITTER).rank_work()
    assert np.all(work >= 2.0) and np.all(work < 2.0 * 1.4)


def test_contention_two_layers_by_hand() -> None:
    # One rank, two 4 ms layers, p = 2: T = 2·0.5 + 1·S/1, so 2 ms for one layer's
    # 1 MB and 3 ms for both. c = 3: backward runs at a quarter speed during a
    # transfer. One layer per bucket: layer 2 ends at 4, its transfer runs 4-6;
    # layer 1 does 0.5 ms of work by 6, then 3.5 ms, ending at 9.5; its transfer
    # runs 9.5-11.5. Half the transfer time is hidden. One bucket: 8-11, nothing
    # hidden, and the step is shorter.
    base = {
        "drawn_ranks": 1,
        "ranks": 2,
        "n_layers": 2,
        "backward_ms": 4.0,
        "grad_mb": 1.0,
        "bandwidth": 1.0,
        "latency_ms": 0.5,
        "contention": 3.0,
        "enqueue_ms": 0.0,
        "forward_ms": 0.0,
        "optimizer_ms": 0.0,
    }
    small = SCENARIOS.load(CONTENTION, **base, layers_per_bucket=1).result()
    big = SCENARIOS.load(CONTENTION, **base, layers_per_bucket=2).result()
    close(small.schedule.bucket_start, [4, 9.5])
    close(small.schedule.bucket_end, [6, 11.5])
    close(small.schedule.overlap_fraction, 0.5)
    close(big.schedule.bucket_end, [11])
    close(big.schedule.overlap_fraction, 0.0)
    assert small.step_time > big.step_time


def test_contention_preset_busier_but_slower() -> None:
    # 12 layers of 2 ms, 25 MB each, 50 GB/s, c = 1. One layer's transfer takes
    # 0.7 + 0.875 = 1.575 ms, during which backward does 0.7875 ms of work, so each
    # layer after the first takes 1.575 + 1.2125 = 2.7875 ms: layer 1 is ready at
    # 2 + 11 x 2.7875 = 32.6625 and its transfer ends at 34.2375. 11 of the 12
    # transfers are hidden.
    cfg = SCENARIOS.load(CONTENTION, enqueue_ms=0.0)
    r = cfg.result()
    close(r.schedule.comm_end, 34.2375)
    close(r.step_time, 12 + 34.2375 + 2)
    close(r.schedule.overlap_fraction, 11 / 12)
    # Five layers per bucket (buckets 12-8, 7-3, 2-1; 5.075 and 2.45 ms transfers):
    # bucket 0 ready at 10, on the link 10-15.075, bucket 1 ready at 22.5375, on the
    # link until 27.6125; layers 2-1 end at 29.075; last transfer ends at 31.525.
    five = cfg.schedule(5)
    close(five.bucket_end, [15.075, 27.6125, 31.525])
    close(five.overlap_fraction, 10.15 / 12.6)
    sw = sweep_layers_per_bucket(cfg)
    assert sw.overlap_fraction[0] > sw.overlap_fraction[4]
    assert sw.step_time[0] > sw.step_time[4]
    close(sw.step_time[[0, 4, 11]], [48.2375, 45.525, 49.2])
    assert sw.best_index == 4
    # Without contention, one layer per bucket is the fastest.
    calm = sweep_layers_per_bucket(SCENARIOS.load(CONTENTION, contention=0.0, enqueue_ms=0.0))
    assert calm.best_index == 0
    close(calm.step_time[0], 39.575)


def test_ranks_disagree_lists_sequences_and_where_they_stop_matching() -> None:
    cfg = SCENARIOS.load(DISAGREE)
    r = cfg.result()
    assert r.schedule is None and np.isnan(r.step_time)
    d = r.disagreement
    # Buckets hold layers 12-10, 9-7, 6-4, 3-1; rank 1 never computes layer 7.
    assert d.skipped_layer == 7 and d.skipping_rank == 1
    assert d.mismatch_index == 1 and d.matched == 1
    full = tuple(Collective(b, 75.0) for b in range(4))
    assert d.sequences == (full, full[:1], full, full)
    assert d.waiting_ranks == [0, 2, 3]
    text = d.outcome()
    assert "hangs at collective 1" in text and "TORCH_DISTRIBUTED_DEBUG=DETAIL" in text
    assert "find_unused_parameters=True" in d.fix()
    # One layer per bucket: layers 12..8 leave first, so five collectives match.
    cfg.layers_per_bucket = 1
    assert cfg.result().disagreement.mismatch_index == 5
    # One drawn rank still shows two sequences: a rank cannot disagree with itself.
    one = SCENARIOS.load(DISAGREE, drawn_ranks=1).result().disagreement
    assert len(one.sequences) == 2


def test_ring_ranks_never_below_the_drawn_ranks() -> None:
    cfg = RanksConfig(drawn_ranks=6, ranks=2)
    assert cfg.ring_ranks == 6


@pytest.mark.parametrize("bad", [{"drawn_ranks": 9}, {"n_layers": 1}, {"contention": -1}])
def test_bad_settings_are_refused(bad: dict) -> None:
    with pytest.raises(ValueError):
        RanksConfig(**bad)


def test_unknown_scenario_is_refused() -> None:
    with pytest.raises(ValueError):
        RanksConfig(scenario="Everything is fine")


def test_every_scenario_setting_is_complete() -> None:
    for name, values in SCENARIOS.items():
        assert values["scenario"] == name
        assert set(values) == {k for k in RanksConfig.param if k != "name"}


# --- invariants ------------------------------------------------------------------------

configs = st.builds(
    dict,
    scenario=st.sampled_from(TIMED),
    drawn_ranks=st.integers(1, 8),
    ranks=st.integers(2, 64),
    n_layers=st.integers(2, 24),
    layers_per_bucket=st.integers(1, 24),
    backward_ms=st.floats(0.01, 10.0),
    grad_mb=st.floats(0.01, 200.0),
    bandwidth=st.floats(0.1, 100.0),
    latency_ms=st.floats(0.0, 1.0),
    enqueue_ms=st.floats(0.0, 1.0),
    contention=st.floats(0.0, 3.0),
    slowdown_pct=st.floats(0.0, 200.0),
    delay_ms=st.floats(0.0, 20.0),
    seed=st.integers(0, 9999),
)


@settings(max_examples=150, deadline=None)
@given(configs)
def test_readiness_launch_and_optimizer_invariants(values: dict) -> None:
    cfg = RanksConfig(**values)
    r = cfg.result()
    s = r.schedule
    a = cfg.assignment()
    tol = 1e-9 * max(1.0, s.optimizer_start)
    for b in range(r.n_buckets):
        members = a == b
        per_rank = s.layer_ready[:, members].max(axis=1)
        close(s.bucket_ready[:, b], per_rank)
        # Global readiness is the max over ranks, and the defining rank launched last.
        assert r.global_ready[b] == per_rank.max()
        assert s.bucket_launch[s.bucket_defining_rank[b], b] == s.bucket_launch[:, b].max()
        assert s.bucket_start[b] >= s.bucket_launch[:, b].max() - tol
    # Launch in bucket-index order on every rank, each after its own readiness.
    assert np.all(np.diff(s.bucket_launch, axis=1) >= 0)
    close(
        s.bucket_launch,
        np.maximum.accumulate(s.bucket_ready, axis=1) + cfg.enqueue_ms,
    )
    assert np.all(s.bucket_start[1:] >= s.bucket_end[:-1] - tol)
    # The optimizer never starts before the last completion or any backward end.
    assert s.optimizer_start >= s.bucket_end.max()
    assert s.optimizer_start >= s.backward_end.max()
    assert s.optimizer_start == max(s.comm_end, s.backward_end.max())
    assert np.all(s.idle_ms >= 0)
    assert r.fastest_idle_ms == s.idle_ms.max()


@settings(max_examples=150, deadline=None)
@given(configs, st.sampled_from([ONE_SLOW, TWO_PARTIAL, JITTER, CONTENTION]))
def test_one_rank_without_contention_is_the_bucket_timeline(values: dict, scenario: str) -> None:
    values = {
        **values,
        "scenario": scenario,
        "drawn_ranks": 1,
        "contention": 0.0,
        "enqueue_ms": 0.0,
        "layers_per_bucket": min(values["layers_per_bucket"], 12),
    }
    cfg = RanksConfig(**values)
    ours = cfg.result()
    theirs = step_schedule(cfg.bucket_config())
    close(ours.schedule.bucket_start, theirs.bucket_start)
    close(ours.schedule.bucket_end, theirs.bucket_end)
    close(ours.schedule.comm_end, theirs.comm_end)
    close(ours.step_time, theirs.step_time)
    close(ours.schedule.backward_end[0], theirs.backward_end)
    close(ours.schedule.overlap_fraction, theirs.overlap_fraction)


@settings(max_examples=100, deadline=None)
@given(configs)
def test_one_slow_rank_is_the_bucket_timelines_straggler(values: dict) -> None:
    # Every rank needs every gradient, so a uniformly slow rank 0 sets the same
    # schedule as the bucket timeline's straggler, however many ranks are drawn.
    from widgets.model.buckets import BucketConfig

    values = {
        **values,
        "scenario": ONE_SLOW,
        "contention": 0.0,
        "enqueue_ms": 0.0,
        "layers_per_bucket": min(values["layers_per_bucket"], 12),
    }
    cfg = RanksConfig(**values)
    ours = cfg.result()
    theirs = step_schedule(
        BucketConfig(
            n_layers=cfg.n_layers,
            layers_per_bucket=cfg.layers_per_bucket,
            backward_ms=cfg.backward_ms,
            straggler_pct=cfg.slowdown_pct,
            grad_mb=cfg.grad_mb,
            bandwidth=cfg.bandwidth,
            latency_ms=cfg.latency_ms,
            ranks=cfg.ring_ranks,
            forward_ms=cfg.forward_ms,
            optimizer_ms=cfg.optimizer_ms,
        )
    )
    np.testing.assert_allclose(ours.schedule.bucket_end, theirs.bucket_end, rtol=1e-9)
    np.testing.assert_allclose(ours.step_time, theirs.step_time, rtol=1e-9)


def test_bucket_config_refuses_what_the_bucket_timeline_cannot_show() -> None:
    with pytest.raises(ValueError, match="at most 12"):
        RanksConfig(n_layers=24, layers_per_bucket=13).bucket_config()
