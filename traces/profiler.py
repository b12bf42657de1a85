"""Import torch.profiler traces (one Chrome-trace file per rank) into per-iteration measurements.

What a profile holds and what is taken from it, per ``ProfilerStep#N`` and rank
(``ts``/``dur`` are microseconds on one timeline; on GPUs the profiler puts the
kernels' device times on the host's clock):

- **buckets**: the all-reduces DDP launches during backward, i.e. launched
  between the end of ``DistributedDataParallel.forward`` and ``Optimizer.step#...``,
  in launch order (bucket index 0 is launched first). With NCCL the
  ``nccl:all_reduce`` CPU op is the launch and the all-reduce kernel it queued
  (``ncclDevKernel_AllReduce_...`` / ``ncclKernel_AllReduce_...``, matched by
  ``External id``, else in launch order, as the communication stream runs them)
  gives the start and end on the device; bytes are ``In msg nelems`` x the size
  of ``dtype``. With gloo the launch is the ``c10d::allreduce_`` CPU op and the
  ``gloo:all_reduce`` range on gloo's worker thread the start and end (host
  times); bytes are the ``Input Dims`` x the size of the ``Input type``;
- **other collectives** (broadcasts, all-gathers, all-reduces outside backward)
  are kept apart with their names, never counted as buckets;
- **backward compute**: on GPUs the kernels on streams no collective runs on,
  launched between the end of forward and the optimizer (by their launch's
  ``correlation``; by device time where a kernel has none); on the CPU the ops
  of the autograd engine (``autograd::engine::evaluate_function: ...``) in that
  window, each cut where it launches a collective (what follows in the same op
  is DDP's bookkeeping, not backward). **Backward end** is the end of the last;
- **communication end** the end of the last bucket's all-reduce, **exposed tail**
  ``max(0, communication end - backward end)``, **step** from the start of
  forward to the end of the optimizer (or of the step's last device activity if
  later), **overlap** the share of the buckets' all-reduce time (their union)
  during which backward compute runs;
- **gradient readiness**: the ends of ``torch::autograd::AccumulateGrad`` ops in
  backward, approximate (a host time, and on GPUs a launch, not the device
  finishing) and not tied to parameter names; a profile without them says so;
- **metadata**: ``distributedInfo`` (backend, world size, rank, NCCL version),
  ``deviceProperties`` (GPU names) and whatever versions the file names, and
  whether the times are device or host times.

Reading is ``profiler_read`` (streamed, size-limited, data only); this module
keeps only the events above, as small tuples, so memory follows what is kept.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .intervals import intersection, merge
from .profiler_read import MAX_PROFILE_BYTES, MAX_UNCOMPRESSED_BYTES, ProfileError, read_events

__all__ = [
    "Collective",
    "Profile",
    "ProfileError",
    "RankProfile",
    "RankStep",
    "dtype_bytes",
    "import_profiles",
    "read_profile",
]

# Profilers write ts from a boot-time clock or as Unix time (~1.7e15 us today).
MAX_TIME_US = 1e17  # year ~5100 as Unix time
MAX_DURATION_US = 1e12  # ~11.6 days: no op or kernel of a training step lasts longer
MAX_ELEMENTS = 2**48  # one collective's elements; more is not a real buffer

DTYPE_BYTES = {
    # c10 ScalarType names (NCCL kernels' and record_param_comms' "dtype")...
    "float": 4, "double": 8, "half": 2, "bfloat16": 2, "int": 4, "long": 8, "short": 2,
    "char": 1, "byte": 1, "bool": 1, "complexfloat": 8, "complexdouble": 16,
    "complexhalf": 4, "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e4m3fnuz": 1,
    "float8_e5m2fnuz": 1, "uint16": 2, "uint32": 4, "uint64": 8,
    # ...and the C++ names of ops' "Input type" (gloo:*, c10d::*)
    "c10::half": 2, "c10::bfloat16": 2, "long int": 8, "signed char": 1,
    "unsigned char": 1, "c10::complex<float>": 8, "c10::complex<double>": 16,
    "float32": 4, "float64": 8, "float16": 2, "int32": 4, "int64": 8, "int16": 2,
    "int8": 1, "uint8": 1,
}  # fmt: skip

_NCCL_KERNEL = re.compile(r"^nccl(?:Dev)?Kernel_([A-Za-z]+)")
_KIND_NAMES = {
    "allreduce": "all_reduce",
    "broadcast": "broadcast",
    "allgather": "all_gather",
    "reducescatter": "reduce_scatter",
    "reduce": "reduce",
    "alltoall": "all_to_all",
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


def dtype_bytes(dtype: str) -> int | None:
    """Bytes per element of a profiler's dtype name (``Float``, ``c10::Half``...), or None."""
    return DTYPE_BYTES.get(dtype.strip().lower())


