"""Fit the schedule model (``widgets.model.ranks``) to measured traces.

What is fitted, from every kept iteration of every trace (``measure`` says how
bucket start and end are read from a trace):

- **per-layer backward time** ``w_p`` (one per parameter, at normal speed) and
  the **contention factor** c. A gradient's interval on a rank (from the
  previous gradient there, or backward start) lasts ``d``, a share ``phi`` of
  it while a transfer was in flight; the model says ``d * (1 - k phi) = w_p``
  with ``k = c / (1 + c)`` (work at speed 1 outside transfers, ``1 / (1 + c)``
  inside). Regressing ``d`` on the busy time ``phi d`` would be biased (the busy
  time grows with the noise in ``d``), so the fit is in two robust steps, a
  few rounds: ``w_p`` is the median of ``d (1 - k phi)`` over the intervals of
  parameter p that were nearly free of transfers (all of them if none were),
  and ``k`` the median of ``(1 - w_p / d) / phi`` over the mostly busy
  intervals of parameters that were also seen free. A layout whose transfers
  cover every layer therefore needs a second layout (e.g. one bucket) to
  separate backward time from contention; ``contention_identified`` says
  whether there was one;
- **per-transfer overhead** a, **bandwidth** and **transfer contention** c_t: a
  bucket of S bytes needs ``T = a + S / bandwidth`` ms of transfer, done at
  ``1 / (1 + c_t * k / R)`` of full speed while k of R ranks compute. For each
  c_t on a grid, the measured durations give each transfer's work T, a and
  bandwidth follow by least squares, and the c_t whose predicted durations
  match the measured ones best wins. Overhead and bandwidth can only be told
  apart from buckets of at least two sizes;
- **enqueue** (median of launch minus readiness of everything before it),
  **start skew** (how much earlier than the last rank the others start
  backward), **forward**, **finalize** (backward return after the last transfer
  or gradient) and **after return** (last optimizer end after backward
  returns): medians, which the model takes as given.

Quality: R^2 and RMS residual of the gradient intervals and of the transfer
durations, each predicted from the fitted numbers and the measured busy/compute
intervals.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field

import numpy as np

from .load import Trace, TraceError
from .measure import measure, quiet_iterations

MIB = 1024 * 1024
MAX_K = 0.95  # c = k / (1 - k) <= 19: beyond that a fit has gone wrong
FREE_SHARE = 0.1  # an interval at most this busy counts as free of transfers
BUSY_SHARE = 0.5  # ...and at least this busy informs the contention factor
ROUNDS = 4
TRANSFER_CONTENTION_GRID = np.linspace(0.0, 6.0, 121)


@dataclass(frozen=True)
class FitQuality:
    """How well one part of the model reproduces what was measured."""

    r2: float
    rms_ms: float
    samples: int


@dataclass(frozen=True)
class Fit:
    """The fitted model: everything ``predict`` needs, with quality and provenance."""

    parameter_names: tuple[str, ...]
    parameter_bytes: tuple[int, ...]
    order: tuple[int, ...]  # parameter indices in the order their gradients become ready
    backward_ms: tuple[float, ...]  # per parameter, at normal speed (mean over ranks)
    overhead_ms: float
    bandwidth_gbps: float  # GB/s = 1e6 bytes per ms of bucket data
    contention: float
    transfer_contention: float
    enqueue_ms: float
    start_skew_ms: float
    forward_ms: float
    finalize_ms: float
    after_return_ms: float
    world_size: int
    backward_quality: FitQuality
    transfer_quality: FitQuality
    separable: bool  # were there buckets of two sizes or more?
    contention_identified: bool  # were some parameters seen both free and busy?
    sources: tuple[str, ...] = field(default=())
    iterations_used: int = 0
    iterations_dropped: int = 0

    def transfer_ms(self, nbytes: np.typing.ArrayLike) -> np.ndarray:
        """Transfer time at full speed of buckets of ``nbytes`` bytes."""
        return self.overhead_ms + np.asarray(nbytes, float) / (self.bandwidth_gbps * 1e6)

    def to_dict(self) -> dict:
        """A JSON-ready dictionary."""
        d = asdict(self)
        d["backward_total_ms"] = float(sum(self.backward_ms))
        return d


def _busy_overlap(lo: np.ndarray, hi: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Length of [lo, hi] covered by the disjoint intervals [start_b, end_b], per row."""
    return np.clip(
        np.minimum(hi[..., None], end[..., None, :])
        - np.maximum(lo[..., None], start[..., None, :]),
        0.0,
        None,
    ).sum(axis=-1)


