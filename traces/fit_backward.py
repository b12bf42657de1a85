"""Backward per layer and the contention factor, from the gradient intervals.

A gradient's interval on a rank lasts ``d``, a share ``phi`` of it while a
transfer was in flight; the model says ``d * (1 - k phi) = w_p`` with
``k = c / (1 + c)`` (work at speed 1 outside transfers, ``1 / (1 + c)`` inside).
With backward timed alone, ``w_p`` is given and ``k`` is the median of
``(1 - w_p / d) / phi`` over the mostly busy intervals. Without, regressing
``d`` on the busy time ``phi d`` would be biased (the busy time grows with the
noise in ``d``), so the fit is in two robust steps, a few rounds: ``w_p`` is the
median of ``d (1 - k phi)`` over the intervals of parameter p that were nearly
free of transfers (all of them if fewer than ``MIN_FREE`` were), and ``k`` as
above over the busy intervals of parameters also seen free. A layout whose
transfers cover every layer therefore needs a second layout (e.g. one bucket)
to separate backward time from contention.

The ranks are not slowed alike on shared cores, and the step waits for the
slowest: ``rank_contention`` is each iteration's most slowed rank's factor, the
second most's, and so on (medians over the iterations).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .fit_observations import BUSY_SHARE, FREE_SHARE, MIN_BUSY, MIN_FREE, Observations
from .fit_quality import FitQuality

MAX_K = 0.95  # c = k / (1 - k) <= 19: beyond that a fit has gone wrong
ROUNDS = 4


@dataclass(frozen=True)
class BackwardTerms:
    """Backward per parameter at normal speed and how much transfers slow it."""

    per_parameter_ms: np.ndarray
    k: float  # c / (1 + c)
    # Did enough intervals run under transfers (without backward alone: intervals of
    # parameters also seen free of them) to pin k down?
    identified: bool
    rank_contention: tuple[float, ...]
    quality: FitQuality

    @property
    def contention(self) -> float:
        """The pooled contention factor c."""
        return self.k / (1.0 - self.k)

    def why_unidentified(self, from_alone: bool) -> str:
        """Why contention was not identified, for the fit's ``unidentified``."""
        if from_alone:
            return "backward contention: no fitted layout ran a transfer under backward"
        return (
            "backward contention: no layer was seen both with and without a transfer "
            "in flight (add a layout with one bucket)"
        )


def _share_k(
    w: np.ndarray, d: np.ndarray, phi: np.ndarray, g: np.ndarray, busy: np.ndarray
) -> float:
    """``k`` as the median of ``(1 - w_p / d) / phi`` over the ``busy`` intervals."""
    return float(np.clip(np.median((1.0 - w[g[busy]] / d[busy]) / phi[busy]), 0.0, MAX_K))


def fit_backward(
    seen: Observations,
    alone_ms: np.ndarray | None,
    n_params: int,
    world: int,
    with_contention: bool,
) -> BackwardTerms:
    """Backward per parameter (``alone_ms`` when timed alone) and contention from ``seen``.

    ``with_contention=False`` is the baseline: k = 0 and every rank's factor 0.
    """
    d, phi, g = seen.interval_ms, seen.busy_share, seen.parameter
    k = 0.0
    if alone_ms is not None:
        w = np.asarray(alone_ms, float)
        busy = phi >= BUSY_SHARE
        identified = bool(busy.sum() >= MIN_BUSY)
        if with_contention and identified:
            k = _share_k(w, d, phi, g, busy)
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
            k = _share_k(w, d, phi, g, busy)
    per_param = np.clip(w, 0.0, None)
    if with_contention:
        by_rank = _rank_contention(d, phi, per_param[g], busy, seen.sample, world, k)
    else:
        by_rank = (0.0,) * world
    return BackwardTerms(
        per_parameter_ms=per_param,
        k=k,
        identified=identified,
        rank_contention=by_rank,
        quality=FitQuality.between(d, per_param[g] / (1.0 - k * phi)),
    )


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
