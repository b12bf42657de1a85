"""Collect, from a profile's stream of events, only what the import uses, as small tuples.

``EventCollector`` is handed each event by ``profiler_read.read_events`` and
keeps the step, forward and optimizer ranges, the collective ops (``nccl:*``,
``gloo:*``, ``c10d::*``), the autograd engine's ops, ``AccumulateGrad`` ends,
DDP reducer ops, kernels and the runtime's launches (by ``correlation``), so
memory follows what is kept, not the file. ``file_metadata`` reads the file's
top-level keys.
"""

from __future__ import annotations

import math
import re
from typing import Any

from .profiler_read import ProfileError
from .profiler_sizes import dims_elements, element_count, first_type

# Profilers write ts from a boot-time clock or as Unix time (~1.7e15 us today).
MAX_TIME_US = 1e17  # year ~5100 as Unix time
MAX_DURATION_US = 1e12  # ~11.6 days: no op or kernel of a training step lasts longer

# Every NCCL kernel family's names, which RCCL keeps: ncclDevKernel_AllReduce_Sum_f32_RING_LL
# (NCCL >= 2.19), ncclKernel_AllReduce_RING_LL_Sum_float (older NCCL, RCCL),
# ncclAllReduceRingLLKernel_sum_f32 (NCCL 2.7), ncclDevKernel_SendRecv and
# ncclDevKernel_Generic_N (grouped or fused work; RCCL's newer kernels). HTA's test is the same.
_COMM_KERNEL = re.compile(r"^nccl.*Kernel")
_KERNEL_FAMILY = re.compile(
    r"^nccl(?:Dev)?(?:Kernel_)?"
    r"(AllReduce|AllGather|ReduceScatter|Broadcast|Reduce|SendRecv|Send|Recv|AllToAll|Generic)"
)
_KIND_NAMES = {
    "allreduce": "all_reduce",
    "broadcast": "broadcast",
    "allgather": "all_gather",
    "reducescatter": "reduce_scatter",
    "reduce": "reduce",
    "alltoall": "all_to_all",
    "alltoallv": "all_to_all",
    "alltoallbase": "all_to_all",
    "allgatherintotensor": "all_gather",
    "reducescattertensor": "reduce_scatter",
    "generic": "generic",
    "barrier": "barrier",
    "gather": "gather",
    "scatter": "scatter",
    "sendrecv": "send_recv",
    "send": "send",
    "recv": "recv",
}
_AUTOGRAD_OP = "autograd::engine::evaluate_function: "
_ACCUMULATE = "torch::autograd::AccumulateGrad"
_FORWARD = "DistributedDataParallel.forward"
_OPTIMIZER = "Optimizer.step#"
_REDUCER = ("torch::distributed::reducer::", "torch.distributed.ddp.reducer::")
_STEP = re.compile(r"^ProfilerStep#(\d{1,9})$")


def collective_kind(raw: str) -> str:
    """The collective's name, one spelling for ``allreduce_``, ``all_reduce``, ``AllReduce``."""
    key = re.sub(r"[^a-z]", "", raw.lower()).removesuffix("base").removesuffix("coalesced")
    return _KIND_NAMES.get(key, raw.strip("_:").lower() or "unknown")


def _thread(e: dict[str, Any]) -> Any:
    """The event's thread (``tid``) when it is a plain id, else None."""
    tid = e.get("tid")
    return tid if isinstance(tid, int | str) and not isinstance(tid, bool) else None


def event_time(event: dict[str, Any], key: str, name: str) -> float:
    """The event's ``ts`` or ``dur`` as a float, or a ``ProfileError`` naming the event."""
    limit = MAX_DURATION_US if key == "dur" else MAX_TIME_US
    value = event.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ProfileError(
            f"{name}: event {str(event.get('name'))[:60]!r} has {key} {str(value)[:30]!r}, "
            "not a number"
        )
    value = float(value)
    if not math.isfinite(value) or abs(value) > limit or (key == "dur" and value < 0):
        raise ProfileError(
            f"{name}: event {str(event.get('name'))[:60]!r} has {key} {value:g}, "
            "not a plausible time in microseconds"
        )
    return value