def _r2(measured: np.ndarray, predicted: np.ndarray) -> FitQuality:
    resid = measured - predicted
    sst = float(((measured - measured.mean()) ** 2).sum())
    sse = float((resid**2).sum())
    r2 = 1.0 - sse / sst if sst > 0 else float("nan")
    return FitQuality(r2=r2, rms_ms=float(np.sqrt(np.mean(resid**2))), samples=int(measured.size))


def _transfer_duration(
    start: float, work: float, rank_lo: np.ndarray, rank_hi: np.ndarray, c_t: float
) -> float:
    """How long a transfer of ``work`` ms takes from ``start`` while ranks compute."""
    from ..ranks import _transfer_end

    return _transfer_end(start, work, rank_lo, rank_hi, c_t) - start


def _transfer_work(
    start: float, end: float, rank_lo: np.ndarray, rank_hi: np.ndarray, c_t: float
) -> float:
    """Work done by a transfer that ran over [start, end] while ranks computed."""
    n = rank_lo.size
    edges = np.unique(np.concatenate([[start, end], rank_lo, rank_hi]))
    edges = edges[(edges >= start) & (edges <= end)]
    work = 0.0
    for a, b in itertools.pairwise(edges):
        k = np.count_nonzero((rank_lo <= a) & (rank_hi > a))
        work += (b - a) / (1.0 + c_t * k / n)
    return work


