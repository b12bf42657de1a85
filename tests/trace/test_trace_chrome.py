"""Export to the Chrome trace event format: the structure Perfetto and chrome://tracing read."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest
from synthetic import edited, synthetic_document

from traces import from_document, to_chrome_trace


@pytest.fixture(scope="module")
def exported() -> tuple:
    trace = from_document(synthetic_document([3, 3, 3, 3], iterations=2), "t.json")
    return trace, to_chrome_trace(trace)


def test_document_shape(exported) -> None:
    _, doc = exported
    json.dumps(doc)  # plain JSON
    assert doc["displayTimeUnit"] == "ms"
    assert doc["otherData"]["source"] == "t.json"
    for e in doc["traceEvents"]:
        assert {"name", "ph", "pid", "tid"} <= set(e)
        assert e["ph"] in {"X", "i", "M"}
        if e["ph"] == "X":
            assert e["dur"] >= 0 and isinstance(e["ts"], float)


def test_one_process_per_rank_with_named_lanes(exported) -> None:
    _, doc = exported
    meta = [e for e in doc["traceEvents"] if e["ph"] == "M"]
    procs = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    assert procs == {0: "rank 0", 1: "rank 1"}
    lanes = {(e["pid"], e["args"]["name"]) for e in meta if e["name"] == "thread_name"}
    assert {(0, "step"), (0, "gradients"), (0, "all-reduce 1"), (1, "all-reduce 1")} <= lanes


def test_events_match_the_trace(exported) -> None:
    trace, doc = exported
    x = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    buckets = [e for e in x if e["name"].startswith("bucket ")]
    assert len(buckets) == trace.n_iterations * trace.n_ranks * trace.n_buckets
    first = next(e for e in buckets if e["pid"] == 1 and e["name"] == "bucket 2")
    assert first["ts"] == pytest.approx(trace.issue[0, 1, 2] * 1000)
    assert first["dur"] == pytest.approx((trace.complete[0, 1, 2] - trace.issue[0, 1, 2]) * 1000)
    assert first["args"]["parameters"] == ["5.weight", "4.weight", "3.weight"]
    ready = [e for e in doc["traceEvents"] if e["ph"] == "i"]
    assert len(ready) == trace.n_iterations * trace.n_ranks * 12
    grads = [e for e in x if e["tid"] == 1]
    assert len(grads) == len(ready)
    steps = [e for e in x if e["name"].startswith("iteration ")]
    assert [e["name"] for e in steps if e["pid"] == 0] == ["iteration 5", "iteration 6"]


def test_events_on_a_lane_nest_or_follow(exported) -> None:
    # The viewers draw complete events on one lane as a stack: they must nest.
    _, doc = exported
    lanes = defaultdict(list)
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            lanes[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    for spans in lanes.values():
        spans.sort(key=lambda s: (s[0], -s[1]))
        open_ends: list[float] = []
        for start, end in spans:
            while open_ends and open_ends[-1] <= start + 1e-6:
                open_ends.pop()
            if open_ends:
                assert end <= open_ends[-1] + 1e-6
            open_ends.append(end)


def test_overlapping_all_reduces_get_a_second_lane() -> None:
    doc = synthetic_document([6, 6], iterations=1)
    # Bucket 1 issued before bucket 0 completes on rank 0 (gloo runs two at once).
    b0 = doc["iterations"][0]["ranks"][0]["buckets"][0]
    b1 = doc["iterations"][0]["ranks"][0]["buckets"][1]
    doc = edited(doc, "iterations[0].ranks[0].buckets[0].complete", b1["complete"] - 0.5)
    doc = edited(doc, "iterations[0].ranks[0].buckets[1].issue", b0["enqueued"])
    doc = edited(doc, "iterations[0].ranks[0].buckets[1].enqueued", b0["enqueued"] + 0.1)
    out = to_chrome_trace(from_document(doc))
    tids = {
        e["name"]: e["tid"]
        for e in out["traceEvents"]
        if e["ph"] == "X" and e["pid"] == 0 and e["name"].startswith("bucket")
    }
    assert tids == {"bucket 0": 2, "bucket 1": 3}