class EventCollector:
    """Keeps, from the stream of events, only what the import uses (as tuples)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.steps: list[tuple[int, float, float]] = []
        self.forwards: list[tuple[float, float]] = []
        self.optimizers: list[tuple[float, float]] = []
        # host collective ops: (kind, start, end, external id, elements, dtype)
        self.nccl_ops: list[tuple[str, float, float, Any, int | None, str | None]] = []
        self.c10d_ops: list[tuple[str, float, float, Any, int | None, str | None]] = []
        self.gloo_ops: list[tuple[str, float, float, Any, int | None, str | None]] = []
        self.autograd: list[tuple[float, float, Any]] = []  # (start, end, thread)
        self.accumulate: list[tuple[float, Any]] = []  # (end, thread)
        self.reducer: list[float] = []  # starts of DDP reducer ops (its hook taking over)
        # kernels: (start, end, stream, external id, correlation, kind or None, elements, dtype)
        self.kernels: list[tuple] = []
        self.launches: dict[Any, float] = {}
        self.launch_threads: dict[Any, Any] = {}  # correlation -> the thread that launched it
        self.step_threads: set[Any] = set()  # threads holding ProfilerStep#N (the main thread)
        self.group_size: int | None = None  # the largest "Group size" on a collective kernel
        self.saw_kernels = False

    def __call__(self, e: dict[str, Any]) -> None:
        if e.get("ph") != "X":
            return
        name = e.get("name")
        if not isinstance(name, str):
            return
        # Older profilers spell the categories "Kernel", "Runtime", "Operator".
        cat = e.get("cat")
        cat = cat.lower() if isinstance(cat, str) else ""
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        if cat == "kernel":
            self._kernel(e, name, args)
            return
        if cat in ("cuda_runtime", "cuda_driver", "runtime"):
            corr = args.get("correlation")
            if corr is not None and "launch" in name.lower():
                self.launches[corr] = event_time(e, "ts", self.name)
                self.launch_threads[corr] = _thread(e)
            return
        if cat not in ("cpu_op", "user_annotation", "operator"):
            return
        if name.startswith(_AUTOGRAD_OP):
            ts = event_time(e, "ts", self.name)
            self.autograd.append((ts, ts + event_time(e, "dur", self.name), _thread(e)))
        elif name == _ACCUMULATE:
            end = event_time(e, "ts", self.name) + event_time(e, "dur", self.name)
            self.accumulate.append((end, _thread(e)))
        elif name.startswith(_REDUCER):
            self.reducer.append(event_time(e, "ts", self.name))
        elif name.startswith(("nccl:", "gloo:", "c10d::")):
            ts = event_time(e, "ts", self.name)
            end = ts + event_time(e, "dur", self.name)
            raw = name.split(":", 2)[-1]
            elements = element_count(args.get("In msg nelems"), self.name, "In msg nelems")
            dtype = args.get("dtype") if isinstance(args.get("dtype"), str) else None
            if elements is None:
                elements = dims_elements(args.get("Input Dims"), self.name)
                dtype = first_type(args.get("Input type"))
            op = (collective_kind(raw), ts, end, args.get("External id"), elements, dtype)
            {"nccl": self.nccl_ops, "gloo": self.gloo_ops, "c10d": self.c10d_ops}[
                name.split(":", 1)[0]
            ].append(op)
        elif (m := _STEP.match(name)) is not None:
            ts = event_time(e, "ts", self.name)
            self.steps.append((int(m.group(1)), ts, ts + event_time(e, "dur", self.name)))
            self.step_threads.add(_thread(e))
        elif name == _FORWARD:
            ts = event_time(e, "ts", self.name)
            self.forwards.append((ts, ts + event_time(e, "dur", self.name)))
        elif name.startswith(_OPTIMIZER):
            ts = event_time(e, "ts", self.name)
            self.optimizers.append((ts, ts + event_time(e, "dur", self.name)))

    def _kernel(self, e: dict[str, Any], name: str, args: dict[str, Any]) -> None:
        self.saw_kernels = True
        ts = event_time(e, "ts", self.name)
        end = ts + event_time(e, "dur", self.name)
        stream = args.get("stream", e.get("tid"))
        stream = (args.get("device", e.get("pid")), stream)
        kind = None
        elements = None
        dtype = None
        collective = args.get("Collective name")
        if isinstance(collective, str) or _COMM_KERNEL.match(name) is not None:
            if not isinstance(collective, str):
                family = _KERNEL_FAMILY.match(name)
                collective = family.group(1) if family is not None else "generic"
            kind = collective_kind(collective)
            size = args.get("Group size")
            if isinstance(size, int) and not isinstance(size, bool) and 1 <= size <= 1_000_000:
                self.group_size = max(size, self.group_size or 0)
            elements = element_count(args.get("In msg nelems"), self.name, "In msg nelems")
            dtype = args.get("dtype") if isinstance(args.get("dtype"), str) else None
        self.kernels.append(
            (
                ts,
                end,
                stream,
                args.get("External id"),
                args.get("correlation"),
                kind,
                elements,
                dtype,
            )
        )


def file_metadata(top: dict[str, Any]) -> dict[str, Any]:
    """Backend, rank, world size, GPUs and versions from a profile's top-level keys."""
    info = top.get("distributedInfo") if isinstance(top.get("distributedInfo"), dict) else {}
    devices = top.get("deviceProperties") if isinstance(top.get("deviceProperties"), list) else []
    gpus = [str(d.get("name"))[:200] for d in devices if isinstance(d, dict) and d.get("name")]
    meta: dict[str, Any] = {"gpus": gpus}
    for key in ("backend", "nccl_version"):
        if isinstance(info.get(key), str):
            meta[key] = info[key][:100]
    for key in ("rank", "world_size"):
        value = info.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 1_000_000:
            meta[key] = value
    for key in (
        "torch_version",
        "pytorch_version",
        "cuda_runtime_version",
        "cuda_driver_version",
        "cupti_version",
        "host_name",
        "schemaVersion",
    ):
        value = top.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool):
            meta["torch_version" if key == "pytorch_version" else key] = str(value)[:100]
    return meta


