"""How the recorder reads time: injected timers, CUDA-event arithmetic, early completions.

The recorder's hooks are driven by hand on a one-rank gloo DDP model, in a
fixed order, with a host clock the test sets and (for device times) events whose
device times are scripted, so every expected time below is worked out by hand.
A real GPU run is checked only where there is a GPU.

Needs torch (the ``trace`` extra); skipped without it.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator

import pytest

torch = pytest.importorskip("torch")

import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402

from traces import validate_trace  # noqa: E402
from traces.recorder.demo import recorded_step  # noqa: E402
from traces.recorder.recorder import TraceRecorder  # noqa: E402
from traces.recorder.timing import (  # noqa: E402
    CudaEventTimer,
    EventTimer,
    HostTimer,
    default_timer,
)
from traces.recorder.trace_document import build_trace  # noqa: E402

MS = 1_000_000  # ns


@pytest.fixture(scope="module", autouse=True)
def one_rank(tmp_path_factory) -> Iterator[None]:
    if dist.is_initialized():
        yield
        return
    saved = os.environ.get("GLOO_SOCKET_IFNAME")
    if saved is None:
        os.environ["GLOO_SOCKET_IFNAME"] = "lo"  # as the demo's ranks meet
    store = tmp_path_factory.mktemp("pg") / "store"
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()
        if saved is None:
            os.environ.pop("GLOO_SOCKET_IFNAME", None)


class Clock:
    """A host clock (ns) the test sets; each reading then moves it on by ``step``."""

    def __init__(self, ns: int = 0, step: int = 0) -> None:
        self.ns = ns
        self.step = step

    def __call__(self) -> int:
        now = self.ns
        self.ns += self.step
        return now


class ScriptedEvent:
    """An event whose device time (ms) is the next scripted one when it is recorded."""

    def __init__(self, script: list[float]) -> None:
        self.script = script
        self.device_ms: float | None = None

    def record(self) -> None:
        self.device_ms = self.script.pop(0)

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end_event: ScriptedEvent) -> float:
        assert self.device_ms is not None and end_event.device_ms is not None
        return end_event.device_ms - self.device_ms


def scripted_timer(clock: Clock, script: list[float]) -> EventTimer:
    return EventTimer(lambda: ScriptedEvent(script), lambda: None, clock)


class Bucket:
    """What the communication hook reads of DDP's GradBucket."""

    def __init__(self, index: int, params: list[torch.Tensor]) -> None:
        self._index = index
        self._params = params
        self._buffer = torch.zeros(sum(p.numel() for p in params))

    def index(self) -> int:
        return self._index

    def buffer(self) -> torch.Tensor:
        return self._buffer

    def parameters(self) -> list[torch.Tensor]:
        return self._params


class Scripted(TraceRecorder):
    """A recorder whose all-reduce launches hand out the test's futures.

    Each launch sets the clock to the next ``launch_returns`` time (what the
    recorder then reads as ``enqueued``) and, for a future listed in
    ``done_at_launch``, completes it first, as a collective that finishes
    while its launching call is still running.
    """

    futures: list[torch.futures.Future]
    launch_returns: list[int]
    done_at_launch: set[int]
    clock: Clock

    def _launch(self, tensor: torch.Tensor) -> torch.futures.Future:
        future = self.futures.pop(0)
        if id(future) in self.done_at_launch:
            future.set_result([tensor])
        self.clock.ns = self.launch_returns.pop(0)
        return future


def scripted_recorder(timer, clock: Clock, launch_returns: list[int]) -> Scripted:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4, bias=False), nn.Linear(4, 4, bias=False))
    recorder = Scripted(DistributedDataParallel(model), bucket_cap_mb=1.0, timer=timer)
    recorder.futures, recorder.done_at_launch = [], set()
    recorder.launch_returns, recorder.clock = launch_returns, clock
    return recorder


def params(recorder: TraceRecorder) -> list[torch.Tensor]:
    return list(recorder.ddp.module.parameters())  # 0.weight, 1.weight


