"""Production-shaped profiles (``kineto_builder``): what is not a bucket never discards a step.

Hand-worked from the builder's table (us, B = a step's base; ms from forward
start B+100):

- buckets: 1 MiB [5100, 6000] -> 5.0..5.9; 2 MiB [7100, 8500] -> 7.0..8.4;
  131072 BFloat16 = 0.25 MiB [9100, 10000] -> 9.0..9.9;
- backward end: the last backward kernel ends 9000 -> 8.9; communication end 9.9;
  exposed tail 1.0; step: forward start to the optimizer's end 10500 -> 10.4;
- overlap: buckets 900 + 1400 + 900 = 3200 us, compute [3200, 9000] covers
  900 + 1400 of it: 2300 / 3200;
- the all_to_all (4096 float = 16 KiB, SendRecv kernel [700, 1200] -> 0.6..1.1)
  is kept apart; the broadcast without a kernel is noted.
"""

from __future__ import annotations

import json
import re

import pytest
from kineto_builder import STEPS, ddp_run, write

from app.cli import main
from traces.profiler import ProfileError, import_profiles, read_profile
from traces.profiler_convert import to_trace_document
from traces.profiler_events import EventCollector
from traces.summary import summary, summary_text
from traces.upload import load_upload_files

MIB = 1024 * 1024


def _bytes(doc: dict) -> bytes:
    return json.dumps(doc).encode()


@pytest.mark.parametrize("correlation", [True, False], ids=["by-correlation", "by-kind-order"])
def test_a_production_ddp_run_imports_every_bucket(correlation: bool) -> None:
    profile = import_profiles(
        [_bytes(ddp_run(r, correlation=correlation)) for r in (0, 1)], names=["r0", "r1"]
    )
    assert profile.iterations == (100, 101, 102)
    data = summary(profile)
    for it in data["iterations"]:
        for entry in it["ranks"]:
            buckets = [(b["mib"], b["start_ms"], b["end_ms"]) for b in entry["buckets"]]
            assert buckets == [(1.0, 5.0, 5.9), (2.0, 7.0, 8.4), (0.25, 9.0, 9.9)]
            assert entry["backward_end_ms"] == 8.9
            assert entry["communication_end_ms"] == 9.9
            assert entry["exposed_tail_ms"] == pytest.approx(1.0)
            assert entry["step_ms"] == pytest.approx(10.4)
            assert entry["overlap"] == pytest.approx(2300 / 3200, abs=1e-4)
            others = [(c["name"], c["mib"], c["start_ms"], c["end_ms"])
                      for c in entry["other_collectives"]]  # fmt: skip
            assert others == [("all_to_all", round(16384 / MIB, 6), 0.6, 1.1)]
    notes = " ".join(profile.notes)
    assert f"{STEPS} broadcast launches with no run found" in notes and "steps kept" in notes
    assert "all_to_all (not a bucket)" in summary_text(data)
    document = to_trace_document(profile)  # a trace with the buckets' sizes
    assert [p["bytes"] for p in document["parameters"]] == [1 << 20, 2 << 20, 1 << 18]


def test_without_record_shapes_the_sizes_are_unknown_and_the_times_hold() -> None:
    profile = import_profiles([_bytes(ddp_run(0, shapes=False))], names=["r0"])
    step = profile.ranks[0].steps[0]
    assert [b.bytes for b in step.buckets] == [None, None, None]
    assert step.exposed_tail_us == pytest.approx(1000.0)
    assert "bucket sizes unknown" in " ".join(profile.notes)
    text = summary_text(summary(profile))
    assert "bucket 0: size unknown, all-reduce 5.000 to 5.900" in text
    document = to_trace_document(profile)  # a trace all the same, its sizes null
    buckets = document["iterations"][0]["ranks"][0]["buckets"]
    assert [b["bytes"] for b in buckets] == [None, None, None]
    assert [(b["start"], b["complete"]) for b in buckets] == [(5.0, 5.9), (7.0, 8.4), (9.0, 9.9)]
    assert [p["bytes"] for p in document["parameters"]] == [None, None, None]


def _without(doc: dict, *prefixes: str) -> dict:
    doc["traceEvents"] = [e for e in doc["traceEvents"] if not e["name"].startswith(prefixes)]
    return doc


def _without_collectives(doc: dict) -> dict:
    comm = ("nccl", "c10d")
    doc["traceEvents"] = [e for e in doc["traceEvents"] if not e["name"].startswith(comm)]
    return doc


