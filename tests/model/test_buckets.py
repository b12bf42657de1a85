"""The bucket schedule: hand-computed cases, DDP cap rule, presets and invariants.

Defaults used below: 12 layers of 2 ms backward and 25 MB, 25 GB/s, 0.05 ms per
ring step, 8 ranks, forward 12 ms, optimizer 2 ms. So a ring all-reduce costs
2(p-1) * 0.05 = 0.7 ms of latency plus 2(p-1)/p = 1.75 ms per 25 MB.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from widgets.bucket_timeline.model import PRESET_DESCRIPTIONS, PRESETS, TimelineSettings
from widgets.model.buckets import (
    MB_PER_MIB,
    REGIMES,
    BucketConfig,
    Suggestion,
    TensorKind,
    assign_by_cap,
    assign_by_count,
    average_rates,
    default_caps,
    layer_ready_times,
    link_schedule,
    ring_allreduce_ms,
    schedule_arrays,
    schedule_intervals,
    step_schedule,
    sweep_byte_caps,
    sweep_layers_per_bucket,
)
from widgets.model.buckets.intervals import (
    LANE_OF,
    NO_BUCKET,
    NO_LAYER,
    BucketIntervals,
    IntervalKind,
)
from widgets.model.timeline import Intervals

REL = 1e-12


def close(actual, expected) -> None:
    np.testing.assert_allclose(actual, expected, rtol=REL, atol=1e-12)


# ---------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------


def test_labels_are_the_contract():
    p = BucketConfig.param
    assert p.layers_per_bucket.label == "Layers per bucket"
    assert p.backward_ms.label == "Backward time per layer"
    assert p.grad_mb.label == "Gradient size per layer"
    assert p.bandwidth.label == "Link bandwidth"
    assert p.latency_ms.label == "Latency per ring step"
    assert p.ranks.label == "Ranks"
    assert p.straggler_pct.label == "Straggler slowdown"
    assert p.forward_ms.label == "Forward time"
    assert p.optimizer_ms.label == "Optimizer time"
    assert p.n_layers.label == "Layers"
    assert p.n_layers.precedence < 0
    assert p.layers_per_bucket.bounds == (1, 12)
    assert p.ranks.bounds == (2, 4096)
    for name in p:
        if name != "name":
            assert p[name].doc, name


def test_bad_values_are_refused_at_the_parameter():
    c = BucketConfig()
    with pytest.raises(ValueError):
        c.bandwidth = 0.0
    with pytest.raises(ValueError):
        c.layers_per_bucket = 13
    with pytest.raises(ValueError):
        c.layer_grad_mb = np.array([1.0, -2.0])
    with pytest.raises(ValueError):
        c.layer_backward_ms = np.ones((2, 2))
    assert c.bandwidth == 25.0 and c.layer_grad_mb is None


def test_a_profile_of_the_wrong_length_is_refused_when_scheduling():
    c = BucketConfig(layer_grad_mb=np.ones(5))
    with pytest.raises(ValueError, match="5 values for 12 layers"):
        step_schedule(c)


def test_ring_allreduce_cost():
    # 2*7*0.05 + 2*7/8 * 75/25 = 0.7 + 5.25
    close(ring_allreduce_ms(75.0, 8, 25.0, 0.05), 5.95)
    # vectorised over sizes and ranks: p=2 -> 2*0.1 + 1 * 10/10
    close(ring_allreduce_ms(np.array([10.0, 20.0]), 2, 10.0, 0.1), [1.2, 2.2])


# ---------------------------------------------------------------------------
# Hand-computed schedules
# ---------------------------------------------------------------------------


def test_default_schedule():
    s = step_schedule(BucketConfig())
    close(s.layer_ready, np.arange(24, 0, -2))  # layer 12 ready at 2, layer 1 at 24
    close(s.layer_backward_start, np.arange(22, -1, -2))
    assert [list(b) for b in s.bucket_layers] == [[12, 11, 10], [9, 8, 7], [6, 5, 4], [3, 2, 1]]
    close(s.bucket_size_mb, [75.0] * 4)
    close(s.bucket_ready, [6.0, 12.0, 18.0, 24.0])
    close(s.bucket_transfer_ms, [5.95] * 4)  # 0.7 + 1.75 * 3
    close(s.bucket_start, [6.0, 12.0, 18.0, 24.0])  # each ends before the next is ready
    close(s.bucket_end, [11.95, 17.95, 23.95, 29.95])
    close(s.bucket_link_wait, [0.0] * 4)
    assert s.backward_end == 24.0
    assert s.comm_end == pytest.approx(29.95, rel=REL)
    assert s.exposed_tail == pytest.approx(5.95, rel=REL)
    assert s.step_time == pytest.approx(43.95, rel=REL)  # 12 + 29.95 + 2
    assert s.overlap_fraction == pytest.approx(0.75, rel=REL)  # 3 of 4 equal transfers hidden
    assert s.overhead_ms == pytest.approx(2.8, rel=REL)  # 4 * 0.7
    assert s.traffic_ms == pytest.approx(21.0, rel=REL)  # 1.75 * 300 / 25
    assert s.regime.kind == "overlap-limited"


def test_one_bucket_of_all_layers_overlaps_nothing():
    s = step_schedule(BucketConfig(layers_per_bucket=12))
    assert s.n_buckets == 1
    t = 0.7 + 1.75 * 300 / 25  # 21.7
    close(s.bucket_transfer_ms, [t])
    close(s.bucket_start, [24.0])
    assert s.overlap_fraction == 0.0
    assert s.exposed_tail == pytest.approx(t, rel=REL)
    assert s.step_time == pytest.approx(12 + 24 + 21.7 + 2, rel=REL)  # 59.7


def test_one_layer_per_bucket_on_a_fast_link_exposes_exactly_the_last_transfer():
    s = step_schedule(BucketConfig(layers_per_bucket=1, bandwidth=1000.0))
    t = 0.7 + 1.75 * 25 / 1000  # 0.74375, shorter than the 2 ms between layers
    assert s.n_buckets == 12
    close(s.bucket_transfer_ms, [t] * 12)
    close(s.bucket_link_wait, [0.0] * 12)
    assert s.exposed_tail == pytest.approx(0.74375, rel=REL)
    # overhead 12 * 0.7 = 8.4 ms against 1.75 * 300 / 1000 = 0.525 ms of traffic, but
    # it all hides behind backward and no larger bucket is faster: 11 per bucket
    # also leaves layer 1 alone last (the tie goes to 11), 2 per bucket leaves a
    # 0.7 + 0.0875 ms tail. Not latency-bound: the tail is exactly the last transfer.
    assert s.regime.overhead_share == pytest.approx(8.4 / 8.925, rel=REL)
    assert s.regime.kind == "overlap-limited"
    assert s.regime.suggestion == Suggestion.NONE
    assert s.regime.best_setting == 11
    assert s.regime.best_step_ms == pytest.approx(s.step_time, rel=REL)
    no_latency = step_schedule(BucketConfig(layers_per_bucket=1, bandwidth=1000.0, latency_ms=0.0))
    assert no_latency.exposed_tail == pytest.approx(0.04375, rel=REL)
    assert no_latency.regime.kind == "overlap-limited"


def test_large_latency_makes_twelve_buckets_slower_than_three():
    c = BucketConfig(latency_ms=1.0, grad_mb=1.0)  # 2*7*1 = 14 ms per transfer
    c.layers_per_bucket = 1
    twelve = step_schedule(c)
    c.layers_per_bucket = 3
    three = step_schedule(c)
    # 12 buckets: T = 14 + 1.75/25 = 14.07, all queued from t = 2: 2 + 12 * 14.07
    assert twelve.comm_end == pytest.approx(170.84, rel=REL)
    # 3 layers per bucket: T = 14 + 3 * 0.07 = 14.21, queued from t = 6: 6 + 4 * 14.21
    assert three.comm_end == pytest.approx(62.84, rel=REL)
    assert twelve.step_time > three.step_time
    assert twelve.overhead_ms == pytest.approx(168.0, rel=REL)  # 12 * 14
    assert twelve.regime.kind == "latency-bound"


def test_a_link_slower_than_compute_makes_transfers_queue():
    s = step_schedule(BucketConfig(backward_ms=1.8))
    # ready 5.4, 10.8, 16.2, 21.6; T = 5.95 > 5.4, so each starts when the last ends
    close(s.bucket_ready, [5.4, 10.8, 16.2, 21.6])
    close(s.bucket_start, [5.4, 11.35, 17.3, 23.25])
    close(s.bucket_end, [11.35, 17.3, 23.25, 29.2])
    close(s.bucket_start[1:], s.bucket_end[:-1])
    close(s.bucket_link_wait, [0.0, 0.55, 1.1, 1.65])
    assert s.exposed_tail == pytest.approx(7.6, rel=REL)  # 29.2 - 21.6 = 5.95 + 1.65
    assert s.regime.kind == "link-saturated"

    slow = step_schedule(BucketConfig(bandwidth=10.0))
    # T = 0.7 + 1.75 * 75 / 10 = 13.825; starts 6, 19.825, 33.65, 47.475
    close(slow.bucket_start, [6.0, 19.825, 33.65, 47.475])
    close(slow.bucket_link_wait, [0.0, 7.825, 15.65, 23.475])
    assert slow.comm_end == pytest.approx(61.3, rel=REL)
    assert slow.regime.kind == "communication-bound"  # traffic 1.75 * 300 / 10 = 52.5 > 24


def test_straggler_scales_ready_times_and_changes_the_tail():
    base = BucketConfig(backward_ms=1.8)
    slow = BucketConfig(backward_ms=1.8, straggler_pct=50.0)
    s0, s1 = step_schedule(base), step_schedule(slow)
    close(s1.layer_ready, 1.5 * s0.layer_ready)
    close(s1.bucket_ready, [8.1, 16.2, 24.3, 32.4])  # 3 layers * 2.7 ms each
    # 5.95 ms transfers now fit in 8.1 ms gaps: no queue, tail back to one transfer
    close(s1.bucket_link_wait, [0.0] * 4)
    assert s0.exposed_tail == pytest.approx(7.6, rel=REL)
    assert s1.exposed_tail == pytest.approx(5.95, rel=REL)
    assert s1.step_time == pytest.approx(12 + 32.4 + 5.95 + 2, rel=REL)  # 52.35
    assert s1.step_time > s0.step_time  # 43.2: hiding more, finishing later
    close(layer_ready_times([1.0, 2.0], 100.0), [6.0, 4.0])  # (2+1)*2, 2*2


def test_embedding_layer_is_ready_last_and_sets_the_tail():
    c = PRESETS.load("Embedding layer")
    s = step_schedule(c)
    assert s.layer_ready[0] == s.backward_end == pytest.approx(23.0, rel=REL)  # 11*2 + 1
    assert s.layer_ready.argmax() == 0
    assert s.layer_bucket[0] == s.n_buckets - 1
    close(s.bucket_size_mb, [75.0, 75.0, 75.0, 250.0])
    # 0.7 + 1.75 * 250 / 50
    assert s.exposed_tail == pytest.approx(9.45, rel=REL)
    # even alone in its bucket, the embedding's transfer is exposed: 0.7 + 1.75 * 200 / 50
    sweep = sweep_layers_per_bucket(c)
    assert np.all(sweep.exposed_tail >= 7.7 - 1e-9)


def on(iv: Intervals, lane: str) -> Intervals:
    """The intervals on one lane."""
    sel = iv.lane == lane
    return Intervals(iv.start[sel], iv.end[sel], iv.lane[sel], iv.label[sel], iv.kind[sel])


def test_intervals_of_the_default_schedule():
    iv = schedule_intervals(step_schedule(BucketConfig()))
    assert isinstance(iv, Intervals)
    compute = on(iv, "compute")
    assert list(compute.label[:2]) == ["Layer 12", "Layer 11"]
    assert set(compute.kind) == {"backward"}
    close(compute.start, np.arange(0, 24, 2))
    link = on(iv, "link")
    assert list(link.label) == ["Bucket 0", "Bucket 1", "Bucket 2", "Bucket 3", "Exposed tail"]
    assert list(link.kind) == ["transfer"] * 4 + ["exposed"]
    close(link.start[-1], 24.0)
    close(link.end[-1], 29.95)
    assert len(on(iv, "link-wait")) == 0

    queued = on(schedule_intervals(step_schedule(BucketConfig(backward_ms=1.8))), "link-wait")
    assert list(queued.label) == ["Bucket 1 waits", "Bucket 2 waits", "Bucket 3 waits"]
    assert set(queued.kind) == {"waiting"}
    close(queued.start, [10.8, 16.2, 21.6])
    close(queued.end, [11.35, 17.3, 23.25])


def test_average_rates():
    arrival, service = average_rates(BucketConfig())
    assert arrival == pytest.approx(12.5, rel=REL)  # 300 MB / 24 ms
    assert service == pytest.approx(25 * 8 / 14, rel=REL)  # 14.2857 MB/ms
    arrival, _ = average_rates(BucketConfig(straggler_pct=100.0))
    assert arrival == pytest.approx(6.25, rel=REL)  # 300 / 48


# ---------------------------------------------------------------------------
# Bucket assignment
# ---------------------------------------------------------------------------


def test_assign_by_count_takes_layers_in_reverse():
    # index 0 is layer 1; layers 5, 4 -> bucket 0; 3, 2 -> 1; 1 -> 2
    assert assign_by_count(5, 2).tolist() == [2, 1, 1, 0, 0]
    assert assign_by_count(3, 12).tolist() == [0, 0, 0]
    rows = assign_by_count(4, np.array([1, 3]))
    assert rows.tolist() == [[3, 2, 1, 0], [1, 0, 0, 0]]


SIZES = np.array([10.0, 20.0, 30.0, 40.0])  # layer 1 .. layer 4


@pytest.mark.parametrize(
    ("cap", "expected"),
    [
        (50.0, [1, 1, 0, 0]),  # 40 + 30 = 70 >= 50 closes (overshoot); 20 + 10 is left over
        (70.0, [1, 1, 0, 0]),  # 40 + 30 = 70 hits the cap exactly and closes
        (70.5, [1, 0, 0, 0]),  # 40 + 30 < 70.5, + 20 = 90 closes
        (5.0, [3, 2, 1, 0]),  # smaller than every layer: one layer per bucket
        (100.0, [0, 0, 0, 0]),  # exactly the total: one bucket, no empty one after it
        (1000.0, [0, 0, 0, 0]),  # larger than everything: one bucket
        (35.0, [2, 1, 1, 0]),  # 40 >= 35 alone; 30 < 35, + 20 = 50 closes; 10 is left
    ],
)
def test_assign_by_cap_follows_ddp(cap, expected):
    assert assign_by_cap(SIZES, cap).tolist() == expected


def test_assign_by_cap_handles_many_caps_at_once():
    caps = np.array([50.0, 70.5, 5.0, 1000.0])
    rows = assign_by_cap(SIZES, caps)
    assert rows.shape == (4, 4)
    for row, cap in zip(rows, caps, strict=True):
        assert row.tolist() == assign_by_cap(SIZES, cap).tolist()


def test_schedule_with_a_byte_cap():
    s = step_schedule(BucketConfig(bucket_cap_mb=60.0))
    # 25 + 25 < 60, + 25 = 75 >= 60: three layers per bucket, as the default
    assert s.n_buckets == 4
    assert s.step_time == pytest.approx(43.95, rel=REL)


def test_bucket_numbers_must_not_skip():
    with pytest.raises(ValueError):
        schedule_arrays([1.0] * 3, [1.0] * 3, [2, 0, 0], ranks=2, bandwidth=1.0, latency_ms=0.0)
    with pytest.raises(ValueError):
        schedule_arrays([1.0] * 3, [1.0] * 3, [0, 0], ranks=2, bandwidth=1.0, latency_ms=0.0)


def test_any_assignment_is_launched_in_bucket_index_order():
    # Bucket 0 holds layer 1 (ready at 2 ms, last), bucket 1 layer 2 (ready at 1 ms).
    # Each transfer: 2(2-1)/2 * 1 MB / 1 GB/s = 1 ms. Bucket 1 is ready first but is
    # launched only with bucket 0, at 2 (a 1 ms order wait for bucket 0); the link
    # runs bucket 0 2-3, then bucket 1 3-4 (a 1 ms link wait).
    s = schedule_arrays([1.0, 1.0], [1.0, 1.0], [0, 1], ranks=2, bandwidth=1.0, latency_ms=0.0)
    close(s.bucket_ready, [2.0, 1.0])
    close(s.bucket_launch, [2.0, 2.0])
    close(s.bucket_order_wait, [0.0, 1.0])
    assert s.bucket_waits_for.tolist() == [-1, 0]
    close(s.bucket_start, [2.0, 3.0])
    close(s.bucket_link_wait, [0.0, 1.0])
    assert s.exposed_tail == pytest.approx(2.0, rel=REL)


# ---------------------------------------------------------------------------
# Sweeps
# ---------------------------------------------------------------------------


def test_sweep_layers_per_bucket_defaults():
    r = sweep_layers_per_bucket(BucketConfig())
    assert r.setting.tolist() == list(range(1, 13))
    assert r.n_buckets.tolist() == [12, 6, 4, 3, 3, 2, 2, 2, 2, 2, 2, 1]
    # k=1: T 2.45, queued from 2: 2 + 12 * 2.45 = 31.4; k=2: T 4.2, 4 + 6 * 4.2 = 29.2;
    # k=3: 29.95; k=4: T 7.7, ready 8, 16, 24 -> 24 + 7.7 = 31.7; k=12: 24 + 21.7 = 45.7
    close(r.comm_end[[0, 1, 2, 3, 11]], [31.4, 29.2, 29.95, 31.7, 45.7])
    close(r.step_time[[0, 1, 2]], [45.4, 43.2, 43.95])
    assert r.best_setting == 2  # U-shaped: smaller buckets help until overhead bites


def test_sweep_ties_go_to_the_larger_bucket():
    # caps 30 and 40 both give two 25 MB layers per bucket
    r = sweep_byte_caps(BucketConfig(), np.array([40.0, 30.0, 100.0]))
    close(r.setting, [30.0, 40.0, 100.0])
    assert r.step_time[0] == r.step_time[1] < r.step_time[2]
    assert r.best_setting == 40.0


def test_default_caps_span_one_layer_to_the_whole_model():
    caps = default_caps(BucketConfig().size_profile())  # in MiB
    close([caps[0] * MB_PER_MIB, caps[-1] * MB_PER_MIB], [25.0, 300.0])
    r = sweep_byte_caps(BucketConfig())
    assert r.n_buckets[0] == 12 and r.n_buckets[-1] == 1


# ---------------------------------------------------------------------------
# Presets
# ---------------------------------------------------------------------------

EXPECTED_REGIMES = {
    "Overlap works": "overlap-limited",
    "Latency-bound": "latency-bound",
    "Link saturated": "link-saturated",
    "Fast compute: transfers queue": "link-saturated",
    "Traffic exceeds compute": "communication-bound",
    "Embedding layer": "overlap-limited",
    "Straggler": "overlap-limited",
    "Tied embeddings": "overlap-limited",
    # Bucket 1 waits 4 ms for bucket 0 (layer 6), and the link queue that leaves
    # reaches the last bucket.
    "Reordered module": "link-saturated",
    # Hardware presets (widgets/bucket_timeline/hardware.py), BERT-base with DDP's buckets.
    "8×A100, NVLink": "overlap-limited",
    "8×H100, NVLink": "overlap-limited",
    "64 nodes, 400 Gb/s fabric": "overlap-limited",
    "64 nodes, 100 GbE": "communication-bound",
    "64 nodes, 25 GbE": "communication-bound",
    "8 GPUs, PCIe only": "overlap-limited",
}


def test_every_preset_shows_its_regime():
    assert set(PRESETS) == set(EXPECTED_REGIMES) == set(PRESET_DESCRIPTIONS)
    for name, regime in EXPECTED_REGIMES.items():
        s = step_schedule(PRESETS.load(name))
        assert s.regime.kind == regime, (name, s.regime)
        assert s.regime.kind in REGIMES


def test_presets_set_every_parameter():
    names = {n for n in TimelineSettings.param if n != "name"}  # the preset's name too
    for values in PRESETS.values():
        assert set(values) == names
    # applying a preset after the embedding one drops the profile
    c = PRESETS.load("Embedding layer")
    c.param.update(**PRESETS["Overlap works"])
    assert c.layer_grad_mb is None


def test_preset_stories_hold():
    overlap = step_schedule(PRESETS.load("Overlap works"))
    assert 0 < overlap.exposed_tail < 0.3 * overlap.backward_end
    assert overlap.overlap_fraction >= 0.7

    latency = PRESETS.load("Latency-bound")
    r = sweep_layers_per_bucket(latency)
    assert r.step_time[0] > r.step_time[2]  # 12 buckets slower than 4

    for name in ("Link saturated", "Fast compute: transfers queue"):
        c = PRESETS.load(name)
        s = step_schedule(c)
        assert s.traffic_ms < s.backward_end
        assert np.all(s.bucket_link_wait[1:] > 0)
        # exposed however the layers are divided: at least a sixth of backward
        assert sweep_layers_per_bucket(c).exposed_tail.min() > s.backward_end / 6

    c = PRESETS.load("Traffic exceeds compute")
    s = step_schedule(c)
    r = sweep_layers_per_bucket(c)
    assert set(r.regime) == {"communication-bound"}
    # no bucketing hides more than E of the traffic
    assert r.exposed_tail.min() >= s.traffic_ms - s.backward_end

    straggler = step_schedule(PRESETS.load("Straggler"))
    same = step_schedule(PRESETS.load("Straggler", straggler_pct=0.0))
    assert straggler.exposed_tail < same.exposed_tail
    assert straggler.step_time > same.step_time


# ---------------------------------------------------------------------------
# Vectorised recurrence and invariants
# ---------------------------------------------------------------------------


def loop_schedule(ready, transfer):
    start, end, prev = [], [], -np.inf
    for r, t in zip(ready, transfer, strict=True):
        s = max(r, prev)
        prev = s + t
        start.append(s)
        end.append(prev)
    return np.array(start), np.array(end)


times = st.floats(0.0, 1000.0, allow_nan=False)


@given(st.lists(st.tuples(times, times), min_size=1, max_size=30))
def test_vectorised_start_recurrence_equals_a_loop(pairs):
    ready, transfer = np.array(pairs).T
    start, end = link_schedule(ready, transfer)
    exp_start, exp_end = loop_schedule(ready, transfer)
    np.testing.assert_allclose(start, exp_start, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(end, exp_end, rtol=1e-12, atol=1e-9)


def test_vectorised_recurrence_works_row_by_row():
    ready = np.array([[1.0, 2.0, 3.0], [0.0, 10.0, 10.5]])
    transfer = np.array([[5.0, 1.0, 1.0], [1.0, 2.0, 0.5]])
    start, _ = link_schedule(ready, transfer)
    close(start, [[1.0, 6.0, 7.0], [0.0, 10.0, 12.0]])


def ddp_loop(layer_mb, cap_mib):
    """DDP's rebuilt buckets, one tensor at a time: (layer, is_weight) -> bucket.

    Tensors in the order they become ready (layer n's bias, its weight, layer
    n-1's bias, ...); a bucket closes once it reaches the cap (MiB -> MB).
    """
    out, bucket, filled = {}, 0, 0.0
    for layer in range(len(layer_mb), 0, -1):
        d = ((1 + 4 * layer_mb[layer - 1] * 1e6 / 4) ** 0.5 - 1) / 2  # 4(d^2 + d) bytes
        bias = 4 * d / 1e6
        for is_weight, size in ((False, bias), (True, layer_mb[layer - 1] - bias)):
            out[layer, is_weight] = bucket
            filled += size
            if filled >= cap_mib * 1.048576:
                bucket, filled = bucket + 1, 0.0
    return out


positive = st.floats(0.01, 100.0, allow_nan=False)


@st.composite
def configs(draw):
    n = draw(st.integers(1, 12))
    c = BucketConfig(
        n_layers=n,
        layer_backward_ms=np.array(draw(st.lists(positive, min_size=n, max_size=n))),
        layer_grad_mb=np.array(draw(st.lists(positive, min_size=n, max_size=n))),
        latency_ms=draw(st.floats(0.0, 5.0)),
        ranks=draw(st.integers(2, 64)),
        bandwidth=draw(st.floats(0.1, 1000.0)),
        straggler_pct=draw(st.floats(0.0, 200.0)),
        forward_ms=draw(st.floats(0.0, 50.0)),
        optimizer_ms=draw(st.floats(0.0, 10.0)),
        layers_per_bucket=draw(st.integers(1, 12)),
    )
    if draw(st.booleans()):
        c.bucket_cap_mb = draw(st.floats(0.01, 2000.0))
    return c


@settings(max_examples=200, deadline=None)
@given(configs())
def test_schedule_invariants(c):
    s = step_schedule(c)
    tol = 1e-9 * max(1.0, s.comm_end)
    # buckets contiguous in reverse layer order: whole layers, or with a byte cap a
    # layer's bias and weight possibly in two neighbouring buckets
    layers = np.concatenate(s.bucket_layers)
    if c.bucket_cap_mb is None:
        assert layers.tolist() == list(range(c.n_layers, 0, -1))
    else:
        assert np.all(np.diff(layers) <= 0)
        assert sorted(set(layers.tolist()), reverse=True) == list(range(c.n_layers, 0, -1))
        expected = ddp_loop(c.layer_grad_mb, c.bucket_cap_mb)
        t = s.tensors
        got = {
            (int(layer), kind == TensorKind.WEIGHT): int(b)
            for layer, kind, b in zip(t.layer, t.kind, s.tensor_bucket, strict=True)
        }
        assert got == expected
    # every tensor in exactly one bucket, in the order they became ready
    assert np.concatenate(s.bucket_tensors).tolist() == s.tensors.readiness_order.tolist()
    close(s.bucket_size_mb.sum(), c.layer_grad_mb.sum())
    # never before ready, never before the previous transfer ends
    assert np.all(s.bucket_start >= s.bucket_ready)
    assert np.all(s.bucket_start[1:] >= s.bucket_end[:-1] - tol)
    wait = np.maximum(0, np.append(-np.inf, s.bucket_end[:-1]) - s.bucket_ready)
    np.testing.assert_allclose(s.bucket_link_wait, wait, rtol=0, atol=tol)
    # the last bucket holds layer 1, ready at E: the tail is at least its transfer
    assert s.bucket_ready[-1] == s.backward_end
    assert s.exposed_tail >= s.bucket_transfer_ms[-1] - tol
    assert s.step_time >= c.forward_ms + s.backward_end + c.optimizer_ms
    lower = c.forward_ms + s.bucket_ready[0] + s.total_transfer_ms + c.optimizer_ms
    assert s.step_time >= lower - tol
    assert 0.0 <= s.overlap_fraction <= 1.0 + 1e-12
    assert s.regime.kind in REGIMES
    iv = schedule_intervals(s)
    assert len(on(iv, "compute")) == c.n_layers
    assert len(on(iv, "link")) == s.n_buckets + (s.exposed_tail > 0)


@settings(max_examples=100, deadline=None)
@given(configs(), st.lists(st.floats(0.01, 2000.0), min_size=1, max_size=8))
def test_sweeps_agree_with_single_schedules(c, caps):
    c.bucket_cap_mb = None
    r = sweep_layers_per_bucket(c)
    for i, k in enumerate(r.setting):
        c.layers_per_bucket = int(k)
        s = step_schedule(c)
        close(r.step_time[i], s.step_time)
        close(r.exposed_tail[i], s.exposed_tail)
        assert r.n_buckets[i] == s.n_buckets
        assert r.regime[i] == s.regime.kind
        assert r.suggestion[i] == s.regime.suggestion
    assert r.step_time[r.best_index] == pytest.approx(r.step_time.min(), rel=1e-12)

    rc = sweep_byte_caps(c, np.array(caps))
    for i, cap in enumerate(rc.setting):
        c.bucket_cap_mb = float(cap)
        s = step_schedule(c)
        close(rc.step_time[i], s.step_time)
        assert rc.n_buckets[i] == s.n_buckets
        assert rc.regime[i] == s.regime.kind
        assert rc.suggestion[i] == s.regime.suggestion


# ---------------------------------------------------------------------------
# Typed intervals: ids as integer columns, kinds as an enum
# ---------------------------------------------------------------------------


def test_intervals_carry_bucket_and_layer_ids():
    iv = schedule_intervals(step_schedule(BucketConfig()))
    assert isinstance(iv, BucketIntervals)
    back = iv.of_kind(IntervalKind.BACKWARD)
    assert back.layer.tolist() == list(range(12, 0, -1))  # backward order
    assert back.bucket.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    transfer = iv.of_kind(IntervalKind.TRANSFER)
    assert transfer.bucket.tolist() == [0, 1, 2, 3]
    assert transfer.layer.tolist() == [NO_LAYER] * 4
    fill = iv.of_kind(IntervalKind.FILLING)
    assert fill.bucket.tolist() == [0, 1, 2, 3]
    close(fill.start, [0.0, 6.0, 12.0, 18.0])
    close(fill.end, [6.0, 12.0, 18.0, 24.0])
    (opt_start,) = iv.of_kind(IntervalKind.OPTIMIZER).start
    assert opt_start == pytest.approx(29.95, rel=REL)
    exposed = iv.of_kind(IntervalKind.EXPOSED)
    assert exposed.start.tolist() == [24.0] and exposed.bucket.tolist() == [NO_BUCKET]
    for kind, lane in zip(iv.kind, iv.lane, strict=True):
        assert isinstance(kind, IntervalKind) and LANE_OF[kind] == lane

    waits = schedule_intervals(step_schedule(BucketConfig(backward_ms=1.8))).of_kind(
        IntervalKind.LINK_WAIT
    )
    assert waits.bucket.tolist() == [1, 2, 3]
    assert waits.layer.tolist() == [NO_LAYER] * 3
