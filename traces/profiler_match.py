"""Match each collective launch (a host op) to the run it started (a kernel or a gloo range).

Launches are the collective ops' tuples of ``profiler_events.EventCollector``
(kind, start, end, External id, elements, dtype); runs are its kernel tuples
(start, end, stream, External id, correlation, kind, elements, dtype) or gloo
ranges (op tuples again).
"""

from __future__ import annotations

from collections import defaultdict


def pair_launches(launches: list[tuple], runs: list[tuple]) -> list[tuple | None]:
    """For each launch (in time order), the run it started: same External id, else FIFO by kind.

    A process group runs its collectives in the order they were launched (one
    NCCL stream, one gloo queue), so the first unmatched run of the launch's kind
    that starts after the launch is its run. ``External id`` ties a kernel to the
    op that launched it; gloo's ranges count their own ids, so only kernels use it.
    """
    by_id = {r[3]: i for i, r in enumerate(runs) if len(r) == 8 and r[3] is not None}
    used = [False] * len(runs)
    queues: dict[str | None, list[int]] = defaultdict(list)
    for i in sorted(range(len(runs)), key=lambda i: run_times(runs[i])[0]):
        queues[run_kind(runs[i])].append(i)
    heads: dict[str | None, int] = defaultdict(int)
    out: list[tuple | None] = []
    for launch in launches:
        kind, ts, ext = launch[0], launch[1], launch[3]
        hit = by_id.get(ext) if ext is not None else None
        if hit is None or used[hit] or run_kind(runs[hit]) != kind:
            queue, k = queues[kind], heads[kind]
            # 1 us of slack: a run's start may be rounded to before its launch
            while k < len(queue) and (used[queue[k]] or run_times(runs[queue[k]])[0] < ts - 1.0):
                k += 1
            heads[kind] = k
            hit = queue[k] if k < len(queue) else None
        if hit is not None:
            used[hit] = True
        out.append(None if hit is None else runs[hit])
    return out


def run_kind(run: tuple) -> str | None:
    # host op tuples start with the kind; kernel tuples carry it at position 5
    return run[5] if len(run) == 8 else run[0]


def run_times(run: tuple) -> tuple[float, float]:
    return (run[0], run[1]) if len(run) == 8 else (run[1], run[2])
