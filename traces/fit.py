"""Fit the schedule model (``widgets.model.ranks``) to measured traces.

**Design: each term from the measurement that isolates it.** A trace of DDP
alone cannot tell per-transfer overhead, bandwidth and contention apart: a
transfer that ran under backward was slowed by it, one that ran after it was
not, so a line through their durations puts contention into the overhead (on
one machine the fit on 12 and 48 MiB buckets called 5.8 ms "overhead", and
twelve 4 MiB transfers were then predicted to pay it twelve times). So
``overlap-lab record`` also measures, on the same ranks in the same run
(``traces.recorder.isolated``; the trace's optional ``isolated`` block), the
all-reduce alone at several sizes while nothing else runs (the way nccl-tests
times a collective: warm-up, repetitions, median) and backward alone with
communication held back. When a fitted trace has them, they fix the terms
that need no overlap to be seen:

- **per-layer backward time** ``w_p``: the median of each parameter's interval
  in backward alone (ranks pooled), scaled so that they add up to the median
  whole backward (intervals have a long right tail, so their medians add up
  short); and ``rank_backward_scale``, each iteration's slowest rank's median
  backward against the others' (the step waits for the slowest);
- **overhead** a and **bandwidth**: least squares through the median time of
  each size timed alone, ``T = a + S / bandwidth``; a prediction stays within
  the sizes measured (``size_range``);
- **finalize**, backward's return after the last completion, as a line in the
  last bucket's size through each fitted layout's median and backward alone's
  (DDP copies a reduced bucket back into the gradients: one large last bucket
  returns later than a small one);
- **copy-back** ``copy_back_ms_per_mib``: backward alone's time from its last
  gradient to its return, per MiB of the whole gradient (that is DDP copying
  every bucket back into the gradients, with nothing else running). After a
  rank's backward, DDP copies each earlier reduced bucket back while later ones
  are still being reduced, and the copy takes a core from the transfers: a
  transfer that ran alone after backward in a layout of several buckets took
  a median 1.0-1.9x the time of the same all-reduce alone in the protocol's
  traces (1.1-1.4x in most layouts), and 0.84-1.02x in one bucket, where there
  is nothing to copy meanwhile. The
  schedule slows a transfer by c_t while a rank copies (``ranks.rank_schedule``
  ``copy_back_ms``);
- **collectives in flight** ``concurrent_collectives``: gloo runs each
  all-reduce on one of its worker threads (two by default, the recorder's
  setting), so while one moves its bytes the next one already waits on its
  peers. The overhead a timed alone is then latency that hides behind the
  previous bucket's bytes (``ranks.rank_schedule`` ``concurrent``,
  ``latency_ms``). With one bucket per layer at width 1024 on 2 cores, the
  link was busy a median 4.5 ms per 4 MiB bucket (2.6-6.3 by position, the
  one-at-a-time equivalent) while backward ran about 1.8x slower beside it,
  against 4.1 ms for the all-reduce alone on idle cores: one at a time, the
  slowdown would have made it 7 ms or more. NCCL runs them one after another
  (1). The baseline keeps one at a time: it is FIFO alpha-beta;

and the overlap in the DDP traces is left to say only what it alone can: how
much the ranks slow each other, with ``w_p`` and ``T`` held at their isolated
values (``_match_contention``). **One contention for both directions.** On
shared cores a compute thread and a communication thread share a core about
evenly, so backward under a transfer and a transfer under backward are slowed
alike: c_t = c of the most slowed rank (the one the step waits for; the other
ranks keep their ratio to it, from the gradient intervals below). That one
factor is the one whose schedules end backward when the fitted layouts did
(the median of their last gradients). Two earlier designs were measured on
the protocol's recordings and dropped: c read off the gradient intervals
misses a rank's long stalls (0.26 at width 512 where the whole backward says
about 1.0), and a c_t matched on its own to the communication end then made
up for it (2.5), so tails came out long; a plain FIFO model without
contention, whose backward and transfers are both too fast, had closer tails
in a third of the cases. Another design, fitting all terms
jointly to the overlap of more layouts, was not taken: more layouts give more
transfer sizes, but every size is still seen either under backward or after
it, so the confounding stays; the isolated measurements remove it at the cost
of a few seconds of recording.

Traces without the block (version-1 files recorded before it, such as the
shipped ones) are fitted as before, from the overlap alone, and the fit says
so (``unidentified``): overhead, bandwidth and transfer contention are then
not separately identified, and ``size_range`` is the fitted buckets' sizes.

Every term can carry a bootstrap interval over iterations (``resamples``,
``traces.bootstrap``), and ``traces.identify``
refuses a layout that needs a term the fitted layouts do not constrain.
``contention=False`` gives the plain baseline: the same fit with c = c_t = 0
and one collective at a time (FIFO alpha-beta, no contention), to show what
the other terms buy.

What is fitted from the overlap, from every kept iteration of every trace
(``measure`` says how bucket start and end are read from a trace):

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

from dataclasses import asdict, dataclass, field, replace

import numpy as np

from .load import Trace, TraceError
from .measure import measure, quiet_iterations

GLOO_WORKER_THREADS = 2  # ProcessGroupGloo's default: all-reduces in flight at once
MAX_K = 0.95  # c = k / (1 - k) <= 19: beyond that a fit has gone wrong
FREE_SHARE = 0.1  # an interval at most this busy counts as free of transfers
# A parameter counts as seen free with at least this many free intervals: the
# median of fewer is one stray interval (the scheduler preempting a rank) away
# from several times the layer's real time.
MIN_FREE = 5
BUSY_SHARE = 0.5  # ...and at least this busy informs the contention factor
ROUNDS = 4
TRANSFER_CONTENTION_GRID = np.linspace(0.0, 6.0, 121)
MIB = 1024 * 1024


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
    # Where the terms come from, and what they can be trusted for.
    backward_source: str = "overlap"  # "alone": backward alone; "overlap": the DDP traces
    transfer_source: str = "overlap"  # "isolated": all-reduces alone; "overlap": DDP's buckets
    size_range: tuple[float, float] = (0.0, float("inf"))  # bytes the transfer terms hold for
    transfer_contention_identified: bool = True
    contention_terms: bool = True  # False: the plain baseline (c = c_t = 0 by construction)
    isolated_quality: FitQuality | None = None  # the line through the all-reduces alone
    unidentified: tuple[str, ...] = ()  # terms the fitted data could not pin down, in words
    uncertainty: dict[str, tuple[float, float]] = field(default_factory=dict)  # 90 % intervals
    resamples: int = 0  # bootstrap resamples behind ``uncertainty``
    # Backward alone: each model rank's backward as a multiple of ``backward_ms``, the
    # slowest rank of an iteration first (1 each when there is no backward alone).
    rank_backward_scale: tuple[float, ...] = ()
    # Finalize grows with the last bucket: finalize_ms + finalize_ms_per_mib * its MiB.
    finalize_ms_per_mib: float = 0.0
    # Copy-back after backward, per MiB of a bucket (0: not measured, no copies modelled).
    copy_back_ms_per_mib: float = 0.0
    # Collectives in flight at once; above 1, each transfer's overhead is latency that
    # hides behind the previous bucket's bytes (``ranks.rank_schedule``).
    concurrent_collectives: int = 1

    def finalize_for(self, last_bucket_bytes: float) -> float:
        """Backward return after the last transfer, for a last bucket of that many bytes."""
        return self.finalize_ms + self.finalize_ms_per_mib * last_bucket_bytes / MIB

    def backward_matrix(self) -> np.ndarray:
        """(R, P) each model rank's backward per parameter at normal speed."""
        w = np.asarray(self.backward_ms, float)
        scale = np.asarray(self.rank_backward_scale or (1.0,) * self.world_size, float)
        return scale[:, None] * w[None, :]

    def copy_back_ms(self, nbytes: np.typing.ArrayLike) -> np.ndarray | None:
        """Each bucket's copy back into the gradients after backward (None: not measured)."""
        if self.copy_back_ms_per_mib <= 0:
            return None
        return self.copy_back_ms_per_mib * np.asarray(nbytes, float) / MIB

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

    def computing_share(self) -> np.ndarray:
        """(N,) share of each measured transfer's duration during which some rank computed."""
        end = (self.start + self.duration)[:, None]
        inside = np.clip(np.minimum(self.edge + self.width, end) - self.edge, 0.0, None)
        inside = np.where(np.isfinite(self.edge), inside, 0.0)
        return (inside * self.load).sum(axis=1) / np.maximum(self.duration, 1e-12)

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


