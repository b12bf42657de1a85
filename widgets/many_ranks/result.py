"""What the ranks view shows for its settings: a schedule on every drawn rank, or ranks
that disagree on which collectives run; and a sweep over bucket sizes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.rank_schedule import RankSchedule


@dataclass(frozen=True)
class Collective:
    """One launched all-reduce: which bucket, how many MB."""

    bucket: int
    size_mb: float


@dataclass(frozen=True)
class Disagreement:
    """Ranks that run different collectives: there is no timeline, only sequences.

    Rank ``skipping_rank`` takes a branch that never produces layer
    ``skipped_layer``'s gradient (a skipped layer, or a parameter left unused
    without ``find_unused_parameters=True``). Its bucket ``mismatch_index`` is
    then never ready there, and since buckets launch in index order, neither
    it nor any later bucket is ever launched on that rank: the sequences agree
    on collectives ``0 .. mismatch_index - 1`` and stop matching at collective
    ``mismatch_index``, where every other rank waits for a partner that never
    comes. Example: 12 layers, 3 per bucket, rank 1 skips layer 7: buckets hold
    layers 12–10, 9–7, 6–4, 3–1, so the sequences stop matching at collective 1
    (bucket 1); rank 1 has launched only bucket 0.
    """

    sequences: tuple[tuple[Collective, ...], ...]  # per shown rank, in launch order
    mismatch_index: int
    skipping_rank: int
    skipped_layer: int

    @property
    def matched(self) -> int:
        """Collectives every rank launched before the sequences stop matching."""
        return self.mismatch_index

    @property
    def waiting_ranks(self) -> list[int]:
        """The ranks that launch the mismatched collective and wait in it."""
        return [r for r, seq in enumerate(self.sequences) if len(seq) > self.mismatch_index]

    def outcome(self) -> str:
        """What happens to the job, as PyTorch reports it."""
        k, r, layer = self.mismatch_index, self.skipping_rank, self.skipped_layer
        others = ", ".join(str(x) for x in self.waiting_ranks)
        return (
            f"The job hangs at collective {k}. Ranks {others} launch the all-reduce of bucket "
            f"{k} and wait in it for rank {r}, which never launches it: layer {layer}'s "
            f"gradient never arrives there, and buckets launch in index order, so no later "
            f"bucket launches on rank {r} either. The waiting ranks stay blocked until the "
            "collective times out (an NCCL watchdog or gloo timeout error). Rank "
            f"{r}'s backward returns with bucket {k} unreduced, and its next iteration fails "
            "with “Expected to have finished reduction in the prior iteration before starting "
            "a new one”. With TORCH_DISTRIBUTED_DEBUG=DETAIL, PyTorch checks that every rank "
            f"runs the same collective, reports the mismatch, and names the parameters that "
            f"received no gradient on rank {r}."
        )

    @staticmethod
    def fix() -> str:
        """What makes the ranks agree again."""
        return (
            "Make every rank run the same branch (the same layers, every step), or construct "
            "DDP with find_unused_parameters=True: it marks parameters that got no gradient "
            "as ready after forward, so their bucket still launches on every rank (at the "
            "cost of a graph traversal every step)."
        )


@dataclass(frozen=True, eq=False)
class RanksResult:
    """The ranks view's numbers: a schedule, or a disagreement and no timeline."""

    scenario: str
    bucket_layers: tuple[np.ndarray, ...]  # per bucket, its layers (1-based), highest first
    bucket_size_mb: np.ndarray
    transfer_ms: np.ndarray  # at full speed
    ring_ranks: int
    forward_ms: float
    optimizer_ms: float
    schedule: RankSchedule | None
    disagreement: Disagreement | None
    iteration: int = 1
    #: Per drawn rank, the bucket each layer would join if that rank cut buckets from its
    #: own readiness order (DDP uses rank 0's on every rank instead).
    own_buckets: tuple[np.ndarray, ...] = ()

    @property
    def n_buckets(self) -> int:
        """Number of buckets."""
        return self.bucket_size_mb.size

    @property
    def step_time(self) -> float:
        """Forward + start of the optimizer + optimizer (NaN when there is no timeline)."""
        if self.schedule is None:
            return float("nan")
        return self.forward_ms + self.schedule.optimizer_start + self.optimizer_ms

    @property
    def fastest_rank(self) -> int:
        """The rank whose backward ends first (it idles longest)."""
        return int(np.argmin(self.schedule.backward_end))

    @property
    def fastest_idle_ms(self) -> float:
        """How long the fastest rank waits between its backward end and the optimizer."""
        return float(self.schedule.idle_ms[self.fastest_rank])

    @property
    def defining_mask(self) -> np.ndarray:
        """(R, B) every rank whose launch of a bucket was the last (ties give several)."""
        launch = self.schedule.bucket_launch
        tol = 1e-9 * max(1.0, float(np.abs(launch).max()))
        return launch >= launch.max(axis=0) - tol

    @property
    def tied(self) -> np.ndarray:
        """(B,) whether more than one rank launched a bucket last, at the same time."""
        return self.defining_mask.sum(axis=0) > 1

    @property
    def global_ready(self) -> np.ndarray:
        """(B,) when each bucket is ready on every rank: the latest rank's readiness."""
        return self.schedule.bucket_ready.max(axis=0)

    @property
    def defining_ranks(self) -> np.ndarray:
        """(B,) the rank whose launch came last, so defined when each bucket could start."""
        return self.schedule.bucket_defining_rank

    @property
    def peer_wait_ms(self) -> np.ndarray:
        """(R,) per rank, the time its launched collectives waited for a later peer's
        launch: ``sum_b (max_r' launch_b(r') - launch_b(r))``."""
        launch = self.schedule.bucket_launch
        return (launch.max(axis=0)[None, :] - launch).sum(axis=1)

    @property
    def ranks_cutting_otherwise(self) -> list[int]:
        """Ranks whose own readiness order would cut other buckets than rank 0's."""
        if not self.own_buckets:
            return []
        first = self.own_buckets[0]
        return [r for r, a in enumerate(self.own_buckets) if not np.array_equal(a, first)]

    def issue_to_completion(self, rank: int = 0) -> np.ndarray:
        """(B,) time from a rank's launch of each collective to its completion."""
        s = self.schedule
        return s.bucket_end - s.bucket_launch[rank]


@dataclass(frozen=True, eq=False)
class RanksSweep:
    """Step time and overlap share for every layers-per-bucket value, 1..n."""

    setting: np.ndarray
    n_buckets: np.ndarray
    step_time: np.ndarray
    overlap_fraction: np.ndarray

    @property
    def best_index(self) -> int:
        """The shortest step (ties go to the larger bucket)."""
        step = self.step_time
        return int(np.flatnonzero(np.isclose(step, step.min(), rtol=1e-12, atol=0.0))[-1])
