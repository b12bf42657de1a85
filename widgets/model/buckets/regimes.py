"""Regimes: which part of the system sets the step, as definitions on the numbers.

A regime is decided from a schedule's numbers alone, by the first of these
rules that holds. Every number a rule reads is kept on the ``Regime`` record, so
a page can show what decided it. Times are in ms.

Numbers. E is backward end, C communication end, tail = max(0, C - E). W
(traffic) is the bandwidth part of all transfers, ``2(p-1)/p * total MB /
bandwidth``: it does not depend on the bucketing. O (overhead) is the latency
part, ``n_buckets * 2(p-1) * latency``. L = W + O is the link's work. Hidden is
the transfer time that runs before E; overlap share = hidden / L. The last
bucket (highest index) is launched only once every gradient is ready (buckets
launch in index order), so the tail is exactly its launch delay after E (host
enqueue time, 0 by default) + its wait for the link + its transfer.

1. **communication-bound**: W >= E - ``TOLERANCE_MS`` (W at least E, as far as
   the readouts can tell). Even with no overhead the link needs as long as all
   of backward or longer, so no bucketing hides it: the tail is at least W - E.
2. **no overlap**: hidden <= ``TOLERANCE_MS``. No transfer runs during
   backward (one bucket, or the first iteration of DDP), so the whole link work
   is exposed.
3. **latency-bound**: O / L >= ``LATENCY_SHARE`` *and* the suggestion is
   ``LARGER_BUCKETS``: overhead is at least half the link's work and a larger
   bucket really is faster.
4. **link-saturated**: the last bucket waited for the link by more than
   ``TOLERANCE_MS``: transfers queued, and the tail is the last transfer plus
   that backlog.
5. **overlap-limited**: otherwise. The last bucket did not wait for the link, so
   the tail equals the last transfer (plus any launch delay) within
   ``TOLERANCE_MS``.

Worked example (defaults: 12 layers of 2 ms and 25 MB, 25 GB/s, 8 ranks,
0.05 ms per ring step). At 3 layers per bucket: E = 24, W = 21 < 24, four
5.95 ms transfers each start when ready, hidden = 17.85, O = 2.8 (12 % of L),
the last bucket waits 0: **overlap-limited**, tail 5.95 = its transfer. At
1 layer per bucket the 2.45 ms transfers outpace the 2 ms of backward between
them; the last waits 4.95 ms: **link-saturated**, tail 7.40. At 12 layers per
bucket the one transfer starts at E: **no overlap**, tail 21.70 = L.

Suggestion. Among every setting of the bucketing knob (1 to n layers per
bucket; for a byte cap, ``default_caps`` and the cap itself) the best is the
shortest step, ties going to the larger bucket. The suggestion is
``LARGER_BUCKETS`` or ``SMALLER_BUCKETS`` when the best is larger or smaller
than the current setting *and* shorter by more than ``TOLERANCE_MS``, and
``NONE`` otherwise: the current setting is as good as any. It is ``None`` on a
``Regime`` when no sweep was evaluated (an assignment given by hand).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

#: Overhead share of the link's work from which a step may be latency-bound.
LATENCY_SHARE = 0.5
#: Two times closer than this are equal: half the readouts' 0.01 ms precision.
TOLERANCE_MS = 0.005


class RegimeKind(StrEnum):
    """The regimes, in the order their rules are tried."""

    COMMUNICATION_BOUND = "communication-bound"
    NO_OVERLAP = "no overlap"
    LATENCY_BOUND = "latency-bound"
    LINK_SATURATED = "link-saturated"
    OVERLAP_LIMITED = "overlap-limited"


class Suggestion(StrEnum):
    """Which way the bucket size should move for a shorter step."""

    LARGER_BUCKETS = "larger buckets"
    SMALLER_BUCKETS = "smaller buckets"
    NONE = "none"


KINDS = tuple(RegimeKind)
SUGGESTIONS = tuple(Suggestion)
REGIMES = tuple(k.value for k in KINDS)


@dataclass(frozen=True)
class Regime:
    """A regime with the numbers and thresholds that decided it (times in ms)."""

    kind: RegimeKind
    suggestion: Suggestion | None
    backward_end_ms: float
    traffic_ms: float
    overhead_ms: float
    link_work_ms: float
    overhead_share: float
    hidden_ms: float
    overlap_share: float
    tail_ms: float
    last_transfer_ms: float
    last_link_wait_ms: float
    last_launch_delay_ms: float
    step_ms: float
    best_step_ms: float | None
    best_setting: float | None
    latency_share: float = LATENCY_SHARE
    tolerance_ms: float = TOLERANCE_MS

    @property
    def gain_ms(self) -> float | None:
        """How much shorter the best setting's step is (None without a sweep)."""
        return None if self.best_step_ms is None else self.step_ms - self.best_step_ms


def suggestion_codes(
    setting: np.ndarray, step: np.ndarray, best_setting: np.ndarray, best_step: np.ndarray
) -> np.ndarray:
    """Index into ``SUGGESTIONS`` for each row, from its step and the best one."""
    faster = best_step < step - TOLERANCE_MS
    return np.select(
        [faster & (best_setting > setting), faster & (best_setting < setting)], [0, 1], default=2
    )


def regime_codes(
    traffic: np.ndarray,
    backward_end: np.ndarray,
    overhead: np.ndarray,
    hidden: np.ndarray,
    last_wait: np.ndarray,
    suggestion: np.ndarray | None,
) -> np.ndarray:
    """Index into ``KINDS`` for each row, by the rules in this module's docstring.

    ``suggestion`` holds ``SUGGESTIONS`` indices, or is None when unknown (then
    no row is latency-bound).
    """
    link_work = traffic + overhead
    larger = (
        np.zeros(np.shape(traffic), bool)
        if suggestion is None
        else suggestion == SUGGESTIONS.index(Suggestion.LARGER_BUCKETS)
    )
    return np.select(
        [
            traffic >= backward_end - TOLERANCE_MS,
            hidden <= TOLERANCE_MS,
            (overhead >= LATENCY_SHARE * link_work) & larger,
            last_wait > TOLERANCE_MS,
        ],
        [0, 1, 2, 3],
        default=4,
    )