def test_device_times_land_in_their_fields() -> None:
    # Reference event at device time 500.0 ms, host reading 1.0 ms just after it:
    # a device time D ms is the trace time 1.0 + (D - 500.0) ms.
    script = [500.0, 503.5, 503.6, 505.0, 505.1, 507.0, 510.0, 511.0, 511.2, 513.0]
    clock = Clock(1 * MS)
    recorder = scripted_recorder(scripted_timer(clock, script), clock, [2_300_000, 2_600_000])
    p0, p1 = params(recorder)
    first, second = torch.futures.Future(), torch.futures.Future()
    recorder.futures = [first, second]
    with recorder.iteration():  # the reference event, 500.0
        clock.ns = 2 * MS
        with recorder.backward():  # backward_start: host 2.0 ms
            clock.ns = 2_100_000
            recorder._grad_hook(1)(p1)  # 503.5 -> 4.5 ms
            clock.ns = 2_200_000
            recorder._comm_hook(None, Bucket(0, [p1]))  # issue 2.2, ready 503.6, enqueued 2.3
            clock.ns = 2_400_000
            recorder._grad_hook(0)(p0)  # 505.0 -> 6.0 ms
            clock.ns = 2_500_000
            recorder._comm_hook(None, Bucket(1, [p0]))  # issue 2.5, ready 505.1, enqueued 2.6
            clock.ns = 5 * MS
            first.set_result([torch.zeros(16)])  # callback at host 5.0; device 507.0 -> 8.0
            clock.ns = 5_500_000
            second.set_result([torch.zeros(16)])  # callback at host 5.5; device 510.0 -> 11.0
            clock.ns = 6 * MS
        with recorder.optimizer():  # backward_return 511.0 -> 12.0; optimizer_start 511.2
            pass  # optimizer_end 513.0 -> 14.0
        clock.ns = 6_500_000
    assert script == []  # every scripted event was recorded, in this order
    [r] = recorder.local_iterations()
    assert r["forward_start"] == 1 * MS and r["backward_start"] == 2 * MS
    assert r["grad_ready"] == [6 * MS, 4_500_000]
    assert (r["backward_return"], r["optimizer_start"], r["optimizer_end"]) == (
        12 * MS,
        12_200_000,
        14 * MS,
    )
    assert r["end"] == 6_500_000  # a host reading
    b0, b1 = r["buckets"]
    # Host readings for the launch; the device's completion 3.0 ms after the host
    # callback of bucket 0 (5.0 ms), and 5.5 ms after that of bucket 1.
    assert (b0["issue"], b0["enqueued"], b0["complete"]) == (2_200_000, 2_300_000, 8 * MS)
    assert (b1["issue"], b1["enqueued"], b1["complete"]) == (2_500_000, 2_600_000, 11 * MS)
    # start: the latest of issue, the compute-stream point (4.6 and 6.1 ms) and
    # the previous bucket's completion (none, then 8.0 ms).
    assert b0["start"] == 4_600_000 and b1["start"] == 8 * MS
    assert not b0["done_at_launch"] and not b1["done_at_launch"]
    assert "ready" not in b0
    # In the trace: ms from the first forward start (1.0 ms on the host clock).
    trace = build_trace(
        [recorder.local_iterations()],
        names=["0.weight", "1.weight"],
        sizes=[64, 64],
        warmup=0,
        metadata={"cpu_count": 1},
    )
    rank = trace["iterations"][0]["ranks"][0]
    assert rank["grad_ready"] == [5.0, 3.5] and rank["backward_return"] == 11.0
    assert [(b["issue"], b["enqueued"], b["start"], b["complete"]) for b in rank["buckets"]] == [
        (1.2, 1.3, 3.6, 7.0),
        (1.5, 1.6, 7.0, 10.0),
    ]


def test_a_device_completion_before_the_launch_returns_keeps_its_device_time() -> None:
    # Reference 100.0 ms on the device at host 1.0 ms. The all-reduce finished while
    # its launch ran: its callback runs at attach and its event resolves to 2.05 ms,
    # before the launch's return (2.1 ms), so enqueued is brought back to 2.05.
    script = [100.0, 101.0, 101.05, 101.5, 101.6, 101.7]
    clock = Clock(1 * MS)
    recorder = scripted_recorder(scripted_timer(clock, script), clock, [2_100_000])
    _, p1 = params(recorder)
    future = torch.futures.Future()
    recorder.futures, recorder.done_at_launch = [future], {id(future)}
    with recorder.iteration():
        clock.ns = 2 * MS
        with recorder.backward():
            recorder._comm_hook(None, Bucket(0, [p1]))  # ready 101.0, complete 101.05
        with recorder.optimizer():  # backward_return 101.5; the optimizer 101.6 and 101.7
            pass
    assert script == []
    [b] = recorder.local_iterations()[0]["buckets"]
    assert (b["issue"], b["start"], b["enqueued"], b["complete"]) == (
        2 * MS,
        2 * MS,
        2_050_000,
        2_050_000,
    )
    assert not b["done_at_launch"]  # a device timer never stands in the launch's return


def test_a_host_completion_before_the_callback_is_attached_is_the_launch_return() -> None:
    # Every host reading moves the clock on by 1 us, so a stamp read in the callback,
    # which runs when .then() attaches it, would come after the launch's return.
    clock = Clock(10 * MS, step=1000)
    recorder = scripted_recorder(HostTimer(clock), clock, [12 * MS, 20 * MS])
    p0, p1 = params(recorder)
    early, late = torch.futures.Future(), torch.futures.Future()
    recorder.futures, recorder.done_at_launch = [early, late], {id(early)}
    with recorder.iteration(), recorder.backward():
        clock.ns = 11 * MS
        recorder._comm_hook(None, Bucket(0, [p1]))  # done inside its launch
        clock.ns = 15 * MS
        recorder._comm_hook(None, Bucket(1, [p0]))  # not done when launched
        clock.ns = 30 * MS
        late.set_result([torch.zeros(16)])  # gloo's thread runs the callback at 30 ms
    first, second = recorder.local_iterations()[0]["buckets"]
    # Finished somewhere between its issue (11 ms) and its launch's return (12 ms):
    # stamped at the return, the earliest moment the host can see it.
    assert (first["issue"], first["enqueued"], first["complete"]) == (11 * MS, 12 * MS, 12 * MS)
    assert first["done_at_launch"]
    assert (second["issue"], second["enqueued"], second["complete"]) == (15 * MS, 20 * MS, 30 * MS)
    assert not second["done_at_launch"]
    assert "start" not in first and "start" not in second  # host times have no start