TERMS = (
    "backward_total_ms",
    "overhead_ms",
    "bandwidth_gbps",
    "contention",
    "rank_contention",
    "transfer_contention",
    "enqueue_ms",
    "finalize_ms",
    "finalize_ms_per_mib",
    "copy_back_ms_per_mib",
)
MIN_BUSY = 5  # busy intervals (or transfers under compute) needed to identify a factor


def term_values(f: Fit) -> dict[str, float | tuple[float, ...]]:
    """The reported terms of a fit (``TERMS``), by name."""
    return {
        name: float(sum(f.backward_ms)) if name == "backward_total_ms" else getattr(f, name)
        for name in TERMS
    }


def fit(
    traces: list[Trace],
    max_other_load: float | None = 0.25,
    *,
    contention: bool = True,
    resamples: int = 0,
    seed: int = 0,
) -> Fit:
    """Fit the model to ``traces`` (same parameters and world size), using quiet iterations.

    Iterations where other processes kept more than ``max_other_load`` of the
    machine's cores busy are left out (``None`` keeps all); a trace with none
    left is an error. ``contention=False`` fits the plain baseline (no
    contention terms). ``resamples > 0`` adds a bootstrap interval over
    iterations to every term (``Fit.uncertainty``), reproducible by ``seed``.
    """
    point = _fit_once(traces, max_other_load, contention)
    if resamples <= 0:
        return point
    from .bootstrap import bootstrap_intervals

    intervals = bootstrap_intervals(
        traces, lambda ts: _fit_once(ts, max_other_load, contention), resamples, seed
    )
    return replace(point, uncertainty=intervals, resamples=resamples)


