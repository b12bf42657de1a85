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

What it records, per rank and iteration (format: ``traces/schema_v2.json``):

- ``forward_start``, ``backward_start``, ``backward_return``, ``optimizer_start`` and
  ``optimizer_end``: when the ``iteration()``, ``backward()`` and ``optimizer()``
  blocks are entered and left;
- ``grad_ready`` per parameter: a ``register_post_accumulate_grad_hook`` on each
  parameter, which runs once its gradient has been accumulated into ``.grad``;
- per bucket, from a communication hook (``register_comm_hook``) that does what
  DDP's default hook does (divide by the world size, asynchronous ``all_reduce``):
  ``issue`` when DDP hands the bucket to the hook (the bucket is ready and every
  bucket before it has been launched), ``enqueued`` when the all-reduce call has
  returned (what a timer around the call sees), and ``complete`` when it has
  finished (below);
- how busy the machine was with other processes during the iteration (``/proc``).

Every time is on ``time.perf_counter_ns``, a clock the processes on one machine
share, so ranks line up on one axis (ranks on different machines would need
their clocks aligned first; this recorder does not do that). How each is read
is the ``timer`` (``traces.recorder.timing``), named in the metadata's
``times``:

**Host times** (``HostTimer``, the default for a model on the CPU): clock
readings in the hooks. Gloo runs each collective on one of its two worker
threads (so two can be in flight, sharing the cores with backward, which is why
compute slows while communication runs). ``complete`` is read by a callback
attached to the all-reduce's future as soon as the launch returns, which gloo's
thread runs once the reduced data is in the bucket, after taking the GIL (late
by however long another thread holds it). If the all-reduce has finished
before the callback is attached, ``complete`` is ``enqueued``: it finished
between ``issue`` and then, as closely as the host can tell (the raw record's
``done_at_launch`` says so). That happens when the launching call is held up
while gloo's threads run, for milliseconds on a busy machine; such a
``complete`` is late by an amount no host reading can recover (a profile can).

