"""Sweep records by hand: the last bucket per setting, the default caps, the record itself."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from widgets.bucket_timeline.model import PRESETS
from widgets.model.buckets import (
    BucketConfig,
    default_caps,
    step_schedule,
    sweep_layers_per_bucket,
)


def test_last_bucket_per_setting_for_twelve_layers() -> None:
    sweep = sweep_layers_per_bucket(BucketConfig())
    # n - (ceil(n / k) - 1) k layers are left for the bucket holding layer 1.
    by_hand = [12 - (math.ceil(12 / k) - 1) * k for k in range(1, 13)]
    assert by_hand == [1, 2, 3, 4, 2, 6, 5, 4, 3, 2, 1, 12]
    assert sweep.last_bucket_layers.tolist() == by_hand
    np.testing.assert_allclose(sweep.last_bucket_mb, [25.0 * k for k in by_hand])
    assert sweep.n_buckets.tolist() == [math.ceil(12 / k) for k in range(1, 13)]


def test_default_caps_geometric_from_the_smallest_layer_to_the_whole() -> None:
    # 1, 2 and 4 MB: 1 MB to 7 MB in three log steps, 1, sqrt(7), 7, then in MiB.
    caps = default_caps([1.0, 2.0, 4.0], num=3)
    np.testing.assert_allclose(caps * 1.048576, [1.0, math.sqrt(7.0), 7.0])
    assert len(default_caps([1.0, 2.0, 4.0])) == 40


def test_the_record_is_frozen_and_compared_by_identity() -> None:
    sweep = sweep_layers_per_bucket(BucketConfig())
    with pytest.raises(dataclasses.FrozenInstanceError):
        sweep.best_index = 0
    again = sweep_layers_per_bucket(BucketConfig())
    assert sweep != again and sweep == sweep


def test_a_sweep_given_to_the_schedule_is_the_one_it_would_compute() -> None:
    # Latency-bound preset: layers per bucket is the knob, and the sweep a view
    # already drew decides the suggestion exactly as the schedule's own would.
    config = PRESETS.load("Latency-bound")
    sweep = sweep_layers_per_bucket(config)
    own, given = step_schedule(config), step_schedule(config, layer_sweep=sweep)
    assert given.regime == own.regime
    assert given.regime.best_setting == sweep.best_setting
    # A layers-per-bucket sweep says nothing about byte caps: with a cap set, the
    # schedule sweeps the caps itself and ignores it.
    capped = PRESETS.load("Latency-bound", ddp_bucketing=True, bucket_cap_mb=4.0)
    assert step_schedule(capped, layer_sweep=sweep).regime == step_schedule(capped).regime
    assert step_schedule(capped, layer_sweep=sweep).regime.best_setting != sweep.best_setting
