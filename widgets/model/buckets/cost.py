"""What one ring all-reduce costs (alpha-beta model).

Sizes in MB, bandwidth in GB/s, times in ms: MB / (GB/s) = ms, so no conversion
factor appears. A ring all-reduce over p ranks takes 2(p-1) steps, each paying a
fixed latency, and moves ``2(p-1)/p`` times the bucket over each rank's link.
"""

from __future__ import annotations

import numpy as np


def ring_overhead_ms(ranks: np.typing.ArrayLike, latency: np.typing.ArrayLike) -> np.ndarray:
    """Per-transfer latency cost of a ring all-reduce: ``2(p-1) * latency``."""
    return 2.0 * (np.asarray(ranks, float) - 1.0) * np.asarray(latency, float)


def ring_traffic_ms(
    bytes_mb: np.typing.ArrayLike, ranks: np.typing.ArrayLike, bandwidth: np.typing.ArrayLike
) -> np.ndarray:
    """Bandwidth cost of a ring all-reduce: ``2(p-1)/p * S / bandwidth``."""
    p = np.asarray(ranks, float)
    return 2.0 * (p - 1.0) / p * np.asarray(bytes_mb, float) / np.asarray(bandwidth, float)


def ring_allreduce_ms(
    bytes_mb: np.typing.ArrayLike,
    ranks: np.typing.ArrayLike,
    bandwidth: np.typing.ArrayLike,
    latency: np.typing.ArrayLike,
) -> np.ndarray:
    """Ring all-reduce time (alpha-beta): ``2(p-1)*latency + 2(p-1)/p * S / bandwidth``."""
    return ring_overhead_ms(ranks, latency) + ring_traffic_ms(bytes_mb, ranks, bandwidth)
