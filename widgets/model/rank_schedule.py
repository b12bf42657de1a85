"""``RankSchedule``: one step's schedule on every rank, as ``ranks.rank_schedule`` solves it.

``(R, L)`` arrays are per rank and layer, ``(R, B)`` per rank and bucket,
``(B,)`` per bucket; times in the caller's unit (ms throughout this project).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class RankSchedule:
    """One step's schedule on every rank. ``(R, L)`` arrays are indexed like the input layers.

    Worked example (``c = 0``): two ranks, four layers computed in the order
    given, buckets ``[0, 0, 1, 1]``, transfers 1 ms. Rank 0 is slow early
    (backward ``[2, 2, 1, 1]`` ms), rank 1 late (``[1, 1, 3, 3]``):

    - gradients ready: rank 0 at 2, 4, 5, 6; rank 1 at 1, 2, 5, 8;
    - bucket 0 is ready at 4 on rank 0 and 2 on rank 1: it starts at 4 (rank 0
      defines it) and ends at 5;
    - bucket 1 is ready at 6 and 8: it starts at 8 (rank 1) and ends at 9;
    - backward ends at 6 and 8; the optimizer starts at 9; rank 0 is idle 3 ms,
      rank 1 1 ms; the exposed tail is 9 - 8 = 1 ms.
    """

    order: np.ndarray  # (L,) layer indices in the order backward computes them
    layer_bucket: np.ndarray  # (L,) bucket of each layer
    backward_ms: np.ndarray  # (R, L) backward time of each layer at normal speed
    transfer_ms: np.ndarray  # (B,)
    contention: np.ndarray  # (R,) each rank's backward slowdown factor under transfers
    transfer_contention: float
    enqueue_ms: float
    layer_start: np.ndarray  # (R, L) when each layer's backward starts
    layer_ready: np.ndarray  # (R, L) when each layer's gradient is ready
    bucket_ready: np.ndarray  # (R, B)
    bucket_launch: np.ndarray  # (R, B)
    bucket_start: np.ndarray  # (B,) every rank joined and the link free
    bucket_end: np.ndarray  # (B,) completion
    bucket_defining_rank: np.ndarray  # (B,) the rank with the latest launch
    backward_start: np.ndarray  # (R,)
    backward_end: np.ndarray  # (R,) when each rank's last gradient is ready
    comm_end: float
    optimizer_start: float
    idle_ms: np.ndarray  # (R,) optimizer_start - backward_end

    @property
    def n_ranks(self) -> int:
        """Number of ranks."""
        return self.layer_ready.shape[0]

    @property
    def n_buckets(self) -> int:
        """Number of buckets."""
        return self.bucket_start.size

    @property
    def bucket_link_wait(self) -> np.ndarray:
        """How long each bucket, launched everywhere, waited for the link."""
        return self.bucket_start - self.bucket_launch.max(axis=0)

    @property
    def last_backward_end(self) -> float:
        """When the slowest rank's backward ends."""
        return float(self.backward_end.max())

    @property
    def exposed_tail(self) -> float:
        """Communication left after the last backward ends: ``max(0, C - max_r E_r)``."""
        return max(0.0, self.comm_end - self.last_backward_end)

    @property
    def slowdown_ms(self) -> np.ndarray:
        """(R,) how much longer each rank's backward took than its work at normal speed."""
        return self.backward_end - self.backward_start - self.backward_ms.sum(axis=1)

    @property
    def bucket_duration_ms(self) -> np.ndarray:
        """(B,) how long each transfer took (longer than ``transfer_ms`` under contention)."""
        return self.bucket_end - self.bucket_start

    @property
    def overlap_fraction(self) -> float:
        """Share of the time transfers ran that was before the last backward ended."""
        total = float(self.bucket_duration_ms.sum())
        if total == 0:
            return 0.0
        e = self.last_backward_end
        hidden = np.clip(np.minimum(self.bucket_end, e) - self.bucket_start, 0.0, None).sum()
        return float(hidden / total)

    @property
    def busy_intervals(self) -> np.ndarray:
        """(B, 2) start and end of each transfer: the link-busy intervals."""
        return np.stack([self.bucket_start, self.bucket_end], axis=1)
