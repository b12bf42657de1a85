"""What a fit reads off the kept iterations of its traces, before any term is fitted.

Per (iteration, rank), each gradient's interval (from the previous gradient
there, or backward start) and the share of it during which a transfer was in
flight; per iteration, every bucket's transfer with the compute around it
(``Transfers``) and the medians the model takes as given: **enqueue** (launch
minus readiness of everything before it), **start skew** (how much earlier than
the last rank the others start backward), **forward**, **finalize** (backward
return after the last transfer or gradient) and **after return** (last
optimizer end after backward returns). ``measure`` says how bucket start and
end are read from a trace.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from .load import Trace
from .measure import measure, quiet_iterations

FREE_SHARE = 0.1  # an interval at most this busy counts as free of transfers
BUSY_SHARE = 0.5  # ...and at least this busy informs a contention factor
MIN_BUSY = 5  # busy intervals (or transfers under compute) needed to identify a factor
# A parameter counts as seen free with at least this many free intervals: the
# median of fewer is one stray interval (the scheduler preempting a rank) away
# from several times the layer's real time.
MIN_FREE = 5

#: One measured transfer: its bytes, start and end, and every rank's backward start and end.
TransferRow = tuple[float, float, float, np.ndarray, np.ndarray]


@dataclass(frozen=True)
class Transfers:
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
    def build(cls, rows: list[TransferRow]) -> Transfers:
        """The pieces of every transfer in ``rows``."""
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

    def subset(self, keep: np.ndarray) -> Transfers:
        """The transfers where ``keep`` is true (e.g. those of known size)."""
        return Transfers(**{f.name: getattr(self, f.name)[keep] for f in fields(self)})

    def sized(self) -> Transfers:
        """The transfers whose bucket size is known (a profile may not give it)."""
        return self.subset(np.isfinite(self.size))

    def _inside(self) -> np.ndarray:
        """(N, P) how much of each piece lies within its measured transfer."""
        end = (self.start + self.duration)[:, None]
        inside = np.clip(np.minimum(self.edge + self.width, end) - self.edge, 0.0, None)
        return np.where(np.isfinite(self.edge), inside, 0.0)

    def computing_share(self) -> np.ndarray:
        """(N,) share of each measured transfer's duration during which some rank computed."""
        return (self._inside() * self.load).sum(axis=1) / np.maximum(self.duration, 1e-12)

    def work(self, c_t: float) -> np.ndarray:
        """(N,) transfer work done during each measured transfer, had contention been c_t."""
        return (self._inside() / (1.0 + c_t * self.load)).sum(axis=1)

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


@dataclass(frozen=True)
class Observations:
    """The kept iterations of every fitted trace, in the fit's terms (times in ms)."""

    interval_ms: np.ndarray  # every gradient interval on every rank
    busy_share: np.ndarray  # the share of each interval with a transfer in flight
    parameter: np.ndarray  # whose gradient ends each interval (ranks pooled)
    sample: np.ndarray  # its (iteration, rank), numbered 0, 1, ... ``world`` per iteration
    readiness_order: np.ndarray  # parameters by median readiness
    transfers: Transfers
    enqueue_ms: float
    start_skew_ms: float
    forward_ms: float
    after_return_ms: float
    finalize_ms: np.ndarray  # per iteration
    last_bucket_bytes: np.ndarray  # per iteration
    iterations_used: int
    iterations_dropped: int


def _busy_overlap(lo: np.ndarray, hi: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Length of [lo, hi] covered by the disjoint intervals [start_b, end_b], per row."""
    return np.clip(
        np.minimum(hi[..., None], end[..., None, :])
        - np.maximum(lo[..., None], start[..., None, :]),
        0.0,
        None,
    ).sum(axis=-1)


def observe(traces: list[Trace], max_other_load: float | None) -> Observations:
    """What the quiet iterations of ``traces`` (same parameters and ranks) show."""
    world = traces[0].n_ranks
    intervals, covered, parameter, sample, ready_rel, enqueue = [], [], [], [], [], []
    rows: list[TransferRow] = []
    skew, forward, finalize, after, last_bytes = [], [], [], [], []
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
                intervals.append(hi - lo)
                covered.append(_busy_overlap(lo, hi, start, end))
                parameter.append(seq)
                sample.append(np.full(seq.size, len(sample)))
                ready_rel.append(ready)
                running = np.maximum.accumulate(m.bucket_ready[i, r])
                enqueue.append(t.issue[i, r] - m.t0[i] - running)
            lo_r, hi_r = m.backward_start[i], m.backward_end[i]
            for b in range(t.n_buckets):
                rows.append((float(t.bucket_bytes[b]), start[b], end[b], lo_r, hi_r))
            skew.append(float(-m.backward_start[i].min()))
            forward.append(m.forward_ms[i])
            finalize.append(
                m.backward_return_ms[i] - max(m.communication_end_ms[i], m.compute_end_ms[i])
            )
            last_bytes.append(float(t.bucket_bytes[-1]))
            after.append(m.after_return_ms[i])
    d = np.concatenate(intervals)
    return Observations(
        interval_ms=d,
        busy_share=np.concatenate(covered) / np.maximum(d, 1e-12),
        parameter=np.concatenate(parameter),
        sample=np.concatenate(sample),
        readiness_order=np.argsort(np.median(np.stack(ready_rel), axis=0), kind="stable"),
        transfers=Transfers.build(rows),
        enqueue_ms=float(max(0.0, np.median(np.concatenate(enqueue)))),
        start_skew_ms=float(np.median(skew)),
        forward_ms=float(np.median(forward)),
        after_return_ms=float(np.median(after)),
        finalize_ms=np.array(finalize),
        last_bucket_bytes=np.array(last_bytes),
        iterations_used=used,
        iterations_dropped=dropped,
    )
