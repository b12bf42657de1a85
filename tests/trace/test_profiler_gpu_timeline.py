"""What a GPU timeline means: backward is what autograd launched, ranks merged in one file,
nested DDP modules, a rank spinning for its peers (``kineto_builder.engine_run``).

Hand-worked from the builder's table (us; ms from forward start B+100; d = 500 on rank 1):

- backward end: the engine thread's last kernel ends 9000 - d -> 8.9 (rank 0), 8.4
  (rank 1); AMP's unscale kernel [10000, 10100] is launched from the main thread after
  backward and is not backward (read as backward it would end backward at 10.0 and
  leave no tail);
- communication end 10000 -> 9.9 on both ranks; exposed tail 1.0 and 1.5;
- peer waits: each bucket's kernel starts d earlier on rank 1 and both end together,
  so rank 1 spins 500 us per bucket until rank 0 joins: 0.5 ms a bucket, 1.5 ms a
  step; rank 0 waits 0;
- readiness on the device: rank 0's gradients are ready last (5000, 7000, 9000 against
  4500, 6500, 8500) although rank 1's host issues every bucket 50 us later, so rank 0
  defines every bucket;
- nested DDP forward ranges [100, 3000] and [500, 1000]: forward ends at 3000 -> the
  converted trace's backward start 2.9 ms, not 0.9.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from kineto_builder import STEPS, engine_run, merged

from traces import from_document, measure
from traces.profiler import ProfileError, import_profiles, read_profile
from traces.profiler_convert import to_trace_document
from traces.summary import summary, summary_text


def _bytes(doc: dict) -> bytes:
    return json.dumps(doc).encode()


def _pair(**kw) -> list[bytes]:
    return [_bytes(engine_run(r, **kw)) for r in (0, 1)]


def _by_rank(data: dict) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for it in data["iterations"]:
        for entry in it["ranks"]:
            out.setdefault(entry["rank"], []).append(entry)
    return out


def test_amp_unscale_after_backward_is_not_backward() -> None:
    data = summary(import_profiles(_pair(), names=["r0", "r1"]))
    ranks = _by_rank(data)
    for rank, (end, tail) in {0: (8.9, 1.0), 1: (8.4, 1.5)}.items():
        assert len(ranks[rank]) == STEPS
        for entry in ranks[rank]:
            assert entry["backward_end_ms"] == pytest.approx(end)
            assert entry["communication_end_ms"] == pytest.approx(9.9)
            assert entry["exposed_tail_ms"] == pytest.approx(tail)
    # Without AMP the numbers are the same: the unscale was never counted.
    plain = summary(import_profiles(_pair(amp=False), names=["r0", "r1"]))
    assert [e["exposed_tail_ms"] for e in _by_rank(plain)[0]] == [1.0] * STEPS


def test_gradients_are_ready_on_the_device() -> None:
    profile = import_profiles(_pair(), names=["r0", "r1"])
    for rank, d in ((0, 0), (1, 500)):
        step = profile.step(100, rank)
        base = 1_000_000
        expected = [base + t - d for t in (5000, 7000, 9000)]
        assert list(step.readiness_us) == expected  # AccumulateGrad: its kernel's end
        assert list(step.bucket_ready_us) == expected
    # Rank 1's host issues each bucket last; rank 0's device has the gradients last.
    m = measure(from_document(to_trace_document(profile)))
    assert (m.bucket_defining_rank == 0).all()
    issue = from_document(to_trace_document(profile)).issue
    assert (np.argmax(issue, axis=1) == 1).all()
    # Each transfer starts when the last rank's kernel does (rank 0's, at B+5100, 7100,
    # 9100), not at the last host launch (B+3170, 3270, 3370): ms from backward start B+3000.
    assert m.bucket_start[0] == pytest.approx([2.1, 4.1, 6.1])


def test_a_spinning_rank_shows_its_peer_wait() -> None:
    profile = import_profiles(_pair(), names=["r0", "r1"])
    data = summary(profile)
    ranks = _by_rank(data)
    for entry in ranks[1]:
        assert [b["peer_wait_ms"] for b in entry["buckets"]] == [0.5, 0.5, 0.5]
        assert entry["peer_wait_ms"] == pytest.approx(1.5)
    for entry in ranks[0]:
        assert entry["peer_wait_ms"] == 0.0
    assert "rank 1: backward end 8.400" in summary_text(data)
    assert "peer wait 1.500" in summary_text(data)
    # The converted trace keeps them, so its summary says the same.
    again = _by_rank(summary(to_trace_document(profile)))
    assert [e["peer_wait_ms"] for e in again[1]] == [1.5] * STEPS
    # One rank of two: nothing to compare with, and a note says why.
    alone = import_profiles(_pair()[:1], names=["r0"])
    assert all(s.peer_wait_us is None for s in alone.ranks[0].steps)
    assert "peer waits need every rank's file (1 of 2 ranks given)" not in alone.notes
    two_of_four = import_profiles(
        [_bytes(engine_run(r, world_size=4)) for r in (0, 1)], names=["r0", "r1"]
    )
    assert "peer waits need every rank's file (2 of 4 ranks given)" in two_of_four.notes


def test_a_merged_file_reads_as_its_ranks() -> None:
    split = summary(import_profiles(_pair(), names=["r0", "r1"]))
    one_file = import_profiles([_bytes(merged([engine_run(0), engine_run(1)]))], names=["all"])
    assert [r.rank for r in one_file.ranks] == [0, 1]
    assert [r.name for r in one_file.ranks] == ["all (rank 0)", "all (rank 1)"]
    data = summary(one_file)
    assert data["ranks"] == [0, 1]
    assert to_trace_document(one_file)["metadata"]["profile_files"] == ["all"]
    for rank in (0, 1):
        for a, b in zip(_by_rank(data)[rank], _by_rank(split)[rank], strict=True):
            keys = ("backward_end_ms", "communication_end_ms", "exposed_tail_ms", "buckets")
            assert {k: a[k] for k in keys} == {k: b[k] for k in keys}


def test_merged_files_that_cannot_be_split_are_refused_naming_what_was_found() -> None:
    both = _bytes(merged([engine_run(0), engine_run(1)]))
    with pytest.raises(ProfileError, match=r"^all: holds 2 ranks \(0, 1\); import it with"):
        read_profile(both, name="all")
    unmarked = _bytes(merged([engine_run(0), engine_run(1)], marks=False))
    with pytest.raises(
        ProfileError,
        match=r"^cat: holds ProfilerStep#100 2 times .* merged without rank marks \(args.rank\)",
    ):
        import_profiles([unmarked], names=["cat"])
    with pytest.raises(ProfileError, match=r"^r0 and all \(rank 0\) both hold rank 0"):
        import_profiles([both, _pair()[0]], names=["all", "r0"])


def test_nested_ddp_forward_ends_at_the_outer_range() -> None:
    profile = import_profiles(_pair(nested=True), names=["r0", "r1"])
    step = profile.step(100, 0)
    assert step.forward_end_us == 1_000_000 + 3000
    document = to_trace_document(profile)
    entry = document["iterations"][0]["ranks"][0]
    assert entry["backward_start"] - entry["forward_start"] == pytest.approx(2.9)
    # The forward kernel (launched at B+2000, inside the outer range) is not backward.
    assert step.backward_start_us == 1_000_000 + 3200
    assert any("2 DistributedDataParallel.forward ranges a step" in n for n in profile.notes)
    assert not any(
        "forward ranges" in n for n in import_profiles(_pair(), names=["r0", "r1"]).notes
    )


def test_trace_view_shows_peer_waits_and_the_device_defining_rank() -> None:
    from widgets.trace_viewer.model import trace_view
    from widgets.trace_viewer.state import defining_state, peer_wait_state

    trace = from_document(to_trace_document(import_profiles(_pair(), names=["r0", "r1"])))
    r = trace_view(trace, [], iteration=1)
    # rank 1's kernels run [4600, 6000], [6600, 8500], [8600, 10000]: 4700 us, 1500 waiting;
    # rank 0's [5100, 6000], [7100, 8500], [9100, 10000]: 3200 us, none waiting
    assert peer_wait_state(r) == [
        {"rank": 0, "wait_ms": 0.0, "allreduce_ms": pytest.approx(3.2)},
        {"rank": 1, "wait_ms": pytest.approx(1.5), "allreduce_ms": pytest.approx(4.7)},
    ]
    assert [d["rank"] for d in defining_state(r)] == [0, 0, 0]
    # A trace without every rank's profile has no peer waits to show.
    alone = from_document(to_trace_document(import_profiles(_pair()[:1], names=["r0"])))
    assert peer_wait_state(trace_view(alone, [], iteration=1)) is None
