"""The step settings both step models share: one declaration each, the same on every page."""

from __future__ import annotations

import pytest

from widgets.model import step_settings
from widgets.model.settings import hint_of, is_setting, unit_of

# What a learner sees beside each field and may type into it (label, unit, bounds),
# as the bucket timeline and the many-ranks view both show it.
EXPECTED = {
    "n_layers": ("Layers", "layers", (1, 64)),
    "ranks": ("Ranks", "ranks", (2, 4096)),
    "enqueue_ms": ("Host enqueue time", "ms", (0.0, 100.0)),
    "slowdown_pct": ("Straggler slowdown", "%", (0.0, 500.0)),
    "layers_per_bucket": ("Layers per bucket", "layers", (1, 12)),
    "backward_ms": ("Backward time per layer", "ms", (0.01, 1000.0)),
    "grad_mb": ("Gradient size per layer", "MB", (0.001, 100000.0)),
    "bandwidth": ("Link bandwidth", "GB/s", (0.01, 10000.0)),
    "latency_ms": ("Latency per ring step", "ms", (0.0, 100.0)),
    "forward_ms": ("Forward time", "ms", (0.0, 100000.0)),
    "optimizer_ms": ("Optimizer time", "ms", (0.0, 100000.0)),
}


def _declare(name: str):
    if name == "layers_per_bucket":
        return step_settings.layers_per_bucket(12)
    if name == "n_layers":
        return step_settings.n_layers(64)
    return getattr(step_settings, name)()


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_step_setting_is_declared_once_as_shown(name: str) -> None:
    label, unit, bounds = EXPECTED[name]
    p = _declare(name)
    assert (p.label, unit_of(p), p.bounds) == (label, unit, bounds)
    assert is_setting(p) and hint_of(p) is None  # the line under the field shows the bounds
    assert p.doc


def test_defaults_and_sharper_docs_are_the_models_own() -> None:
    assert step_settings.layers_per_bucket(8, default=2).default == 2
    assert step_settings.layers_per_bucket(8).bounds == (1, 8)
    assert step_settings.backward_ms(3.5, doc="Mine.").default == 3.5
    assert step_settings.backward_ms(doc="Mine.").doc == "Mine."
    assert step_settings.optimizer_ms(doc="Mine.").doc == "Mine."
    assert step_settings.grad_mb(7.0).default == 7.0
    assert step_settings.n_layers(24, 2).bounds == (2, 24)
    assert step_settings.ranks("Ring ranks").label == "Ring ranks"
    assert step_settings.enqueue_ms(0.05, "Host enqueue cost").default == 0.05
    assert step_settings.enqueue_ms(label="Host enqueue cost").label == "Host enqueue cost"
    assert step_settings.slowdown_pct(50.0, "Slowdown").default == 50.0


def test_a_hidden_layer_count_is_no_setting() -> None:
    p = step_settings.n_layers(64, shown=False)
    assert not is_setting(p) and p.precedence == -1 and p.label == "Layers"
