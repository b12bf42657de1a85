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
        doc=latency_doc(),
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


def algorithm(default: str = "ring") -> param.Selector:
    """Which all-reduce algorithm each bucket uses (``buckets.cost``)."""
    from .buckets.cost import ALGORITHMS

    return param.Selector(
        default=default,
        objects=list(ALGORITHMS),
        label="All-reduce algorithm",
        doc="ring: 2(p-1) steps of latency, 2(p-1)/p of the bucket over each link "
        "(Thakur, Rabenseifner and Gropp 2005). tree: NCCL's double binary tree, "
        "2 floor(log2 p) steps of latency, twice the bucket over each link (NCCL's "
        "tuning model, src/graph/tuning.cc). auto: the cheaper of the two for each "
        "bucket, as NCCL's tuner roughly chooses.",
        metadata=setting("", hint="ring, tree, or auto (the cheaper per bucket)"),
    )


def latency_doc() -> str:
    """What the latency setting is, whatever the algorithm."""
    return (
        "Fixed cost of one step of an all-reduce, in ms: a ring pays 2(p-1) of them, a "
        "tree 2 floor(log2 p). NCCL's own model uses a few microseconds per step "
        "(src/graph/tuning.cc, hwLat)."
    )


def accumulation_steps(default: int = 1) -> param.Integer:
    """Micro-batches per optimizer step, gradients reduced only on the last."""
    return param.Integer(
        default=default,
        bounds=(1, 64),
        label="Accumulation steps",
        doc="Micro-batches per optimizer step (gradient accumulation). The first k-1 run "
        "forward and backward inside DDP's no_sync(), so no bucket is reduced; the last "
        "runs with the buckets and the optimizer follows it (Hugging Face, The Ultra-Scale "
        "Playbook; DistributedDataParallel.no_sync in torch/nn/parallel/distributed.py).",
        metadata=setting("", hint="1 to 64 micro-batches; 1 reduces every micro-batch"),
    )