**Device times** (``CudaEventTimer``, the default for a model on a CUDA device):
the host only launches GPU work, so a host reading in a hook marks a launch.
Events that happen on the device are CUDA events on the stream that runs them,
read after the iteration: ``grad_ready`` (accumulated on the device),
``backward_return`` (the device is through backward, DDP's wait for every
bucket included), ``optimizer_start`` and ``optimizer_end`` (the step's kernels),
``complete`` (an event in the future's ``.then()`` callback, whose stream waits
for the all-reduce's kernels) and each bucket's ``start``: the latest of
``issue``, the point on the compute stream that the communication stream waits
for (an event taken just before the launch) and the previous bucket's ``complete`` (a
process group's collectives run in order on one stream): the earliest the
kernel can have begun, not a reading of it. The host defines the rest, which
stay host readings: ``forward_start`` (a reference event on the idle device),
``backward_start`` (before any backward kernel is launched), ``issue`` and
``enqueued`` (made no later than ``complete``: a small all-reduce can finish
before its launch returns). The host runs ahead, so ``issue`` can come before its
gradients' device ``grad_ready``. Each iteration starts by waiting for the device
to be idle, and device times carry the reference's offset of a few microseconds
(``timing``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from traces import validate_trace, write_trace

from . import machine
from .recording_metadata import gpu_names, recording_metadata
from .timing import Stamp, Timer, default_timer
from .trace_document import build_trace, settle

__all__ = ["TraceRecorder", "write_trace"]


class TraceRecorder:
    """Hooks on one rank's DDP model that time gradients, buckets and the step's phases.

    Creating it registers a post-accumulate-grad hook on every parameter that
    requires a gradient and a communication hook on ``ddp_model`` (DDP allows one
    communication hook per model, registered before the first backward).
    With ``communicate=False`` the hook holds communication back: it hands each
    bucket back at once, unreduced, so backward runs with all of DDP's own
    bookkeeping but no all-reduce (backward alone, for ``traces.recorder.isolated``;
    the ranks' gradients are then not averaged, so use it on a model kept for timing).
    ``timer`` reads the time (``traces.recorder.timing``); by default CUDA
    events when the model's parameters are on a CUDA device, the host clock otherwise.
    """

    def __init__(
        self,
        ddp_model: DistributedDataParallel,
        *,
        process_group: dist.ProcessGroup | None = None,
        bucket_cap_mb: float | None = None,
        model_description: str = "",
        communicate: bool = True,
        timer: Timer | None = None,
    ) -> None:
        self.ddp = ddp_model
        self.communicate = communicate
        self.group = process_group if process_group is not None else dist.group.WORLD
        self.rank = dist.get_rank(self.group)
        self.world_size = dist.get_world_size(self.group)
        self.bucket_cap_mb = bucket_cap_mb
        self.model_description = model_description
        self.timer = timer if timer is not None else default_timer(ddp_model.module)
        self.devices = sorted(
            {p.device for p in ddp_model.module.parameters() if p.device.type == "cuda"},
            key=lambda d: d.index or 0,
        )
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
                self._current["grad_ready"][index] = self.timer.device()

        return hook

    def _launch(self, tensor: torch.Tensor) -> torch.futures.Future:
        """Start the asynchronous all-reduce of ``tensor``; its work's future."""
        return dist.all_reduce(tensor, group=self.group, async_op=True).get_future()

    # DDP checks a hook's annotations against the real types, and this module's
    # annotations are strings (``from __future__ import annotations``), so the
    # hook carries none.
    def _comm_hook(self, state, bucket):
        timer = self.timer
        record: dict[str, Any] = {"issue": timer.host(), "complete": None}
        on_device = timer.times == "device"
        buffer = bucket.buffer()
        ready = None
        if self.communicate:
            buffer.div_(self.world_size)
            if on_device:
                # The point on the compute stream that the collective's stream waits for.
                ready = timer.device()
            future = self._launch(buffer)
        else:
            devices = [buffer.device] if buffer.device.type == "cuda" else None
            future = torch.futures.Future(devices=devices)
            future.set_result([buffer])
        record["enqueued"] = timer.host()
        # A callback attached to a finished future runs at once, so on the host a
        # finished all-reduce would be stamped at attach time; it finished by the
        # launch's return, read just above. (On the device the callback's event is
        # ordered after the kernels whenever it runs.)
        record["done_at_launch"] = not on_device and future.done()
        if record["done_at_launch"]:
            record["complete"] = record["enqueued"]

        def done(fut: torch.futures.Future) -> torch.Tensor:
            if record["complete"] is None:
                record["complete"] = timer.device()
            return fut.value()[0]

        # Attach before anything else, so the callback is in place as early as possible.
        chained = future.then(done)
        record["ready"] = ready
        record["index"] = bucket.index()
        record["bytes"] = buffer.numel() * buffer.element_size()
        record["parameters"] = [self._names[self._index_of[id(p)]] for p in bucket.parameters()]
        if self._current is not None:
            self._current["buckets"].append(record)
        return chained

    # -- phase marks -----------------------------------------------------------

    @contextmanager
    def iteration(self) -> Iterator[None]:
        """One training iteration: forward, backward and optimizer inside this block."""
        self._current = {
            "forward_start": self.timer.start(),
            "grad_ready": [None] * len(self._names),
            "buckets": [],
            "machine_ticks": machine.machine_busy_ticks(),
            "own_ticks": machine.own_cpu_ticks(),
        }
        try:
            yield
        finally:
            cur = self._current
            end = self.timer.host()
            busy, own = machine.machine_busy_ticks(), machine.own_cpu_ticks()
            cur["end"] = end
            cur["machine_ticks"] = None if busy is None else busy - cur["machine_ticks"]
            cur["own_ticks"] = None if own is None else own - cur["own_ticks"]
            self._current = None
            self.timer.resolve()
            self._iterations.append(settle(cur))

    @contextmanager
    def backward(self) -> Iterator[None]:
        """Around ``loss.backward()``: marks backward start and return."""
        self._mark("backward_start", self.timer.host())
        yield
        self._mark("backward_return", self.timer.device())

    @contextmanager
    def optimizer(self) -> Iterator[None]:
        """Around ``optimizer.step()``: marks optimizer start and end."""
        self._mark("optimizer_start", self.timer.device())
        yield
        self._mark("optimizer_end", self.timer.device())

    def _mark(self, key: str, value: int | Stamp) -> None:
        if self._current is None:
            raise RuntimeError("mark phases inside recorder.iteration()")
        self._current[key] = value

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
        mine = {"iterations": self._iterations, "gpus": gpu_names(self.devices)}
        gathered: list[Any] | None = [None] * self.world_size if self.rank == 0 else None
        dist.gather_object(mine, gathered, dst=0, group=self.group)
        if self.rank != 0:
            return None
        assert gathered is not None
        metadata = recording_metadata(
            self.group,
            self.timer,
            self.devices,
            bucket_cap_mb=self.bucket_cap_mb,
            model_description=self.model_description,
            warmup=warmup,
            note=note,
        )
        if self.devices:
            metadata["gpus"] = [name for rank in gathered for name in rank["gpus"]]
        trace = build_trace(
            [rank["iterations"] for rank in gathered],
            names=self._names,
            sizes=self._bytes,
            warmup=warmup,
            metadata=metadata,
        )
        if isolated is not None:
            trace["isolated"] = isolated
        validate_trace(trace)
        return trace
