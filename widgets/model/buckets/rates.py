"""Average rates of a configuration, for the fluid queue's picture of the same step."""

from __future__ import annotations

from .config import BucketConfig
from .schedule import layer_ready_times


def average_rates(config: BucketConfig) -> tuple[float, float]:
    """Average gradient arrival and link service, both in MB per ms.

    Arrival is total gradient MB over backward time E. Service is how many MB of
    gradient the ring reduces per ms of bandwidth time, ``bandwidth * p / (2(p-1))``;
    latency is left out, as a fluid picture has no transfers to charge it to.
    """
    sizes = config.size_profile()
    backward_end = layer_ready_times(config.backward_profile(), config.straggler_pct)[0]
    p = config.ranks
    return float(sizes.sum() / backward_end), float(config.bandwidth * p / (2.0 * (p - 1)))
