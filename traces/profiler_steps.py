"""What the profiler import gives: collectives, steps, one rank's profile, every rank's.

Times are microseconds on the profile file's timeline; see ``profiler`` for
which events each field is taken from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .intervals import intersection, merge


@dataclass(frozen=True)
class Collective:
    """One collective on one rank: its launch (host) and when it ran (device or gloo thread)."""

    kind: str  # "all_reduce", "broadcast", ...
    bytes: int | None
    launch_us: float  # the launching op starts (host)
    launch_end_us: float  # it returns (host): the asynchronous call is enqueued
    start_us: float
    end_us: float


@dataclass(frozen=True)
class RankStep:
    """One ``ProfilerStep#N`` on one rank, in microseconds on the file's timeline."""

    iteration: int
    rank: int
    step_start_us: float  # the ProfilerStep range (host)
    step_end_us: float
    forward_start_us: float  # first DistributedDataParallel.forward (host)
    forward_end_us: float  # last one before the optimizer
    optimizer_start_us: float | None  # Optimizer.step#... (host); None when absent
    optimizer_end_us: float | None
    backward_start_us: float  # first backward compute
    backward_end_us: float  # last backward compute
    compute: np.ndarray  # (K, 2) merged intervals of backward compute
    compute_ends: np.ndarray  # (K',) each backward kernel's (or op piece's) end, sorted
    buckets: tuple[Collective, ...]  # in launch order = bucket index
    others: tuple[Collective, ...]  # every other collective of the step, in launch order
    readiness_us: tuple[float, ...]  # gradients ready (AccumulateGrad; see profiler_backward)
    optimizer_device_end_us: float | None  # last kernel the optimizer launched ends (GPU)
    # per bucket: when its last gradient was ready (device on GPUs; see profiler_file._step)
    bucket_ready_us: tuple[float, ...] = ()
    # per bucket: how long its all-reduce waited for the last rank to join (every rank given)
    peer_wait_us: tuple[float, ...] | None = None

    @property
    def communication_end_us(self) -> float:
        """End of the last bucket's all-reduce."""
        return max(b.end_us for b in self.buckets)

    @property
    def exposed_tail_us(self) -> float:
        """How long communication runs on after backward compute has finished."""
        return max(0.0, self.communication_end_us - self.backward_end_us)

    @property
    def step_end_point_us(self) -> float:
        """End of the optimizer, or of the step's last device activity if later."""
        end = self.optimizer_end_us if self.optimizer_end_us is not None else self.step_end_us
        device = self.optimizer_device_end_us
        return max(end, device if device is not None else end, self.communication_end_us)

    @property
    def step_us(self) -> float:
        """From the start of forward to ``step_end_point_us``."""
        return self.step_end_point_us - self.forward_start_us

    @property
    def overlap(self) -> float | None:
        """Share of the buckets' all-reduce time (their union) during which compute runs."""
        comm = merge(np.array([(b.start_us, b.end_us) for b in self.buckets], float))
        total = float((comm[:, 1] - comm[:, 0]).sum())
        if total <= 0:
            return None
        return float(intersection(comm, self.compute)) / total


@dataclass(frozen=True)
class RankProfile:
    """What one rank's profile file says: its metadata and its steps."""

    name: str
    rank: int
    backend: str
    world_size: int | None
    device_times: bool  # kernels' device times (GPU) or host times (CPU)
    metadata: dict[str, Any]
    steps: tuple[RankStep, ...]
    notes: tuple[str, ...] = ()
    file: str | None = None  # the file it came from, when it holds several ranks (else name)


@dataclass(frozen=True)
class Profile:
    """Every imported rank, on the iterations all their files hold."""

    ranks: tuple[RankProfile, ...]  # sorted by rank
    iterations: tuple[int, ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def device_times(self) -> bool:
        """Whether the collectives' and compute's times are device times."""
        return all(r.device_times for r in self.ranks)

    def step(self, iteration: int, rank: int) -> RankStep:
        """The step of ``rank`` at ``iteration``."""
        for r in self.ranks:
            if r.rank == rank:
                for s in r.steps:
                    if s.iteration == iteration:
                        return s
        raise KeyError((iteration, rank))
