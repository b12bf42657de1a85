"""The ``Schedule`` record: one step's buckets, launches, transfers and regime.

Times are measured from the start of backward; forward runs before it and the
optimizer after ``max(E, C)``. E (backward end) is when the last gradient is
ready, C (communication end) when the last transfer ends; the exposed tail is
``max(0, C - E)`` and the step ``forward + max(E, C) + optimizer``. The
engine is ``link.evaluate``; this module turns one of its rows into a record.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .link import evaluate
from .regimes import KINDS, SUGGESTIONS, Regime, regime_codes, suggestion_codes
from .tensors import GradientTensors, TensorKind, gradient_tensors

NO_BUCKET = -1


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
    sl = slice(row, row + 1)
    kind = regime_codes(
        r["traffic"][sl],
        np.array([r["backward_end"]]),
        r["overhead"][sl],
        r["hidden"][sl],
        r["last_wait"][sl],
        None if suggestion is None else np.array([SUGGESTIONS.index(suggestion)]),
    )
    traffic, overhead = float(r["traffic"][row]), float(r["overhead"][row])
    link_work = float(r["total_transfer"][row])
    nb = int(r["n_buckets"][row])
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
        last_launch_delay_ms=float(r["launch"][row, nb - 1] - r["backward_end"]),
        step_ms=float(step),
        best_step_ms=None if best is None else float(best[1]),
        best_setting=None if best is None else float(best[0]),
    )


@dataclass(frozen=True, eq=False)
class Schedule:
    """One step's bucket schedule.

    Per-layer arrays have index 0 = layer 1; per-bucket arrays index 0 =
    bucket 0; ``tensors`` lists every gradient tensor in registration order and
    ``tensor_bucket`` its bucket. ``bucket_layers[b]`` and ``bucket_tensors[b]``
    list a bucket's layers (1-based) and tensors in the order they became ready.
    ``layer_bucket`` is the bucket of each layer's weight (of its bias when it
    has no weight of its own). ``bucket_link_wait`` is start - launch (waiting
    for the link); ``bucket_order_wait`` is how long a ready bucket waited for
    an earlier bucket to become ready (``max(ready_0..ready_(b-1)) - ready_b``
    when positive), and ``bucket_waits_for`` that earlier bucket (-1 when
    none). With an enqueue time, launch - (ready + order wait) is the host
    issuing this and earlier collectives. ``regime`` is a ``Regime`` (see ``regimes``).

    ``bucket_tree`` says which buckets' all-reduce is a tree (else a ring; see
    ``cost``), ``algorithm`` the setting that chose them.

    Gradient accumulation: with ``accumulation_steps`` k > 1 the step is k
    micro-batches. The first k - 1 run forward and backward inside DDP's
    ``no_sync()`` (``DistributedDataParallel.no_sync`` sets
    ``require_backward_grad_sync = False``, so the reducer is not prepared and
    no bucket is reduced: gradients just accumulate in ``.grad``); the last runs
    with the buckets. Times are then measured from the start of the first
    micro-batch's backward: every time of the last micro-batch is later by
    ``no_sync_ms = (k - 1) (forward + E)``, and the step is
    ``forward + no_sync_ms + max(E, C) + optimizer``. Buckets are reduced once per
    step, whatever k.
    """

    layer_backward_ms: np.ndarray
    layer_grad_mb: np.ndarray
    layer_backward_start: np.ndarray
    layer_ready: np.ndarray
    layer_bucket: np.ndarray
    tensors: GradientTensors
    tensor_bucket: np.ndarray
    bucket_layers: tuple[np.ndarray, ...]
    bucket_tensors: tuple[np.ndarray, ...]
    bucket_size_mb: np.ndarray
    bucket_ready: np.ndarray
    bucket_launch: np.ndarray
    bucket_order_wait: np.ndarray
    bucket_waits_for: np.ndarray
    bucket_start: np.ndarray
    bucket_end: np.ndarray
    bucket_transfer_ms: np.ndarray
    bucket_link_wait: np.ndarray
    enqueue_ms: float
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
    bucket_tree: np.ndarray
    algorithm: str = "ring"
    accumulation_steps: int = 1
    no_sync_ms: float = 0.0

    @property
    def n_layers(self) -> int:
        """Number of layers."""
        return len(self.layer_ready)

    @property
    def n_buckets(self) -> int:
        """Number of buckets (transfers)."""
        return len(self.bucket_ready)

    @property
    def micro_batch_backward_ms(self) -> float:
        """How long one micro-batch's backward takes (E of each micro-batch)."""
        return self.backward_end - self.no_sync_ms


def _waits_for(ready: np.ndarray, order_wait: np.ndarray, tol: float) -> np.ndarray:
    """For each bucket that waited for an earlier one: the first earlier bucket whose
    readiness it waited for (the latest-ready one before it); -1 otherwise."""
    out = np.full(len(ready), NO_BUCKET)
    for b in np.flatnonzero(order_wait > tol):
        out[b] = int(np.argmax(ready[:b]))
    return out


