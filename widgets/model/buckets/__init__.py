"""The bucket schedule: layers -> buckets -> link -> intervals.

One module per concept: ``cost`` (ring all-reduce), ``bucketing`` (which bucket
each layer joins), ``schedule`` (readiness, the link and the ``Schedule``
record), ``regimes`` (what sets the step), ``sweep`` (every bucket size at
once), ``rates`` (the fluid picture's averages), ``presets`` and ``config``
(``BucketConfig``, the settings). This package re-exports the public API.

Units: sizes in MB, bandwidth in GB/s, times in ms. MB / (GB/s) = ms, so no
conversion factor appears anywhere.
"""

from .bucketing import assign_by_cap, assign_by_count
from .config import DDP_DEFAULT_CAP_MB, MAX_LAYERS, BucketConfig, LayerProfile
from .cost import ring_allreduce_ms, ring_overhead_ms, ring_traffic_ms
from .presets import PRESET_DESCRIPTIONS, PRESETS
from .rates import average_rates
from .regimes import LATENCY_SHARE, REGIMES, TOLERANCE_MS, Regime, RegimeKind, Suggestion
from .schedule import Schedule, layer_ready_times, link_schedule, schedule_arrays
from .sweep import SweepResult, default_caps, sweep_byte_caps, sweep_layers_per_bucket

__all__ = [
    "DDP_DEFAULT_CAP_MB",
    "LATENCY_SHARE",
    "MAX_LAYERS",
    "PRESETS",
    "PRESET_DESCRIPTIONS",
    "REGIMES",
    "TOLERANCE_MS",
    "BucketConfig",
    "LayerProfile",
    "Regime",
    "RegimeKind",
    "Schedule",
    "Suggestion",
    "SweepResult",
    "assign_by_cap",
    "assign_by_count",
    "average_rates",
    "default_caps",
    "layer_ready_times",
    "link_schedule",
    "ring_allreduce_ms",
    "ring_overhead_ms",
    "ring_traffic_ms",
    "schedule_arrays",
    "sweep_byte_caps",
    "sweep_layers_per_bucket",
]
