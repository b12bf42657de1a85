"""A recorder you can put in any DDP script: per-rank, per-iteration events of a real run.

Usage, on every rank, after ``init_process_group`` and wrapping the model::

    recorder = TraceRecorder(ddp_model)          # registers the hooks
    for step in range(steps):
        with recorder.iteration():
            loss = ddp_model(x).pow(2).mean()    # forward
            with recorder.backward():
                loss.backward()
            with recorder.optimizer():
                optimizer.step()
            optimizer.zero_grad()
    trace = recorder.gather(warmup=2)            # a collective: every rank calls it
    if trace is not None:                        # rank 0 gets the whole trace
        write_trace(trace, "run.json")

What it records, per rank and iteration (format: ``widgets/traces/schema_v1.json``):

- ``forward_start``, ``backward_start``, ``backward_return``, ``optimizer_start`` and
  ``optimizer_end``: when the ``iteration()``, ``backward()`` and ``optimizer()``
  blocks are entered and left;
- ``grad_ready`` per parameter: a ``register_post_accumulate_grad_hook`` on each
  parameter, which runs once its gradient has been accumulated into ``.grad``;
- per bucket, from a communication hook (``register_comm_hook``) that wraps DDP's
  default all-reduce: ``issue`` when DDP hands the bucket to the hook (the bucket
  is ready and every bucket before it has been launched), ``enqueued`` when the
  asynchronous all-reduce call has returned (what a timer around the call sees),
  and ``complete`` when a ``.then()`` callback on its future runs;
- how busy the machine was with other processes during the iteration (``/proc``).

All times come from ``time.perf_counter_ns``, a monotonic clock that processes on
one machine share, so ranks line up on one axis. Traces of ranks on different
machines would need their clocks aligned first; this recorder does not do that.

**What the timestamps mean on the CPU with gloo** (what this machine runs): the
collective runs on gloo's own worker threads, so ``complete`` is when the reduced
data is in the bucket on this rank, a few microseconds before the callback reads
the clock. Gloo has two worker threads, so two all-reduces can be in flight at
once; and those threads share the cores with backward, which is why compute slows
down while communication runs.

**On GPUs with NCCL** the collective is queued on a CUDA stream and the hook's
call returns at once; a future's ``.then()`` callback then runs when the work is
*enqueued* or synchronised on the host, not when the GPU has finished it, and
``post_accumulate_grad_hook`` runs when the host has *launched* the gradient's
kernels. Host timestamps there mark launches, not device completion. To time the
device, record ``torch.cuda.Event(enable_timing=True)`` on the communication and
compute streams and read ``elapsed_time`` after synchronising; this recorder does
not do that (this machine has no GPU to test it on), so on a GPU its ``complete``
and ``grad_ready`` are host times only.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel

from widgets.traces import FORMAT, VERSION, validate_trace, write_trace

__all__ = ["TraceRecorder", "build_trace", "write_trace"]

from . import machine


class TraceRecorder:
    """Hooks on one rank's DDP model that time gradients, buckets and the step's phases.

    Creating it registers a post-accumulate-grad hook on every parameter that
    requires a gradient and a communication hook on ``ddp_model`` (DDP allows one
    communication hook per model, registered before the first backward).
    With ``communicate=False`` the hook holds communication back: it hands each
    bucket back at once, unreduced, so backward runs with all of DDP's own
    bookkeeping but no all-reduce (backward alone, for ``widgets.traces.recorder.isolated``;
    the ranks' gradients are then not averaged, so use it on a model kept for timing).
    """

    def __init__(
        self,
        ddp_model: DistributedDataParallel,
        *,
        process_group: dist.ProcessGroup | None = None,
        bucket_cap_mb: float | None = None,
        model_description: str = "",
        communicate: bool = True,
    ) -> None:
        self.ddp = ddp_model
        self.communicate = communicate
        self.group = process_group if process_group is not None else dist.group.WORLD
        self.rank = dist.get_rank(self.group)
        self.world_size = dist.get_world_size(self.group)
        self.bucket_cap_mb = bucket_cap_mb
        self.model_description = model_description
        self._names: list[str] = []
        self._bytes: list[int] = []
        self._index_of: dict[int, int] = {}
        for name, p in ddp_model.module.named_parameters():
            if not p.requires_grad:
                continue
            self._index_of[id(p)] = len(self._names)
            self._names.append(name)
            self._bytes.append(p.numel() * p.element_size())
            p.register_post_accumulate_grad_hook(self._grad_hook(len(self._names) - 1))
        ddp_model.register_comm_hook(self.group, self._comm_hook)
        self._iterations: list[dict[str, Any]] = []
        self._current: dict[str, Any] | None = None

    @property
    def parameter_bytes(self) -> list[int]:
        """Gradient bytes of each recorded parameter, in registration order."""
        return list(self._bytes)

    # -- hooks ---------------------------------------------------------------

    def _grad_hook(self, index: int):
        def hook(_param: torch.Tensor) -> None:
            if self._current is not None:
                self._current["grad_ready"][index] = time.perf_counter_ns()

        return hook

    # DDP checks a hook's annotations against the real types, and this module's
    # annotations are strings (``from __future__ import annotations``), so the
    # hook carries none.
    def _comm_hook(self, state, bucket):
        issue = time.perf_counter_ns()
        if self.communicate:
            future = default_hooks.allreduce_hook(state, bucket)
        else:
            future = torch.futures.Future()
            future.set_result(bucket.buffer())
        enqueued = time.perf_counter_ns()
        record = {
            "index": bucket.index(),
            "bytes": bucket.buffer().numel() * bucket.buffer().element_size(),
            "parameters": [self._names[self._index_of[id(p)]] for p in bucket.parameters()],
            "issue": issue,
            "enqueued": enqueued,
            "complete": None,
        }
        if self._current is not None:
            self._current["buckets"].append(record)

        def done(fut: torch.futures.Future) -> torch.Tensor:
            record["complete"] = time.perf_counter_ns()
            return fut.value()

        return future.then(done)

    # -- phase marks -----------------------------------------------------------

    @contextmanager
    def iteration(self) -> Iterator[None]:
        """One training iteration: forward, backward and optimizer inside this block."""
        self._current = {
            "forward_start": time.perf_counter_ns(),
            "grad_ready": [None] * len(self._names),
            "buckets": [],
            "machine_ticks": machine.machine_busy_ticks(),
            "own_ticks": machine.own_cpu_ticks(),
        }
        try:
            yield
        finally:
            cur = self._current
            end = time.perf_counter_ns()
            busy, own = machine.machine_busy_ticks(), machine.own_cpu_ticks()
            cur["end"] = end
            cur["machine_ticks"] = None if busy is None else busy - cur["machine_ticks"]
            cur["own_ticks"] = None if own is None else own - cur["own_ticks"]
            self._iterations.append(cur)
            self._current = None

    @contextmanager
    def backward(self) -> Iterator[None]:
        """Around ``loss.backward()``: marks backward start and return."""
        self._mark("backward_start")
        yield
        self._mark("backward_return")

    @contextmanager
    def optimizer(self) -> Iterator[None]:
        """Around ``optimizer.step()``: marks optimizer start and end."""
        self._mark("optimizer_start")
        yield
        self._mark("optimizer_end")

    def _mark(self, key: str) -> None:
        if self._current is None:
            raise RuntimeError("mark phases inside recorder.iteration()")
        self._current[key] = time.perf_counter_ns()

    # -- output ----------------------------------------------------------------

    def local_iterations(self) -> list[dict[str, Any]]:
        """This rank's raw records (nanosecond clock readings), one per iteration."""
        return self._iterations

    def gather(
        self, warmup: int = 0, note: str = "", isolated: dict[str, Any] | None = None
    ) -> dict[str, Any] | None:
        """Collect every rank's records on rank 0 and build the trace (a collective).

        The first ``warmup`` iterations are dropped (iteration 0 reduces the whole
        model as one bucket before DDP rebuilds its buckets). ``isolated`` (from
        ``IsolatedTimer.gather``, rank 0) is stored as the trace's ``isolated``
        block. Returns the validated trace on rank 0 and None on the other ranks.
        """
        gathered: list[Any] | None = [None] * self.world_size if self.rank == 0 else None
        dist.gather_object(self._iterations, gathered, dst=0, group=self.group)
        if self.rank != 0:
            return None
        trace = build_trace(
            gathered,
            names=self._names,
            sizes=self._bytes,
            warmup=warmup,
            metadata=self._metadata(warmup, note),
        )
        if isolated is not None:
            trace["isolated"] = isolated
        validate_trace(trace)
        return trace

    def _metadata(self, warmup: int, note: str) -> dict[str, Any]:
        import platform
        from datetime import UTC, datetime

        return {
            "torch_version": torch.__version__,
            "backend": str(dist.get_backend(self.group)),
            "device": "cpu" if not torch.cuda.is_available() else "cuda",
            "world_size": self.world_size,
            "bucket_cap_mb": self.bucket_cap_mb,
            "cpu_count": os.cpu_count() or 1,
            "threads_per_rank": torch.get_num_threads(),
            "warmup_iterations": warmup,
            "model": self.model_description,
            "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "platform": platform.platform(),
            "python_version": platform.python_version(),
            "clock": "time.perf_counter_ns (one clock for every process on the machine)",
            "note": note,
        }


def build_trace(
    per_rank: list[list[dict[str, Any]]],
    *,
    names: list[str],
    sizes: list[int],
    warmup: int,
    metadata: dict[str, Any],
) -> dict[str, Any]:
    """The trace document from each rank's raw records (clock readings in ns).

    Times become milliseconds from the earliest kept reading (``origin_ns`` in the
    metadata), rounded to the microsecond. Iterations are matched by position:
    every rank runs the same iterations.
    """
    counts = {len(records) for records in per_rank}
    if len(counts) != 1:
        raise ValueError(f"ranks recorded different numbers of iterations: {sorted(counts)}")
    kept = [records[warmup:] for records in per_rank]
    if not kept[0]:
        raise ValueError(f"no iterations left after dropping {warmup} of warm-up")
    origin = min(r["forward_start"] for records in kept for r in records)

    def ms(ns: int | None) -> float:
        if ns is None:
            raise ValueError("an event was not recorded (did every phase run inside its block?)")
        return round((ns - origin) / 1e6, 3)

    cores = int(metadata["cpu_count"])
    iterations = []
    for i in range(len(kept[0])):
        ranks = []
        for rank, records in enumerate(kept):
            r = records[i]
            ranks.append(
                {
                    "rank": rank,
                    "forward_start": ms(r["forward_start"]),
                    "backward_start": ms(r.get("backward_start")),
                    "backward_return": ms(r.get("backward_return")),
                    "optimizer_start": ms(r.get("optimizer_start")),
                    "optimizer_end": ms(r.get("optimizer_end")),
                    "grad_ready": [ms(t) for t in r["grad_ready"]],
                    "buckets": [
                        {
                            "index": b["index"],
                            "bytes": b["bytes"],
                            "parameters": b["parameters"],
                            "issue": ms(b["issue"]),
                            "enqueued": ms(b["enqueued"]),
                            "complete": ms(b["complete"]),
                        }
                        for b in sorted(r["buckets"], key=lambda b: b["index"])
                    ],
                }
            )
        first = kept[0][i]
        wall_s = (first["end"] - first["forward_start"]) / 1e9
        load = machine.other_load(
            first["machine_ticks"], [records[i]["own_ticks"] for records in kept], wall_s, cores
        )
        iterations.append(
            {
                "iteration": warmup + i,
                "other_load": None if load is None else round(load, 4),
                "ranks": ranks,
            }
        )
    return {
        "format": FORMAT,
        "version": VERSION,
        "time_unit": "ms",
        "metadata": {**metadata, "origin_ns": origin},
        "parameters": [{"name": n, "bytes": b} for n, b in zip(names, sizes, strict=True)],
        "iterations": iterations,
    }