def _kind(raw: str) -> str:
    """The collective's name, one spelling for ``allreduce_``, ``all_reduce``, ``AllReduce``."""
    key = re.sub(r"[^a-z]", "", raw.lower()).removesuffix("base").removesuffix("coalesced")
    return _KIND_NAMES.get(key, raw.strip("_:").lower() or "unknown")


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
    readiness_us: tuple[float, ...]  # AccumulateGrad ends, sorted (approximate)
    optimizer_device_end_us: float | None  # last kernel the optimizer launched ends (GPU)

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


# -- collecting events ----------------------------------------------------------


def _number(event: dict[str, Any], key: str, name: str) -> float:
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


def _count(value: Any, name: str, what: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) < 20:
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_ELEMENTS:
        raise ProfileError(f"{name}: {what} {str(value)[:30]!r} is not a plausible element count")
    return value


def _dims_elements(dims: Any, name: str) -> int | None:
    """Elements of the first tensor (or tensor list) in an op's ``Input Dims``."""
    if not isinstance(dims, list) or not dims:
        return None
    first = dims[0]
    tensors = first if first and all(isinstance(d, list) for d in first) else [first]
    total = 0
    for shape in tensors:
        if not isinstance(shape, list):
            return None
        n = 1
        for d in shape:
            d = _count(d, name, "a tensor dimension")
            if d is None:
                return None
            n *= d
            if n > MAX_ELEMENTS:
                raise ProfileError(f"{name}: a tensor of more than {MAX_ELEMENTS} elements")
        total += n
    return total


def _first_type(types: Any) -> str | None:
    if isinstance(types, list):
        for t in types:
            if isinstance(t, str) and t and t != "TensorList":
                return t
    return None


class _Collector:
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
        self.autograd: list[tuple[float, float, Any]] = []
        self.accumulate: list[float] = []
        self.reducer: list[float] = []  # starts of DDP reducer ops (its hook taking over)
        # kernels: (start, end, stream, external id, correlation, kind or None, elements, dtype)
        self.kernels: list[tuple] = []
        self.launches: dict[Any, float] = {}
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
                self.launches[corr] = _number(e, "ts", self.name)
            return
        if cat not in ("cpu_op", "user_annotation", "operator"):
            return
        if name.startswith(_AUTOGRAD_OP):
            ts = _number(e, "ts", self.name)
            self.autograd.append((ts, ts + _number(e, "dur", self.name), e.get("tid")))
        elif name == _ACCUMULATE:
            self.accumulate.append(_number(e, "ts", self.name) + _number(e, "dur", self.name))
        elif name.startswith(_REDUCER):
            self.reducer.append(_number(e, "ts", self.name))
        elif name.startswith(("nccl:", "gloo:", "c10d::")):
            ts = _number(e, "ts", self.name)
            end = ts + _number(e, "dur", self.name)
            raw = name.split(":", 2)[-1]
            elements = _count(args.get("In msg nelems"), self.name, "In msg nelems")
            dtype = args.get("dtype") if isinstance(args.get("dtype"), str) else None
            if elements is None:
                elements = _dims_elements(args.get("Input Dims"), self.name)
                dtype = _first_type(args.get("Input type"))
            op = (_kind(raw), ts, end, args.get("External id"), elements, dtype)
            {"nccl": self.nccl_ops, "gloo": self.gloo_ops, "c10d": self.c10d_ops}[
                name.split(":", 1)[0]
            ].append(op)
        elif (m := _STEP.match(name)) is not None:
            ts = _number(e, "ts", self.name)
            self.steps.append((int(m.group(1)), ts, ts + _number(e, "dur", self.name)))
        elif name == _FORWARD:
            ts = _number(e, "ts", self.name)
            self.forwards.append((ts, ts + _number(e, "dur", self.name)))
        elif name.startswith(_OPTIMIZER):
            ts = _number(e, "ts", self.name)
            self.optimizers.append((ts, ts + _number(e, "dur", self.name)))

    def _kernel(self, e: dict[str, Any], name: str, args: dict[str, Any]) -> None:
        self.saw_kernels = True
        ts = _number(e, "ts", self.name)
        end = ts + _number(e, "dur", self.name)
        stream = args.get("stream", e.get("tid"))
        stream = (args.get("device", e.get("pid")), stream)
        kind = None
        elements = None
        dtype = None
        m = _NCCL_KERNEL.match(name)
        if m is not None or "Collective name" in args:
            collective = args.get("Collective name")
            kind = _kind(collective if isinstance(collective, str) else m.group(1))
            elements = _count(args.get("In msg nelems"), self.name, "In msg nelems")
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


