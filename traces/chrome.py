"""Export a trace to the Chrome trace event format (opens in Perfetto and ``chrome://tracing``).

One process per rank, with threads (lanes):

- ``step``: one complete event (``ph: "X"``) per iteration, with ``forward``,
  ``backward`` (call to return) and ``optimizer`` nested in it;
- ``gradients``: per parameter, a complete event from the previous gradient
  ready on that rank (or backward start) to its own, named after it, so the
  lane reads as backward layer by layer; an instant event (``ph: "i"``) marks
  each gradient ready;
- ``all-reduce 1``, ``all-reduce 2``, ...: per bucket, issue to completion,
  with its enqueue (issue to the call's return) nested inside; a second lane
  is used only when a bucket is issued before the previous one completed (gloo
  runs two at once).

Times are microseconds (the format's unit) from the trace's origin.
"""

from __future__ import annotations

from typing import Any

from .load import Trace

STEP, GRADIENTS, FIRST_COMM_LANE = 0, 1, 2


def _us(ms: float) -> float:
    return round(ms * 1000.0, 3)


def _size(nbytes: float) -> int | str:
    """A size as the export writes it: whole bytes, or "size unknown" (never NaN)."""
    return "size unknown" if _nan(nbytes) else int(nbytes)


def _complete(name: str, pid: int, tid: int, start: float, end: float, **args: Any) -> dict:
    event = {"name": name, "ph": "X", "pid": pid, "tid": tid, "ts": _us(start)}
    event["dur"] = max(0.0, round(_us(end) - _us(start), 3))
    if args:
        event["args"] = args
    return event


def to_chrome_trace(trace: Trace) -> dict[str, Any]:
    """The trace as a Chrome trace event document (a JSON-ready dict)."""
    events: list[dict[str, Any]] = []
    lanes_used: dict[int, int] = {}
    for i, number in enumerate(trace.iteration.tolist()):
        for r in range(trace.n_ranks):
            events.append(
                _complete(
                    f"iteration {number}",
                    r,
                    STEP,
                    trace.forward_start[i, r],
                    trace.optimizer_end[i, r],
                    other_load=None if _nan(trace.other_load[i]) else float(trace.other_load[i]),
                )
            )
            events.append(
                _complete("forward", r, STEP, trace.forward_start[i, r], trace.backward_start[i, r])
            )
            events.append(
                _complete(
                    "backward", r, STEP, trace.backward_start[i, r], trace.backward_return[i, r]
                )
            )
            events.append(
                _complete(
                    "optimizer", r, STEP, trace.optimizer_start[i, r], trace.optimizer_end[i, r]
                )
            )
            ready = trace.grad_ready[i, r]
            previous = trace.backward_start[i, r]
            for p in sorted(range(ready.size), key=lambda p: ready[p]):
                name = trace.parameter_names[p]
                size = _size(trace.parameter_bytes[p])
                events.append(_complete(name, r, GRADIENTS, previous, ready[p], bytes=size))
                events.append(
                    {
                        "name": f"{name} ready",
                        "ph": "i",
                        "s": "t",
                        "pid": r,
                        "tid": GRADIENTS,
                        "ts": _us(ready[p]),
                    }
                )
                previous = ready[p]
            lane_free: list[float] = []
            for b in range(trace.n_buckets):
                issue, done = trace.issue[i, r, b], trace.complete[i, r, b]
                lane = next((k for k, t in enumerate(lane_free) if t <= issue), len(lane_free))
                if lane == len(lane_free):
                    lane_free.append(done)
                lane_free[lane] = done
                tid = FIRST_COMM_LANE + lane
                lanes_used[r] = max(lanes_used.get(r, 0), lane + 1)
                events.append(
                    _complete(
                        f"bucket {b}",
                        r,
                        tid,
                        issue,
                        done,
                        bytes=_size(trace.bucket_bytes[b]),
                        parameters=[trace.parameter_names[p] for p in trace.bucket_parameters[b]],
                    )
                )
                events.append(_complete("enqueue", r, tid, issue, trace.enqueued[i, r, b]))
    names: list[dict[str, Any]] = []
    for r in range(trace.n_ranks):
        names.append(
            {"name": "process_name", "ph": "M", "pid": r, "tid": 0, "args": {"name": f"rank {r}"}}
        )
        lanes = {STEP: "step", GRADIENTS: "gradients"}
        for k in range(lanes_used.get(r, 1)):
            lanes[FIRST_COMM_LANE + k] = f"all-reduce {k + 1}"
        for tid, label in lanes.items():
            names.append(
                {"name": "thread_name", "ph": "M", "pid": r, "tid": tid, "args": {"name": label}}
            )
            names.append(
                {
                    "name": "thread_sort_index",
                    "ph": "M",
                    "pid": r,
                    "tid": tid,
                    "args": {"sort_index": tid},
                }
            )
    meta = trace.metadata
    return {
        "traceEvents": names + events,
        "displayTimeUnit": "ms",
        "otherData": {
            "source": trace.name,
            "format": "overlap-lab trace exported to Chrome trace events",
            "times": "device" if trace.device_times else "host",
            **{
                k: meta[k]
                for k in (
                    "torch_version",
                    "backend",
                    "world_size",
                    "bucket_cap_mb",
                    "cpu_count",
                    "gpus",
                    "ranks_in_run",
                )
                if k in meta
            },
        },
    }


def _nan(x: float) -> bool:
    return x != x
