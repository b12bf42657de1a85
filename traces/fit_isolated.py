"""The terms that need no overlap to be seen, from the trace's ``isolated`` block.

``overlap-lab record`` times, on the same ranks in the same run
(``traces.recorder.isolated``), the all-reduce alone at several sizes (warm-up,
repetitions, median) and backward alone with communication held back. From
them:

- **backward per layer** ``w_p``: the median of each parameter's interval in
  backward alone (ranks pooled), scaled so that they add up to the median whole
  backward (intervals have a long right tail, so their medians add up short);
  and each model rank's scale, the k-th slowest rank's median backward against
  the median (the step waits for the slowest);
- **overhead** a and **bandwidth**: least squares through the median time of
  each size timed alone, ``T = a + S / bandwidth``, held within the sizes timed;
- **copy-back**: backward alone's time from its last gradient to its return,
  per MiB of the whole gradient (DDP copying every bucket back into the
  gradients, with nothing else running);
- **finalize**: a line in the last bucket's size (``finalize_line``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .fit_quality import FitQuality
from .load import Trace
from .measure import quiet_iterations
from .schema import MIB


@dataclass(frozen=True)
class BackwardAlone:
    """Backward with communication held back, as the fit uses it."""

    per_parameter_ms: np.ndarray
    rank_scale: tuple[float, ...]  # the slowest rank of an iteration first
    gradient_bytes: float  # the whole gradient's
    return_after_last_ms: float  # median return after the last gradient

    @property
    def finalize_point(self) -> tuple[float, float]:
        """The whole gradient's bytes and the return after the last gradient (ms)."""
        return self.gradient_bytes, self.return_after_last_ms

    @property
    def copy_back_ms_per_mib(self) -> float:
        """The copy back into the gradients after backward, per MiB."""
        return max(0.0, self.return_after_last_ms) / (self.gradient_bytes / MIB)


@dataclass(frozen=True)
class AllReduceLine:
    """``T = overhead_ms + S * ms_per_byte`` through the all-reduces timed alone."""

    overhead_ms: float
    ms_per_byte: float
    quality: FitQuality
    size_range: tuple[float, float]  # the smallest and largest size timed, in bytes


def quiet_rounds(trace: Trace, max_other_load: float | None) -> Trace:
    """``trace`` with only the isolated measurements of its quiet rounds.

    The recorder times one repetition of each all-reduce and one backward alone
    per round, beside the round's iteration of each layout; when the counts
    match, a round's isolated measurements are kept or left out with its
    iteration (``measure.quiet_iterations``), so that other processes' load
    does not reach them either (``traces.trim`` keeps them paired). Otherwise
    (every round of a recording beside only some of its iterations) all are kept.
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


def _distinct_blocks(traces: list[Trace]) -> list[Trace]:
    """The traces with an isolated block, one per block: traces of one run carry the same."""
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
    return blocks


def _backward_alone(blocks: list[Trace]) -> BackwardAlone:
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
    after_last = np.concatenate(
        [t.alone_backward_ms - t.alone_grad_ready.max(axis=2) for t in blocks]
    )
    return BackwardAlone(
        per_parameter_ms=w,
        rank_scale=scale,
        gradient_bytes=float(sum(blocks[0].parameter_bytes)),
        return_after_last_ms=float(np.median(after_last)),
    )


def _all_reduce_line(blocks: list[Trace]) -> AllReduceLine:
    sizes = np.concatenate([t.isolated_bytes for t in blocks]).astype(float)
    medians = np.array([float(np.median(ms)) for t in blocks for ms in t.isolated_ms])
    a, beta = least_squares_line(sizes, medians)
    return AllReduceLine(
        overhead_ms=a,
        ms_per_byte=beta,
        quality=FitQuality.between(medians, a + beta * sizes),
        size_range=(float(sizes.min()), float(sizes.max())),
    )


def isolated_terms(
    traces: list[Trace], max_other_load: float | None
) -> tuple[BackwardAlone | None, AllReduceLine | None]:
    """Backward alone and the all-reduce line of the quiet rounds, or None without a block."""
    blocks = _distinct_blocks([quiet_rounds(t, max_other_load) for t in traces])
    if not blocks:
        return None, None
    return _backward_alone(blocks), _all_reduce_line(blocks)


def least_squares_line(sizes: np.ndarray, times: np.ndarray) -> tuple[float, float]:
    """``times = a + beta * sizes`` by least squares, with a >= 0 (else through the origin)."""
    if np.unique(sizes).size < 2:
        return 0.0, float(times.mean() / sizes[0])
    design = np.stack([np.ones_like(sizes), sizes], axis=1)
    (a, beta), *_ = np.linalg.lstsq(design, times, rcond=None)
    if a < 0:
        a, beta = 0.0, float((sizes * times).sum() / (sizes * sizes).sum())
    return float(a), float(beta)


def finalize_line(
    last_bytes: np.ndarray, finalize: np.ndarray, alone_point: tuple[float, float]
) -> tuple[float, float]:
    """Finalize as ``f0 + f1 * MiB of the last bucket``.

    DDP copies a reduced bucket back into the gradients once it completes, so
    the time from the last completion to backward's return grows with the last
    bucket. A line through each fitted layout's median, and backward alone's
    ``alone_point`` (bytes, ms: everything in one bucket, nothing reduced),
    which anchors the large end. A
    line that falls with size gives way to the fitted layouts' median finalize,
    the same for every size.
    """
    mib = last_bytes / MIB
    xs, ys = [], []
    for size in np.unique(mib):
        xs.append(float(size))
        ys.append(float(np.median(finalize[mib == size])))
    if alone_point[0] / MIB not in xs:
        xs.append(alone_point[0] / MIB)
        ys.append(alone_point[1])
    f0, f1 = least_squares_line(np.array(xs), np.array(ys))
    if f1 <= 0:  # no growth with size: the fitted layouts' median, whatever the size
        return float(max(0.0, np.median(finalize))), 0.0
    return f0, f1