# -- one rank's file ------------------------------------------------------------


def _bytes(elements: int | None, dtype: str | None, name: str, what: str) -> int | None:
    if elements is None or dtype is None:
        return None
    size = dtype_bytes(dtype)
    if size is None:
        raise ProfileError(
            f"{name}: {what} has dtype {dtype[:40]!r}, whose size this import does not know"
        )
    return elements * size


def _pair(launches: list[tuple], runs: list[tuple]) -> list[tuple | None]:
    """For each launch (in time order), the run it started: same External id, else FIFO by kind.

    A process group runs its collectives in the order they were launched (one
    NCCL stream, one gloo queue), so the first unmatched run of the launch's kind
    that starts after the launch is its run. ``External id`` ties a kernel to the
    op that launched it; gloo's ranges count their own ids, so only kernels use it.
    """
    by_id = {r[3]: i for i, r in enumerate(runs) if len(r) == 8 and r[3] is not None}
    used = [False] * len(runs)
    queues: dict[str | None, list[int]] = defaultdict(list)
    for i in sorted(range(len(runs)), key=lambda i: _run_times(runs[i])[0]):
        queues[_run_kind(runs[i])].append(i)
    heads: dict[str | None, int] = defaultdict(int)
    out: list[tuple | None] = []
    for launch in launches:
        kind, ts, ext = launch[0], launch[1], launch[3]
        hit = by_id.get(ext) if ext is not None else None
        if hit is None or used[hit] or _run_kind(runs[hit]) != kind:
            queue, k = queues[kind], heads[kind]
            # 1 us of slack: a run's start may be rounded to before its launch
            while k < len(queue) and (used[queue[k]] or _run_times(runs[queue[k]])[0] < ts - 1.0):
                k += 1
            heads[kind] = k
            hit = queue[k] if k < len(queue) else None
        if hit is not None:
            used[hit] = True
        out.append(None if hit is None else runs[hit])
    return out


def _run_kind(run: tuple) -> str | None:
    # host op tuples start with the kind; kernel tuples carry it at position 5
    return run[5] if len(run) == 8 else run[0]


def _run_times(run: tuple) -> tuple[float, float]:
    return (run[0], run[1]) if len(run) == 8 else (run[1], run[2])


def _metadata(top: dict[str, Any]) -> dict[str, Any]:
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


def read_profile(
    source: str | Path | bytes,
    *,
    name: str | None = None,
    max_bytes: int = MAX_PROFILE_BYTES,
    max_uncompressed: int = MAX_UNCOMPRESSED_BYTES,
) -> RankProfile:
    """Read one rank's profile file (``.json`` or ``.json.gz``, or its bytes).

    Raises ``ProfileError`` for a file that can't be read (see ``profiler_read``),
    one without ``ProfilerStep#N`` ranges, without collectives, or without an
    all-reduce launched during backward in any step.
    """
    label = name or (Path(source).name if not isinstance(source, bytes) else "profile")
    got = _Collector(label)
    top = read_events(
        source, got, name=label, max_bytes=max_bytes, max_uncompressed=max_uncompressed
    )
    meta = _metadata(top)
    if not got.steps:
        raise ProfileError(
            f"{label}: no ProfilerStep#N ranges; profile with a schedule and call prof.step() "
            "after every iteration"
        )
    nccl_kernels = [k for k in got.kernels if k[5] is not None]
    backend = meta.get("backend") or (
        "nccl" if got.nccl_ops or nccl_kernels else "gloo" if got.gloo_ops else "unknown"
    )
    if backend == "nccl":
        launches = sorted(got.nccl_ops or got.c10d_ops, key=lambda o: o[1])
        runs: list[tuple] = nccl_kernels
    else:
        launches = sorted(got.c10d_ops, key=lambda o: o[1])
        runs = got.gloo_ops
    if not launches or not runs:
        wanted = (
            "nccl:* ops and NCCL kernels" if backend == "nccl" else "c10d:: ops and gloo:* ranges"
        )
        raise ProfileError(
            f"{label}: no collectives (no {wanted}); "
            "was this a distributed (DDP) run, profiled during training iterations?"
        )
    paired = _pair(launches, runs)
    index = _Index(got, launches, {k[2] for k in nccl_kernels})
    notes: list[str] = []
    rank = meta.get("rank", 0)
    steps = []
    for number, s, e in sorted(got.steps, key=lambda t: t[1]):
        step = _step(index, label, number, s, e, launches, paired, rank, notes)
        if step is not None:
            steps.append(step)
    if not steps:
        raise ProfileError(
            f"{label}: no step has an all-reduce launched during backward ({'; '.join(notes[:3])})"
        )
    if not got.accumulate:
        notes.append("no AccumulateGrad ops: gradient readiness is not in this profile")
    return RankProfile(
        name=label,
        rank=rank,
        backend=backend,
        world_size=meta.get("world_size"),
        device_times=index.device,
        metadata=meta,
        steps=tuple(steps),
        notes=tuple(notes),
    )


