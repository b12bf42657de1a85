"""Hand-built Kineto (torch.profiler GPU) traces of the structures production runs hold.

``ddp_run`` writes a DDP step shaped like the issue's production runs: NCCL
kernels of the older names (``ncclKernel_AllReduce_RING_LL_Sum_float``,
``ncclDevKernel_SendRecv``) with no ``External id`` and no ``In msg nelems``,
tied to their launch only by the runtime launch's ``correlation``; bucket
sizes only in the ``c10d::allreduce_`` ops' ``Input Dims`` (or nowhere,
``record_shapes`` off); an ``all_to_all`` during forward run as ``SendRecv``
on its own stream; buckets on two streams; a ``broadcast`` in backward whose
kernel is not in the file. Per step k, B = 1 000 000 + 20 000 k (us):

- ProfilerStep#(100+k) [B, B+15000]; DDP forward [B+100, B+3000];
- all_to_all: c10d op [B+500, B+600], nccl op [B+510, B+590], launch at B+550,
  SendRecv kernel [B+700, B+1200] on stream 24;
- a forward kernel launched at B+200 runs [B+1300, B+3000] (stream 7);
- backward kernels launched at B+3100, 3200, 3300 run [3200, 5000], [5000, 7000],
  [7000, 9000];
- buckets (c10d op at T, nccl op [T+10, T+90], launch at T+50): T = B+5000,
  262144 float, kernel [5100, 6000] stream 20; T = B+7000, 524288 float,
  [7100, 8500] stream 22; T = B+9000, 131072 c10::BFloat16, [9100, 10000] stream 20;
- a broadcast nccl op at [B+8000, B+8050] with no kernel;
- Optimizer.step#FusedAdam.step [B+9500, B+10500]; its kernel, launched at
  B+9600, runs [10000, 10400].

``kinds`` swaps what the gradient traffic is (FSDP's reduce_scatter, ...),
``forward=False`` drops DDP's forward, ``correlation=False`` drops the
runtime launches (then only kind and order match).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

STEPS = 3
KERNEL_NAMES = {
    "all_reduce": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
    "reduce_scatter": "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL(ncclDevKernelArgsStorage)",
    "all_gather": "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    "all_to_all": "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
}
C10D_NAMES = {
    "all_reduce": "c10d::allreduce_",
    "reduce_scatter": "c10d::_reduce_scatter_base_",
    "all_gather": "c10d::_allgather_base_",
    "all_to_all": "c10d::alltoall_",
}
BUCKETS = ((5000, 262144, "float", 5100, 6000, 20), (7000, 524288, "float", 7100, 8500, 22))
BUCKETS += ((9000, 131072, "c10::BFloat16", 9100, 10000, 20),)


def _x(name: str, cat: str, ts: float, dur: float, tid: Any, pid: Any = 1, **args: Any) -> dict:
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
            "args": args}  # fmt: skip


def ddp_run(
    rank: int = 0,
    *,
    world_size: int = 2,
    shapes: bool = True,
    kinds: tuple[str, str, str] = ("all_reduce",) * 3,
    forward: bool = True,
    correlation: bool = True,
) -> dict[str, Any]:
    """One rank's profile document (see the module doc for every time)."""
    events: list[dict[str, Any]] = []
    corr = 7000

    def kernel(name: str, launched: float, start: float, end: float, stream: int) -> None:
        nonlocal corr
        corr += 1
        if correlation:
            events.append(_x("cudaLaunchKernel", "cuda_runtime", launched, 5, 10, correlation=corr))
        events.append(_x(name, "kernel", start, end - start, stream, pid=0, device=0,
                         stream=stream, correlation=corr))  # fmt: skip

    def collective(kind: str, t: float, n: int, dtype: str, start: float, end: float, stream: int):
        dims = {"Input Dims": [[n]], "Input type": [dtype]} if shapes else {}
        events.append(_x(C10D_NAMES[kind], "cpu_op", t, 100, 10, **dims))
        events.append(_x(f"nccl:{kind}", "cpu_op", t + 10, 80, 10, **{"External id": corr}))
        kernel(KERNEL_NAMES[kind], t + 50, start, end, stream)

    for k in range(STEPS):
        b = 1_000_000 + 20_000 * k
        events.append(_x(f"ProfilerStep#{100 + k}", "user_annotation", b, 15000, 10))
        if forward:
            ddp = "DistributedDataParallel.forward"
            events.append(_x(ddp, "user_annotation", b + 100, 2900, 10))
        collective("all_to_all", b + 500, 4096, "float", b + 700, b + 1200, 24)
        kernel("ampere_sgemm_128x64_nn", b + 200, b + 1300, b + 3000, 7)
        for i, (start, end) in enumerate(((3200, 5000), (5000, 7000), (7000, 9000))):
            kernel("ampere_sgemm_64x32_tn", b + 3100 + 100 * i, b + start, b + end, 7)
        for kind, (t, n, dtype, start, end, stream) in zip(kinds, BUCKETS, strict=True):
            collective(kind, b + t, n, dtype, b + start, b + end, stream)
        events.append(_x("nccl:broadcast", "cpu_op", b + 8000, 50, 10))
        events.append(_x("Optimizer.step#FusedAdam.step", "user_annotation", b + 9500, 1000, 10))
        kernel("multi_tensor_apply_kernel", b + 9600, b + 10000, b + 10400, 7)
    return {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB"}],
        "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": world_size},
        "traceEvents": events,
    }