def quiet_rounds(trace: Trace, max_other_load: float | None) -> Trace:
    """``trace`` with only the isolated measurements of its quiet rounds.

    The recorder times one repetition of each all-reduce and one backward alone
    per round, beside the round's iteration of each layout; when the counts
    match, a round's isolated measurements are kept or left out with its
    iteration (``measure.quiet_iterations``), so that other processes' load
    does not reach them either. Otherwise (a trimmed trace) all are kept.
    """
    if not trace.has_isolated or max_other_load is None:
        return trace
    n = trace.n_iterations
    if trace.alone_grad_ready.shape[0] != n or any(ms.size != n for ms in trace.isolated_ms):
        return trace
    keep = quiet_iterations(trace, max_other_load)
    return replace(
        trace,
        isolated_ms=tuple(ms[keep] for ms in trace.isolated_ms),
        alone_grad_ready=trace.alone_grad_ready[keep],
        alone_backward_ms=trace.alone_backward_ms[keep],
    )


def _isolated_terms(traces: list[Trace]) -> tuple[np.ndarray | None, tuple | None]:
    """Backward alone per parameter and the all-reduce line, from the isolated blocks.

    Returns ``(w, (a, beta, quality, (low, high)))``, each None when no trace has
    the measurements. Traces of one run carry the same block: it counts once.
    """
    blocks, seen = [], set()
    for t in traces:
        if not t.has_isolated:
            continue
        key = (
            tuple(t.isolated_bytes.tolist()),
            float(t.isolated_ms[0][0]),
            t.alone_grad_ready.shape,
        )
        if key not in seen:
            seen.add(key)
            blocks.append(t)
    if not blocks:
        return None, None
    intervals = []
    for t in blocks:
        ready = t.alone_grad_ready.reshape(-1, t.alone_grad_ready.shape[-1])  # (I' R, P)
        seq = np.argsort(ready, axis=1, kind="stable")
        hi = np.take_along_axis(ready, seq, axis=1)
        lo = np.concatenate([np.zeros((hi.shape[0], 1)), hi[:, :-1]], axis=1)
        d = np.empty_like(ready)
        np.put_along_axis(d, seq, hi - lo, axis=1)
        intervals.append(d)
    # Per parameter the median interval, scaled so that the whole backward is the median
    # total (intervals have a long right tail: the sum of their medians falls short).
    w = np.median(np.concatenate(intervals), axis=0)
    totals = np.concatenate([t.alone_grad_ready.max(axis=2) for t in blocks])  # (I', R)
    median_total = float(np.median(totals))
    if w.sum() > 0:
        w = w * median_total / w.sum()
    # The ranks are not alike in an iteration: the k-th slowest rank's median total.
    ranked = -np.sort(-totals, axis=1)
    scale = tuple(float(x) for x in np.median(ranked, axis=0) / max(median_total, 1e-12))
    alone_finalize = (
        float(sum(blocks[0].parameter_bytes)),
        float(
            np.median(
                np.concatenate(
                    [t.alone_backward_ms - t.alone_grad_ready.max(axis=2) for t in blocks]
                )
            )
        ),
    )
    sizes = np.concatenate([t.isolated_bytes for t in blocks]).astype(float)
    medians = np.array([float(np.median(ms)) for t in blocks for ms in t.isolated_ms])
    a, beta = _line(sizes, medians)
    quality = _r2(medians, a + beta * sizes)
    return (w, scale, alone_finalize), (a, beta, quality, (float(sizes.min()), float(sizes.max())))


