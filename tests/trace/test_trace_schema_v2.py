"""Trace format version 2: its new fields are checked, and version-1 files still load."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest
from synthetic import edited, two_parameter_document, worked_iteration

from traces import TraceError, from_document, validate_trace

# One iteration of two ranks (synthetic.worked_iteration); every time below is checked by hand.
# Rank 0: bucket 0 issued 12.5, complete 16; bucket 1 issued 14.5, complete 18.
DOC = two_parameter_document([worked_iteration(5)])


def test_a_recorded_version_2_document_is_valid_and_says_where_its_times_come_from() -> None:
    validate_trace(DOC)
    trace = from_document(DOC)
    assert DOC["version"] == 2 and trace.version == 2
    assert (trace.source, trace.device_times, trace.approximate_readiness) == (
        "recorder",
        False,
        False,
    )


def test_an_imported_document_with_every_optional_field_is_valid() -> None:
    doc = copy.deepcopy(DOC)
    meta = doc["metadata"]
    meta.update(
        source="torch.profiler",
        times="device",
        readiness="per-bucket, approximate",
        cpu_count=None,
        threads_per_rank=None,
        gpus=["NVIDIA H100 80GB HBM3"] * 2,
        nccl_version="2.21.5",
        ranks_in_run=[3, 5],
        run_world_size=8,
        profile_files=["rank3.json.gz", "rank5.json.gz"],
    )
    rank = doc["iterations"][0]["ranks"][0]
    rank["buckets"][0]["start"] = 13.0  # after its issue (12.5), before its completion (16)
    rank.update(
        backward_end=14.0,
        overlap=0.25,
        grad_ready_approximate=[12.0, 14.0],
        collectives=[
            {"name": "broadcast", "bytes": 1024, "issue": 0.5, "start": 0.7, "complete": 0.9},
            {"name": "barrier", "bytes": None, "issue": 19.0, "start": 19.0, "complete": 19.0},
        ],
    )
    validate_trace(doc)
    trace = from_document(doc)
    assert trace.source == "torch.profiler" and trace.device_times
    assert trace.approximate_readiness
    assert trace.start is None  # one bucket has a start, the others not: no start array


@pytest.mark.parametrize(
    ("path", "value", "match"),
    [
        ("metadata.source", "nsight", r"trace\.metadata\.source: expected one of \"recorder\""),
        ("metadata.times", "wall", r"trace\.metadata\.times: expected one of \"host\", \"device\""),
        ("metadata.readiness", None, r"trace\.metadata\.readiness: expected one of"),
        ("metadata.gpus", "H100", r"trace\.metadata\.gpus: expected a list"),
        ("metadata.run_world_size", 0, r"trace\.metadata\.run_world_size: must be at least 1"),
        ("metadata.ranks_in_run", [0, -1], r"ranks_in_run\[1\]: must be at least 0"),
        (
            "iterations[0].ranks[0].overlap",
            1.5,
            r"trace\.iterations\[0\]\.ranks\[0\]\.overlap: must be at most 1",
        ),
        ("iterations[0].ranks[0].buckets[1].start", "soon", r"buckets\[1\]\.start: expected a"),
        (
            "iterations[0].ranks[0].collectives",
            [{"name": "broadcast", "bytes": 4, "issue": 1.0, "start": 1.0}],
            r"collectives\[0\]: missing required field 'complete'",
        ),
    ],
)
def test_a_bad_version_2_field_is_named(path: str, value: object, match: str) -> None:
    with pytest.raises(TraceError, match=match):
        validate_trace(edited(DOC, path, value))


@pytest.mark.parametrize("field", ["source", "times", "readiness"])
def test_version_2_needs_where_the_times_come_from(field: str) -> None:
    with pytest.raises(TraceError, match=f"trace.metadata: missing required field '{field}'"):
        validate_trace(edited(DOC, f"metadata.{field}", delete=True))


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        # Two rank entries (world_size 2) but one run rank number.
        ({"ranks_in_run": [4]}, r"ranks_in_run: 1 numbers for metadata\.world_size 2"),
        (
            {"ranks_in_run": [4, 4], "run_world_size": 8},
            r"ranks_in_run\[1\]: rank 4 is listed twice",
        ),
        ({"ranks_in_run": [1, 8], "run_world_size": 8}, r"rank 8 is outside a run of 8"),
        # Without run_world_size the run is the file's two ranks.
        ({"ranks_in_run": [0, 2]}, r"ranks_in_run\[1\]: rank 2 is outside a run of 2"),
        ({"run_world_size": 1}, r"run_world_size: 1 is less than the 2 ranks in the file"),
    ],
)
def test_run_rank_numbers_must_fit_the_run(changes: dict, match: str) -> None:
    doc = copy.deepcopy(DOC)
    doc["metadata"].update(changes)
    with pytest.raises(TraceError, match=match):
        validate_trace(doc)


def test_a_collective_or_kernel_cannot_end_before_it_starts() -> None:
    # Bucket 0 completes at 16: a start at 16.5 is after it.
    with pytest.raises(TraceError, match=r"buckets\[0\]\.complete: 16 is before start \(16\.5\)"):
        validate_trace(edited(DOC, "iterations[0].ranks[0].buckets[0].start", 16.5))
    bad = {"name": "broadcast", "bytes": 4, "issue": 1.0, "start": 2.0, "complete": 1.5}
    with pytest.raises(TraceError, match=r"collectives\[0\]\.complete: 1\.5 is before start"):
        validate_trace(edited(DOC, "iterations[0].ranks[0].collectives", [bad]))


def test_unknown_cores_are_allowed_in_version_2_only() -> None:
    validate_trace(edited(DOC, "metadata.cpu_count", None))
    v1 = edited(DOC, "version", 1)
    validate_trace(v1)  # version 1 ignores version 2's fields
    with pytest.raises(TraceError, match=r"trace\.metadata\.cpu_count: expected a whole number"):
        validate_trace(edited(v1, "metadata.cpu_count", None))


def test_unknown_bucket_sizes_are_allowed_in_version_2_only_and_load_as_nan() -> None:
    doc = copy.deepcopy(DOC)
    doc["parameters"][1]["bytes"] = None
    for rank in doc["iterations"][0]["ranks"]:
        rank["buckets"][1]["bytes"] = None
    validate_trace(doc)
    trace = from_document(doc)
    assert not trace.sizes_known
    assert trace.bucket_bytes[0] == DOC["iterations"][0]["ranks"][0]["buckets"][0]["bytes"]
    assert np.isnan(trace.bucket_bytes[1]) and np.isnan(trace.parameter_bytes[1])
    with pytest.raises(TraceError, match=r"buckets\[1\]\.bytes: must be at least 1, found 0"):
        validate_trace(edited(doc, "iterations[0].ranks[0].buckets[1].bytes", 0))
    with pytest.raises(TraceError, match=r"trace\.parameters\[1\]\.bytes: expected a whole number"):
        validate_trace(edited(doc, "version", 1))


def test_version_1_files_still_load_as_host_timed_recordings() -> None:
    # A recording of the version-1 recorder (shipped until the examples were re-recorded).
    paths = sorted((Path(__file__).parent / "version1").glob("*.json"))
    assert paths
    for path in paths:
        trace = from_document(json.loads(path.read_text(encoding="utf-8")))
        assert trace.version == 1
        assert (trace.source, trace.device_times, trace.approximate_readiness) == (
            "recorder",
            False,
            False,
        )


def test_a_version_1_import_with_the_old_profile_block_reads_as_a_profile() -> None:
    # Imports written before version 2 kept what version 1 could not say in "profile".
    doc = edited(DOC, "version", 1)
    for field in ("source", "times", "readiness"):
        del doc["metadata"][field]
    doc["profile"] = {"source": "torch.profiler", "times": "device", "ranks": [0, 1]}
    trace = from_document(doc)
    assert (trace.source, trace.device_times, trace.approximate_readiness) == (
        "torch.profiler",
        True,
        True,
    )


def test_a_boolean_version_is_not_version_1() -> None:
    with pytest.raises(TraceError, match=r"reads trace format versions 1 and 2, the file is"):
        validate_trace(edited(DOC, "version", True))
