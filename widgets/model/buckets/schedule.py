"""Evaluating a bucket assignment: readiness, the link, and the ``Schedule`` record.

Backward runs from the last layer to the first; a layer's gradient is ready when
its backward finishes. A bucket is ready when its last layer is. The link serves
one ring all-reduce at a time in bucket-index order, so
``start_b = max(ready_b, end_(b-1))``. Times are measured from the start of
backward; forward runs before it and the optimizer after ``max(E, C)``.

``evaluate`` schedules many assignments at once (one row each), so a sweep is
one numpy call per step; ``schedule_arrays`` builds the record of one of them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bucketing import check_assignment
from .cost import ring_allreduce_ms, ring_overhead_ms, ring_traffic_ms
from .intervals import BucketIntervals, IntervalBuilder, IntervalKind
from .regimes import KINDS, SUGGESTIONS, Regime, regime_codes, suggestion_codes


def layer_ready_times(backward_ms: np.typing.ArrayLike, straggler_pct: float = 0.0) -> np.ndarray:
    """When each layer's gradient is ready everywhere (index 0 is layer 1).

    Backward runs from the last layer to the first, so layer i is ready after the
    backward of layers n..i. The slowest rank sets global readiness, so a
    straggler scales every ready time by ``1 + straggler_pct / 100``.
    """
    slow = np.asarray(backward_ms, float) * (1.0 + straggler_pct / 100.0)
    return np.cumsum(slow[::-1])[::-1]


def link_schedule(
    ready: np.typing.ArrayLike, transfer_ms: np.typing.ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Start and end of each transfer on a link that serves buckets in index order.

    Solves ``start_b = max(ready_b, end_(b-1))`` along the last axis without a
    loop: with ``P_b`` the transfer time queued before b,
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
    backward_ms: np.ndarray,
    grad_mb: np.ndarray,
    assignment: np.ndarray,
    ranks: int,
    bandwidth: float,
    latency_ms: float,
    straggler_pct: float,
) -> dict[str, np.ndarray]:
    """Schedule every row of a 2-D ``assignment`` (settings x layers) at once.

    Bucket axes are padded to one column per layer: an empty bucket is ready at 0
    and takes no time, so it never moves the link.
    """
    m, n = assignment.shape
    ready_layer = layer_ready_times(backward_ms, straggler_pct)
    backward_end = ready_layer[0]  # layer 1 finishes last

    rows = np.broadcast_to(np.arange(m)[:, None], (m, n))
    size = np.zeros((m, n))
    count = np.zeros((m, n), dtype=int)
    ready = np.zeros((m, n))
    np.add.at(size, (rows, assignment), np.broadcast_to(grad_mb, (m, n)))
    np.add.at(count, (rows, assignment), 1)
    np.maximum.at(ready, (rows, assignment), np.broadcast_to(ready_layer, (m, n)))
    used = count > 0
    transfer = np.where(used, ring_allreduce_ms(size, ranks, bandwidth, latency_ms), 0.0)

    start, end = link_schedule(ready, transfer)
    n_buckets = used.sum(axis=1)
    last = (n_buckets - 1)[:, None]
    comm_end = np.take_along_axis(end, last, axis=1)[:, 0]
    last_transfer = np.take_along_axis(transfer, last, axis=1)[:, 0]
    last_wait = np.take_along_axis(start - ready, last, axis=1)[:, 0]

    total_transfer = transfer.sum(axis=1)
    hidden = np.clip(np.minimum(end, backward_end) - start, 0.0, None).sum(axis=1)
    overhead = n_buckets * ring_overhead_ms(ranks, latency_ms)
    traffic = ring_traffic_ms(grad_mb.sum(), ranks, bandwidth)
    return {
        "ready_layer": ready_layer,
        "backward_end": backward_end,
        "size": size,
        "ready": ready,
        "transfer": transfer,
        "start": start,
        "end": end,
        "n_buckets": n_buckets,
        "comm_end": comm_end,
        "exposed_tail": np.maximum(0.0, comm_end - backward_end),
        "last_transfer": last_transfer,
        "last_wait": last_wait,
        "total_transfer": total_transfer,
        "hidden": hidden,
        "overlap_fraction": hidden / total_transfer,
        "overhead": overhead,
        "traffic": np.full(m, traffic),
    }


def regime_of_row(
    r: dict[str, np.ndarray],
    row: int,
    step: float,
    setting: float | None = None,
    best: tuple[float, float] | None = None,
) -> Regime:
    """The ``Regime`` of one row of ``evaluate``'s result.

    ``best`` is (setting, step) of the best setting of the bucketing knob and
    ``setting`` the current one; without them the suggestion is None.
    """
    suggestion = None
    if best is not None and setting is not None:
        code = suggestion_codes(
            np.array([setting]), np.array([step]), np.array([best[0]]), np.array([best[1]])
        )
        suggestion = SUGGESTIONS[int(code[0])]
    kind = regime_codes(
        r["traffic"][row : row + 1],
        np.array([r["backward_end"]]),
        r["overhead"][row : row + 1],
        r["hidden"][row : row + 1],
        r["last_wait"][row : row + 1],
        None if suggestion is None else np.array([SUGGESTIONS.index(suggestion)]),
    )
    traffic, overhead = float(r["traffic"][row]), float(r["overhead"][row])
    link_work = float(r["total_transfer"][row])
    return Regime(
        kind=KINDS[int(kind[0])],
        suggestion=suggestion,
        backward_end_ms=float(r["backward_end"]),
        traffic_ms=traffic,
        overhead_ms=overhead,
        link_work_ms=link_work,
        overhead_share=overhead / link_work,
        hidden_ms=float(r["hidden"][row]),
        overlap_share=float(r["overlap_fraction"][row]),
        tail_ms=float(r["exposed_tail"][row]),
        last_transfer_ms=float(r["last_transfer"][row]),
        last_link_wait_ms=float(r["last_wait"][row]),
        step_ms=float(step),
        best_step_ms=None if best is None else float(best[1]),
        best_setting=None if best is None else float(best[0]),
    )


@dataclass(frozen=True, eq=False)
class Schedule:
    """One step's bucket schedule. Per-layer arrays have index 0 = layer 1.

    ``regime`` is a ``Regime``: its kind, the suggestion and the numbers that
    decided them, by the definitions in ``regimes``.
    """

    layer_backward_ms: np.ndarray
    layer_grad_mb: np.ndarray
    layer_backward_start: np.ndarray
    layer_ready: np.ndarray
    layer_bucket: np.ndarray
    bucket_layers: tuple[np.ndarray, ...]
    bucket_size_mb: np.ndarray
    bucket_ready: np.ndarray
    bucket_start: np.ndarray
    bucket_end: np.ndarray
    bucket_transfer_ms: np.ndarray
    bucket_link_wait: np.ndarray
    forward_ms: float
    optimizer_ms: float
    backward_end: float
    comm_end: float
    exposed_tail: float
    optimizer_start: float
    step_time: float
    overlap_fraction: float
    overhead_ms: float
    traffic_ms: float
    total_transfer_ms: float
    regime: Regime

    @property
    def n_layers(self) -> int:
        """Number of layers."""
        return len(self.layer_ready)

    @property
    def n_buckets(self) -> int:
        """Number of buckets (transfers)."""
        return len(self.bucket_ready)

    def to_intervals(self) -> BucketIntervals:
        """The schedule as typed intervals, times from the start of backward.

        In order: one ``BACKWARD`` per layer (in backward order, lane ``COMPUTE``),
        one ``TRANSFER`` per bucket (lane ``LINK``), a ``LINK_WAIT`` [ready_b,
        start_b] for each bucket queued behind the previous (lane ``LINK_WAIT``),
        the ``EXPOSED`` tail [E, C] on the link when it is positive, one
        ``FILLING`` per bucket from its first layer's backward start to its ready
        time (lane ``FILL``) and the ``OPTIMIZER`` step.
        """
        order = np.arange(self.n_layers)[::-1]
        tol = 1e-9 * max(1.0, self.comm_end)
        waits = np.flatnonzero(self.bucket_link_wait > tol)
        buckets = np.arange(self.n_buckets)
        out = IntervalBuilder()
        out.add(
            IntervalKind.BACKWARD,
            self.layer_backward_start[order],
            self.layer_ready[order],
            [f"Layer {i + 1}" for i in order],
            bucket=self.layer_bucket[order],
            layer=order + 1,
        )
        out.add(
            IntervalKind.TRANSFER,
            self.bucket_start,
            self.bucket_end,
            [f"Bucket {b}" for b in buckets],
            bucket=buckets,
        )
        out.add(
            IntervalKind.LINK_WAIT,
            self.bucket_ready[waits],
            self.bucket_start[waits],
            [f"Bucket {b} waits" for b in waits],
            bucket=waits,
        )
        if self.exposed_tail > 0:
            out.add(IntervalKind.EXPOSED, self.backward_end, self.comm_end, ["Exposed tail"])
        fill_start = [self.layer_backward_start[layers - 1].min() for layers in self.bucket_layers]
        out.add(
            IntervalKind.FILLING,
            fill_start,
            self.bucket_ready,
            [f"Bucket {b} filling" for b in buckets],
            bucket=buckets,
        )
        out.add(
            IntervalKind.OPTIMIZER,
            self.optimizer_start,
            self.optimizer_start + self.optimizer_ms,
            ["Optimizer"],
        )
        return out.build()


def schedule_arrays(
    backward_ms: np.typing.ArrayLike,
    grad_mb: np.typing.ArrayLike,
    layer_bucket: np.typing.ArrayLike,
    *,
    ranks: int,
    bandwidth: float,
    latency_ms: float,
    straggler_pct: float = 0.0,
    forward_ms: float = 0.0,
    optimizer_ms: float = 0.0,
    setting: float | None = None,
    best: tuple[float, float] | None = None,
) -> Schedule:
    """The schedule from per-layer arrays (index 0 = layer 1) and a bucket per layer.

    ``setting`` (the bucketing knob's value) and ``best`` ((setting, step) of the
    knob's best value) let the regime carry a suggestion; see ``regimes``.
    """
    backward = np.asarray(backward_ms, float)
    grad = np.asarray(grad_mb, float)
    assignment = np.asarray(layer_bucket, dtype=int)
    if backward.shape != grad.shape or backward.ndim != 1 or backward.size == 0:
        raise ValueError("give one backward time and one gradient size per layer")
    if np.any(backward <= 0) or np.any(grad <= 0):
        raise ValueError("backward times and gradient sizes must be positive")
    check_assignment(assignment, backward.size)

    r = evaluate(backward, grad, assignment[None, :], ranks, bandwidth, latency_ms, straggler_pct)
    nb = int(r["n_buckets"][0])
    ready_layer = r["ready_layer"]
    backward_end = float(r["backward_end"])
    comm_end = float(r["comm_end"][0])
    optimizer_start = max(backward_end, comm_end)
    start = r["start"][0, :nb]
    bucket_ready = r["ready"][0, :nb]
    layers = np.arange(1, backward.size + 1)
    step_time = forward_ms + optimizer_start + optimizer_ms
    return Schedule(
        layer_backward_ms=backward * (1.0 + straggler_pct / 100.0),
        layer_grad_mb=grad,
        layer_backward_start=np.append(ready_layer[1:], 0.0),
        layer_ready=ready_layer,
        layer_bucket=assignment.copy(),
        bucket_layers=tuple(layers[assignment == b][::-1] for b in range(nb)),
        bucket_size_mb=r["size"][0, :nb],
        bucket_ready=bucket_ready,
        bucket_start=start,
        bucket_end=r["end"][0, :nb],
        bucket_transfer_ms=r["transfer"][0, :nb],
        bucket_link_wait=start - bucket_ready,
        forward_ms=float(forward_ms),
        optimizer_ms=float(optimizer_ms),
        backward_end=backward_end,
        comm_end=comm_end,
        exposed_tail=float(r["exposed_tail"][0]),
        optimizer_start=optimizer_start,
        step_time=step_time,
        overlap_fraction=float(r["overlap_fraction"][0]),
        overhead_ms=float(r["overhead"][0]),
        traffic_ms=float(r["traffic"][0]),
        total_transfer_ms=float(r["total_transfer"][0]),
        regime=regime_of_row(r, 0, step_time, setting, best),
    )
