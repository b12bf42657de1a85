"""How the trace recorder reads time: the host clock, or CUDA events read after the iteration.

The recorder takes two kinds of readings (``recorder.py`` says which event gets which):

- ``Timer.host()``: the host clock now, for moments the host itself defines (a
  call is made or returns);
- ``Timer.device()``: a ``Stamp`` for the moment the work queued so far on the
  current stream has run. ``HostTimer`` reads the host clock there as well (on
  the CPU the work has run when the call returns); ``CudaEventTimer`` records a
  ``torch.cuda.Event(enable_timing=True)`` on the current stream and gives the
  stamp its time after the iteration.

An ``EventTimer`` begins every iteration (``start``) by waiting for the device to
be idle, recording a reference event and reading the host clock just after;
``resolve``, after the iteration, waits for every event and places it at
``anchor + reference.elapsed_time(event)``, so device and host readings share one
axis: ``time.perf_counter_ns``, one clock for every process on the machine. The
reference runs on the idle device within its launch latency (microseconds; not
measured here, as this machine has no GPU) of the host reading, an offset shared
by every device stamp of the iteration.
Waiting for an idle device at each iteration's start stops the host from running
ahead into the next iteration, as it may in a run without the recorder.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, Literal, Protocol

__all__ = ["CudaEventTimer", "Event", "EventTimer", "HostTimer", "Stamp", "Timer", "default_timer"]

Clock = Callable[[], int]


class Stamp:
    """A device-order reading: ``ns`` on the host clock, set once its timer has resolved it."""

    __slots__ = ("event", "ns")

    def __init__(self, ns: int | None = None, event: Event | None = None) -> None:
        self.ns = ns
        self.event = event

    def __repr__(self) -> str:
        return f"Stamp(ns={self.ns})"


class Event(Protocol):
    """What an ``EventTimer`` needs of an event (``torch.cuda.Event`` has it)."""

    def record(self) -> None: ...

    def synchronize(self) -> None: ...

    def elapsed_time(self, end_event: Any) -> float: ...


class Timer(ABC):
    """How a ``TraceRecorder`` reads time; ``times`` says what its device stamps are."""

    times: ClassVar[Literal["host", "device"]]

    def __init__(self, clock: Clock = time.perf_counter_ns) -> None:
        self._clock = clock

    def host(self) -> int:
        """The host clock now, in ns."""
        return self._clock()

    @abstractmethod
    def start(self) -> int:
        """Begin an iteration: the host time (ns) of its reference point."""

    @abstractmethod
    def device(self) -> Stamp:
        """A stamp for when the work queued so far on the current stream has run."""

    @abstractmethod
    def resolve(self) -> None:
        """After the iteration: give every stamp taken since ``start`` its ``ns``."""


class HostTimer(Timer):
    """Host clock readings only: device stamps are read at once (CPU tensors, gloo)."""

    times = "host"

    def start(self) -> int:
        return self.host()

    def device(self) -> Stamp:
        return Stamp(self.host())

    def resolve(self) -> None:
        pass  # every stamp was read when it was taken


class EventTimer(Timer):
    """Device stamps as events, placed on the host clock by one reference event per iteration.

    ``new_event`` makes an event whose ``record()`` puts it on the right stream;
    ``synchronize`` waits until the device is idle. ``CudaEventTimer`` passes CUDA
    events; a test can pass events with scripted device times.
    """

    times = "device"

    def __init__(
        self,
        new_event: Callable[[], Event],
        synchronize: Callable[[], None],
        clock: Clock = time.perf_counter_ns,
    ) -> None:
        super().__init__(clock)
        self._new_event = new_event
        self._synchronize = synchronize
        self._reference: Event | None = None
        self._anchor_ns = 0
        self._pending: list[Stamp] = []

    def start(self) -> int:
        # On an idle device the reference runs as soon as it is queued, so the host
        # reading just after queueing it is its time to within the launch latency.
        self._synchronize()
        self._pending = []
        self._reference = self._new_event()
        self._reference.record()
        self._anchor_ns = self.host()
        return self._anchor_ns

    def device(self) -> Stamp:
        if self._reference is None:
            raise RuntimeError("take device stamps between the timer's start() and resolve()")
        event = self._new_event()
        event.record()
        stamp = Stamp(event=event)
        # Stamps come from the autograd and communication threads too; list.append
        # is atomic under the GIL.
        self._pending.append(stamp)
        return stamp

    def resolve(self) -> None:
        reference = self._reference
        if reference is None:
            return
        reference.synchronize()
        for stamp in self._pending:
            assert stamp.event is not None
            stamp.event.synchronize()
            stamp.ns = self._anchor_ns + round(reference.elapsed_time(stamp.event) * 1e6)
            stamp.event = None
        self._pending = []
        self._reference = None


class CudaEventTimer(EventTimer):
    """``torch.cuda.Event(enable_timing=True)`` on ``device``'s current stream for each stamp.

    The current stream is the one that matters at each stamp: the autograd
    engine's stream in gradient hooks, the caller's around backward and the
    optimizer, and inside a CUDA future's ``.then()`` callback a stream that
    waits for the collective's kernels, so an event there runs when the
    all-reduce has finished on the device.
    """

    def __init__(self, device: Any = None, clock: Clock = time.perf_counter_ns) -> None:
        import torch

        self.device = (
            torch.device("cuda", torch.cuda.current_device()) if device is None else device
        )

        def new_event() -> Event:
            return _CudaEvent(torch.cuda.Event(enable_timing=True), self.device)

        super().__init__(new_event, lambda: torch.cuda.synchronize(self.device), clock)


class _CudaEvent:
    """A CUDA event recorded on its device's current stream, whatever the current device is."""

    __slots__ = ("device", "event")

    def __init__(self, event: Any, device: Any) -> None:
        self.event = event
        self.device = device

    def record(self) -> None:
        import torch

        self.event.record(torch.cuda.current_stream(self.device))

    def synchronize(self) -> None:
        self.event.synchronize()

    def elapsed_time(self, end_event: _CudaEvent) -> float:
        return self.event.elapsed_time(end_event.event)


def default_timer(module: Any) -> Timer:
    """CUDA events when ``module`` has parameters on a CUDA device, the host clock otherwise."""
    for p in module.parameters():
        if p.device.type == "cuda":
            return CudaEventTimer(p.device)
    return HostTimer()
