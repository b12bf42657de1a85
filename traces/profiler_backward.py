"""Which work in a profile is backward: what autograd's engine launched.

``loss.backward()`` hands the graph to autograd's engine, which runs each
node as an ``autograd::engine::evaluate_function: ...`` op; for CUDA (and ROCm)
tensors the engine runs them on its own device thread, not the thread that
called ``backward()`` (``torch/csrc/autograd/engine.cpp``: one worker thread per
device; the calling thread runs only the CPU work). So, per ``ProfilerStep#N``:

- on GPUs, **backward compute** is the compute kernels (not collectives, not on
  a stream a collective runs on) whose runtime launch (tied by ``correlation``)
  was made inside the step on a thread that runs evaluate_function ops in that
  step; on the step's own thread (the one calling ``backward()``, which runs an
  evaluate_function op only for a CPU leaf), only launches made inside such an
  op count. What the main thread launches after ``backward()`` - AMP's
  ``GradScaler`` unscale (``aten::_amp_foreach_non_finite_check_and_unscale_``,
  which waits for the last all-reduce), clipping, the optimizer - is not
  backward. A profile whose kernels carry no launch thread (no runtime
  launches) falls back to the kernels launched between forward's end and the
  optimizer;
- on the CPU (gloo), the engine's ops themselves, each cut where DDP's reducer
  takes over inside it (its first reducer op or collective launch);
- **readiness**, by the same rule: on GPUs a gradient (an ``AccumulateGrad`` op)
  or a bucket (its all-reduce's launch) is ready when the last backward kernel
  launched before it ends on the device; on the CPU, at the op's end.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, replace

from .profiler_events import EventCollector


def _between(keys: list[float], lo: float, hi: float) -> slice:
    """The positions of the sorted ``keys`` in [lo, hi)."""
    return slice(bisect.bisect_left(keys, lo), bisect.bisect_left(keys, hi))


@dataclass(frozen=True)
class Backward:
    """One step's backward: its compute pieces (start, end) and readiness (device or host)."""

    pieces: list[tuple[float, float]]
    gradients_ready: tuple[float, ...]  # per AccumulateGrad, sorted
    launched: list[float]  # each piece's launch (host), sorted
    ends_so_far: list[float]  # the latest end among pieces launched up to each

    def ready_at(self, launch_us: float) -> float | None:
        """When the last backward work launched up to ``launch_us`` (host) ended; None if none."""
        k = bisect.bisect_right(self.launched, launch_us)
        return self.ends_so_far[k - 1] if k else None


class BackwardIndex:
    """A rank's candidate backward work, sorted by launch, for each step to take its share."""

    def __init__(self, got: EventCollector, comm_streams: set) -> None:
        self.device = got.saw_kernels
        self.main = got.step_threads
        self.autograd = sorted(got.autograd, key=lambda a: a[0])
        self.autograd_key = [a[0] for a in self.autograd]
        self.accumulate = sorted(got.accumulate, key=lambda a: a[0])
        self.accumulate_key = [a[0] for a in self.accumulate]
        pieces: list[tuple] = []  # (when it was launched, start, end, launching thread)
        if self.device:
            for k in got.kernels:
                if k[2] in comm_streams or k[5] is not None:
                    continue
                if k[4] is not None and k[4] in got.launches:
                    pieces.append((got.launches[k[4]], k[0], k[1], got.launch_threads.get(k[4])))
                else:  # no launch in the file: its device start stands in
                    pieces.append((k[0], k[0], k[1], None))
        else:
            # An autograd op is backward up to where DDP's reducer takes over (its
            # first reducer op or a collective launch inside the op): what follows
            # is DDP copying the gradient into its bucket and launching it.
            cuts = sorted(
                [*got.reducer, *(o[1] for o in got.c10d_ops), *(o[1] for o in got.nccl_ops)]
            )
            for a, b, thread in got.autograd:
                i = bisect.bisect_left(cuts, a)
                end = cuts[i] if i < len(cuts) and cuts[i] < b else b
                if end > a:
                    pieces.append((a, a, end, thread))
        pieces.sort(key=lambda p: p[:3])
        self.piece_key = [p[0] for p in pieces]
        self.pieces = pieces

    def _engine(self, s: float, e: float) -> tuple[set, list[tuple[float, float]]]:
        """Threads running evaluate_function ops in [s, e); those ops' spans on the main thread."""
        ops = self.autograd[_between(self.autograd_key, s, e)]
        threads = {t for _, _, t in ops if t is not None}
        spans = [(a, b) for a, b, t in ops if t in self.main]
        return threads, spans

    def step(self, s: float, e: float, fwd_end: float, window_end: float) -> Backward:
        """The backward of the step [s, e) whose forward ends at ``fwd_end`` (see module doc)."""
        chosen: list[tuple] = []
        threads: set = set()
        if self.device:
            threads, spans = self._engine(s, e)
            starts = [a for a, _ in spans]
            for p in self.pieces[_between(self.piece_key, s, e)]:
                if p[3] not in threads:
                    continue
                if p[3] in self.main:
                    k = bisect.bisect_right(starts, p[0]) - 1
                    if k < 0 or p[0] > spans[k][1]:
                        continue
                chosen.append(p)
        engine = bool(chosen)
        if not engine:
            chosen = self.pieces[_between(self.piece_key, fwd_end, window_end)]
        launched, ends_so_far, latest = [], [], float("-inf")
        for p in chosen:
            latest = max(latest, p[2])
            launched.append(p[0])
            ends_so_far.append(latest)
        backward = Backward([(p[1], p[2]) for p in chosen], (), launched, ends_so_far)
        if engine:
            grads = self.accumulate[_between(self.accumulate_key, s, e)]
            ready = (backward.ready_at(t) for t, thread in grads if thread in threads)
            gradients = tuple(sorted(r for r in ready if r is not None))
        else:
            grads = self.accumulate[_between(self.accumulate_key, fwd_end, window_end)]
            gradients = tuple(t for t, _ in grads)
        return replace(backward, gradients_ready=gradients)
