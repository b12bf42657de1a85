"""Settings every model of one training step shares, declared once.

The bucket timeline and the many-ranks view both have a backward time per
layer, a gradient size, a link and the rest of the step. Each declaration
lives here, so a label, a bound or a unit is the same on every page; a model
may give its own default or a sharper doc.
"""

from __future__ import annotations

import param

from .settings import setting


def layers_per_bucket(max_layers: int, default: int = 3) -> param.Integer:
    """Whole layers per bucket (the teaching mode of bucketing)."""
    return param.Integer(
        default=default,
        bounds=(1, max_layers),
        label="Layers per bucket",
        doc="Whole layers per bucket, taken from the last layer backwards; "
        "the bucket holding layer 1 may be smaller.",
        metadata=setting("layers"),
    )


def backward_ms(default: float = 2.0, doc: str | None = None) -> param.Number:
    """Backward time of one layer."""
    return param.Number(
        default=default,
        bounds=(0.01, 1000.0),
        label="Backward time per layer",
        doc=doc or "Time one layer's backward takes on a normal rank, in ms.",
        metadata=setting("ms"),
    )


def grad_mb(default: float = 25.0) -> param.Number:
    """Gradient size of one layer."""
    return param.Number(
        default=default,
        bounds=(0.001, 100000.0),
        label="Gradient size per layer",
        doc="Size of one layer's gradients, in MB.",
        metadata=setting("MB"),
    )


def bandwidth(default: float = 25.0) -> param.Number:
    """Each rank's link bandwidth."""
    return param.Number(
        default=default,
        bounds=(0.01, 10000.0),
        label="Link bandwidth",
        doc="Bandwidth of each rank's link, in GB/s (1 GB = 1000 MB).",
        metadata=setting("GB/s"),
    )


def latency_ms(default: float = 0.05) -> param.Number:
    """The fixed cost of one ring step."""
    return param.Number(
        default=default,
        bounds=(0.0, 100.0),
        label="Latency per ring step",
        doc="Fixed cost of each of the 2(p-1) steps of a ring all-reduce, in ms.",
        metadata=setting("ms"),
    )


def forward_ms(default: float = 12.0) -> param.Number:
    """Forward time before backward."""
    return param.Number(
        default=default,
        bounds=(0.0, 100000.0),
        label="Forward time",
        doc="Forward pass time before backward starts, in ms.",
        metadata=setting("ms"),
    )


def optimizer_ms(default: float = 2.0, doc: str | None = None) -> param.Number:
    """The optimizer step after backward and communication."""
    return param.Number(
        default=default,
        bounds=(0.0, 100000.0),
        label="Optimizer time",
        doc=doc or "Optimizer step time, which starts once backward and communication end, in ms.",
        metadata=setting("ms"),
    )
