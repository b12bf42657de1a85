"""Real gloo recordings with a collective that is not a bucket, with and without shapes.

``traces/recorder/profiled.py --extra KIND [--no-shapes]``: 2 ranks, 6 layers
of 1 MiB, bucket cap 2 MiB (3 buckets of 2 MiB, as the recorder's trace of
the same run says), and before every forward one ``all_to_all`` or
``broadcast`` of 4096 floats (16 KiB). Every step is imported, with its three
buckets, and the extra collective is kept apart under its name. Without
``record_shapes`` nothing in a gloo profile gives a size: the buckets' times
hold and their sizes are unknown.

Needs torch (the ``trace`` extra); skipped without it.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from traces import load_trace
from traces.profiler import import_profiles
from traces.profiler_convert import to_trace_document
from traces.recorder import profiled
from traces.summary import summary, summary_text

MIB = 1024 * 1024


@pytest.fixture(scope="module", params=[("all_to_all", False), ("broadcast", True)],
                ids=["all_to_all-no-shapes", "broadcast-shapes"])  # fmt: skip
def run(request, tmp_path_factory):
    extra, shapes = request.param
    out = tmp_path_factory.mktemp(extra)
    profiled.record(out, extra=extra, shapes=shapes)
    profile = import_profiles([out / "rank0.json", out / "rank1.json"])
    return extra, shapes, profile, load_trace(out / "recorded.json")


def test_every_step_keeps_its_buckets_and_the_extra_collective(run) -> None:
    extra, shapes, profile, trace = run
    assert profile.iterations == (2, 3, 4) == tuple(trace.iteration.tolist())
    assert trace.bucket_bytes.tolist() == [2 * MIB] * 3
    for r in profile.ranks:
        for step in r.steps:
            assert len(step.buckets) == 3
            assert [b.bytes for b in step.buckets] == ([2 * MIB] * 3 if shapes else [None] * 3)
            named = [c for c in step.others if c.kind == extra]
            assert len(named) == 1
            assert named[0].bytes == (4 * profiled.EXTRA_ELEMENTS if shapes else None)
            # launched before DDP's forward, so before every bucket
            assert named[0].launch_us < step.forward_start_us < step.buckets[0].launch_us
            assert step.exposed_tail_us >= 0


def test_sizes_unknown_are_said_and_the_trace_keeps_their_times(run) -> None:
    _, shapes, profile, _ = run
    text = summary_text(summary(profile))
    document = to_trace_document(profile)
    buckets = [b for it in document["iterations"] for r in it["ranks"] for b in r["buckets"]]
    assert buckets and all(b["complete"] >= b["start"] for b in buckets)
    if shapes:
        assert "size unknown" not in text
        assert all(isinstance(b["bytes"], int) and b["bytes"] > 0 for b in buckets)
    else:
        assert "bucket 0: size unknown" in text
        assert "bucket sizes unknown" in " ".join(profile.notes)
        # Every bucket is kept with its times; only its size is unknown.
        assert all(b["bytes"] is None for b in buckets)
