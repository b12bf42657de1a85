"""One run's raw records, as the recorder keeps them, made a trace document.

A rank's recorder keeps, per iteration, clock readings in nanoseconds (some
still ``Stamp``s to be resolved on the device); ``settle`` makes one
iteration's readings numbers once they are resolved, and ``build_trace`` turns
every rank's records into the trace format (``traces/schema_v2.json``). Plain
Python: no torch.
"""

from __future__ import annotations

from typing import Any

from traces import FORMAT, VERSION

from . import machine
from .timing import Stamp


def _ns(value: int | Stamp | None) -> int | None:
    return value.ns if isinstance(value, Stamp) else value


def settle(record: dict[str, Any]) -> dict[str, Any]:
    """One iteration's raw record, its resolved stamps made ns readings (in place).

    A bucket's ``enqueued`` is made no later than its ``complete`` and, on the
    device, its ``start`` is the latest of its issue, the point the collective's
    stream waits for and the previous bucket's ``complete``.
    """
    # On the host ``complete`` is read after ``enqueued`` and the clamp does nothing.
    for key in ("backward_return", "optimizer_start", "optimizer_end"):
        if key in record:
            record[key] = _ns(record[key])
    record["grad_ready"] = [_ns(t) for t in record["grad_ready"]]
    previous: int | None = None
    for bucket in record["buckets"]:  # in launch order, the order they run in
        bucket["complete"] = complete = _ns(bucket["complete"])
        ready = _ns(bucket.pop("ready", None))
        if complete is not None:
            bucket["enqueued"] = min(bucket["enqueued"], complete)
        if ready is not None:
            start = max(t for t in (bucket["issue"], ready, previous) if t is not None)
            bucket["start"] = start if complete is None else min(start, complete)
        previous = complete
    return record


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
                            **({"start": ms(b["start"])} if "start" in b else {}),
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
