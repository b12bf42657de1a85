"""Write the hand-built GPU-shaped profiles ``nccl_rank0.json`` and ``nccl_rank1.json.gz``.

Two NCCL ranks, three steps (``ProfilerStep#10..12``), shaped like what
torch.profiler's ``export_chrome_trace`` writes on a GPU run: CPU ops on the
main thread (pid 100, tid 100) and the autograd thread (tid 200), CUDA runtime
launches with their ``correlation``, compute kernels on stream 7 and NCCL
kernels on stream 20 with ``Collective name``, ``In msg nelems``, ``dtype`` and
``Group size``. All times are microseconds; every value is chosen by hand (the
numbers the tests expect are worked out from this table in
``test_profiler_import.py``). Run ``python tests/trace/profiles/make_nccl_profiles.py``
to rewrite them; a test checks the files match.

Per step k (0, 1, 2) and rank r, with B = 1 000 000 + 50 r + 10 000 k:

- ProfilerStep [B, B+9900]; DDP forward [B+100, B+2000]; Optimizer.step [B+6200, B+7200];
- forward: an ``nccl:broadcast`` of 256 floats launched at B+150, kernel [B+400, B+500];
  a forward kernel launched at B+200 running [B+600, B+2100] (past forward's end on the
  host, so only its launch says it is forward);
- backward kernels launched at B+2100..B+2400: [2200, 3200], [3200, 4200], [4300, 5500],
  then [5500, 6000] on rank 0 and [5500, 6400] on rank 1;
- buckets (``nccl:all_reduce`` on the autograd thread): 262144 Float at B+3300 -> kernel
  [3300, 4800]; 524288 Float at B+5600 -> [5600, 6600]; 131072 BFloat16 at B+6050 ->
  [6600, 7400 + 200 k];
- an optimizer kernel launched at B+6300 runs [7400 + 200 k, 7700 + 200 k];
- after the optimizer, an ``nccl:all_reduce`` of 1 Float (a logged loss) at B+8500 ->
  [8600, 8620]: not a bucket;
- ``AccumulateGrad`` ops end at B+2150, 2250, 2350, 2450.

Rank 0's NCCL kernels carry the ``External id`` of their launch; rank 1's do not
(matched in launch order). Rank 1's file is gzipped.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
FILES = ("nccl_rank0.json", "nccl_rank1.json.gz")


def _x(name: str, cat: str, ts: float, dur: float, tid: Any, pid: Any = 100, **args: Any) -> dict:
    event = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    return {**event, "args": args}


def profile(rank: int) -> dict[str, Any]:
    """The profile document of ``rank``."""
    events: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "python"}},
        {"ph": "M", "name": "thread_name", "pid": 100, "tid": 200, "args": {"name": "autograd"}},
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
    ]
    ext = 1000 * (rank + 1)
    corr = 5000 * (rank + 1)

    def launch(ts: float, tid: int, kernel: str, start: float, dur: float, stream: int, **kargs):
        nonlocal corr
        corr += 1
        events.append(_x("cudaLaunchKernel", "cuda_runtime", ts, 5, tid, correlation=corr))
        events.append(
            _x(
                kernel,
                "kernel",
                start,
                dur,
                stream,
                pid=0,
                device=0,
                stream=stream,
                correlation=corr,
                **kargs,
            )
        )
        flow = {"id": corr, "cat": "ac2g", "name": "ac2g"}
        events.append({"ph": "s", "pid": 100, "tid": tid, "ts": ts, **flow})
        events.append({"ph": "f", "pid": 0, "tid": stream, "ts": start, "bp": "e", **flow})

    def collective(kind: str, ts: float, tid: int, n: int, dtype: str, start: float, dur: float):
        nonlocal ext
        ext += 1
        comm = {
            "Collective name": kind.replace("_", ""),
            "In msg nelems": n,
            "Out msg nelems": n,
            "Group size": 2,
            "dtype": dtype,
            "Process Group Name": "0",
            "Process Group Description": "default_pg",
        }
        events.append(_x(f"nccl:{kind}", "cpu_op", ts, 50, tid, **{"External id": ext}, **comm))
        kernel = {
            "all_reduce": f"ncclDevKernel_AllReduce_Sum_{'bf16' if n == 131072 else 'f32'}_RING_LL",
            "broadcast": "ncclDevKernel_Broadcast_RING_LL",
        }[kind] + "(ncclDevKernelArgsStorage<4096ul>)"
        ids = {"External id": ext} if rank == 0 else {}
        launch(ts + 10, tid, kernel, start, dur, 20, **ids, **comm)

    for k in range(3):
        b = 1_000_000 + 50 * rank + 10_000 * k
        events.append(_x(f"ProfilerStep#{10 + k}", "user_annotation", b, 9900, 100))
        events.append(_x(f"ProfilerStep#{10 + k}", "gpu_user_annotation", b + 300, 9000, 7, pid=0))
        events.append(_x("DistributedDataParallel.forward", "user_annotation", b + 100, 1900, 100))
        collective("broadcast", b + 150, 100, 256, "Float", b + 400, 100)
        launch(b + 200, 100, "ampere_sgemm_128x64_nn", b + 600, 1500, 7)
        last = 500 if rank == 0 else 900
        for i, (start, dur) in enumerate(((2200, 1000), (3200, 1000), (4300, 1200), (5500, last))):
            events.append(
                _x(
                    "autograd::engine::evaluate_function: AddmmBackward0",
                    "cpu_op",
                    b + 2100 + 100 * i - 20,
                    90,
                    200,
                )
            )
            accumulate = _x(
                "torch::autograd::AccumulateGrad", "cpu_op", b + 2100 + 100 * i, 50, 200
            )
            events.append(accumulate)
            launch(b + 2100 + 100 * i, 200, "ampere_sgemm_64x32_tn", b + start, dur, 7)
        collective("all_reduce", b + 3300, 200, 262144, "Float", b + 3300, 1500)
        collective("all_reduce", b + 5600, 200, 524288, "Float", b + 5600, 1000)
        collective("all_reduce", b + 6050, 200, 131072, "BFloat16", b + 6600, 800 + 200 * k)
        events.append(_x("Optimizer.step#SGD.step", "user_annotation", b + 6200, 1000, 100))
        launch(b + 6300, 100, "multi_tensor_apply_kernel", b + 7400 + 200 * k, 300, 7)
        collective("all_reduce", b + 8500, 100, 1, "Float", b + 8600, 20)
    return {
        "schemaVersion": 1,
        "deviceProperties": [
            {
                "id": 0,
                "name": "NVIDIA A100-SXM4-80GB",
                "totalGlobalMem": 85198045184,
                "computeMajor": 8,
                "computeMinor": 0,
            }
        ],
        "distributedInfo": {
            "backend": "nccl",
            "rank": rank,
            "world_size": 2,
            "pg_count": 1,
            "nccl_version": "2.21.5",
        },
        "cuda_runtime_version": 12040,
        "record_shapes": 1,
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": 1_700_000_000_000_000_000,
        "traceEvents": events,
        "traceName": f"rank{rank}.pt.trace.json",
    }


def contents() -> dict[str, bytes]:
    """The two files' bytes (gzip with a fixed time stamp, so they are reproducible)."""
    out = {}
    for rank, name in enumerate(FILES):
        data = json.dumps(profile(rank), indent=1).encode()
        out[name] = gzip.compress(data, mtime=0) if name.endswith(".gz") else data
    return out


if __name__ == "__main__":
    for name, data in contents().items():
        (HERE / name).write_bytes(data)
