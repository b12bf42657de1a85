"""Launching buckets and serving them on the link: the vectorised engine.

A bucket is **ready** when its last tensor is. Every rank launches its
collectives in **bucket-index order** (collectives pair up by order, not by
name), so bucket b is launched once it is ready *and* bucket b-1 has been
launched; the host then spends ``enqueue`` ms issuing it:
``launch_b = max(ready_b, launch_(b-1)) + enqueue``. With no enqueue time
that is the prefix maximum ``launch_b = max(ready_0 .. ready_b)``. The link
serves one ring all-reduce at a time, in the same order:
``start_b = max(launch_b, end_(b-1))``, ``end_b = start_b + T_b``.

A launched bucket that waits for the link is a **link wait**
[launch_b, start_b]; a ready bucket that waits because an earlier bucket is
not ready yet is an **order wait** [ready_b, max(ready_0 .. ready_(b-1))], a
different thing.

Worked example: two buckets, bucket 0 ready at 10 ms, bucket 1 at 2 ms, both
taking 3 ms, no enqueue time. Bucket 1 is ready first but is launched at 10,
after bucket 0 (an 8 ms order wait); bucket 0 runs 10-13, bucket 1 13-16 (a
3 ms link wait).

``evaluate`` schedules many bucket assignments at once (one row each), so a
sweep over bucket sizes is a handful of numpy calls.
"""

from __future__ import annotations

import numpy as np

from .cost import Algorithm, allreduce_parts
from .tensors import GradientTensors


def launch_times(ready: np.typing.ArrayLike, enqueue_ms: float = 0.0) -> np.ndarray:
    """Launch of each bucket along the last axis: ``max(ready_b, launch_(b-1)) + enqueue``.

    Without a loop: ``launch_b - (b+1) h = max_(j<=b) (ready_j - j h)``.
    """
    ready = np.asarray(ready, float)
    steps = np.arange(ready.shape[-1]) * enqueue_ms
    return np.maximum.accumulate(ready - steps, axis=-1) + steps + enqueue_ms


def link_schedule(
    ready: np.typing.ArrayLike, transfer_ms: np.typing.ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Start and end of each transfer on a link that serves buckets in index order.

    ``ready`` is when each bucket may start (its launch). Solves
    ``start_b = max(ready_b, end_(b-1))`` along the last axis without a loop:
    with ``P_b`` the transfer time queued before b,
    ``start_b = P_b + max_(j<=b) (ready_j - P_j)``, a running maximum.
    """
    ready = np.asarray(ready, float)
    transfer = np.asarray(transfer_ms, float)
    before = np.cumsum(transfer, axis=-1) - transfer
    start = before + np.maximum.accumulate(ready - before, axis=-1)
    # Rounding in the sum may leave start a hair below ready; never start early.
    start = np.maximum(start, ready)
    return start, start + transfer


def evaluate(
    tensors: GradientTensors,
    assignment: np.ndarray,
    *,
    ranks: int,
    bandwidth: float,
    latency_ms: float,
    enqueue_ms: float = 0.0,
    algorithm: str = Algorithm.RING,
) -> dict[str, np.ndarray]:
    """Schedule every row of a 2-D ``assignment`` (settings x tensors) at once.

    Bucket axes are padded to one column per tensor. Buckets are numbered
    0..n-1 in each row, so padding sits after the last real bucket, where an
    empty bucket (no bytes, no time) moves nothing. ``algorithm`` is each
    all-reduce's algorithm (``cost``): with ``"auto"`` each bucket takes the
    cheaper one, so overhead and traffic are summed bucket by bucket.
    """
    m, t = assignment.shape
    backward_end = float(tensors.layer_ready.max())
    rows = np.broadcast_to(np.arange(m)[:, None], (m, t))
    size = np.zeros((m, t))
    count = np.zeros((m, t), dtype=int)
    ready = np.zeros((m, t))
    np.add.at(size, (rows, assignment), np.broadcast_to(tensors.size_mb, (m, t)))
    np.add.at(count, (rows, assignment), 1)
    np.maximum.at(ready, (rows, assignment), np.broadcast_to(tensors.ready, (m, t)))
    used = count > 0
    part_overhead, part_traffic, tree = allreduce_parts(
        size, ranks, bandwidth, latency_ms, algorithm
    )
    part_overhead = np.where(used, part_overhead, 0.0)
    part_traffic = np.where(used, part_traffic, 0.0)
    transfer = part_overhead + part_traffic
    launch = launch_times(ready, enqueue_ms)
    start, end = link_schedule(launch, transfer)

    n_buckets = used.sum(axis=1)
    last = (n_buckets - 1)[:, None]

    def at_last(a: np.ndarray) -> np.ndarray:
        return np.take_along_axis(a, last, axis=1)[:, 0]

    comm_end = at_last(end)
    total_transfer = transfer.sum(axis=1)
    hidden = np.clip(np.minimum(end, backward_end) - start, 0.0, None).sum(axis=1)
    return {
        "backward_end": backward_end,
        "size": size,
        "ready": ready,
        "launch": launch,
        "transfer": transfer,
        "start": start,
        "end": end,
        "n_buckets": n_buckets,
        "comm_end": comm_end,
        "exposed_tail": np.maximum(0.0, comm_end - backward_end),
        "last_transfer": at_last(transfer),
        "last_wait": at_last(start - launch),
        "total_transfer": total_transfer,
        "hidden": hidden,
        "overlap_fraction": hidden / total_transfer,
        "overhead": part_overhead.sum(axis=1),
        "traffic": part_traffic.sum(axis=1),
        "tree": tree & used,
    }
