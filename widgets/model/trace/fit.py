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
  parameter p that were nearly free of transfers (all of them if fewer than
  ``MIN_FREE`` were),
  and ``k`` the median of ``(1 - w_p / d) / phi`` over the mostly busy
  intervals of parameters that were also seen free. A layout whose transfers
  cover every layer therefore needs a second layout (e.g. one bucket) to
  separate backward time from contention; ``contention_identified`` says
  whether there was one. The ranks are not slowed alike on shared cores:
  ``rank_contention`` is each iteration's most slowed rank's factor, the
  second most's, and so on (medians over the iterations), and the prediction
  uses them, because the step waits for the slowest rank;
- **per-transfer overhead** a, **bandwidth** and **transfer contention** c_t: a
  bucket of S bytes needs ``T = a + S / bandwidth`` ms of transfer, done at
  ``1 / (1 + c_t)`` of full speed while any rank computes (an all-reduce
  moves at its slowest participant's pace; sharing the slowdown out by the
  share of ranks computing predicted a lone large transfer worse). For each
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

from dataclasses import asdict, dataclass, field

import numpy as np

from .load import Trace, TraceError
from .measure import measure, quiet_iterations

MAX_K = 0.95  # c = k / (1 - k) <= 19: beyond that a fit has gone wrong
FREE_SHARE = 0.1  # an interval at most this busy counts as free of transfers
# A parameter counts as seen free with at least this many free intervals: the
# median of fewer is one stray interval (the scheduler preempting a rank) away
# from several times the layer's real time.
MIN_FREE = 5
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
    backward_ms: tuple[float, ...]  # per parameter, at normal speed (ranks pooled)
    overhead_ms: float
    bandwidth_gbps: float  # GB/s = 1e6 bytes per ms of bucket data
    contention: float
    transfer_contention: float
    rank_contention: tuple[float, ...]  # per iteration, the most slowed rank's first
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


@dataclass(frozen=True)
class _Transfers:
    """Every measured transfer, with the compute around it as pieces of constant load.

    Piece i of transfer n starts at ``edge[n, i]`` and lasts ``width[n, i]`` (the
    last real piece is unbounded; padding pieces have width 0); ``load[n, i]`` is
    1 while any rank computes then, else 0. None of this depends on the fit.
    """

    size: np.ndarray  # (N,) bytes
    start: np.ndarray  # (N,)
    duration: np.ndarray  # (N,) measured
    edge: np.ndarray  # (N, P)
    width: np.ndarray  # (N, P)
    load: np.ndarray  # (N, P)

    @classmethod
    def build(cls, rows: list[tuple[float, float, float, np.ndarray, np.ndarray]]) -> _Transfers:
        n_pieces = 2 * max(len(r[3]) for r in rows) + 1
        edge = np.full((len(rows), n_pieces), np.inf)
        width = np.zeros((len(rows), n_pieces))
        load = np.zeros((len(rows), n_pieces))
        for n, (_, start, _, lo, hi) in enumerate(rows):
            points = np.unique(np.concatenate([lo, hi]))
            e = np.concatenate([[start], points[points > start]])
            k = ((lo[None, :] <= e[:, None]) & (hi[None, :] > e[:, None])).sum(axis=1)
            edge[n, : e.size] = e
            width[n, : e.size] = np.diff(np.concatenate([e, [np.inf]]))
            load[n, : e.size] = k > 0  # any rank computing slows the whole all-reduce
        return cls(
            size=np.array([r[0] for r in rows]),
            start=np.array([r[1] for r in rows]),
            duration=np.array([r[2] - r[1] for r in rows]),
            edge=edge,
            width=width,
            load=load,
        )

    def work(self, c_t: float) -> np.ndarray:
        """(N,) transfer work done during each measured transfer, had contention been c_t."""
        end = (self.start + self.duration)[:, None]
        inside = np.clip(np.minimum(self.edge + self.width, end) - self.edge, 0.0, None)
        inside = np.where(np.isfinite(self.edge), inside, 0.0)
        return (inside / (1.0 + c_t * self.load)).sum(axis=1)

    def durations(self, work: np.ndarray, c_t: float) -> np.ndarray:
        """(N,) how long transfers of ``work`` ms would take from the measured starts."""
        slow = 1.0 + c_t * self.load
        capacity = self.width / slow
        done = np.cumsum(capacity, axis=1)
        piece = np.argmax(done >= work[:, None], axis=1)
        rows = np.arange(work.size)
        # Work done before each piece (the unbounded piece's own capacity is inf).
        before_piece = np.concatenate([np.zeros((work.size, 1)), done[:, :-1]], axis=1)
        before = before_piece[rows, piece]
        return self.edge[rows, piece] - self.start + (work - before) * slow[rows, piece]


