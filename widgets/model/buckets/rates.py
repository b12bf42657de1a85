"""Average rates of a configuration, for the fluid queue's picture of the same step."""

from __future__ import annotations

from .config import BucketConfig


def average_rates(config: BucketConfig) -> tuple[float, float]:
    """Average gradient arrival and link service, both in MB per ms.

    Arrival is total gradient MB over backward time E. Service is how many MB of
    gradient the ring reduces per ms of bandwidth time, ``bandwidth * p / (2(p-1))``;
    latency is left out, as a fluid picture has no transfers to charge it to.
    """
    tensors = config.tensors()
    backward_end = float(tensors.layer_ready.max())
    p = config.ranks
    arrival = float(tensors.size_mb.sum() / backward_end)
    return arrival, float(config.bandwidth * p / (2.0 * (p - 1)))
