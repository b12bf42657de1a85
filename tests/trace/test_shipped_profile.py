"""The shipped torch.profiler example imports, and agrees with the recorder's trace of its run."""

from __future__ import annotations

import pytest

from traces import load_trace
from traces.profiler import import_profiles
from traces.profiler_convert import to_trace_document
from traces.shipped import PROFILED, profiled_example
from traces.summary import summary

MIB = 1024 * 1024


def test_the_example_is_two_gzipped_profiles_and_a_trace() -> None:
    assert [p.name for p in profiled_example()] == ["rank0.json.gz", "rank1.json.gz"]
    assert (PROFILED / "recorded.json").is_file() and (PROFILED / "README.md").is_file()


def test_the_example_imports_with_the_recorded_buckets_and_tails() -> None:
    profile = import_profiles(profiled_example())
    recorded = load_trace(PROFILED / "recorded.json")
    # 6 layers of 512 x 512 float32 (1 MiB each), bucket cap 2 MiB: three buckets of 2 MiB.
    assert recorded.bucket_bytes.tolist() == [2 * MIB] * 3
    assert profile.iterations == (2, 3, 4) == tuple(recorded.iteration.tolist())
    imported, ours = summary(profile), summary(recorded)
    for a_it, b_it in zip(imported["iterations"], ours["iterations"], strict=True):
        for a, b in zip(a_it["ranks"], b_it["ranks"], strict=True):
            assert [x["mib"] for x in a["buckets"]] == [2.0, 2.0, 2.0]
            assert [x["mib"] for x in b["buckets"]] == [2.0, 2.0, 2.0]
            tail = b["exposed_tail_ms"]
            # The tolerance: max(10 %, 1 ms).
            assert a["exposed_tail_ms"] == pytest.approx(tail, abs=max(0.1 * tail, 1.0))
    document = to_trace_document(profile)
    meta = document["metadata"]
    assert (meta["source"], meta["times"], meta["backend"]) == ("torch.profiler", "host", "gloo")
    assert meta["profile_files"] == ["rank0.json.gz", "rank1.json.gz"]