def _fit_transfers(t: _Transfers, c_t: float, separable: bool) -> tuple[float, float, float]:
    """Overhead, seconds-per-byte slope and squared error of durations, at contention c_t."""
    work = t.work(c_t)
    if separable:
        design = np.stack([np.ones_like(t.size), t.size], axis=1)
        (a, beta), *_ = np.linalg.lstsq(design, work, rcond=None)
        if a < 0:  # overhead can't be negative: all time is bandwidth time
            a, beta = 0.0, float((t.size * work).sum() / (t.size * t.size).sum())
    else:
        a, beta = 0.0, float(work.mean() / t.size[0])
    if beta <= 0:
        return float(a), float(beta), np.inf
    predicted = t.durations(a + beta * t.size, c_t)
    return float(a), float(beta), float(((t.duration - predicted) ** 2).sum())


def _rank_contention(
    d: np.ndarray,
    phi: np.ndarray,
    w: np.ndarray,
    busy: np.ndarray,
    sample: np.ndarray,
    world: int,
    k: float,
) -> tuple[float, ...]:
    """Contention factor of the most slowed rank of an iteration, the second most, ...

    On shared cores the ranks are not slowed alike: in each iteration one rank
    loses more of its core to the transfers than the others, and the last rank
    to finish backward is the one the step waits for. Each (iteration, rank)
    gets its own k (the median over its mostly busy intervals); the ranks of an
    iteration are sorted from most to least slowed, and each position's median
    over the iterations is its factor. Samples are numbered 0, 1, ... iteration
    by iteration, ``world`` per iteration; only iterations in which every rank
    computed under transfers count. With none, every rank gets the pooled
    factor.
    """
    per = np.full(int(sample.max()) + 1, np.nan)
    ratio = (1.0 - w / d) / np.where(phi > 0, phi, 1.0)
    for s_ in np.unique(sample[busy]):
        per[s_] = np.median(ratio[busy & (sample == s_)])
    per = np.clip(per, 0.0, MAX_K).reshape(-1, world)
    seen = per[~np.isnan(per).any(axis=1)]  # iterations where every rank overlapped
    if not seen.size:
        return (k / (1.0 - k),) * world
    k_rank = np.median(-np.sort(-seen, axis=1), axis=0)
    return tuple(float(x / (1.0 - x)) for x in k_rank)


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

    d_all, u_all, group_all, sample_all = [], [], [], []
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
                sample_all.append(np.full(seq.size, len(sample_all)))
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
    seen_free = np.bincount(g[free], minlength=n_params) >= MIN_FREE
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
    rank_contention = _rank_contention(
        d, phi, per_param[g], busy, np.concatenate(sample_all), world, k
    )
    backward_quality = _r2(d, per_param[g] / (1.0 - k * phi))
    contention = k / (1.0 - k)

    # Transfers: for each c_t, the work each transfer did; a + S/bw by least squares;
    # the c_t whose predicted durations come closest, on a grid and then finer.
    measured = _Transfers.build(transfers)
    separable = np.unique(measured.size).size >= 2
    errors = [_fit_transfers(measured, c, separable)[2] for c in TRANSFER_CONTENTION_GRID]
    best_c = float(TRANSFER_CONTENTION_GRID[int(np.argmin(errors))])
    step = TRANSFER_CONTENTION_GRID[1] - TRANSFER_CONTENTION_GRID[0]
    fine = np.clip(np.linspace(best_c - step, best_c + step, 21), 0.0, None)
    fine_errors = [_fit_transfers(measured, c, separable)[2] for c in fine]
    c_t = float(fine[int(np.argmin(fine_errors))])
    a, beta, sse = _fit_transfers(measured, c_t, separable)
    if not np.isfinite(sse):
        raise TraceError("the transfers could not be fitted (no positive bandwidth)")
    predicted = measured.durations(a + beta * measured.size, c_t)
    durations = measured.duration

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
        rank_contention=rank_contention,
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
