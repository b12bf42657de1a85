"""The bucket timeline's settings: ``BucketConfig`` and the preset they started from.

The registry registers ``TimelineSettings`` and the component uses it; the
presets are its named configurations (``widgets.model.named``), one per
regime, each checked by the tests to show it, then the machines of ``hardware``
(measured links, NCCL's latencies). A typed backward time or
gradient size applies to every layer, so it replaces a preset's per-layer
profile (``PROFILE_OF``).
"""

from __future__ import annotations

import numpy as np
import param

from ..model.buckets import BucketConfig
from ..model.named import NamedConfigurations
from ..model.settings import entry
from .hardware import HARDWARE_DESCRIPTIONS, HARDWARE_PRESETS

#: A uniform setting and the per-layer profile a typed value of it replaces.
PROFILE_OF = {"backward_ms": "layer_backward_ms", "grad_mb": "layer_grad_mb"}


def _frozen(values: list[float]) -> np.ndarray:
    a = np.array(values, float)
    a.flags.writeable = False
    return a


# What each preset sets apart from the defaults (every other setting is its default, so
# loading one never inherits a profile or a cap). The regime each shows is tested.
_OWN: dict[str, dict] = {
    # Each bucket's 5.95 ms transfer fits in the 6 ms of backward that follows it.
    "Overlap works": {},
    # 12 buckets each pay 2(p-1) x 0.2 = 2.8 ms of latency for 0.35 ms of traffic.
    "Latency-bound": dict(layers_per_bucket=1, latency_ms=0.2, grad_mb=5.0),
    # Backward 10% faster on the same link: each 5.95 ms transfer gets 5.4 ms.
    "Link saturated": dict(backward_ms=1.8),
    # Compute and link both twice as fast, but latency per step stays the same.
    "Fast compute: transfers queue": dict(
        backward_ms=1.0, bandwidth=50.0, forward_ms=6.0, optimizer_ms=1.0
    ),
    # 21 ms of traffic against 12 ms of backward.
    "Traffic exceeds compute": dict(backward_ms=1.0),
    # Layer 1 is an embedding: cheap backward, 200 MB of gradient, ready last.
    "Embedding layer": dict(
        bandwidth=50.0,
        layer_backward_ms=_frozen([1.0] + [2.0] * 11),
        layer_grad_mb=_frozen([200.0] + [25.0] * 11),
    ),
    # "Link saturated" with one rank 50% slower: the link keeps up, the step does not.
    "Straggler": dict(backward_ms=1.8, straggler_pct=50.0),
    # Layer 12 (the head) uses layer 1's 200 MB weight: one tensor, ready at the end.
    "Tied embeddings": dict(
        bandwidth=50.0,
        tied_embeddings=True,
        layer_backward_ms=_frozen([1.0] + [2.0] * 11),
        layer_grad_mb=_frozen([200.0] + [25.0] * 10 + [200.0]),
    ),
    # Layer 6's module is registered last in __init__; with find_unused_parameters=True
    # the buckets follow reverse registration: bucket 0 = layers 6, 12, 11, ready only
    # when layer 6 is (14 ms), and bucket 1 (ready at 10 ms) waits for it.
    "Reordered module": dict(
        find_unused_parameters=True,
        layer_registration=_frozen([1, 2, 3, 4, 5, 12, 6, 7, 8, 9, 10, 11]),
    ),
    # Machines people train on (``hardware``: each preset's sources).
    **HARDWARE_PRESETS,
}

PRESET_DESCRIPTIONS: dict[str, str] = {
    "Overlap works": "Transfers hide behind backward; only the last bucket's transfer is exposed.",
    "Latency-bound": "Tiny buckets on a high-latency link: per-transfer overhead dominates, "
    "so more buckets is slower.",
    "Link saturated": "Backward slightly outpaces the link: transfers queue behind each other "
    "and the backlog is exposed.",
    "Fast compute: transfers queue": "Faster compute and link, same latency: at most bucket "
    "sizes transfers queue behind each other, and at least 4.30 ms is exposed whatever the "
    "bucket size.",
    "Traffic exceeds compute": "The link needs longer than backward for all the traffic: "
    "no bucketing hides it.",
    "Embedding layer": "A large first layer is ready last, so its transfer is exposed "
    "whatever the bucketing.",
    "Straggler": "One rank's backward is 50% slower: every rank waits for it, the link "
    "catches up, and the step is longer.",
    "Tied embeddings": "The output head reuses the embedding's 200 MB weight: the head's "
    "backward runs first, but the shared gradient is ready only when the embedding's "
    "backward ends, so its transfer is exposed whatever the bucketing.",
    "Reordered module": "Layer 6 is registered last but used in the middle: with "
    "find_unused_parameters=True, bucket 0 holds it and is ready late, and the buckets "
    "after it, though ready, wait for it.",
    **HARDWARE_DESCRIPTIONS,
}


class TimelineSettings(BucketConfig):
    """The bucket timeline's settings and the preset they started from."""

    preset = param.Selector(
        default="Overlap works",
        objects=list(_OWN),
        label="Preset",
        doc="A configuration that shows one regime; choosing one loads it as a new experiment.",
        metadata=entry(hint="Choosing one loads it as a new experiment."),
    )


PRESETS = NamedConfigurations(
    TimelineSettings, "preset", _OWN, PRESET_DESCRIPTIONS, replaces=PROFILE_OF
)
