"""What one all-reduce costs: ring, tree, or the cheaper of the two (alpha-beta model).

Sizes in MB, bandwidth in GB/s, times in ms: MB / (GB/s) = ms, so no conversion
factor appears. ``n`` is the bucket's size, ``p`` the number of ranks, ``α`` the
fixed latency of one step (``latency_ms``) and ``B`` each rank's bus bandwidth
(``bandwidth``, so ``β = 1 / B``).

**Ring** (Thakur, Rabenseifner and Gropp, "Optimization of Collective
Communication Operations in MPICH", IJHPCA 19(1), 2005, §4: an all-reduce as a
reduce-scatter followed by an all-gather, each p - 1 steps around a ring moving
n/p per step)::

    T_ring = 2(p - 1) α  +  2 (p - 1)/p · n / B

The latency grows linearly with p; the bandwidth term levels off at 2 n / B.
NCCL's tuning model (``src/graph/tuning.cc``, ``ncclTopoTuneModel``) has the
same shape: ``nsteps = 2*(nRanks-1)`` steps of latency ``hwLat[..][RING][..]``
each, and a bus bandwidth turned into an algorithm bandwidth by
``ratio = nRanks / nsteps``.

**Tree** (NCCL's double binary tree; ``ncclTopoTuneModel`` for
``NCCL_ALGO_TREE`` and ``ncclFuncAllReduce``)::

    T_tree = 2 ⌊log2 p⌋ α  +  2 n / B

NCCL gives the tree a latency of ``2 * ((nRanks/nNodes-1) * intraLat +
log2i(nNodes) * interLat)``: a reduce up the tree and a broadcast down, each
``log2i(nNodes)`` hops between nodes (``log2i`` is the floor of log2). Here
every rank is a tree node (one rank per node, so the intra-node term is zero)
and one α serves every hop. Its bandwidth is the bus bandwidth times
``ratio = .5``: the data goes up and comes down, 2 n / B whatever p. What is
left out: NCCL's constant ``baseLat`` per collective (6.6-8.4 µs), its 0.92
and 0.85 tree bandwidth factors and per-channel caps, the LL and LL128
protocols, and pipelining of chunks through the tree.

**Auto** picks, per bucket, whichever of the two is cheaper (ring on a tie),
as NCCL's tuner roughly does: it computes a time per algorithm and protocol
from such a model for each collective's size and takes the smallest
(``ncclTopoGetAlgoTime`` / ``topoGetAlgoInfo`` in ``src/enqueue.cc``). So small
buckets on many ranks go by tree (the latency is log p, not p) and large
buckets by ring (half the bytes).

Worked examples: p = 2, n = 10 MB, B = 10 GB/s, α = 0.01 ms: ring 0.02 + 1.00
= 1.02 ms, tree 2 × 1 × 0.01 + 2.00 = 2.02 ms, auto takes ring. p = 512,
n = 25 MB, B = 50 GB/s, α = 0.014 ms: ring 2 × 511 × 0.014 + 2 × 511/512 ×
0.5 = 14.308 + 0.998 = 15.306 ms, tree 2 × 9 × 0.014 + 1.0 = 1.252 ms, auto
takes tree.
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np


class Algorithm(StrEnum):
    """Which all-reduce algorithm each bucket uses."""

    RING = "ring"
    TREE = "tree"
    AUTO = "auto"


ALGORITHMS = tuple(a.value for a in Algorithm)


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


def tree_depth(ranks: np.typing.ArrayLike) -> np.ndarray:
    """Hops from a leaf to the root of NCCL's binary trees: ``floor(log2 p)`` (``log2i``)."""
    return np.floor(np.log2(np.asarray(ranks, float)))


def tree_overhead_ms(ranks: np.typing.ArrayLike, latency: np.typing.ArrayLike) -> np.ndarray:
    """Per-transfer latency cost of a tree all-reduce: ``2 floor(log2 p) * latency``."""
    return 2.0 * tree_depth(ranks) * np.asarray(latency, float)


def tree_traffic_ms(bytes_mb: np.typing.ArrayLike, bandwidth: np.typing.ArrayLike) -> np.ndarray:
    """Bandwidth cost of a tree all-reduce: ``2 S / bandwidth`` (up, then down)."""
    return 2.0 * np.asarray(bytes_mb, float) / np.asarray(bandwidth, float)


def tree_allreduce_ms(
    bytes_mb: np.typing.ArrayLike,
    ranks: np.typing.ArrayLike,
    bandwidth: np.typing.ArrayLike,
    latency: np.typing.ArrayLike,
) -> np.ndarray:
    """Tree all-reduce time: ``2 floor(log2 p) * latency + 2 S / bandwidth``."""
    return tree_overhead_ms(ranks, latency) + tree_traffic_ms(bytes_mb, bandwidth)


def allreduce_parts(
    bytes_mb: np.typing.ArrayLike,
    ranks: np.typing.ArrayLike,
    bandwidth: np.typing.ArrayLike,
    latency: np.typing.ArrayLike,
    algorithm: str = Algorithm.RING,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(latency part, bandwidth part, uses tree) of each all-reduce of ``bytes_mb``.

    ``algorithm`` is ``"ring"``, ``"tree"`` or ``"auto"`` (per element, the cheaper
    of the two; ring on a tie).
    """
    algorithm = Algorithm(algorithm)
    size = np.asarray(bytes_mb, float)
    ring_o = np.broadcast_to(ring_overhead_ms(ranks, latency), size.shape)
    ring_t = ring_traffic_ms(size, ranks, bandwidth) * np.ones_like(size)
    tree_o = np.broadcast_to(tree_overhead_ms(ranks, latency), size.shape)
    tree_t = tree_traffic_ms(size, bandwidth) * np.ones_like(size)
    if algorithm == Algorithm.RING:
        tree = np.zeros(size.shape, bool)
    elif algorithm == Algorithm.TREE:
        tree = np.ones(size.shape, bool)
    else:
        tree = tree_o + tree_t < ring_o + ring_t
    return np.where(tree, tree_o, ring_o), np.where(tree, tree_t, ring_t), tree


def allreduce_ms(
    bytes_mb: np.typing.ArrayLike,
    ranks: np.typing.ArrayLike,
    bandwidth: np.typing.ArrayLike,
    latency: np.typing.ArrayLike,
    algorithm: str = Algorithm.RING,
) -> np.ndarray:
    """All-reduce time of each bucket under ``algorithm`` (see ``allreduce_parts``)."""
    overhead, traffic, _ = allreduce_parts(bytes_mb, ranks, bandwidth, latency, algorithm)
    return overhead + traffic
