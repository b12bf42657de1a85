"""Chrome trace export, event by event, for a tiny hand-built trace.

The Chrome trace event format: metadata events (``ph: "M"``) name each process
(``process_name``) and thread (``thread_name``) and order the threads
(``thread_sort_index``); complete events (``ph: "X"``) carry ``ts`` and ``dur``;
instant events (``ph: "i"``) carry ``ts`` and a scope ``s`` (``"t"``: the
thread). Times are microseconds. Here one process per rank, lanes ``step`` (tid
0), ``gradients`` (tid 1) and ``all-reduce k`` (tid 1 + k).

The trace: two parameters ``w`` (8 bytes) and ``b`` (4 bytes), two ranks, one
iteration (number 7), times in binary fractions of a millisecond so that every
microsecond value below is exact and follows by multiplying by 1000.
"""

from __future__ import annotations

import copy

from traces import (
    FORMAT,
    from_document,
    to_chrome_trace,
    validate_trace,
)


def _bucket(index: int, name: str, nbytes: int, issue: float, enq: float, done: float) -> dict:
    return {
        "index": index,
        "bytes": nbytes,
        "parameters": [name],
        "issue": issue,
        "enqueued": enq,
        "complete": done,
    }


def _tiny() -> dict:
    """The trace document (times in ms).

    Rank 0: ``b`` ready at 4.0 before ``w`` at 5.0; bucket 1 is issued (5.5)
    exactly when bucket 0 completes (5.5), so one all-reduce lane is enough.
    Rank 1: bucket 1 is issued (4.5) while bucket 0 runs (to 5.5): a second lane.
    """
    return {
        "format": FORMAT,
        "version": 1,  # a version-1 document: still read
        "time_unit": "ms",
        "metadata": {
            "torch_version": "2.3.0",
            "backend": "gloo",
            "device": "cpu",
            "world_size": 2,
            "bucket_cap_mb": 0.5,
            "cpu_count": 4,
            "threads_per_rank": 1,
            "origin_ns": 0,
        },
        "parameters": [{"name": "w", "bytes": 8}, {"name": "b", "bytes": 4}],
        "iterations": [
            {
                "iteration": 7,
                "other_load": 0.25,
                "ranks": [
                    {
                        "rank": 0,
                        "forward_start": 1.0,
                        "backward_start": 3.0,
                        "backward_return": 7.0,
                        "optimizer_start": 7.5,
                        "optimizer_end": 9.0,
                        "grad_ready": [5.0, 4.0],
                        "buckets": [
                            _bucket(0, "b", 4, 4.25, 4.5, 5.5),
                            _bucket(1, "w", 8, 5.5, 5.75, 6.5),
                        ],
                    },
                    {
                        "rank": 1,
                        "forward_start": 1.5,
                        "backward_start": 3.5,
                        "backward_return": 7.25,
                        "optimizer_start": 7.5,
                        "optimizer_end": 9.25,
                        "grad_ready": [4.5, 4.0],
                        "buckets": [
                            _bucket(0, "b", 4, 4.0, 4.125, 5.5),
                            _bucket(1, "w", 8, 4.5, 4.625, 6.0),
                        ],
                    },
                ],
            }
        ],
    }


_RANK_TIMES = (
    "forward_start",
    "backward_start",
    "backward_return",
    "optimizer_start",
    "optimizer_end",
)


def _export(document: dict, name: str = "tiny.json") -> dict:
    validate_trace(document)
    return to_chrome_trace(from_document(document, name))