def test_event_timer_places_events_by_the_reference() -> None:
    clock = Clock(7 * MS)
    script = [250.0, 250.25, 249.999]
    timer = scripted_timer(clock, script)
    with pytest.raises(RuntimeError):
        timer.device()
    assert timer.start() == 7 * MS
    later, earlier = timer.device(), timer.device()
    assert later.ns is None  # known only once resolved
    timer.resolve()
    # 7 ms + 0.25 ms; 7 ms - 0.001 ms (a device time may be read before the anchor's).
    assert (later.ns, earlier.ns) == (7_250_000, 6_999_000)
    assert later.event is None  # the event is let go once read


def _valid_trace(ddp, recorder: TraceRecorder, x, steps: int, warmup: int) -> dict:
    """Train ``steps`` recorded SGD steps on ``x``; the trace gathered after ``warmup``, valid."""
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for _ in range(steps):
        recorded_step(ddp, recorder, optimizer, x)
    trace = recorder.gather(warmup=warmup)
    assert trace is not None
    validate_trace(trace)
    return trace


def test_on_the_cpu_the_default_is_the_host_clock_and_metadata_says_so() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8, bias=False), nn.Linear(8, 8, bias=False))
    assert isinstance(default_timer(model), HostTimer)
    ddp = DistributedDataParallel(model)
    recorder = TraceRecorder(ddp, model_description="2 x Linear(8, 8)")
    assert isinstance(recorder.timer, HostTimer)
    trace = _valid_trace(ddp, recorder, torch.randn(4, 8), steps=2, warmup=1)
    meta = trace["metadata"]
    assert (meta["source"], meta["times"], meta["readiness"]) == (
        "recorder",
        "host",
        "per-parameter",
    )
    assert meta["device"] == "cpu" and "gpus" not in meta and "nccl_version" not in meta
    assert all("start" not in b for b in trace["iterations"][0]["ranks"][0]["buckets"])


class LockstepEvent:
    """An event on a device that runs each piece of work as soon as it is queued."""

    def __init__(self) -> None:
        self.ms = 0.0

    def record(self) -> None:
        self.ms = time.perf_counter_ns() / 1e6

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end_event: LockstepEvent) -> float:
        return end_event.ms - self.ms


def test_a_real_run_with_an_injected_event_timer_writes_a_device_trace() -> None:
    # The whole device path on the CPU: events whose device times are host readings.
    timer = EventTimer(LockstepEvent, lambda: None)
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(64, 64, bias=False) for _ in range(3)])
    ddp = DistributedDataParallel(model, bucket_cap_mb=0.01)  # 16 KiB a layer: one each
    recorder = TraceRecorder(ddp, bucket_cap_mb=0.01, timer=timer)
    assert recorder.timer is timer
    trace = _valid_trace(ddp, recorder, torch.randn(4, 64), steps=3, warmup=2)
    assert trace["metadata"]["times"] == "device" and trace["metadata"]["device"] == "cpu"
    assert "gpus" not in trace["metadata"]  # the model is on the CPU: no GPU to name
    buckets = trace["iterations"][0]["ranks"][0]["buckets"]
    assert len(buckets) == 3
    for b in buckets:
        assert b["issue"] <= b["start"] <= b["complete"] and b["enqueued"] <= b["complete"]
    # The communication stream runs them in order: none starts before the last ends.
    assert all(b["start"] >= a["complete"] for a, b in itertools.pairwise(buckets))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_real_run_on_one_gpu_records_device_times() -> None:
    torch.cuda.set_device(0)
    backend = "nccl" if dist.is_nccl_available() else "gloo"
    group = dist.new_group(backend=backend)
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(256, 256, bias=False) for _ in range(4)]).cuda()
    ddp = DistributedDataParallel(model, device_ids=[0], process_group=group, bucket_cap_mb=0.25)
    recorder = TraceRecorder(ddp, process_group=group, bucket_cap_mb=0.25)
    assert isinstance(recorder.timer, CudaEventTimer)
    trace = _valid_trace(ddp, recorder, torch.randn(32, 256, device="cuda"), steps=4, warmup=2)
    meta = trace["metadata"]
    assert meta["times"] == "device" and meta["device"] == "cuda"
    assert meta["gpus"] == [torch.cuda.get_device_name(0)]
    if backend == "nccl":
        assert meta["nccl_version"] == ".".join(map(str, torch.cuda.nccl.version()))
    else:
        assert meta["nccl_version"] is None
    for it in trace["iterations"]:
        rank = it["ranks"][0]
        assert rank["buckets"]
        for b in rank["buckets"]:
            assert b["issue"] <= b["start"] <= b["complete"] <= rank["backward_return"]
        assert max(rank["grad_ready"]) <= rank["backward_return"] <= rank["optimizer_start"]
