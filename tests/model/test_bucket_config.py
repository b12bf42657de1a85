"""BucketConfig's declarations and its assignment helpers, checked against written contracts.

Labels name the controls (DESIGN.md: tests and course pages find a control by its
label); setting names are the URL keys README.md lists for ``/bucket-timeline``;
bounds and defaults are what a learner can type, written out here by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from widgets.model.buckets import BucketConfig
from widgets.model.settings import hint_of, is_setting, setting_names, unit_of

P = BucketConfig.param

# ---------------------------------------------------------------------------
# Declarations
# ---------------------------------------------------------------------------

#: Labels of the settings and profiles declared in BucketConfig itself (the shared step
#: settings and the first ones are covered where they are declared or in test_buckets).
LABELS = {
    "bucket_cap_mb": "Bucket size cap",
    "ddp_bucketing": "DDP bucketing",
    "iteration": "Iteration",
    # Named as DDP's own argument, so a learner can look it up.
    "find_unused_parameters": "find_unused_parameters",
    "enqueue_ms": "Host enqueue time",
    "algorithm": "All-reduce algorithm",
    "accumulation_steps": "Accumulation steps",
    "layer_backward_ms": "Backward time profile",
    "layer_grad_mb": "Gradient size profile",
    "layer_registration": "Registration order",
    "tied_embeddings": "Tied embeddings",
}


@pytest.mark.parametrize(("name", "label"), sorted(LABELS.items()))
def test_label(name: str, label: str) -> None:
    assert P[name].label == label


def test_url_keys_are_the_settings_readme_lists() -> None:
    # README.md, "Presetting a widget from the URL", row /bucket-timeline (less `preset`).
    readme = [
        "layers_per_bucket",
        "backward_ms",
        "grad_mb",
        "bandwidth",
        "latency_ms",
        "algorithm",
        "ranks",
        "straggler_pct",
        "bucket_cap_mb",
        "ddp_bucketing",
        "iteration",
        "find_unused_parameters",
        "enqueue_ms",
        "accumulation_steps",
        "forward_ms",
        "optimizer_ms",
    ]
    assert setting_names(BucketConfig) == readme


#: Declared but not a control: set by presets and lessons only.
HIDDEN = ("n_layers", "layer_backward_ms", "layer_grad_mb", "layer_registration", "tied_embeddings")


@pytest.mark.parametrize("name", HIDDEN)
def test_model_shape_parameters_are_hidden_not_settings(name: str) -> None:
    # Not a URL key, and a negative precedence keeps it out of generated parameter panels.
    assert not is_setting(P[name])
    assert P[name].precedence < 0


#: (default, bounds) of each numeric declaration a learner can type. Sources:
#: ranks 8 (the default every hand-worked schedule assumes), a ring needs at least 2; a straggler
#: at most 500 % (six times slower), none by default; the cap from 1 KiB (0.001 MiB) to
#: 1e6 MiB, empty (None) by default; iteration 1, the first after DDP's rebuild (the hint:
#: "1 and later are alike"), up to 1000; host enqueue 0 to 100 ms, none by default; a
#: model of 1 to 64 layers, twelve by default (DESIGN: "twelve layers by default").
NUMERIC = {
    "ranks": (8, (2, 4096)),
    "straggler_pct": (0.0, (0.0, 500.0)),
    "bucket_cap_mb": (None, (0.001, 1e6)),
    "iteration": (1, (0, 1000)),
    "enqueue_ms": (0.0, (0.0, 100.0)),
    "n_layers": (12, (1, 64)),
}


@pytest.mark.parametrize(("name", "declared"), sorted(NUMERIC.items()))
def test_default_and_bounds(name: str, declared: tuple) -> None:
    default, bounds = declared
    assert P[name].default == default
    assert P[name].bounds == bounds


@pytest.mark.parametrize(
    ("name", "top", "above"),
    [
        ("ranks", 4096, 4097),
        ("straggler_pct", 500.0, 500.5),
        ("bucket_cap_mb", 1e6, 1e6 + 0.5),
        ("iteration", 1000, 1001),
        ("enqueue_ms", 100.0, 100.5),
        ("n_layers", 64, 65),
    ],
)
def test_the_upper_bound_can_be_typed_and_nothing_above_it(name, top, above) -> None:
    c = BucketConfig()
    setattr(c, name, top)
    assert getattr(c, name) == top
    with pytest.raises(ValueError):
        setattr(c, name, above)
    assert getattr(c, name) == top  # the refused value never lands


def test_yes_no_and_profile_defaults() -> None:
    for name in ("ddp_bucketing", "find_unused_parameters", "tied_embeddings"):
        assert P[name].default is False, name
    # Empty profiles mean uniform layers in use order; the cap may be emptied again.
    for name in ("bucket_cap_mb", "layer_backward_ms", "layer_grad_mb", "layer_registration"):
        assert P[name].default is None and P[name].allow_None is True, name
    c = BucketConfig(bucket_cap_mb=4.0)
    c.bucket_cap_mb = None
    assert c.bucket_cap_mb is None


#: (unit, hint) shown with each field; a hint of None shows the bounds instead.
UNITS = {
    "ranks": ("ranks", None),
    "straggler_pct": ("%", None),
    "bucket_cap_mb": ("MiB", "MiB, DDP-style; empty: layers per bucket, or DDP's 25 MiB default."),
    "ddp_bucketing": ("", None),
    "iteration": ("", "0 is the first iteration; 1 and later are alike."),
    "find_unused_parameters": ("", None),
    "enqueue_ms": ("ms", None),
}


@pytest.mark.parametrize(("name", "shown"), sorted(UNITS.items()))
def test_unit_and_hint(name: str, shown: tuple) -> None:
    assert (unit_of(P[name]), hint_of(P[name])) == shown


# ---------------------------------------------------------------------------
# Refused profiles: the message the learner sees
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 64])
def test_a_profile_of_one_to_64_values_is_accepted(n: int) -> None:
    c = BucketConfig(n_layers=n, layer_grad_mb=np.full(n, 2.0))
    assert c.size_profile().tolist() == [2.0] * n


@pytest.mark.parametrize("n", [0, 65])
def test_a_profile_too_short_or_too_long_is_refused(n: int) -> None:
    c = BucketConfig()
    with pytest.raises(ValueError) as err:
        c.layer_grad_mb = np.ones(n)
    assert str(err.value) == "layer_grad_mb: a profile is a flat list of 1 to 64 values"


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_a_profile_value_must_be_positive_and_finite(bad: float) -> None:
    c = BucketConfig()
    with pytest.raises(ValueError) as err:
        c.layer_backward_ms = np.array([1.0, bad])
    assert str(err.value) == "layer_backward_ms: every value must be a positive number"
    assert c.layer_backward_ms is None


def test_a_profile_of_another_length_than_the_model_is_named_in_the_message() -> None:
    c = BucketConfig(layer_grad_mb=np.ones(5), layer_backward_ms=np.ones(13))
    with pytest.raises(ValueError) as err:
        c.size_profile()
    assert str(err.value) == "layer_grad_mb has 5 values for 12 layers"
    with pytest.raises(ValueError) as err:
        c.backward_profile()
    assert str(err.value) == "layer_backward_ms has 13 values for 12 layers"


def test_a_registration_of_another_length_is_named_in_the_message() -> None:
    c = BucketConfig(layer_registration=np.array([3, 1, 2]))
    with pytest.raises(ValueError) as err:
        c.tensors()
    assert str(err.value) == "layer_registration has 3 values for 12 layers"


# ---------------------------------------------------------------------------
# Assignments with and without tensors given
# ---------------------------------------------------------------------------

#: A layer of 4.004 MB is d = 1000: 4 (d^2 + d) = 4,004,000 bytes, a 4.0 MB weight
#: and a 0.004 MB bias. Registration order (layer 1 first, weight then bias):
#: w1 b1 w2 b2 w3 b3. Readiness order: b3 w3 b2 w2 b1 w1.
LAYER_MB = 4.004


def test_count_assignments_computes_the_tensors_when_none_are_given() -> None:
    c = BucketConfig(n_layers=3, grad_mb=LAYER_MB)
    # Rebuilt (iteration 1): layers 3, 2, 1 in readiness order. k = 1: layer 3 -> 0,
    # 2 -> 1, 1 -> 2; k = 2: layers 3, 2 -> 0, layer 1 -> 1. Tensors in registration order.
    assert c.count_assignments([1, 2]).tolist() == [[2, 2, 1, 1, 0, 0], [1, 1, 0, 0, 0, 0]]


def test_count_assignments_uses_the_tensors_given() -> None:
    c = BucketConfig(n_layers=3, grad_mb=LAYER_MB)
    two = BucketConfig(n_layers=2, grad_mb=LAYER_MB).tensors()  # w1 b1 w2 b2
    # k = 1 over the given two layers: layer 2 -> bucket 0, layer 1 -> bucket 1.
    assert c.count_assignments(1, two).tolist() == [[1, 1, 0, 0]]


def test_cap_assignments_computes_the_tensors_when_none_are_given() -> None:
    c = BucketConfig(n_layers=3, grad_mb=LAYER_MB)
    # Cut in readiness order b3 w3 b2 w2 b1 w1; a bucket closes once it reaches the cap.
    # 4 MiB = 4.194304 MB: b3 w3 b2 (4.008) < cap, + w2 = 8.008 closes bucket 0; b1 w1
    # (4.004) stay in bucket 1. 1 MiB = 1.048576 MB: b3 + w3 = 4.004 closes bucket 0,
    # b2 + w2 bucket 1, b1 + w1 bucket 2. Rows in registration order w1 b1 w2 b2 w3 b3.
    rows = c.cap_assignments([4.0, 1.0])
    assert rows.tolist() == [[1, 1, 0, 0, 0, 0], [2, 2, 1, 1, 0, 0]]


def test_cap_assignments_uses_the_tensors_given() -> None:
    c = BucketConfig(n_layers=3, grad_mb=LAYER_MB)
    two = BucketConfig(n_layers=2, grad_mb=LAYER_MB).tensors()
    # 1 MiB over b2 w2 b1 w1: b2 + w2 closes bucket 0, b1 + w1 is bucket 1.
    assert c.cap_assignments(1.0, two).tolist() == [[1, 1, 0, 0]]