class RankedEvents:
    """Hands each event to the collector of its rank, for a file merging several ranks.

    AMD's TraceLens (TraceFuse) merges one file per rank into one, marking every
    event with ``args.rank`` (and offsetting pids and correlation ids per rank);
    events without a mark go to ``unmarked``. ``collectors`` gives one collector
    per rank found, or a single one (marks of one rank and unmarked events
    together) when the file holds one rank.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.unmarked = EventCollector(name)
        self.by_rank: dict[int, EventCollector] = {}

    def __call__(self, e: dict[str, Any]) -> None:
        args = e.get("args")
        rank = args.get("rank") if isinstance(args, dict) else None
        if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank <= 1_000_000:
            self.unmarked(e)
            return
        got = self.by_rank.get(rank)
        if got is None:
            got = self.by_rank[rank] = EventCollector(f"{self.name} (rank {rank})")
        got(e)

    def collectors(self) -> dict[int | None, EventCollector]:
        """Rank -> its events (None: the file's only rank, unnamed by marks)."""
        if len(self.by_rank) > 1:
            return dict(sorted(self.by_rank.items()))
        only = self.unmarked
        for got in self.by_rank.values():
            for key, value in vars(got).items():
                kept = getattr(only, key)
                if isinstance(kept, list):
                    kept.extend(value)
                elif isinstance(kept, dict | set):
                    kept.update(value)
            only.saw_kernels |= got.saw_kernels
            only.group_size = max(only.group_size or 0, got.group_size or 0) or None
        return {next(iter(self.by_rank), None): only}