def fit(traces: list[Trace], max_other_load: float | None = 0.25) -> Fit:
    """Fit the model to ``traces`` (same parameters and world size), using quiet iterations.

    Iterations where other processes kept more than ``max_other_load`` of the
    machine's cores busy are left out (``None`` keeps all); a trace with none
    left is an error.
    """
    if not traces:
        raise TraceError("fit needs at least one trace")
    names = traces[0].parameter_names
    world = traces[0].n_ranks
    for t in traces[1:]:
        if t.parameter_names != names:
            raise TraceError(f"{t.name}: its parameters differ from {traces[0].name}'s")
        if t.n_ranks != world:
            raise TraceError(f"{t.name}: {t.n_ranks} ranks, {traces[0].name} has {world}")
    n_params = len(names)

    d_all, u_all, group_all = [], [], []
    transfers: list[
        tuple[float, float, float, np.ndarray, np.ndarray]
    ] = []  # S, start, end, lo, hi
    ready_rel, enqueue, skew, forward, finalize, after = [], [], [], [], [], []
    used = dropped = 0
    for t in traces:
        keep = quiet_iterations(t, max_other_load)
        used += int(keep.sum())
        dropped += int((~keep).sum())
        m = measure(t)
        for i in np.flatnonzero(keep):
            start, end = m.bucket_start[i], m.link_end[i]
            for r in range(world):
                ready = t.grad_ready[i, r] - m.t0[i]
                seq = np.argsort(ready, kind="stable")
                hi = ready[seq]
                lo = np.concatenate([[m.backward_start[i, r]], hi[:-1]])
                d_all.append(hi - lo)
                u_all.append(_busy_overlap(lo, hi, start, end))
                group_all.append(r * n_params + seq)
                ready_rel.append(ready)
                running = np.maximum.accumulate(m.bucket_ready[i, r])
                enqueue.append(t.issue[i, r] - m.t0[i] - running)
            lo_r, hi_r = m.backward_start[i], m.backward_end[i]
            for b in range(t.n_buckets):
                transfers.append((float(t.bucket_bytes[b]), start[b], end[b], lo_r, hi_r))
            skew.append(float(-m.backward_start[i].min()))
            forward.append(m.forward_ms[i])
            finalize.append(
                m.backward_return_ms[i] - max(m.communication_end_ms[i], m.compute_end_ms[i])
            )
            after.append(m.after_return_ms[i])

    # Backward: d (1 - k phi) = w_p, in robust rounds (see the module docstring).
    d = np.concatenate(d_all)
    phi = np.concatenate(u_all) / np.maximum(d, 1e-12)
    g = np.concatenate(group_all) % n_params  # ranks pooled: they run the same layers
    free = phi <= FREE_SHARE
    seen_free = np.bincount(g[free], minlength=n_params) > 0
    busy = (phi >= BUSY_SHARE) & seen_free[g]
    identified = bool(busy.any())
    k = 0.0
    w = np.zeros(n_params)
    for _ in range(ROUNDS):
        work = d * (1.0 - k * phi)
        for p in range(n_params):
            pick = (g == p) & free if seen_free[p] else g == p
            w[p] = float(np.median(work[pick]))
        if not identified:
            break
        k = float(np.clip(np.median((1.0 - w[g[busy]] / d[busy]) / phi[busy]), 0.0, MAX_K))
    per_param = np.clip(w, 0.0, None)
    backward_quality = _r2(d, per_param[g] / (1.0 - k * phi))
    contention = k / (1.0 - k)

    # Transfers: for each c_t, the work each transfer did; a + S/bw by least squares.
    sizes = np.array([x[0] for x in transfers])
    durations = np.array([x[2] - x[1] for x in transfers])
    separable = np.unique(sizes).size >= 2
    best = None
    for c_t in TRANSFER_CONTENTION_GRID:
        work = np.array([_transfer_work(s, e, lo, hi, c_t) for _, s, e, lo, hi in transfers])
        if separable:
            design = np.stack([np.ones_like(sizes), sizes], axis=1)
            (a, beta), *_ = np.linalg.lstsq(design, work, rcond=None)
            if a < 0:  # overhead can't be negative: all time is bandwidth time
                a, beta = 0.0, float((sizes * work).sum() / (sizes * sizes).sum())
        else:
            a, beta = 0.0, float(work.mean() / sizes[0])
        if beta <= 0:
            continue
        predicted = np.array(
            [
                _transfer_duration(s, a + beta * size, lo, hi, c_t)
                for size, s, _, lo, hi in transfers
            ]
        )
        sse = float(((durations - predicted) ** 2).sum())
        if best is None or sse < best[0] - 1e-12:
            best = (sse, float(c_t), float(a), float(beta), predicted)
    if best is None:
        raise TraceError("the transfers could not be fitted (no positive bandwidth)")
    _, c_t, a, beta, predicted = best

    order = np.argsort(np.median(np.stack(ready_rel), axis=0), kind="stable")
    return Fit(
        parameter_names=names,
        parameter_bytes=tuple(int(b) for b in traces[0].parameter_bytes),
        order=tuple(int(i) for i in order),
        backward_ms=tuple(float(x) for x in per_param),
        overhead_ms=a,
        bandwidth_gbps=1.0 / beta / 1e6,
        contention=contention,
        transfer_contention=c_t,
        enqueue_ms=float(max(0.0, np.median(np.concatenate(enqueue)))),
        start_skew_ms=float(np.median(skew)),
        forward_ms=float(np.median(forward)),
        finalize_ms=float(max(0.0, np.median(finalize))),
        after_return_ms=float(np.median(after)),
        world_size=world,
        backward_quality=backward_quality,
        transfer_quality=_r2(durations, predicted),
        separable=bool(separable),
        contention_identified=identified,
        sources=tuple(t.name for t in traces),
        iterations_used=used,
        iterations_dropped=dropped,
    )