def _line(sizes: np.ndarray, times: np.ndarray) -> tuple[float, float]:
    """``times = a + beta * sizes`` by least squares, with a >= 0 (else through the origin)."""
    if np.unique(sizes).size < 2:
        return 0.0, float(times.mean() / sizes[0])
    design = np.stack([np.ones_like(sizes), sizes], axis=1)
    (a, beta), *_ = np.linalg.lstsq(design, times, rcond=None)
    if a < 0:
        a, beta = 0.0, float((sizes * times).sum() / (sizes * sizes).sum())
    return float(a), float(beta)


def _fit_once(traces: list[Trace], max_other_load: float | None, with_contention: bool) -> Fit:
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
    alone, line = _isolated_terms([quiet_rounds(t, max_other_load) for t in traces])
    alone_w = None if alone is None else alone[0]

    d_all, u_all, group_all, sample_all = [], [], [], []
    transfers: list[
        tuple[float, float, float, np.ndarray, np.ndarray]
    ] = []  # S, start, end, lo, hi
    ready_rel, enqueue, skew, forward, finalize, after = [], [], [], [], [], []
    last_bytes: list[float] = []
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
            last_bytes.append(float(t.bucket_bytes[-1]))
            after.append(m.after_return_ms[i])

    # Backward: d (1 - k phi) = w_p (see the module docstring). With backward alone,
    # w_p is its median and k the only unknown; else w_p and k in robust rounds.
    d = np.concatenate(d_all)
    phi = np.concatenate(u_all) / np.maximum(d, 1e-12)
    g = np.concatenate(group_all) % n_params  # ranks pooled: they run the same layers
    unidentified: list[str] = []
    k = 0.0
    if alone_w is not None:
        w = np.asarray(alone_w, float)
        busy = phi >= BUSY_SHARE
        identified = bool(busy.sum() >= MIN_BUSY)
        if with_contention and identified:
            k = float(np.clip(np.median((1.0 - w[g[busy]] / d[busy]) / phi[busy]), 0.0, MAX_K))
    else:
        free = phi <= FREE_SHARE
        seen_free = np.bincount(g[free], minlength=n_params) >= MIN_FREE
        busy = (phi >= BUSY_SHARE) & seen_free[g]
        identified = bool(busy.any())
        w = np.zeros(n_params)
        for _ in range(ROUNDS):
            work = d * (1.0 - k * phi)
            for p in range(n_params):
                pick = (g == p) & free if seen_free[p] else g == p
                w[p] = float(np.median(work[pick]))
            if not (identified and with_contention):
                break
            k = float(np.clip(np.median((1.0 - w[g[busy]] / d[busy]) / phi[busy]), 0.0, MAX_K))
    per_param = np.clip(w, 0.0, None)
    if with_contention:
        rank_contention = _rank_contention(
            d, phi, per_param[g], busy, np.concatenate(sample_all), world, k
        )
    else:
        rank_contention = (0.0,) * world
    if with_contention and not identified:
        unidentified.append(
            "backward contention: no fitted layout ran a transfer under backward"
            if alone_w is not None
            else "backward contention: no layer was seen both with and without a transfer "
            "in flight (add a layout with one bucket)"
        )
    backward_quality = _r2(d, per_param[g] / (1.0 - k * phi))
    contention = k / (1.0 - k)

    # Transfers. With all-reduces alone, a and bandwidth are their line and c_t is
    # backward's contention, matched once the rest is fitted (``_match_contention``).
    # Without, for each c_t the work each transfer did; a + S/bw by least squares; the
    # c_t whose predicted durations come closest, on a grid and then finer.
    measured = _Transfers.build(transfers)
    c_t = 0.0
    if line is not None:
        a, beta, isolated_quality, size_range = line
        separable = True
        t_identified = identified
    else:
        isolated_quality = None
        separable = np.unique(measured.size).size >= 2
        size_range = (float(measured.size.min()), float(measured.size.max()))
        under = measured.computing_share()
        t_identified = (
            int((under >= BUSY_SHARE).sum()) >= MIN_BUSY
            and int((under <= FREE_SHARE).sum()) >= MIN_BUSY
        )
        if with_contention:

            def errors_at(c: float) -> float:
                return _fit_transfers(measured, c, separable)[2]

            errors = [errors_at(c) for c in TRANSFER_CONTENTION_GRID]
            best_c = float(TRANSFER_CONTENTION_GRID[int(np.argmin(errors))])
            step = TRANSFER_CONTENTION_GRID[1] - TRANSFER_CONTENTION_GRID[0]
            fine = np.clip(np.linspace(best_c - step, best_c + step, 21), 0.0, None)
            c_t = float(fine[int(np.argmin([errors_at(c) for c in fine]))])
    if line is None:
        a, beta, sse = _fit_transfers(measured, c_t, separable)
        if not np.isfinite(sse):
            raise TraceError("the transfers could not be fitted (no positive bandwidth)")
        unidentified.append(
            "overhead and bandwidth: the traces hold no all-reduces timed alone, so they come "
            "from buckets that overlapped backward and absorb contention; trusted only within "
            + (
                f"the {size_range[0] / MIB:.3g}-{size_range[1] / MIB:.3g} MiB of the fitted buckets"
                if size_range[0] != size_range[1]
                else f"the fitted buckets' size ({size_range[0] / MIB:.3g} MiB)"
            )
        )
    if with_contention and not t_identified:
        unidentified.append(
            "transfer contention: it is backward contention's, which no fitted layout identified"
            if line is not None
            else "transfer contention: too few fitted transfers ran under backward and too few "
            "after it"
        )
    if alone_w is None:
        unidentified.append(
            "backward per layer: the traces hold no backward alone; read from the intervals "
            "free of transfers"
        )
    predicted = measured.durations(a + beta * measured.size, c_t)

    order = np.argsort(np.median(np.stack(ready_rel), axis=0), kind="stable")
    if alone is None:
        finalize_ms, finalize_per_mib = float(max(0.0, np.median(finalize))), 0.0
    else:
        finalize_ms, finalize_per_mib = _finalize_line(
            np.array(last_bytes), np.array(finalize), alone[2]
        )
    fitted = Fit(
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
        finalize_ms=finalize_ms,
        after_return_ms=float(np.median(after)),
        world_size=world,
        backward_quality=backward_quality,
        transfer_quality=_r2(measured.duration, predicted),
        separable=bool(separable),
        contention_identified=identified,
        sources=tuple(t.name for t in traces),
        iterations_used=used,
        iterations_dropped=dropped,
        backward_source="overlap" if alone_w is None else "alone",
        transfer_source="overlap" if line is None else "isolated",
        size_range=size_range,
        transfer_contention_identified=bool(t_identified),
        contention_terms=with_contention,
        isolated_quality=isolated_quality,
        unidentified=tuple(unidentified),
        rank_backward_scale=() if alone is None else alone[1],
        finalize_ms_per_mib=finalize_per_mib,
        copy_back_ms_per_mib=(
            0.0 if alone is None else max(0.0, alone[2][1]) / (alone[2][0] / MIB)
        ),
    )
    if line is not None and with_contention:
        fitted = replace(fitted, concurrent_collectives=_collectives_in_flight(traces))
        if identified:
            fitted = _match_contention(fitted, traces, max_other_load)
            predicted = measured.durations(a + beta * measured.size, fitted.transfer_contention)
            fitted = replace(fitted, transfer_quality=_r2(measured.duration, predicted))
    return fitted


