"""``summary`` of a recorded (version-1) trace, against numbers worked out by hand."""

from __future__ import annotations

import copy
import json

import pytest

from traces import TraceError, from_document
from traces.summary import summary, summary_text

MIB = 1024 * 1024


def rank(r: int, shift: float) -> dict:
    # Parameter w2 is ready first and fills bucket 0; w1 fills bucket 1.
    return {
        "rank": r,
        "forward_start": 0.0 + shift,
        "backward_start": 2.0 + shift,
        "backward_return": 8.1 + 2 * shift,
        "optimizer_start": 8.2 + 2 * shift,
        "optimizer_end": 9.0 + 2 * shift,
        "grad_ready": [5.0 + 2 * shift, 3.0 + 2 * shift],
        "buckets": [
            {"index": 0, "bytes": 2 * MIB, "parameters": ["w2"], "issue": 3.5 + 2 * shift,
             "enqueued": 3.6 + 2 * shift, "complete": 6.0 + 2 * shift},
            {"index": 1, "bytes": MIB, "parameters": ["w1"], "issue": 5.2 + 2 * shift,
             "enqueued": 5.3 + 2 * shift, "complete": 8.0 + 2 * shift},
        ],
    }  # fmt: skip


DOCUMENT = {
    "format": "overlap-lab-trace",
    "version": 1,
    "time_unit": "ms",
    "metadata": {
        "torch_version": "2.13.0",
        "backend": "gloo",
        "world_size": 2,
        "bucket_cap_mb": 2.0,
        "cpu_count": 2,
        "threads_per_rank": 1,
        "origin_ns": 0,
    },
    "parameters": [{"name": "w1", "bytes": MIB}, {"name": "w2", "bytes": 2 * MIB}],
    "iterations": [{"iteration": 3, "other_load": None, "ranks": [rank(0, 0.0), rank(1, 0.5)]}],
}


def test_summary_of_a_recorded_trace() -> None:
    # Rank 0 (ms from forward start 0): backward end = last ready 5; communication
    # end 8; tail 3; step 9; all-reduce union [3.5, 8] = 4.5 ms, of which [3.5, 5]
    # = 1.5 ms under compute [2, 5]: overlap 1/3.
    # Rank 1 (forward start 0.5, the rest 1 ms later): from 0.5, backward end 5.5,
    # communication end 8.5, tail 3, step 9.5; union [4.5, 9] = 4.5, under [2.5, 6]:
    # [4.5, 6] = 1.5 -> 1/3.
    data = summary(DOCUMENT)
    assert data["source"] == "overlap-lab recorder" and data["times"] == "host"
    (it,) = data["iterations"]
    assert it["iteration"] == 3
    r0, r1 = it["ranks"]
    assert [(b["index"], b["mib"], b["start_ms"], b["end_ms"]) for b in r0["buckets"]] == [
        (0, 2.0, 3.5, 6.0),
        (1, 1.0, 5.2, 8.0),
    ]
    assert [(b["start_ms"], b["end_ms"]) for b in r1["buckets"]] == [(4.0, 6.5), (5.7, 8.5)]
    assert (r0["backward_end_ms"], r0["communication_end_ms"], r0["exposed_tail_ms"]) == (5, 8, 3)
    assert (r1["backward_end_ms"], r1["communication_end_ms"], r1["exposed_tail_ms"]) == (
        5.5,
        8.5,
        3.0,
    )
    assert (r0["step_ms"], r1["step_ms"]) == (9.0, 9.5)
    assert r0["overlap"] == r1["overlap"] == pytest.approx(1 / 3, abs=1e-4)
    assert data["median"] == {
        "backward_end_ms": 5.25,
        "communication_end_ms": 8.25,
        "exposed_tail_ms": 3.0,
        "step_ms": 9.25,
        "overlap": pytest.approx(1 / 3, abs=1e-4),
    }
    assert summary(from_document(DOCUMENT)) == data  # a loaded trace alike
    json.dumps(data)
    assert "rank 1: backward end 5.500" in summary_text(data)


def test_an_invalid_document_is_refused_by_name() -> None:
    bad = copy.deepcopy(DOCUMENT)
    bad["iterations"][0]["ranks"][0]["buckets"][0]["complete"] = 1.0
    with pytest.raises(TraceError, match=r"buckets\[0\]\.complete"):
        summary(bad)
