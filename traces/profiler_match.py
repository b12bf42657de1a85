"""Match each collective launch (a host op) to the run it started (a kernel or a gloo range).

Launches are the collective ops' tuples of ``profiler_events.EventCollector``
(kind, start, end, External id, elements, dtype); runs are its kernel tuples
(start, end, stream, External id, correlation, kind, elements, dtype) or gloo
ranges (op tuples again). A launch is matched, in this order:

1. by id: the kernel carries the launching op's ``External id``, or the
   runtime launch of the kernel's ``correlation`` happened inside the op;
2. by kind and order: a process group runs its collectives in the order they
   were launched, so the first unused run, of a kind that can carry the launch,
   that starts after it is its run, on whichever stream it ran. NCCL runs an
   ``all_to_all`` as grouped sends and receives (``SendRecv`` kernels) and a
   barrier as a one-element all-reduce; fused or newer kernels are ``Generic``.

A launch matched to nothing is None: the caller notes it.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any

#: The run kinds that can carry a launch of each kind, besides its own and ``generic``.
CARRIERS = {
    "all_to_all": ("send_recv", "send", "recv"),
    "send": ("send_recv",),
    "recv": ("send_recv",),
    "send_recv": ("send", "recv"),
    "barrier": ("all_reduce",),
    "gather": ("send_recv", "send", "recv"),
    "scatter": ("send_recv", "send", "recv"),
}
# 1 us of slack: a run's start may be rounded to before its launch.
SLACK_US = 1.0
_LOOK_BACK = 8  # ops searched back from a runtime launch for the one it is inside


def run_kind(run: tuple) -> str | None:
    """The collective kind of a run (kernel tuples carry it at position 5, op tuples first)."""
    return run[5] if len(run) == 8 else run[0]


def run_times(run: tuple) -> tuple[float, float]:
    """A run's start and end."""
    return (run[0], run[1]) if len(run) == 8 else (run[1], run[2])


def _by_correlation(
    launches: list[tuple], runs: list[tuple], launched_at: Mapping[Any, float]
) -> dict[int, int]:
    """Launch position -> run position, where the run's runtime launch lies inside the op."""
    starts = [launch[1] for launch in launches]
    out: dict[int, int] = {}
    for i, run in enumerate(runs):
        if len(run) != 8 or run[4] is None or run[4] not in launched_at:
            continue
        when = launched_at[run[4]]
        k = bisect.bisect_right(starts, when) - 1
        # The op holding the launch is the latest to start before it that has not ended;
        # a few ops on other threads may start in between.
        for j in range(k, max(k - _LOOK_BACK, -1), -1):
            if when <= launches[j][2]:
                if j not in out and _carries(launches[j][0], run_kind(run)):
                    out[j] = i
                break
    return out


def _carries(kind: str, carrier: str | None) -> bool:
    return carrier in (kind, "generic", *CARRIERS.get(kind, ()))


def pair_launches(
    launches: list[tuple], runs: list[tuple], launched_at: Mapping[Any, float] | None = None
) -> list[tuple | None]:
    """For each launch (in time order), the run it started, or None (see the module doc).

    ``launched_at`` maps a kernel's ``correlation`` to its runtime launch's host time.
    """
    by_ext = {r[3]: i for i, r in enumerate(runs) if len(r) == 8 and r[3] is not None}
    by_corr = _by_correlation(launches, runs, launched_at or {})
    used = [False] * len(runs)
    queues: dict[str | None, list[int]] = {}
    for i in sorted(range(len(runs)), key=lambda i: run_times(runs[i])[0]):
        queues.setdefault(run_kind(runs[i]), []).append(i)
    heads = dict.fromkeys(queues, 0)
    out: list[tuple | None] = []
    for k, launch in enumerate(launches):
        kind, ts, ext = launch[0], launch[1], launch[3]
        hit = by_ext.get(ext) if ext is not None else None
        if hit is None or used[hit] or not _carries(kind, run_kind(runs[hit])):
            hit = by_corr.get(k)
        if hit is None or used[hit]:
            hit = _first_in_order(kind, ts, runs, queues, heads, used)
        if hit is not None:
            used[hit] = True
        out.append(None if hit is None else runs[hit])
    return out


def _first_in_order(
    kind: str,
    ts: float,
    runs: list[tuple],
    queues: dict[str | None, list[int]],
    heads: dict[str | None, int],
    used: list[bool],
) -> int | None:
    """The earliest unused run after ``ts`` of ``kind`` (or of a kind that carries it)."""
    best = None
    for carrier in (kind, *CARRIERS.get(kind, ()), "generic"):
        queue = queues.get(carrier)
        if not queue:
            continue
        k = heads[carrier]
        # Launches come in time order: a run starting before this one starts before
        # every later launch too, so the head never goes back.
        while k < len(queue) and (used[queue[k]] or run_times(runs[queue[k]])[0] < ts - SLACK_US):
            k += 1
        heads[carrier] = k
        if k < len(queue) and (
            best is None or run_times(runs[queue[k]])[0] < run_times(runs[best])[0]
        ):
            best = queue[k]
    return best