def _collectives_in_flight(traces: list[Trace]) -> int:
    """How many all-reduces the fitted runs could have in flight at once.

    Gloo's pool of worker threads runs two (``GLOO_WORKER_THREADS``); NCCL, and
    any run whose backend is not named, one after another."""
    backends = {t.metadata.get("backend") for t in traces}
    return GLOO_WORKER_THREADS if backends == {"gloo"} else 1


MATCH_GRID = np.linspace(0.0, 4.0, 81)


def _match_contention(f: Fit, traces: list[Trace], max_other_load: float | None) -> Fit:
    """One contention for backward and transfers, matched to when the fitted layouts'
    backward ended.

    With overhead, bandwidth, backward and the collectives in flight fixed by the
    isolated measurements, what is left is how much the ranks slow each other.
    The most slowed rank's factor c and the transfer contention c_t are one
    number (module docstring: shared cores are shared alike both ways); the
    other ranks keep their ratio to the most slowed one read off the gradient
    intervals (all alike when none was read). It is the number whose schedules
    end backward (the last rank's last gradient) closest to the fitted layouts'
    medians, squared error, every layout alike: on a grid of 0.05, then 0.005.
    """
    from .predict import predict_layout

    targets = []
    for t in traces:
        keep = quiet_iterations(t, max_other_load)
        targets.append((t.bucket_parameters, float(np.median(measure(t).compute_end_ms[keep]))))
    read = np.asarray(f.rank_contention, float)
    shape = read / read.max() if read.max() > 0 else np.ones_like(read)

    def with_factor(c: float) -> Fit:
        return replace(f, rank_contention=tuple(float(x) for x in shape * c), transfer_contention=c)

    def error(c: float) -> float:
        g = with_factor(float(c))
        return sum(
            (predict_layout(g, layout).compute_end_ms - measured) ** 2
            for layout, measured in targets
        )

    best = float(MATCH_GRID[int(np.argmin([error(c) for c in MATCH_GRID]))])
    fine = np.clip(np.linspace(best - 0.05, best + 0.05, 21), 0.0, None)
    c = float(fine[int(np.argmin([error(x) for x in fine]))])
    matched = with_factor(c)
    pooled = f.contention * c / read.max() if read.max() > 0 else c
    return replace(matched, contention=float(pooled))


def _finalize_line(
    last_bytes: np.ndarray, finalize: np.ndarray, alone_point: tuple[float, float]
) -> tuple[float, float]:
    """Finalize as ``f0 + f1 * MiB of the last bucket``: DDP copies a reduced bucket back
    into the gradients once it completes, so the time from the last completion to
    backward's return grows with the last bucket. A line through each fitted layout's
    median, and backward alone's (everything in one bucket, nothing reduced), which
    anchors the large end. A line that falls with size gives way to the fitted
    layouts' median finalize, the same for every size."""
    mib = last_bytes / MIB
    xs, ys = [], []
    for size in np.unique(mib):
        xs.append(float(size))
        ys.append(float(np.median(finalize[mib == size])))
    if alone_point[0] / MIB not in xs:
        xs.append(alone_point[0] / MIB)
        ys.append(alone_point[1])
    f0, f1 = _line(np.array(xs), np.array(ys))
    if f1 <= 0:  # no growth with size: the fitted layouts' median, whatever the size
        return float(max(0.0, np.median(finalize))), 0.0
    return f0, f1
