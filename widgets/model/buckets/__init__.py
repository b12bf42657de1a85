"""The bucket schedule: layers -> buckets -> link -> intervals.

One module per concept: ``cost`` (ring all-reduce), ``tensors`` (gradients as
weight and bias tensors, registration and readiness), ``bucketing`` (which
bucket each tensor joins, DDP's rules), ``link`` (launch in bucket order, the
link, the vectorised engine), ``schedule`` (the ``Schedule`` record),
``intervals`` (what a view draws), ``regimes`` (what sets the step),
``sweep`` (every bucket size at once), ``rates`` (the fluid picture's
averages), ``config`` (``BucketConfig``, the settings) and
``step`` (one step's schedule from the settings). This package re-exports
the public API.

Units: gradient sizes in MB, bandwidth in GB/s, times in ms (MB / (GB/s) =
ms). DDP's byte cap is in MiB, as in PyTorch (1 MiB = 1.048576 MB).
"""

from .bucketing import (
    DDP_DEFAULT_CAP_MIB,
    DDP_FIRST_BUCKET_MIB,
    assign_by_cap,
    assign_by_count,
    cut_by_size,
    ddp_assignment,
    layer_assignment,
)
from .config import MAX_LAYERS, BucketConfig, LayerProfile
from .cost import ring_allreduce_ms, ring_overhead_ms, ring_traffic_ms
from .intervals import BucketIntervals, IntervalKind, Lane, schedule_intervals
from .link import evaluate, launch_times, link_schedule
from .rates import average_rates
from .regimes import LATENCY_SHARE, REGIMES, TOLERANCE_MS, Regime, RegimeKind, Suggestion
from .schedule import Schedule, build_schedule, schedule_arrays
from .step import step_schedule
from .sweep import SweepResult, default_caps, sweep_byte_caps, sweep_layers_per_bucket
from .tensors import (
    MB_PER_MIB,
    GradientTensors,
    TensorKind,
    bias_mb,
    gradient_tensors,
    layer_ready_times,
)

__all__ = [
    "DDP_DEFAULT_CAP_MIB",
    "DDP_FIRST_BUCKET_MIB",
    "LATENCY_SHARE",
    "MAX_LAYERS",
    "MB_PER_MIB",
    "REGIMES",
    "TOLERANCE_MS",
    "BucketConfig",
    "BucketIntervals",
    "GradientTensors",
    "IntervalKind",
    "Lane",
    "LayerProfile",
    "Regime",
    "RegimeKind",
    "Schedule",
    "Suggestion",
    "SweepResult",
    "TensorKind",
    "assign_by_cap",
    "assign_by_count",
    "average_rates",
    "bias_mb",
    "build_schedule",
    "cut_by_size",
    "ddp_assignment",
    "default_caps",
    "evaluate",
    "gradient_tensors",
    "launch_times",
    "layer_assignment",
    "layer_ready_times",
    "link_schedule",
    "ring_allreduce_ms",
    "ring_overhead_ms",
    "ring_traffic_ms",
    "schedule_arrays",
    "schedule_intervals",
    "step_schedule",
    "sweep_byte_caps",
    "sweep_layers_per_bucket",
]