class _Index:
    """The kept events sorted by time, so each step takes its share by bisection."""

    def __init__(self, got: _Collector, launches: list[tuple], comm_streams: set) -> None:
        self.device = got.saw_kernels
        self.optimizers = sorted(got.optimizers)
        self.forwards = sorted(got.forwards)
        self.launch_ts = [launch[1] for launch in launches]
        self.accumulate = sorted(got.accumulate)
        pieces: list[tuple[float, float, float]] = []  # (when it was started, start, end)
        if self.device:
            for k in got.kernels:
                if k[2] in comm_streams or k[5] is not None:
                    continue
                # When the host launched it (by correlation); its device start otherwise.
                launched = got.launches.get(k[4], k[0]) if k[4] is not None else k[0]
                pieces.append((launched, k[0], k[1]))
        else:
            # An autograd op is backward up to where DDP's reducer takes over (its
            # first reducer op or a collective launch inside the op): what follows
            # is DDP copying the gradient into its bucket and launching it.
            cuts = sorted(
                [*got.reducer, *(o[1] for o in got.c10d_ops), *(o[1] for o in got.nccl_ops)]
            )
            for a, b, _ in got.autograd:
                i = bisect.bisect_left(cuts, a)
                end = cuts[i] if i < len(cuts) and cuts[i] < b else b
                if end > a:
                    pieces.append((a, a, end))
        pieces.sort()
        self.piece_key = [p[0] for p in pieces]
        self.pieces = pieces

    def between(self, keys: list[float], lo: float, hi: float) -> slice:
        """The positions of the sorted ``keys`` in [lo, hi)."""
        return slice(bisect.bisect_left(keys, lo), bisect.bisect_left(keys, hi))


