"""Regimes: which part of the system sets the step, by rules on the schedule's numbers."""

from __future__ import annotations

import numpy as np

REGIMES = ("latency-bound", "overlap-limited", "link-saturated", "communication-bound")

# The last bucket must wait for the link by at least this share of its own
# transfer before the link, not the last transfer, is said to set the tail.
SATURATION_SHARE = 0.1


def regime_codes(
    traffic: np.ndarray,
    backward_end: np.ndarray,
    overhead: np.ndarray,
    last_wait: np.ndarray,
    last_transfer: np.ndarray,
) -> np.ndarray:
    """Index into ``REGIMES`` for each row; the rules are listed on ``Schedule.regime``."""
    return np.select(
        [
            traffic >= backward_end,
            overhead >= traffic,
            last_wait > SATURATION_SHARE * last_transfer,
        ],
        [3, 0, 2],
        default=1,
    )
