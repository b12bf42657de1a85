"""Measurements that separate the model's terms: all-reduces alone, and backward alone.

A trace of DDP alone cannot tell per-transfer overhead, bandwidth and
contention apart: a transfer that ran during backward was slowed by it, so a
line through the transfers' durations puts contention into the overhead. This
module times, on the same ranks of the same run, what a fit needs to pin each
term down separately:

- **all-reduces alone**, the way nccl-tests times a collective: every rank
  waits at a barrier (nothing else runs: the training models are idle between
  their iterations), then all-reduces a float32 buffer of each size as DDP's
  default hook does (divide by the world size, ``all_reduce``, wait). A
  repetition's time is from the last rank's start to the last rank's end.
  On a GPU the buffers live on the model's device and each repetition is
  bracketed by ``torch.cuda.synchronize()``: NCCL's ``wait()`` only makes the
  current stream wait, so without it the time would be the launch's.
  ``time_allreduces`` runs one repetition of every size; the demo calls it
  once per round of layouts, so the repetitions share the machine's drift
  with the iterations, and the warm-up rounds are dropped;
- **backward alone**: a copy of the model under DDP whose communication hook
  hands every bucket back unreduced (``TraceRecorder(communicate=False)``), so
  backward runs with DDP's own bookkeeping and no communication at all.

``gather`` collects both on rank 0 as the trace's ``isolated`` block
(``traces/schema_v2.json``): durations in ms, and backward-alone
gradient times in ms from each rank's backward start.
"""

from __future__ import annotations

import time
from typing import Any

import torch
import torch.distributed as dist

from .recorder import TraceRecorder

__all__ = ["IsolatedTimer", "allreduce_sizes"]

FLOAT32_BYTES = 4


def allreduce_sizes(parameter_bytes: list[int], count: int = 7) -> list[int]:
    """``count`` all-reduce sizes in bytes, spaced evenly in log size from the smallest
    parameter to the whole gradient (every bucket DDP can make lies in that range),
    each a whole number of float32 values; fewer when the range is narrow."""
    low, high = min(parameter_bytes), sum(parameter_bytes)
    if count < 2 or high <= low:
        return [high - high % FLOAT32_BYTES or FLOAT32_BYTES]
    ratio = (high / low) ** (1 / (count - 1))
    sizes = {round(low * ratio**k / FLOAT32_BYTES) * FLOAT32_BYTES for k in range(count)}
    return sorted(max(FLOAT32_BYTES, s) for s in sizes)


class IsolatedTimer:
    """Times all-reduces alone and records backward alone on one rank (see the module docstring).

    ``backward`` is the recorder of the timing-only model copy (created with
    ``communicate=False``); run its iterations as any other, inside
    ``backward.iteration()``.
    """

    def __init__(
        self,
        sizes_bytes: list[int],
        backward: TraceRecorder,
        *,
        process_group: dist.ProcessGroup | None = None,
    ) -> None:
        if backward.communicate:
            raise ValueError("backward alone needs a recorder made with communicate=False")
        self.group = process_group if process_group is not None else dist.group.WORLD
        self.world_size = dist.get_world_size(self.group)
        self.rank = dist.get_rank(self.group)
        self.sizes = list(sizes_bytes)
        self.backward = backward
        # The training model's device: NCCL reduces CUDA tensors only.
        self.device = backward.devices[0] if backward.devices else torch.device("cpu")
        self._buffers = [torch.zeros(s // FLOAT32_BYTES, device=self.device) for s in self.sizes]
        self._rounds: list[list[tuple[int, int]]] = []  # per round, (start, end) ns per size

    def time_allreduces(self) -> None:
        """One repetition of every size, each after a barrier (a collective)."""
        times = []
        on_gpu = self.device.type == "cuda"
        for buffer in self._buffers:
            dist.barrier(group=self.group)
            if on_gpu:
                torch.cuda.synchronize(self.device)
            start = time.perf_counter_ns()
            dist.all_reduce(buffer.div_(self.world_size), group=self.group, async_op=True).wait()
            if on_gpu:
                torch.cuda.synchronize(self.device)
            times.append((start, time.perf_counter_ns()))
        self._rounds.append(times)

    def gather(self, warmup: int) -> dict[str, Any] | None:
        """The ``isolated`` block on rank 0 (None elsewhere), the first ``warmup`` rounds
        and backward-alone iterations dropped (a collective: every rank calls it)."""
        mine = {"rounds": self._rounds, "backward": self.backward.local_iterations()}
        gathered: list[Any] | None = [None] * self.world_size if self.rank == 0 else None
        dist.gather_object(mine, gathered, dst=0, group=self.group)
        if self.rank != 0:
            return None
        return build_isolated(gathered, self.sizes, warmup)


def build_isolated(per_rank: list[dict[str, Any]], sizes: list[int], warmup: int) -> dict[str, Any]:
    """The ``isolated`` block from each rank's raw records (ns clock readings)."""
    rounds = [r["rounds"][warmup:] for r in per_rank]
    n_rounds = {len(r) for r in rounds}
    if len(n_rounds) != 1:
        raise ValueError(f"ranks timed different numbers of all-reduce rounds: {n_rounds}")
    allreduce = []
    for k, size in enumerate(sizes):
        ms = []
        for i in range(len(rounds[0])):
            start = max(r[i][k][0] for r in rounds)
            end = max(r[i][k][1] for r in rounds)
            ms.append(round((end - start) / 1e6, 4))
        allreduce.append({"bytes": int(size), "ms": ms})
    iterations = []
    alone = [r["backward"][warmup:] for r in per_rank]
    for i in range(len(alone[0])):
        ranks = []
        for records in alone:
            rec = records[i]
            start = rec["backward_start"]
            ranks.append(
                {
                    "backward_ms": round((rec["backward_return"] - start) / 1e6, 4),
                    "grad_ready": [round((t - start) / 1e6, 4) for t in rec["grad_ready"]],
                }
            )
        iterations.append({"ranks": ranks})
    return {
        "method": (
            "all-reduces alone: after a barrier on every rank, divide a float32 buffer by the "
            "world size and all_reduce it, one repetition of each size per round of the run "
            "(warm-up rounds dropped); ms from the last rank's start to the last rank's end. "
            "Backward alone: a copy of the model under DDP whose communication hook hands "
            "every bucket back unreduced; ms from each rank's backward start."
        ),
        "allreduce": allreduce,
        "backward": iterations,
    }
