"""What a recording says about the run that made it: the ``metadata`` of its trace."""

from __future__ import annotations

import os
import platform
from datetime import UTC, datetime
from typing import Any

import torch
import torch.distributed as dist

from .timing import Timer


def gpu_names(devices: list[torch.device]) -> list[str]:
    """The name of each CUDA device in ``devices``."""
    return [torch.cuda.get_device_name(d) for d in devices]


def recording_metadata(
    group: dist.ProcessGroup,
    timer: Timer,
    devices: list[torch.device],
    *,
    bucket_cap_mb: float | None,
    model_description: str,
    warmup: int,
    note: str,
) -> dict[str, Any]:
    """The trace's metadata for a run on ``group``, timed by ``timer``, on ``devices``
    (none: the CPU); GPU names are the caller's to add, from every rank."""
    backend = str(dist.get_backend(group))
    on_device = timer.times == "device"
    clock = "time.perf_counter_ns (one clock for every process on the machine)"
    if on_device:
        clock = (
            "CUDA events placed on time.perf_counter_ns by a reference event at each "
            "iteration's start (one clock for every process on the machine)"
        )
    meta: dict[str, Any] = {
        "torch_version": torch.__version__,
        "backend": backend,
        "device": "cuda" if devices else "cpu",
        "world_size": dist.get_world_size(group),
        "bucket_cap_mb": bucket_cap_mb,
        "cpu_count": os.cpu_count() or 1,
        "threads_per_rank": torch.get_num_threads(),
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        "warmup_iterations": warmup,
        "model": model_description,
        "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "python_version": platform.python_version(),
        "clock": clock,
        "note": note,
        "source": "recorder",
        "times": timer.times,
        "readiness": "per-parameter",
    }
    if devices:
        nccl = backend == "nccl"
        meta["nccl_version"] = ".".join(map(str, torch.cuda.nccl.version())) if nccl else None
    return meta