def _x(name: str, pid: int, tid: int, ts: float, dur: float, **args) -> dict:
    event = {"name": name, "ph": "X", "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        event["args"] = args
    return event


def _ready(name: str, pid: int, ts: float) -> dict:
    return {"name": f"{name} ready", "ph": "i", "s": "t", "pid": pid, "tid": 1, "ts": ts}


def _lane(pid: int, tid: int, label: str) -> list[dict]:
    return [
        {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": label}},
        {
            "name": "thread_sort_index",
            "ph": "M",
            "pid": pid,
            "tid": tid,
            "args": {"sort_index": tid},
        },
    ]


def _process(pid: int) -> dict:
    return {
        "name": "process_name",
        "ph": "M",
        "pid": pid,
        "tid": 0,
        "args": {"name": f"rank {pid}"},
    }


def test_the_exact_events_of_a_tiny_trace() -> None:
    """Metadata first (per rank: process, then its lanes in tid order), then per rank the
    step, forward, backward, optimizer; gradients in ready order (span from the previous
    ready or backward start, then the instant); buckets in index order with their enqueue."""
    events = _export(_tiny())["traceEvents"]
    expected = [
        _process(0),
        *_lane(0, 0, "step"),
        *_lane(0, 1, "gradients"),
        *_lane(0, 2, "all-reduce 1"),
        _process(1),
        *_lane(1, 0, "step"),
        *_lane(1, 1, "gradients"),
        *_lane(1, 2, "all-reduce 1"),
        *_lane(1, 3, "all-reduce 2"),
        # rank 0: iteration 1.0 -> 9.0 ms, forward 1.0 -> 3.0, backward 3.0 -> 7.0,
        # optimizer 7.5 -> 9.0
        _x("iteration 7", 0, 0, 1000.0, 8000.0, other_load=0.25),
        _x("forward", 0, 0, 1000.0, 2000.0),
        _x("backward", 0, 0, 3000.0, 4000.0),
        _x("optimizer", 0, 0, 7500.0, 1500.0),
        # b ready at 4.0 (first), from backward start 3.0; w at 5.0, from 4.0
        _x("b", 0, 1, 3000.0, 1000.0, bytes=4),
        _ready("b", 0, 4000.0),
        _x("w", 0, 1, 4000.0, 1000.0, bytes=8),
        _ready("w", 0, 5000.0),
        # bucket 0: 4.25 -> 5.5 (enqueue to 4.5); bucket 1: 5.5 -> 6.5 (enqueue to 5.75),
        # on the same lane since it starts when bucket 0 ends
        _x("bucket 0", 0, 2, 4250.0, 1250.0, bytes=4, parameters=["b"]),
        _x("enqueue", 0, 2, 4250.0, 250.0),
        _x("bucket 1", 0, 2, 5500.0, 1000.0, bytes=8, parameters=["w"]),
        _x("enqueue", 0, 2, 5500.0, 250.0),
        # rank 1: iteration 1.5 -> 9.25, forward 1.5 -> 3.5, backward 3.5 -> 7.25,
        # optimizer 7.5 -> 9.25
        _x("iteration 7", 1, 0, 1500.0, 7750.0, other_load=0.25),
        _x("forward", 1, 0, 1500.0, 2000.0),
        _x("backward", 1, 0, 3500.0, 3750.0),
        _x("optimizer", 1, 0, 7500.0, 1750.0),
        _x("b", 1, 1, 3500.0, 500.0, bytes=4),
        _ready("b", 1, 4000.0),
        _x("w", 1, 1, 4000.0, 500.0, bytes=8),
        _ready("w", 1, 4500.0),
        # bucket 1 issued at 4.5 while bucket 0 runs to 5.5: the second lane (tid 3)
        _x("bucket 0", 1, 2, 4000.0, 1500.0, bytes=4, parameters=["b"]),
        _x("enqueue", 1, 2, 4000.0, 125.0),
        _x("bucket 1", 1, 3, 4500.0, 1500.0, bytes=8, parameters=["w"]),
        _x("enqueue", 1, 3, 4500.0, 125.0),
    ]
    assert events == expected


def test_other_data_names_the_source_and_copies_the_run_metadata() -> None:
    """Only the five run facts are copied from the metadata (not device, threads, origin)."""
    doc = _export(_tiny(), "tiny.json")
    assert doc["displayTimeUnit"] == "ms"
    assert doc["otherData"] == {
        "source": "tiny.json",
        "format": "overlap-lab trace exported to Chrome trace events",
        "times": "host",  # a version-1 recording: host times
        "torch_version": "2.3.0",
        "backend": "gloo",
        "world_size": 2,
        "bucket_cap_mb": 0.5,
        "cpu_count": 4,
    }


def test_unknown_other_load_is_null_in_the_step_args() -> None:
    """``other_load: null`` (unknown) stays null; a known load is passed as a number."""
    document = _tiny()
    document["iterations"].append(copy.deepcopy(document["iterations"][0]))
    second = document["iterations"][1]
    second["iteration"] = 8
    second["other_load"] = None
    for rank in second["ranks"]:  # the same iteration 100 ms later
        for key in _RANK_TIMES:
            rank[key] += 100.0
        rank["grad_ready"] = [t + 100.0 for t in rank["grad_ready"]]
        for bucket in rank["buckets"]:
            for key in ("issue", "enqueued", "complete"):
                bucket[key] += 100.0
    steps = [
        (e["name"], e["pid"], e["args"])
        for e in _export(document)["traceEvents"]
        if e["name"].startswith("iteration ")
    ]
    assert steps == [
        ("iteration 7", 0, {"other_load": 0.25}),
        ("iteration 7", 1, {"other_load": 0.25}),
        ("iteration 8", 0, {"other_load": None}),
        ("iteration 8", 1, {"other_load": None}),
    ]


def test_times_are_rounded_to_the_nanosecond() -> None:
    """0.4 ns past 1 ms is below the export's resolution (3 decimals of a microsecond)."""
    document = _tiny()
    rank = document["iterations"][0]["ranks"][0]
    rank["forward_start"] = 1.0000004  # 1000.0004 µs -> 1000.000
    rank["grad_ready"] = [5.0, 4.0000004]  # b ready at 4000.0004 µs -> 4000.000
    events = _export(document)["traceEvents"]
    forward = next(e for e in events if e["name"] == "forward" and e["pid"] == 0)
    assert (forward["ts"], forward["dur"]) == (1000.0, 2000.0)
    b_ready = next(e for e in events if e["name"] == "b ready" and e["pid"] == 0)
    assert b_ready["ts"] == 4000.0


def test_a_zero_length_span_has_zero_duration() -> None:
    """Forward ending the instant it starts (backward called at once) lasts 0 µs."""
    document = _tiny()
    document["iterations"][0]["ranks"][0]["forward_start"] = 3.0
    events = _export(document)["traceEvents"]
    forward = next(e for e in events if e["name"] == "forward" and e["pid"] == 0)
    assert (forward["ts"], forward["dur"]) == (3000.0, 0.0)


def test_duration_is_whole_nanoseconds_far_from_the_origin() -> None:
    """A clock counted from boot can read ~1e9 ms (11.6 days): floats there are 2**-13 µs
    apart, so 3 ns after 1e12 µs is stored as 1e12 + 25 * 2**-13 µs and the plain
    difference is 0.00305 µs; the exported duration is the 3 ns, 0.003 µs."""
    document = _tiny()
    rank = document["iterations"][0]["ranks"][0]
    shift = 1e9 - 1.0  # forward_start 1.0 -> 1e9 ms; every time on the rank moves with it
    for key in _RANK_TIMES:
        rank[key] += shift
    rank["grad_ready"] = [t + shift for t in rank["grad_ready"]]
    for bucket in rank["buckets"]:
        for key in ("issue", "enqueued", "complete"):
            bucket[key] += shift
    rank["backward_start"] = 1e9 + 0.000003  # 3 ns of forward (backward_start was 3.0)
    events = _export(document)["traceEvents"]
    forward = next(e for e in events if e["name"] == "forward" and e["pid"] == 0)
    assert forward["ts"] == 1e12
    assert forward["dur"] == 0.003