def build_schedule(
    tensors: GradientTensors,
    tensor_bucket: np.ndarray,
    *,
    backward_ms: np.ndarray,
    layer_grad_mb: np.ndarray,
    ranks: int,
    bandwidth: float,
    latency_ms: float,
    enqueue_ms: float = 0.0,
    straggler_pct: float = 0.0,
    forward_ms: float = 0.0,
    optimizer_ms: float = 0.0,
    setting: float | None = None,
    best: tuple[float, float] | None = None,
    algorithm: str = "ring",
    accumulation_steps: int = 1,
) -> Schedule:
    """The schedule of one bucket assignment (a bucket index per tensor, 0..n-1),
    with ``accumulation_steps`` micro-batches per step (``Schedule``)."""
    if int(accumulation_steps) != accumulation_steps or accumulation_steps < 1:
        raise ValueError("accumulation steps must be a whole number of at least 1")
    assignment = np.asarray(tensor_bucket, int)
    used = np.unique(assignment)
    if assignment.shape != (len(tensors),) or not np.array_equal(used, np.arange(used.size)):
        raise ValueError("give each tensor a bucket, numbering buckets 0, 1, ... without gaps")
    r = evaluate(
        tensors,
        assignment[None, :],
        ranks=ranks,
        bandwidth=bandwidth,
        latency_ms=latency_ms,
        enqueue_ms=enqueue_ms,
        algorithm=algorithm,
    )
    nb = used.size
    # Every time below is shifted by the micro-batches run under no_sync() before this one.
    shift = (accumulation_steps - 1) * (forward_ms + float(r["backward_end"]))
    backward_end = float(r["backward_end"]) + shift
    comm_end = float(r["comm_end"][0]) + shift
    optimizer_start = max(backward_end, comm_end)
    step_time = forward_ms + optimizer_start + optimizer_ms
    ready, launch = r["ready"][0, :nb] + shift, r["launch"][0, :nb] + shift
    start = r["start"][0, :nb] + shift
    # Waiting for an earlier bucket that is not ready yet (the host's own queue of
    # launches, with an enqueue time, is not such a wait).
    earlier_ready = np.append(-np.inf, np.maximum.accumulate(ready)[:-1])
    order_wait = np.maximum(0.0, earlier_ready - ready)
    in_ready_order = tensors.readiness_order
    bucket_tensors = tuple(in_ready_order[assignment[in_ready_order] == b] for b in range(nb))
    has_weight = tensors.kind == TensorKind.WEIGHT
    layer_bucket = np.empty(tensors.n_layers, int)
    layer_bucket[tensors.layer[~has_weight] - 1] = assignment[~has_weight]
    layer_bucket[tensors.layer[has_weight] - 1] = assignment[has_weight]
    ready_layer = tensors.layer_ready + shift
    return Schedule(
        layer_backward_ms=np.asarray(backward_ms, float) * (1.0 + straggler_pct / 100.0),
        layer_grad_mb=np.asarray(layer_grad_mb, float),
        layer_backward_start=np.append(ready_layer[1:], shift),
        layer_ready=ready_layer,
        layer_bucket=layer_bucket,
        tensors=tensors,
        tensor_bucket=assignment.copy(),
        bucket_layers=tuple(first_seen(tensors.layer[t]) for t in bucket_tensors),
        bucket_tensors=bucket_tensors,
        bucket_size_mb=r["size"][0, :nb],
        bucket_ready=ready,
        bucket_launch=launch,
        bucket_order_wait=order_wait,
        bucket_waits_for=_waits_for(ready, order_wait, 1e-9 * max(1.0, comm_end)),
        bucket_start=start,
        bucket_end=r["end"][0, :nb] + shift,
        bucket_transfer_ms=r["transfer"][0, :nb],
        bucket_link_wait=start - launch,
        enqueue_ms=float(enqueue_ms),
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
        bucket_tree=r["tree"][0, :nb].copy(),
        algorithm=str(algorithm),
        accumulation_steps=int(accumulation_steps),
        no_sync_ms=shift,
    )


def first_seen(values: np.ndarray) -> np.ndarray:
    """The distinct values in order of first appearance."""
    _, first = np.unique(values, return_index=True)
    return values[np.sort(first)]


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
    enqueue_ms: float = 0.0,
) -> Schedule:
    """The schedule from per-layer arrays (index 0 = layer 1) and a bucket per layer.

    Any assignment is allowed as long as buckets are numbered 0, 1, ... without
    gaps; buckets are still launched in index order, so a bucket ready before an
    earlier one waits for it. No sweep is run, so the regime has no suggestion.
    """
    backward = np.asarray(backward_ms, float)
    grad = np.asarray(grad_mb, float)
    if backward.shape != grad.shape or backward.ndim != 1 or backward.size == 0:
        raise ValueError("give one backward time and one gradient size per layer")
    if np.any(backward <= 0) or np.any(grad <= 0):
        raise ValueError("backward times and gradient sizes must be positive")
    per_layer = np.asarray(layer_bucket, int)
    if per_layer.shape != backward.shape:
        raise ValueError("give one bucket index per layer")
    tensors = gradient_tensors(backward, grad, straggler_pct=straggler_pct)
    return build_schedule(
        tensors,
        per_layer[tensors.layer - 1],
        backward_ms=backward,
        layer_grad_mb=grad,
        ranks=ranks,
        bandwidth=bandwidth,
        latency_ms=latency_ms,
        enqueue_ms=enqueue_ms,
        straggler_pct=straggler_pct,
        forward_ms=forward_ms,
        optimizer_ms=optimizer_ms,
    )
