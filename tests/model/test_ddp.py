"""DDP's own bucketing, iterations, registration vs readiness, and launch in bucket order.

The expected bucket contents in the ``real DDP`` tests are what PyTorch 2.13's
``DistributedDataParallel`` produced in a two-rank gloo run on 127.0.0.1 (a
comm hook listing each bucket's parameters, ``_get_ddp_logging_data()`` for the
rebuilt buckets) and what ``torch.distributed._compute_bucket_assignment_by_size``
returned; they are written out here so these tests never import torch.
A ``nn.Linear(d, d)`` is a square layer of ``4 (d^2 + d)`` bytes, exactly the
model's weight + bias split.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from widgets.bucket_timeline.model import PRESETS
from widgets.model.buckets import (
    DDP_DEFAULT_CAP_MIB,
    BucketConfig,
    IntervalKind,
    RegimeKind,
    TensorKind,
    bias_mb,
    cut_by_size,
    gradient_tensors,
    launch_times,
    link_schedule,
    schedule_intervals,
    step_schedule,
    sweep_byte_caps,
    sweep_layers_per_bucket,
)

MIB = 1.048576  # MB
REL = 1e-12


def close(actual, expected) -> None:
    np.testing.assert_allclose(actual, expected, rtol=REL, atol=1e-12)


def linear_mb(d: int) -> float:
    """Gradient MB of nn.Linear(d, d) in fp32."""
    return 4 * (d * d + d) / 1e6


def contents(s, names: dict[int, str] | None = None) -> list[list[str]]:
    """Each bucket's tensors in ready order, as 'w3' / 'b3' (layer 3's weight / bias)."""
    t = s.tensors
    out = []
    for tensors in s.bucket_tensors:
        out.append(
            [
                ("w" if t.kind[i] == TensorKind.WEIGHT else "b")
                + (names[t.layer[i]] if names else str(t.layer[i]))
                for i in tensors
            ]
        )
    return out


# --- the cap rule, as torch's _compute_bucket_assignment_by_size does it ------------------


@pytest.mark.parametrize(
    ("sizes", "first", "limit", "expected"),
    [
        # torch: ([[0, 1, 2], [3]]) for 10, 20, 30, 40 MiB with a 50 MiB limit
        ([10, 20, 30, 40], 50, 50, [0, 0, 0, 1]),
        # 60 is reached exactly by 10 + 20 + 30: the bucket closes (>=)
        ([10, 20, 30, 40], 60, 60, [0, 0, 0, 1]),
        # a hair above 60: never reached, one bucket
        ([10, 20, 30, 40], 60.000004, 60.000004, [0, 0, 0, 0]),
        # limits [1 MiB, 50 MiB]: [[0], [1, 2], [3]]
        ([10, 20, 30, 40], 1, 50, [0, 1, 1, 2]),
        # limits [1 MiB, 25 MiB] with small tensors first: [[0, 1], [2, 3], [4]]
        ([0.5, 0.5, 0.25, 30, 10], 1, 25, [0, 0, 1, 1, 2]),
    ],
)
def test_cut_by_size_matches_torch(sizes, first, limit, expected):
    assert cut_by_size(sizes, first, limit)[0].tolist() == expected


def test_bias_of_a_square_linear_layer():
    close(bias_mb(linear_mb(1024)), 4 * 1024 / 1e6)  # nn.Linear(1024, 1024): 4 KiB
    d = (np.sqrt(1 + 25e6) - 1) / 2  # 4(d^2 + d) = 25e6 bytes: d = 2499.5
    close(bias_mb(25.0), 4 * d / 1e6)


# --- real DDP runs, reproduced --------------------------------------------------------------

SIX = {"n_layers": 6, "grad_mb": linear_mb(1024), "ddp_bucketing": True}


def test_real_ddp_default_iteration_0_is_one_bucket():
    s = step_schedule(BucketConfig(**SIX, iteration=0))
    assert s.n_buckets == 1
    assert s.overlap_fraction == 0.0
    assert s.regime.kind == RegimeKind.NO_OVERLAP


def test_real_ddp_default_rebuilt_buckets_start_with_a_1_mib_bucket():
    # torch: rebuilt_bucket_sizes 4198400, 20992000; params [11 10], [9 .. 0]
    s = step_schedule(BucketConfig(**SIX, iteration=1))
    assert contents(s) == [
        ["b6", "w6"],
        ["b5", "w5", "b4", "w4", "b3", "w3", "b2", "w2", "b1", "w1"],
    ]
    close(s.bucket_size_mb * 1e6, [4198400, 20992000])
    assert step_schedule(BucketConfig(**SIX, iteration=7)).tensor_bucket.tolist() == (
        s.tensor_bucket.tolist()
    )


def test_real_ddp_find_unused_parameters_cuts_registration_order_then_reverses():
    # torch (find_unused_parameters=True, every iteration): bucket 0 = layers.0.bias,
    # layers.1.weight ... layers.5.bias (20996096 bytes); bucket 1 = layers.0.weight.
    for iteration in (0, 1, 2):
        s = step_schedule(BucketConfig(**SIX, find_unused_parameters=True, iteration=iteration))
        assert sorted(contents(s)[0]) == sorted(
            ["b1", "w2", "b2", "w3", "b3", "w4", "b4", "w5", "b5", "w6", "b6"]
        )
        assert contents(s)[1] == ["w1"]
        close(s.bucket_size_mb * 1e6, [20996096, 4194304])
        # Layer 1's weight and bias sit in different buckets.
        t = s.tensors
        assert set(s.tensor_bucket[t.layer == 1].tolist()) == {0, 1}


def test_real_ddp_explicit_cap_applies_to_the_first_bucket():
    # torch, bucket_cap_mb=4: rebuilt into six buckets of 4198400 bytes (one layer each)
    s = step_schedule(BucketConfig(**SIX, bucket_cap_mb=4.0))
    assert contents(s) == [[f"b{i}", f"w{i}"] for i in range(6, 0, -1)]
    close(s.bucket_size_mb * 1e6, [4198400] * 6)


def test_real_ddp_reordered_module():
    # torch: registered a, c, d, late; forward a -> late -> c -> d. Layers in forward
    # order: 1 = a, 2 = late, 3 = c, 4 = d; registration positions 1, 4, 2, 3.
    names = {1: "a", 2: "late", 3: "c", 4: "d"}
    base = {
        "n_layers": 4,
        "grad_mb": linear_mb(1024),
        "ddp_bucketing": True,
        "layer_registration": np.array([1, 4, 2, 3]),
    }
    s = step_schedule(BucketConfig(**base))
    # rebuilt: [d.bias d.weight], [c.bias c.weight late.bias late.weight a.bias a.weight]
    assert contents(s, names) == [["bd", "wd"], ["bc", "wc", "blate", "wlate", "ba", "wa"]]
    s = step_schedule(BucketConfig(**base, find_unused_parameters=True))
    # find_unused: [a.bias c.weight c.bias d.weight d.bias late.weight late.bias], [a.weight]
    assert sorted(contents(s, names)[0]) == sorted(["ba", "wc", "bc", "wd", "bd", "wlate", "blate"])
    assert contents(s, names)[1] == ["wa"]


def test_real_ddp_launch_waits_for_earlier_buckets():
    # torch, modules registered in reverse of use (l3, l2, l1, l0), Linear(256, 256)
    # (0.25 MiB weights), bucket_cap_mb=0.25, find_unused_parameters=True. Launch
    # order and contents: 0 [l0.bias], 1 [l1.bias, l0.weight], 2 [l2.bias, l1.weight],
    # 3 [l3.bias, l2.weight], 4 [l3.weight]; bucket 4 was ready first (l3 finishes its
    # backward first) but was launched last, right after bucket 0 (l0.bias, ready last).
    c = BucketConfig(
        n_layers=4,
        grad_mb=linear_mb(256),
        bucket_cap_mb=0.25,
        find_unused_parameters=True,
        layer_registration=np.array([4, 3, 2, 1]),
    )
    s = step_schedule(c)
    assert [sorted(b) for b in contents(s)] == [
        ["b1"],
        ["b2", "w1"],
        ["b3", "w2"],
        ["b4", "w3"],
        ["w4"],
    ]
    close(s.bucket_ready, [8.0, 8.0, 6.0, 4.0, 2.0])  # 2 ms per layer, layer 4 first
    close(s.bucket_launch, [8.0] * 5)
    assert s.bucket_waits_for.tolist() == [-1, -1, 0, 0, 0]
    close(s.bucket_order_wait, [0.0, 0.0, 2.0, 4.0, 6.0])


# --- hand-computed cases ------------------------------------------------------------------


def test_a_layer_registered_first_but_ready_first_goes_last():
    # Twelve one-layer buckets, find_unused_parameters=True, layer 12 (200 MB) registered
    # first: reverse registration puts it in bucket 11. It is ready at 2 ms (first) but
    # launched only with bucket 10 (layer 1) at 24 ms, when the whole pass has ended.
    # Latency 0, 1000 GB/s: 25 MB takes 1.75 * 25 / 1000 = 0.04375 ms, 200 MB 0.35 ms.
    c = BucketConfig(
        layers_per_bucket=1,
        latency_ms=0.0,
        bandwidth=1000.0,
        find_unused_parameters=True,
        layer_grad_mb=np.array([25.0] * 11 + [200.0]),
        layer_registration=np.array([*range(2, 13), 1]),
    )
    s = step_schedule(c)
    assert s.layer_bucket.tolist() == [*range(10, -1, -1), 11]
    assert s.bucket_ready[11] == 2.0
    assert s.bucket_launch[11] == 24.0 == s.backward_end
    assert s.bucket_waits_for[11] == 10
    assert s.bucket_order_wait[11] == 22.0
    close(s.bucket_start[10:], [24.0, 24.04375])
    assert s.exposed_tail == pytest.approx(0.39375, rel=REL)
    iv = schedule_intervals(s).of_kind(IntervalKind.ORDER_WAIT)
    row = int(np.flatnonzero(iv.bucket == 11)[0])
    assert (iv.start[row], iv.end[row], iv.waits_for[row]) == (2.0, 24.0, 10)
    # Rebuilt from readiness (the default), layer 12 is bucket 0 and hides.
    rebuilt = step_schedule(BucketConfig(**{**c.param.values(), "find_unused_parameters": False}))
    assert rebuilt.layer_bucket[11] == 0
    assert rebuilt.exposed_tail == pytest.approx(0.04375, rel=REL)
    assert not np.any(rebuilt.bucket_order_wait > 0)


def test_reordered_module_preset_by_hand():
    s = step_schedule(PRESETS.load("Reordered module"))
    # Reverse registration: 6, 12, 11 | 10, 9, 8 | 7, 5, 4 | 3, 2, 1 (3 per bucket).
    assert [sorted(b.tolist()) for b in s.bucket_layers] == [
        [6, 11, 12],
        [8, 9, 10],
        [4, 5, 7],
        [1, 2, 3],
    ]
    close(s.bucket_ready, [14.0, 10.0, 18.0, 24.0])
    close(s.bucket_launch, [14.0, 14.0, 18.0, 24.0])
    assert s.bucket_waits_for.tolist() == [-1, 0, -1, -1]
    close(s.bucket_start, [14.0, 19.95, 25.9, 31.85])
    assert s.exposed_tail == pytest.approx(13.8, rel=REL)
    rebuilt = PRESETS.load("Reordered module", find_unused_parameters=False)
    assert step_schedule(rebuilt).exposed_tail == pytest.approx(5.95, rel=REL)


def test_tied_embeddings_share_one_tensor_ready_at_the_end():
    s = step_schedule(PRESETS.load("Tied embeddings"))
    t = s.tensors
    (shared,) = np.flatnonzero(t.shared)
    assert t.layer[shared] == 1 and t.kind[shared] == TensorKind.WEIGHT
    assert shared == 0  # registered first
    assert t.ready[shared] == s.backward_end == 23.0  # ready at the very end
    # The head (layer 12) keeps only its bias, ready first at 2 ms.
    head = np.flatnonzero(t.layer == 12)
    assert [t.kind[i] for i in head] == [TensorKind.BIAS]
    assert t.ready[head[0]] == 2.0
    assert len(t) == 23
    # Untied, the head's own 200 MB weight is ready at 2 ms and hides behind backward.
    untied = step_schedule(PRESETS.load("Tied embeddings", tied_embeddings=False))
    assert untied.traffic_ms > s.traffic_ms
    close(untied.bucket_ready[0], 6.0)


def test_launch_times_with_an_enqueue_cost():
    close(launch_times([3.0, 1.0, 5.0], 0.0), [3.0, 3.0, 5.0])
    # max(ready_b, launch_(b-1)) + 0.5: 3.5, 4.0, 5.5
    close(launch_times([3.0, 1.0, 5.0], 0.5), [3.5, 4.0, 5.5])


def test_default_cap_is_25_mib_with_a_1_mib_first_bucket():
    c = BucketConfig(ddp_bucketing=True)  # twelve 25 MB layers
    s = step_schedule(c)
    # bucket 0: b12 + w12 = 25 MB >= 1 MiB; then 25 MiB = 26.21 MB: two layers each.
    assert [len(b) for b in s.bucket_layers] == [1, 2, 2, 2, 2, 2, 1]
    assert c.knob_setting() == DDP_DEFAULT_CAP_MIB
    explicit = step_schedule(BucketConfig(bucket_cap_mb=25.0))  # first bucket 25 MiB too
    assert [len(b) for b in explicit.bucket_layers] == [2] * 6


def test_sweeps_follow_the_iteration():
    c = BucketConfig(iteration=0)
    sw = sweep_layers_per_bucket(c)
    assert set(sw.n_buckets.tolist()) == {1}
    assert set(sw.suggestion) == {"none"}
    c.ddp_bucketing = True
    assert set(sweep_byte_caps(c).n_buckets.tolist()) == {1}


# --- invariants on every configuration ------------------------------------------------------


@st.composite
def ddp_configs(draw) -> BucketConfig:
    n = draw(st.integers(1, 12), label="layers")
    sizes = st.floats(0.05, 60.0)
    c = BucketConfig(
        n_layers=n,
        layer_backward_ms=np.array(draw(st.lists(st.floats(0.05, 20.0), min_size=n, max_size=n))),
        layer_grad_mb=np.array(draw(st.lists(sizes, min_size=n, max_size=n))),
        layer_registration=np.array(draw(st.permutations(range(1, n + 1))), int),
        tied_embeddings=draw(st.booleans()),
        iteration=draw(st.sampled_from([0, 1, 2])),
        find_unused_parameters=draw(st.booleans()),
        layers_per_bucket=draw(st.integers(1, max(1, min(n, 12)))),
        ranks=draw(st.integers(2, 64)),
        bandwidth=draw(st.floats(0.5, 500.0)),
        latency_ms=draw(st.sampled_from([0.0, 0.01, 0.05, 0.5])),
        enqueue_ms=draw(st.sampled_from([0.0, 0.0, 0.01, 0.3])),
        straggler_pct=draw(st.sampled_from([0.0, 50.0])),
    )
    mode = draw(st.sampled_from(["layers", "default cap", "cap"]))
    if mode != "layers":
        c.ddp_bucketing = True
    if mode == "cap":
        c.bucket_cap_mb = draw(st.floats(0.01, 200.0))
    event(f"mode: {mode}")
    return c


@settings(max_examples=600, deadline=None)
@given(ddp_configs())
def test_launch_order_and_waits(c: BucketConfig) -> None:
    s = step_schedule(c)
    h = c.enqueue_ms
    tol = 1e-9 * max(1.0, s.comm_end)
    # Every tensor in one bucket; buckets 0..n-1; sizes add up.
    assert sorted(np.concatenate(s.bucket_tensors).tolist()) == list(range(len(s.tensors)))
    close(s.bucket_size_mb.sum(), s.tensors.size_mb.sum())
    # A bucket is ready when its last tensor is.
    for b, tensors in enumerate(s.bucket_tensors):
        assert s.bucket_ready[b] == s.tensors.ready[tensors].max()
    # Launch in bucket-index order: launch_b = max(ready_b, launch_(b-1)) + h.
    previous = -np.inf
    for b in range(s.n_buckets):
        expected = max(s.bucket_ready[b], previous) + h
        assert s.bucket_launch[b] == pytest.approx(expected, rel=1e-12, abs=tol)
        previous = s.bucket_launch[b]
    assert np.all(np.diff(s.bucket_launch) >= h - tol)
    assert np.all(np.diff(s.bucket_start) >= -tol)
    assert np.all(s.bucket_start >= s.bucket_launch - tol)
    wait = np.maximum(0, np.append(-np.inf, s.bucket_end[:-1]) - s.bucket_launch)
    np.testing.assert_allclose(s.bucket_link_wait, wait, rtol=0, atol=tol)
    # An order wait names the earlier bucket whose readiness held it back.
    for b in np.flatnonzero(s.bucket_order_wait > tol):
        k = s.bucket_waits_for[b]
        assert 0 <= k < b and s.bucket_ready[k] == s.bucket_ready[:b].max()
        event("an order wait")
    # The last bucket goes once every gradient is ready.
    assert s.bucket_launch[-1] >= s.backward_end + h - tol
    r = s.regime
    assert s.exposed_tail == pytest.approx(
        r.last_launch_delay_ms + r.last_link_wait_ms + r.last_transfer_ms, rel=1e-9, abs=1e-9
    )
    if not c.find_unused_parameters and c.iteration == 0:
        assert s.n_buckets == 1 and s.overlap_fraction == 0.0
        assert r.kind in (RegimeKind.NO_OVERLAP, RegimeKind.COMMUNICATION_BOUND)
    if not c.find_unused_parameters and c.iteration >= 1:
        # Rebuilt from readiness: no ready bucket ever waits for an earlier one.
        assert not np.any(s.bucket_order_wait > tol)
        assert np.all(np.diff(s.bucket_ready) >= 0)
    if c.uses_byte_cap() and not c.single_bucket():
        # Every bucket of the cut but the leftover one reached its limit, and was
        # below it before its last tensor.
        t = s.tensors
        order = t.readiness_order if not c.find_unused_parameters else np.arange(len(t))
        first = MIB * (1.0 if c.bucket_cap_mb is None else c.bucket_cap_mb)
        limit = MIB * (DDP_DEFAULT_CAP_MIB if c.bucket_cap_mb is None else c.bucket_cap_mb)
        buckets_in_cut = s.tensor_bucket[order]
        if c.find_unused_parameters:
            buckets_in_cut = buckets_in_cut.max() - buckets_in_cut
        sizes = t.size_mb[order]
        for j in range(buckets_in_cut.max() + 1):
            members = sizes[buckets_in_cut == j]
            cap = first if j == 0 else limit
            assert members[:-1].sum() < cap
            if j < buckets_in_cut.max():
                assert members.sum() >= cap
    intervals = schedule_intervals(s)
    assert len(intervals.of_kind(IntervalKind.ORDER_WAIT)) == int(np.sum(s.bucket_order_wait > tol))


@settings(max_examples=150, deadline=None)
@given(ddp_configs())
def test_sweeps_agree_with_single_schedules_in_every_mode(c: BucketConfig) -> None:
    layers = {**c.param.values(), "ddp_bucketing": False, "bucket_cap_mb": None}
    layers.pop("name")
    base = BucketConfig(**layers)
    sw = sweep_layers_per_bucket(base)
    for i, k in enumerate(sw.setting):
        if k > 12:
            break
        base.layers_per_bucket = int(k)
        s = step_schedule(base)
        assert sw.step_time[i] == pytest.approx(s.step_time, rel=1e-12)
        assert sw.n_buckets[i] == s.n_buckets
        assert sw.regime[i] == s.regime.kind
        assert sw.suggestion[i] == s.regime.suggestion
    caps = sweep_byte_caps(c, np.array([0.5, 5.0, 50.0]))
    for i, cap in enumerate(caps.setting):
        one = step_schedule(BucketConfig(**{**layers, "bucket_cap_mb": float(cap)}))
        assert caps.step_time[i] == pytest.approx(one.step_time, rel=1e-12)
        assert caps.regime[i] == one.regime.kind


def test_every_preset_keeps_its_tensors_consistent():
    for name in PRESETS:
        s = step_schedule(PRESETS.load(name))
        t = gradient_tensors(
            PRESETS.load(name).backward_profile(),
            PRESETS.load(name).size_profile(),
            registration=PRESETS[name]["layer_registration"],
            tied_embeddings=PRESETS[name]["tied_embeddings"],
        )
        close(s.tensors.size_mb, t.size_mb)


def test_docstring_examples():
    # tensors: 3 layers of 1 ms, registered 3, 1, 2 (positions [2, 3, 1]).
    t = gradient_tensors(np.ones(3), np.full(3, 25.0), registration=np.array([2, 3, 1]))
    name = [
        ("w" if k == TensorKind.WEIGHT else "b") + str(layer)
        for k, layer in zip(t.kind, t.layer, strict=True)
    ]
    assert name == ["w3", "b3", "w1", "b1", "w2", "b2"]
    assert [name[i] for i in t.readiness_order] == ["b3", "w3", "b2", "w2", "b1", "w1"]
    close(t.layer_ready, [3.0, 2.0, 1.0])
    # link: bucket 0 ready at 10, bucket 1 at 2, both 3 ms: launched 10, 10; run 10-13, 13-16.
    launch = launch_times([10.0, 2.0])
    close(launch, [10.0, 10.0])
    start, end = link_schedule(launch, [3.0, 3.0])
    close(start, [10.0, 13.0])
    close(end, [13.0, 16.0])
