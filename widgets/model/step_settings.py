"""Settings every model of one training step shares, declared once.

The bucket timeline and the many-ranks view both have layers, a backward time
per layer, a gradient size, a ring of ranks, a straggler's slowdown, a link, a host enqueue cost and
the rest of the step. Each declaration lives here, so a bound or a unit is the
same on every page; a model may give its own default, a sharper doc, or (where
its page has long named the control so) its own label.
"""

from __future__ import annotations

import param

from .settings import setting


def n_layers(
    max_layers: int, min_layers: int = 1, doc: str | None = None, shown: bool = True
) -> param.Integer:
    """The number of layers; ``shown=False`` keeps it off the page and out of links."""
    return param.Integer(
        default=12,
        bounds=(min_layers, max_layers),
        label="Layers",
        doc=doc or "Number of layers in the model.",
        **({"metadata": setting("layers")} if shown else {"precedence": -1}),
    )


def ranks(label: str = "Ranks", doc: str | None = None) -> param.Integer:
    """Data-parallel ranks in the ring, which set each transfer's cost."""
    return param.Integer(
        default=8,
        bounds=(2, 4096),
        label=label,
        doc=doc or "Number of data-parallel ranks in the ring.",
        metadata=setting("ranks"),
    )


def enqueue_ms(
    default: float = 0.0, label: str = "Host enqueue time", doc: str | None = None
) -> param.Number:
    """The host's cost to launch one collective."""
    return param.Number(
        default=default,
        bounds=(0.0, 100.0),
        label=label,
        doc=doc
        or "Host time to issue one collective, in ms; buckets are issued one after another "
        "in bucket order.",
        metadata=setting("ms"),
    )


def slowdown_pct(
    default: float = 0.0, label: str = "Straggler slowdown", doc: str | None = None
) -> param.Number:
    """How much slower a straggler's backward is."""
    return param.Number(
        default=default,
        bounds=(0.0, 500.0),
        label=label,
        doc=doc
        or "How much slower one rank's backward is, in %. Every rank needs every "
        "gradient, so that rank decides when each layer is ready.",
        metadata=setting("%"),
    )


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