@pytest.mark.parametrize(
    ("doc", "match"),
    [
        (
            ddp_run(kinds=("reduce_scatter", "all_gather", "reduce_scatter")),
            r"FSDP or ZeRO gradient traffic \(6 reduce_scatter, 3 all_gather launches before "
            r"the optimizer in 3 steps\)",
        ),
        (
            ddp_run(forward=False),
            r"all-reduces without DDP \(about 3 a step before the optimizer, no "
            r"DistributedDataParallel.forward\): all-reduces made by hand are not imported",
        ),
        (
            # Megatron-style: all-reduces in a step with neither DDP nor an optimizer step
            _without(ddp_run(forward=False), "Optimizer.step"),
            r"all-reduces without DDP \(about 3 a step and no Optimizer.step, no "
            r"DistributedDataParallel.forward\)",
        ),
        (
            # every bucket all-reduce's kernel missing (the other collectives' kept)
            _without(ddp_run(), "ncclKernel_AllReduce"),
            r"r(ank)?\d.json: in each of its 3 steps \(ProfilerStep#100, #101, #102\) the "
            r"all-reduce launched during backward has no kernel in the file",
        ),
        (_without_collectives(ddp_run(world_size=1)), r"a single-rank run \(world size 1\)"),
        (
            _without_collectives(ddp_run(world_size=2)),
            r"no collectives \(no collective ops or runs\) in a run of world size 2",
        ),
    ],
    ids=[
        "fsdp",
        "hand-made-all-reduces",
        "no-ddp-no-optimizer",
        "all-reduce-without-kernel",
        "single-rank",
        "no-collectives",
    ],
)
def test_what_a_run_is_said_at_the_cli_and_the_upload(tmp_path, capsys, doc, match) -> None:
    with pytest.raises(ProfileError, match=match):
        read_profile(_bytes(doc), name="r0.json")
    with pytest.raises(ValueError, match=match):
        load_upload_files([("r0.json", _bytes(doc))])
    (path,) = write(tmp_path, [doc])
    with pytest.raises(SystemExit) as exit_info:
        main(["summary", str(path)])
    assert exit_info.value.code != 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert re.search(match, err)


def test_a_profile_without_steps_names_what_it_holds() -> None:
    doc = ddp_run()
    doc["traceEvents"] = [e for e in doc["traceEvents"] if "ProfilerStep" not in e["name"]]
    with pytest.raises(ProfileError, match=r"no ProfilerStep#N ranges.*\(it holds 9 all_reduce"):
        read_profile(_bytes(doc), name="r0.json")


@pytest.mark.parametrize(
    ("kernel", "kind"),
    [
        ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "all_reduce"),
        ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "all_reduce"),
        ("ncclAllReduceRingLLKernel_sum_f32(ncclColl)", "all_reduce"),
        ("ncclKernel_ReduceScatter_RING_SIMPLE_Sum_half", "reduce_scatter"),
        ("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "all_gather"),
        ("ncclDevKernel_Broadcast_RING_LL", "broadcast"),
        ("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", "send_recv"),
        ("ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)", "generic"),
        ("ampere_sgemm_128x64_nn", None),
    ],
)
def test_every_nccl_and_rccl_kernel_family_is_a_collective(kernel: str, kind: str | None) -> None:
    got = EventCollector("r0")
    got({"ph": "X", "cat": "kernel", "name": kernel, "pid": 0, "tid": 7, "ts": 1.0, "dur": 2.0,
         "args": {"stream": 7, "device": 0}})  # fmt: skip
    assert got.kernels[0][5] == kind


def test_generic_kernels_carry_every_kind_in_order() -> None:
    # Newer NCCL may run any collective as ncclDevKernel_Generic: matched by order alone,
    # which cannot tell whose kernel is missing, so the kernel-less broadcast is left out.
    doc = ddp_run(correlation=False)
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e["name"] != "nccl:broadcast"]
    for e in doc["traceEvents"]:
        if e["cat"] == "kernel" and e["name"].startswith("nccl"):
            e["name"] = "ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)"
    profile = read_profile(_bytes(doc), name="r0.json")
    assert len(profile.steps) == STEPS
    for step in profile.steps:
        assert [round(b.end_us - b.start_us) for b in step.buckets] == [900, 1400, 900]
        assert [c.kind for c in step.others] == ["all_to_all"]
