"""What a trace measured, per iteration, in the schedule model's terms.

Times are ms from ``t0``, the start of backward on the rank that started it last
(the rank every collective waits for at first). For iteration i:

- a bucket's **launch** is the latest ``issue`` over ranks; the rank that issued
  it last **defined its readiness** - on a GPU trace (device times) the rank
  whose gradients for it were ready last on the device instead: the host runs
  ahead of the device, so the host that issued last need not be the device
  that finished last;
- its **end** is the latest ``complete`` over ranks. Gloo runs up to two
  all-reduces at once, so a bucket can complete before the one launched before
  it. The model's link serves one at a time, in bucket order; its equivalent
  keeps the same busy time: **link end** ``max(end_0..end_b)`` and **start**
  ``max(first_b, link end_(b-1))``, where ``first_b`` is the launch, or on a
  GPU trace the later of it and the latest start of the bucket's kernel over
  ranks (an NCCL kernel spins until its last peer's starts: nothing moves
  before). The intervals [start, link end] are disjoint and cover the same time
  as the measured [first, end] together;
- **compute end** E is the last gradient ready on any rank, **communication
  end** C the last bucket's end, the **exposed tail** ``max(0, C - E)``;
- **backward return** is the last rank's return from ``loss.backward()``
  (DDP returns only once every bucket is reduced), and the **step** runs from
  the forward start of the rank that started backward last to the last
  optimizer end.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .load import Trace, TraceError

QUANTITIES = ("backward_return_ms", "communication_end_ms", "exposed_tail_ms", "step_ms")


@dataclass(frozen=True, eq=False)
class Measured:
    """Per-iteration measurements of one trace (ms from each iteration's ``t0``)."""

    t0: np.ndarray  # (I,) on the trace clock
    late_rank: np.ndarray  # (I,) the rank that started backward last
    backward_start: np.ndarray  # (I, R) (<= 0)
    backward_end: np.ndarray  # (I, R) last gradient ready on each rank
    bucket_ready: np.ndarray  # (I, R, B) last gradient of each bucket ready
    bucket_launch: np.ndarray  # (I, B)
    bucket_defining_rank: np.ndarray  # (I, B)
    bucket_start: np.ndarray  # (I, B) one-at-a-time equivalent
    bucket_end: np.ndarray  # (I, B) as measured
    link_end: np.ndarray  # (I, B) one-at-a-time equivalent
    backward_return_ms: np.ndarray  # (I,)
    communication_end_ms: np.ndarray  # (I,)
    compute_end_ms: np.ndarray  # (I,)
    exposed_tail_ms: np.ndarray  # (I,)
    step_ms: np.ndarray  # (I,)
    forward_ms: np.ndarray  # (I,) of the late rank
    after_return_ms: np.ndarray  # (I,) last optimizer end - last backward return

    def quantity(self, name: str) -> np.ndarray:
        """One of ``QUANTITIES`` per iteration."""
        if name not in QUANTITIES:
            raise KeyError(name)
        return getattr(self, name)


def measure(trace: Trace) -> Measured:
    """The per-iteration measurements of ``trace``."""
    n_its = trace.n_iterations
    its = np.arange(n_its)
    late = np.argmax(trace.backward_start, axis=1)
    t0 = trace.backward_start[its, late]
    rel = t0[:, None]
    grad = trace.grad_ready - rel[:, :, None]
    bucket_ready = np.stack([grad[:, :, m].max(axis=2) for m in trace.bucket_parameters], axis=2)
    issue = trace.issue - rel[:, :, None]
    launch = issue.max(axis=1)
    end = (trace.complete - rel[:, :, None]).max(axis=1)
    link_end = np.maximum.accumulate(end, axis=1)
    # On a device the transfer begins only when the last rank's kernel has started
    # (the others' kernels spin until it joins): not before the latest kernel start.
    first = launch
    if trace.device_times and trace.start is not None:
        first = np.maximum(launch, (trace.start - rel[:, :, None]).max(axis=1))
    start = first.copy()
    start[:, 1:] = np.maximum(first[:, 1:], link_end[:, :-1])
    backward_end = grad.max(axis=2)
    compute_end = backward_end.max(axis=1)
    comm_end = link_end[:, -1]
    backward_return = (trace.backward_return - rel).max(axis=1)
    forward = t0 - trace.forward_start[its, late]
    last_opt = (trace.optimizer_end - rel).max(axis=1)
    return Measured(
        t0=t0,
        late_rank=late,
        backward_start=trace.backward_start - rel,
        backward_end=backward_end,
        bucket_ready=bucket_ready,
        bucket_launch=launch,
        bucket_defining_rank=np.argmax(bucket_ready if trace.device_times else issue, axis=1),
        bucket_start=start,
        bucket_end=end,
        link_end=link_end,
        backward_return_ms=backward_return,
        communication_end_ms=comm_end,
        compute_end_ms=compute_end,
        exposed_tail_ms=np.maximum(0.0, comm_end - compute_end),
        step_ms=forward + last_opt,
        forward_ms=forward,
        after_return_ms=last_opt - backward_return,
    )


def quiet_iterations(trace: Trace, max_other_load: float | None) -> np.ndarray:
    """Mask of iterations whose machine load from other processes is at most ``max_other_load``.

    ``None`` keeps every iteration; an unknown load (no ``/proc``) is kept. Raises
    ``TraceError`` when no iteration is quiet enough.
    """
    if max_other_load is None:
        return np.ones(trace.n_iterations, bool)
    load = trace.other_load
    keep = np.isnan(load) | (load <= max_other_load)
    if not keep.any():
        raise TraceError(
            f"{trace.name}: in every iteration other processes kept more than "
            f"{max_other_load:.0%} of the cores busy (least: {np.nanmin(load):.0%}); record "
            "it again on a quieter machine, or allow more with --max-other-load"
        )
    return keep


@dataclass(frozen=True)
class Summary:
    """Median and spread (quartiles, extremes) of a quantity over iterations."""

    median: float
    q25: float
    q75: float
    low: float
    high: float
    n: int


def summarize(values: np.ndarray) -> Summary:
    """The median, quartiles and extremes of ``values``."""
    v = np.asarray(values, float)
    q25, med, q75 = np.percentile(v, [25, 50, 75])
    return Summary(float(med), float(q25), float(q75), float(v.min()), float(v.max()), v.size)