def write(directory: Path, documents: list[dict[str, Any]]) -> list[Path]:
    """Write one file per rank (``rank<R>.json``) into ``directory``; return their paths."""
    paths = []
    for doc in documents:
        path = directory / f"rank{doc['distributedInfo']['rank']}.json"
        path.write_text(json.dumps(doc))
        paths.append(path)
    return paths


def engine_run(
    rank: int = 0, *, world_size: int = 2, amp: bool = True, nested: bool = False
) -> dict[str, Any]:
    """One rank of a GPU DDP run whose backward runs on autograd's engine thread.

    The main thread (tid 10) runs forward, ``backward()``'s caller, AMP's unscale
    and the optimizer; autograd's engine thread (tid 20) runs the
    ``evaluate_function`` ops, launches backward's kernels and DDP's buckets. The
    host runs ahead of the device: every launch comes long before its kernel
    runs. Rank 1 computes faster: its backward kernels end 500 us earlier and its
    bucket kernels start 500 us earlier, then spin until rank 0 joins, ending
    together; rank 1's host launches each bucket 50 us after rank 0's. Per step k,
    B = 1 000 000 + 20 000 k, d = 0 (rank 0) or 500 (rank 1), times in us:

    - ProfilerStep#(100+k) [B, B+15000] (tid 10); DDP forward [B+100, B+3000], and
      with ``nested`` a second one inside it [B+500, B+1000] (an inner DDP module);
    - a forward kernel launched (tid 10) at B+2000 runs [B+2000, B+3100];
    - engine ops ``evaluate_function: AddmmBackward0`` [B+3100+100i, +80] (tid 20),
      each launching a kernel at B+3110+100i that runs [3200, 5000], [5000, 7000],
      [7000, 9000] minus d; ``AccumulateGrad`` ops end at B+3170+100i;
    - buckets (tid 20): nccl op [T, T+20], launched at T+10, T = B+3120+100i
      (+50 on rank 1), 262144 float each; kernels [5100, 6000], [7100, 8500],
      [9100, 10000], starting d earlier;
    - with ``amp``: ``aten::_amp_foreach_non_finite_check_and_unscale_`` (tid 10)
      [B+9200, B+9300], its kernel launched at B+9210 runs [10000, 10100]: it reads
      the reduced gradients, so it runs after the last all-reduce;
    - Optimizer.step#SGD.step [B+9500, B+10500] (tid 10), its kernel launched at
      B+9600 runs [10100, 10400].
    """
    events: list[dict[str, Any]] = []
    corr = 100 * (rank + 1)
    d = 500 if rank == 1 else 0

    def kernel(name: str, tid: int, launched: float, start: float, end: float, stream: int):
        nonlocal corr
        corr += 1
        events.append(_x("cudaLaunchKernel", "cuda_runtime", launched, 5, tid, correlation=corr))
        extra = {"Collective name": "allreduce", "In msg nelems": 262144, "dtype": "Float",
                 "Group size": world_size}  # fmt: skip
        events.append(_x(name, "kernel", start, end - start, stream, pid=0, device=0,
                         stream=stream, correlation=corr,
                         **(extra if name.startswith("nccl") else {})))  # fmt: skip

    for k in range(STEPS):
        b = 1_000_000 + 20_000 * k
        events.append(_x(f"ProfilerStep#{100 + k}", "user_annotation", b, 15000, 10))
        ddp = "DistributedDataParallel.forward"
        events.append(_x(ddp, "user_annotation", b + 100, 2900, 10))
        if nested:
            events.append(_x(ddp, "user_annotation", b + 500, 500, 10))
        kernel("ampere_sgemm_128x64_nn", 10, b + 2000, b + 2000, b + 3100, 7)
        grads = ((3200, 5000), (5000, 7000), (7000, 9000))
        buckets = ((5100, 6000), (7100, 8500), (9100, 10000))
        for i, ((gs, ge), (cs, ce)) in enumerate(zip(grads, buckets, strict=True)):
            op = b + 3100 + 100 * i
            name = "autograd::engine::evaluate_function: AddmmBackward0"
            events.append(_x(name, "cpu_op", op, 80, 20))
            kernel("ampere_sgemm_64x32_tn", 20, op + 10, b + gs - d, b + ge - d, 7)
            events.append(_x("torch::autograd::AccumulateGrad", "cpu_op", op + 50, 20, 20))
            t = op + 20 + (50 if rank == 1 else 0)
            events.append(_x("nccl:all_reduce", "cpu_op", t, 20, 20))
            kernel(KERNEL_NAMES["all_reduce"], 20, t + 10, b + cs - d, b + ce, 20)
        if amp:
            unscale = "aten::_amp_foreach_non_finite_check_and_unscale_"
            events.append(_x(unscale, "cpu_op", b + 9200, 100, 10))
            kernel("void at::native::amp_unscale_kernel", 10, b + 9210, b + 10000, b + 10100, 7)
        events.append(_x("Optimizer.step#SGD.step", "user_annotation", b + 9500, 1000, 10))
        kernel("multi_tensor_apply_kernel", 10, b + 9600, b + 10100, b + 10400, 7)
    return {
        "schemaVersion": 1,
        "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": world_size},
        "traceEvents": events,
    }


def merged(documents: list[dict[str, Any]], *, marks: bool = True) -> dict[str, Any]:
    """The ranks' documents merged into one, as AMD's TraceLens (TraceFuse) merges them.

    Each rank's pids are offset by rank x 100 000 000 and its correlation ids by
    rank x 100 000, every event gets ``args.rank`` (unless ``marks`` is False),
    and the top-level keys such as ``distributedInfo`` are dropped.
    """
    events = []
    for doc in documents:
        rank = doc["distributedInfo"]["rank"]
        for e in doc["traceEvents"]:
            e = {**e, "pid": e["pid"] + rank * 100_000_000, "args": dict(e.get("args", {}))}
            if "correlation" in e["args"]:
                e["args"]["correlation"] += rank * 100_000
            if marks:
                e["args"]["rank"] = rank
            events.append(e)
    return {"schemaVersion": 1, "traceEvents": events}
