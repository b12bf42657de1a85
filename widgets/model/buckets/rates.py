"""Average rates of a configuration, for the fluid queue's picture of the same step."""

from __future__ import annotations

from .config import BucketConfig
from .link import evaluate


def average_rates(config: BucketConfig) -> tuple[float, float]:
    """Average gradient arrival and link service, both in MB per ms.

    Arrival is total gradient MB over backward time E. Service is how many MB of
    gradient the link reduces per ms of bandwidth time: ``bandwidth * p / (2(p-1))``
    for a ring, ``bandwidth / 2`` for a tree (``cost``), and with ``auto`` the
    total MB over the bandwidth time of the buckets as each is sent. Latency is
    left out, as a fluid picture has no transfers to charge it to.
    """
    tensors = config.tensors()
    backward_end = float(tensors.layer_ready.max())
    total = float(tensors.size_mb.sum())
    arrival = total / backward_end
    p = config.ranks
    if config.algorithm == "ring":
        return arrival, float(config.bandwidth * p / (2.0 * (p - 1)))
    if config.algorithm == "tree":
        return arrival, float(config.bandwidth / 2.0)
    r = evaluate(tensors, config.assignments(tensors), **config.link_settings())
    return arrival, total / float(r["traffic"][0])