def _step(
    index: _Index,
    label: str,
    number: int,
    s: float,
    e: float,
    launches: list[tuple],
    paired: list[tuple | None],
    rank: int,
    notes: list[str],
) -> RankStep | None:
    device = index.device
    opt = next(((a, b) for a, b in index.optimizers if s <= a < e), None)
    window_end = opt[0] if opt is not None else e
    forwards = [(a, b) for a, b in index.forwards if s <= a < window_end]
    if not forwards:
        notes.append(f"ProfilerStep#{number}: no DistributedDataParallel.forward, left out")
        return None
    fwd_start, fwd_end = forwards[0][0], forwards[-1][1]
    buckets, others = [], []
    for k in range(*index.between(index.launch_ts, s, e).indices(len(launches))):
        launch, run = launches[k], paired[k]
        if run is None:
            notes.append(
                f"ProfilerStep#{number}: a {launch[0]} launch with nothing that ran it, "
                "step left out"
            )
            return None
        in_backward = fwd_end <= launch[1] < window_end
        start, end = _run_times(run)
        if not device and opt is not None and in_backward:
            # DDP lets backward return, and the optimizer start, only once every
            # bucket is reduced; a gloo range closing later was descheduled after
            # the work was done, so its end is capped there.
            end = min(end, opt[0])
        elements = run[6] if len(run) == 8 else run[4]
        dtype = run[7] if len(run) == 8 else run[5]
        if elements is None:
            elements, dtype = launch[4], launch[5]
        size = _bytes(elements, dtype, label, f"a {launch[0]} in ProfilerStep#{number}")
        c = Collective(
            kind=launch[0],
            bytes=size,
            launch_us=launch[1],
            launch_end_us=launch[2],
            start_us=start,
            end_us=end,
        )
        (buckets if launch[0] == "all_reduce" and in_backward else others).append(c)
    if not buckets:
        notes.append(f"ProfilerStep#{number}: no all-reduce launched during backward, left out")
        return None
    if any(b.bytes is None for b in buckets):
        raise ProfileError(
            f"{label}: ProfilerStep#{number}: an all-reduce without its size (record with "
            "record_shapes=True, or a torch whose NCCL kernels carry 'In msg nelems')"
        )
    compute = [
        (p[1], p[2]) for p in index.pieces[index.between(index.piece_key, fwd_end, window_end)]
    ]
    optimizer_device_end = None
    if device and opt is not None:
        ends = [p[2] for p in index.pieces[index.between(index.piece_key, opt[0], opt[1])]]
        optimizer_device_end = max(ends) if ends else None
    if not compute:
        notes.append(f"ProfilerStep#{number}: no backward compute found, left out")
        return None
    merged = merge(np.array(compute, float))
    ready = tuple(index.accumulate[index.between(index.accumulate, fwd_end, window_end)])
    return RankStep(
        iteration=number,
        rank=rank,
        step_start_us=s,
        step_end_us=e,
        forward_start_us=fwd_start,
        forward_end_us=fwd_end,
        optimizer_start_us=None if opt is None else opt[0],
        optimizer_end_us=None if opt is None else opt[1],
        backward_start_us=float(merged[0, 0]),
        backward_end_us=float(merged[-1, 1]),
        compute=merged,
        compute_ends=np.sort(np.array([b for _, b in compute], float)),
        buckets=tuple(buckets),
        others=tuple(others),
        readiness_us=ready,
        optimizer_device_end_us=optimizer_device_end,
    )


# -- several ranks ---------------------------------------------------------------


def import_profiles(
    sources: Sequence[str | Path | bytes] | Iterable[str | Path | bytes],
    *,
    names: Sequence[str] | None = None,
    max_bytes: int = MAX_PROFILE_BYTES,
    max_uncompressed: int = MAX_UNCOMPRESSED_BYTES,
) -> Profile:
    """Import one profile file per rank (any subset of the ranks, even one).

    The ranks come from each file's ``distributedInfo`` (a single file without
    it is rank 0). Raises ``ProfileError`` when two files are the same rank, the
    files disagree on backend or world size, or share no ``ProfilerStep#N``.
    """
    sources = list(sources)
    if not sources:
        raise ProfileError("give at least one profile file (one per rank)")
    ranks = [
        read_profile(
            src,
            name=None if names is None else names[i],
            max_bytes=max_bytes,
            max_uncompressed=max_uncompressed,
        )
        for i, src in enumerate(sources)
    ]
    if len(ranks) > 1 and any("rank" not in r.metadata for r in ranks):
        missing = next(r.name for r in ranks if "rank" not in r.metadata)
        raise ProfileError(f"{missing}: no distributedInfo.rank, so its rank is unknown")
    seen: dict[int, str] = {}
    for r in ranks:
        if r.rank in seen:
            raise ProfileError(f"{r.name} and {seen[r.rank]} are both rank {r.rank}")
        seen[r.rank] = r.name
    for key in ("backend", "world_size"):
        values = {getattr(r, key) for r in ranks}
        if len(values) > 1:
            raise ProfileError(
                f"the files disagree on the {key.replace('_', ' ')}: {sorted(map(str, values))}"
            )
    world = ranks[0].world_size
    for r in ranks:
        if world is not None and r.rank >= world:
            raise ProfileError(f"{r.name}: rank {r.rank} in a world of {world}")
    common = set.intersection(*({s.iteration for s in r.steps} for r in ranks))
    if not common:
        listed = "; ".join(f"{r.name}: {[s.iteration for s in r.steps]}" for r in ranks)
        raise ProfileError(f"the files share no ProfilerStep#N ({listed})")
    ordered = tuple(sorted(ranks, key=lambda r: r.rank))
    notes = [f"{r.name}: {n}" for r in ordered for n in r.notes]
    kept = tuple(sorted(common))
    trimmed = tuple(
        replace(r, steps=tuple(s for s in r.steps if s.iteration in common)) for r in ordered
    )
    dropped = {s.iteration for r in ranks for s in r.steps} - common
    if dropped:
        notes.append(f"steps not in every file left out: {sorted(dropped)}")
    return Profile(ranks=trimmed, iterations=kept, notes=tuple(notes))
