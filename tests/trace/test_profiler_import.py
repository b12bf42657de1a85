"""Importing the hand-built NCCL profiles: every quantity against the hand-worked numbers.

The profiles are described in ``profiles/make_nccl_profiles.py`` (times in us,
B = a step's base on that rank). Per step k and rank r, ms from forward start
(B + 100):

- buckets: 1 MiB [3300, 4800] -> 3.2..4.7; 2 MiB [5600, 6600] -> 5.5..6.5;
  131072 BFloat16 = 0.25 MiB [6600, 7400 + 200k] -> 6.5..7.3 + 0.2k;
- backward end: last backward kernel ends 6000 (rank 0) / 6400 (rank 1) -> 5.9 / 6.3;
  the forward kernel running to 2100 is not backward (launched during forward);
- communication end 7.3 + 0.2k; exposed tail 1.4 + 0.2k (rank 0), 1.0 + 0.2k (rank 1);
- step: forward start to the optimizer kernel's end 7700 + 200k -> 7.6 + 0.2k;
- overlap: all-reduce union [3300, 4800] + [5600, 7400 + 200k] = 3300 + 200k us;
  compute [2200, 4200] + [4300, 6000 | 6400]; in common 900 + 500 + 400 (rank 0)
  or + 800 (rank 1) -> 1800 / (3300 + 200k) and 2200 / (3300 + 200k);
- the broadcast (1 KiB) and the loss all-reduce after the optimizer are not buckets;
- gradients ready (device side): the AccumulateGrad ops end at B+2150+100i, after the
  autograd thread's launch at B+2100+100i, so each is ready when that kernel ends:
  3200, 4200, 5500, 6000 | 6400 -> 3.1, 4.1, 5.4, 5.9 | 6.3.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import statistics
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from traces import from_document, measure, validate_trace
from traces.profiler import ProfileError, import_profiles, read_profile
from traces.profiler_convert import to_trace_document
from traces.summary import summary, summary_text

HERE = Path(__file__).parent / "profiles"
_spec = importlib.util.spec_from_file_location("make_nccl_profiles", HERE / "make_nccl_profiles.py")
make_nccl_profiles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_nccl_profiles)
FILES = [HERE / name for name in make_nccl_profiles.FILES]
MIB = 1024 * 1024


def backward_end(rank: int) -> float:
    return 5.9 if rank == 0 else 6.3


def overlap(rank: int, k: int) -> float:
    return (1800 if rank == 0 else 2200) / (3300 + 200 * k)


@pytest.fixture(scope="module")
def profile():
    return import_profiles(FILES)


def test_the_fixture_files_are_what_the_builder_writes() -> None:
    for name, data in make_nccl_profiles.contents().items():
        assert (HERE / name).read_bytes() == data, f"run {make_nccl_profiles.__file__}"


def test_metadata_and_time_kind(profile) -> None:
    assert profile.iterations == (10, 11, 12)
    assert profile.device_times
    r0 = profile.ranks[0]
    assert r0.backend == "nccl" and r0.world_size == 2 and [r.rank for r in profile.ranks] == [0, 1]
    assert r0.metadata["gpus"] == ["NVIDIA A100-SXM4-80GB"]
    assert r0.metadata["nccl_version"] == "2.21.5"
    assert r0.metadata["cuda_runtime_version"] == "12040"
    assert "torch_version" not in r0.metadata  # the file does not name it; nothing invented


def test_summary_has_the_issue_shape_and_hand_worked_values(profile) -> None:
    data = summary(profile)
    assert data["times"] == "device"
    assert [it["iteration"] for it in data["iterations"]] == [10, 11, 12]
    for k, it in enumerate(data["iterations"]):
        assert [r["rank"] for r in it["ranks"]] == [0, 1]
        for entry in it["ranks"]:
            r = entry["rank"]
            buckets = [(b["index"], b["mib"], b["start_ms"], b["end_ms"]) for b in entry["buckets"]]
            assert buckets == [
                (0, 1.0, 3.2, 4.7),
                (1, 2.0, 5.5, 6.5),
                (2, 0.25, 6.5, pytest.approx(7.3 + 0.2 * k)),
            ]
            assert entry["backward_end_ms"] == backward_end(r)
            assert entry["communication_end_ms"] == pytest.approx(7.3 + 0.2 * k)
            tail = (1.4 if r == 0 else 1.0) + 0.2 * k
            assert entry["exposed_tail_ms"] == pytest.approx(tail)
            assert entry["step_ms"] == pytest.approx(7.6 + 0.2 * k)
            assert entry["overlap"] == pytest.approx(overlap(r, k), abs=1e-4)
            others = [
                (c["name"], c["mib"], c["start_ms"], c["end_ms"])
                for c in entry["other_collectives"]
            ]
            assert others == [
                ("broadcast", round(1024 / MIB, 6), 0.3, 0.4),
                ("all_reduce", round(4 / MIB, 6), 8.5, 8.52),
            ]
            # device side: each AccumulateGrad waits for the kernel launched before it
            assert entry["grad_ready_approximate_ms"] == [3.1, 4.1, 5.4, backward_end(r)]
    m = data["median"]
    assert m["backward_end_ms"] == pytest.approx(6.1)
    assert m["communication_end_ms"] == pytest.approx(7.5)
    assert m["exposed_tail_ms"] == pytest.approx(1.4)
    assert m["step_ms"] == pytest.approx(7.8)
    every = [overlap(r, k) for r in (0, 1) for k in range(3)]
    assert m["overlap"] == pytest.approx(statistics.median(every), abs=1e-4)
    assert data["run"]["backend"] == "nccl" and data["run"]["world_size"] == 2
    assert data["run"]["gpus"] == ["NVIDIA A100-SXM4-80GB"] and data["notes"] == []
    json.dumps(data)  # plain JSON
    text = summary_text(data)
    assert "nccl, world size 2, 2.21.5" in text and "GPUs: NVIDIA A100-SXM4-80GB" in text
    assert "iteration 11" in text and "broadcast (not a bucket)" in text


def test_kernels_match_by_external_id_and_by_launch_order_alike(profile) -> None:
    # Rank 0's NCCL kernels carry External ids, rank 1's do not: same buckets.
    a, b = (profile.step(11, r) for r in (0, 1))
    assert [c.bytes for c in a.buckets] == [c.bytes for c in b.buckets] == [MIB, 2 * MIB, MIB // 4]
    assert [c.start_us - a.forward_start_us for c in a.buckets] == [
        c.start_us - b.forward_start_us for c in b.buckets
    ]


def test_one_rank_alone_and_in_either_order() -> None:
    alone = import_profiles([FILES[1]])
    assert [r.rank for r in alone.ranks] == [1]
    assert summary(alone)["iterations"][0]["ranks"][0]["exposed_tail_ms"] == pytest.approx(1.0)
    swapped = import_profiles(FILES[::-1])
    assert [r.rank for r in swapped.ranks] == [0, 1]


def test_bytes_of_an_upload_read_like_the_file() -> None:
    data = FILES[1].read_bytes()
    assert data[:2] == b"\x1f\x8b"
    one = read_profile(data, name="upload.json.gz")
    assert one.rank == 1 and len(one.steps) == 3
    plain = read_profile(gzip.decompress(data), name="upload.json")
    assert [s.backward_end_us for s in plain.steps] == [s.backward_end_us for s in one.steps]


def test_converted_trace_is_valid_v2_with_hand_worked_fields(profile) -> None:
    doc = to_trace_document(profile)
    validate_trace(doc)
    assert doc["version"] == 2
    assert doc["parameters"] == [
        {"name": "bucket 0", "bytes": MIB},
        {"name": "bucket 1", "bytes": 2 * MIB},
        {"name": "bucket 2", "bytes": MIB // 4},
    ]
    meta = doc["metadata"]
    assert meta["backend"] == "nccl" and meta["device"] == "cuda" and meta["world_size"] == 2
    assert meta["torch_version"] == "unknown" and meta["bucket_cap_mb"] is None
    assert meta["cpu_count"] is None and meta["threads_per_rank"] is None
    assert "device times" in meta["note"]
    assert (meta["source"], meta["times"], meta["readiness"]) == (
        "torch.profiler",
        "device",
        "per-bucket, approximate",
    )
    assert meta["gpus"] == ["NVIDIA A100-SXM4-80GB"]
    assert meta["profile_files"] == ["nccl_rank0.json", "nccl_rank1.json.gz"]
    # Both ranks of a run of two: no renumbering to record.
    assert "ranks_in_run" not in meta and "run_world_size" not in meta
    # Origin: rank 0's first forward start, 1 000 100 us. Rank 1 is 50 us later.
    r0, r1 = doc["iterations"][0]["ranks"]
    assert r0["forward_start"] == 0.0 and r1["forward_start"] == 0.05
    assert r0["backward_start"] == 1.9
    assert r0["backward_return"] == 7.3  # max(backward end 6000, comm end 7400) - 100
    assert (r0["optimizer_start"], r0["optimizer_end"]) == (7.3, 7.6)  # host 6.1 moved; kernel end
    # Readiness of each pseudo-parameter: last backward kernel end before its all-reduce.
    assert r0["grad_ready"] == [3.1, 5.4, 5.9]
    assert [(b["issue"], b["enqueued"], b["complete"]) for b in r0["buckets"]] == [
        (3.2, 3.25, 4.7),
        (5.5, 5.55, 6.5),
        (5.95, 6.0, 7.3),
    ]
    assert [c["name"] for c in r0["collectives"]] == ["broadcast", "all_reduce"]
    # Kernel starts 3300, 5600, 6600 us from origin 100: the third waits for the second.
    assert [b["start"] for b in r0["buckets"]] == [3.2, 5.5, 6.5]
    trace = from_document(doc)
    assert trace.start is not None and trace.start[0, 0].tolist() == [3.2, 5.5, 6.5]
    assert trace.source == "torch.profiler" and trace.device_times
    assert trace.approximate_readiness
    measured = measure(trace)
    # measure(): t0 = the later backward start (rank 1's, 1.95); compute end = last
    # readiness over ranks: rank 1's 6.35 (its last kernel ends 6450 - 100 + 50).
    assert measured.communication_end_ms[0] == pytest.approx(7.35 - 1.95)
    assert measured.exposed_tail_ms[0] == pytest.approx(7.35 - 6.35)
    # A summary of the converted trace keeps the profile's rank numbers and numbers.
    assert [r["rank"] for r in summary(doc)["iterations"][0]["ranks"]] == [0, 1]
    shared = ("buckets", "backward_end_ms", "communication_end_ms", "exposed_tail_ms")
    for a, b in zip(summary(doc)["iterations"], summary(profile)["iterations"], strict=True):
        for x, y in zip(a["ranks"], b["ranks"], strict=True):
            assert {k: x[k] for k in (*shared, "step_ms", "overlap")} == {
                k: y[k] for k in (*shared, "step_ms", "overlap")
            }
    assert summary(doc)["median"] == summary(profile)["median"]


def test_a_subset_of_ranks_converts_with_its_ranks_noted() -> None:
    doc = to_trace_document(import_profiles([FILES[1]]))
    meta = doc["metadata"]
    assert meta["world_size"] == 1 and meta["ranks_in_run"] == [1] and meta["run_world_size"] == 2
    assert [r["rank"] for r in summary(doc)["iterations"][0]["ranks"]] == [1]


def test_two_files_of_one_rank_are_refused(tmp_path) -> None:
    copy = tmp_path / "again.json"
    copy.write_bytes(FILES[0].read_bytes())
    with pytest.raises(ProfileError, match="both hold rank 0; give each rank once"):
        import_profiles([FILES[0], copy])


def test_files_sharing_no_step_are_refused(tmp_path) -> None:
    doc = make_nccl_profiles.profile(1)
    for e in doc["traceEvents"]:
        if str(e.get("name", "")).startswith("ProfilerStep#"):
            e["name"] = e["name"].replace("#1", "#2")
    other = tmp_path / "later.json"
    other.write_text(json.dumps(doc))
    with pytest.raises(ProfileError, match="share no ProfilerStep"):
        import_profiles([FILES[0], other])


def test_overlap_is_none_without_all_reduce_time() -> None:
    step = read_profile(FILES[0]).steps[0]
    zero = type(step)(**{**step.__dict__, "buckets": tuple(
        type(b)(**{**b.__dict__, "end_us": b.start_us}) for b in step.buckets
    )})  # fmt: skip
    assert zero.overlap is None
    assert np.all(np.diff(step.compute_ends) >= 0)


# -- random GPU-shaped steps, against counting microsecond cells --------------------

_kernels = st.lists(
    st.tuples(st.integers(0, 300), st.integers(1, 60)), min_size=1, max_size=8
)  # (start after forward end, duration) in us


def _one_step_profile(compute, buckets) -> dict:
    events = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 1, "tid": 1,
         "ts": 0, "dur": 2000, "args": {}},
        {"ph": "X", "cat": "user_annotation", "name": "DistributedDataParallel.forward",
         "pid": 1, "tid": 1, "ts": 10, "dur": 90, "args": {}},
        {"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#SGD.step", "pid": 1,
         "tid": 1, "ts": 1500, "dur": 100, "args": {}},
    ]  # fmt: skip
    for k, (start, dur) in enumerate(compute):
        events.append(
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaLaunchKernel",
                "pid": 1,
                "tid": 2,
                "ts": 100 + k,
                "dur": 1,
                "args": {"correlation": k + 1},
            }
        )
        events.append({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7,
                       "ts": 100 + start, "dur": dur,
                       "args": {"stream": 7, "device": 0, "correlation": k + 1}})  # fmt: skip
    for b, (start, dur, n) in enumerate(buckets):
        comm = {"Collective name": "allreduce", "In msg nelems": n, "dtype": "Float"}
        events.append(
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": "nccl:all_reduce",
                "pid": 1,
                "tid": 2,
                "ts": 200 + b,
                "dur": 1,
                "args": {"External id": 900 + b, **comm},
            }
        )
        args = {"stream": 20, "device": 0, "External id": 900 + b, **comm}
        name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
        kernel = {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 20}
        events.append({**kernel, "ts": 200 + start, "dur": dur, "args": args})
    return {
        "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
        "traceEvents": events,
    }


def _cells(spans) -> set[int]:
    return {c for a, b in spans for c in range(a, b)}


@settings(max_examples=100, deadline=None)
@given(
    compute=_kernels,
    buckets=st.lists(
        st.tuples(st.integers(0, 300), st.integers(1, 60), st.integers(1, 10**6)),
        min_size=1,
        max_size=5,
    ),
)
def test_random_steps_match_counting_cells(compute, buckets) -> None:
    data = json.dumps(_one_step_profile(compute, buckets)).encode()
    (step,) = read_profile(data, name="random.json").steps
    comp = [(100 + a, 100 + a + d) for a, d in compute]
    comm = [(200 + a, 200 + a + d) for a, d, _ in buckets]
    assert [b.bytes for b in step.buckets] == [4 * n for _, _, n in buckets]
    assert step.backward_end_us == max(b for _, b in comp)
    assert step.communication_end_us == max(b for _, b in comm)
    assert step.exposed_tail_us == max(0, max(b for _, b in comm) - max(b for _, b in comp))
    shared = len(_cells(comm) & _cells(comp))
    assert step.overlap == pytest.approx(shared / len(_cells(comm)))


def test_older_profilers_category_names_read_alike(profile) -> None:
    doc = make_nccl_profiles.profile(0)
    old = {"kernel": "Kernel", "cuda_runtime": "Runtime", "cpu_op": "Operator"}
    for e in doc["traceEvents"]:
        e["cat"] = old.get(e.get("cat"), e.get("cat"))
    again = read_profile(json.dumps(doc).encode(), name="old.json")
    assert [s.exposed_tail_us for s in again.steps] == [
        s.exposed_tail_us for s in profile.ranks[0].steps
    ]
    assert [s.overlap for s in again.steps] == [s.overlap for s in profile.ranks[0].steps]


def test_unix_time_stamps_read_alike(profile) -> None:
    # Some profilers write ts as Unix time in us (~1.7e15 today).
    doc = make_nccl_profiles.profile(0)
    for e in doc["traceEvents"]:
        if "ts" in e:
            e["ts"] += 1_700_000_000_000_000
    again = read_profile(json.dumps(doc).encode(), name="unix.json")
    theirs = summary(import_profiles([FILES[0]]))
    assert summary(import_profiles([json.dumps(doc).encode()]))["median"] == theirs["median"]
    assert len(again.steps) == 3
