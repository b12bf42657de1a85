"""Importing a ~100 MB torch.profiler file against ``json.load`` of the same file, in one run.

Targets (issue 20): the import takes at most 2x the time ``json.load`` takes on
the same file, and its peak memory is at most 3x the file's size.

The file is synthetic but shaped like a GPU run's ``export_chrome_trace``:
per ``ProfilerStep#N`` and rank, forward and backward CPU ops with shapes,
``cudaLaunchKernel`` runtime events with correlations, compute kernels on
stream 7, DDP bucket all-reduces (``nccl:all_reduce`` and their NCCL kernels
on stream 20) and the optimizer. Times: the median of ``--repeats`` runs of each,
alternating; memory: tracemalloc's peak (Python allocations) in separate runs,
and the whole process's peak resident size after all runs (``ru_maxrss``).

    python bench/profile_import.py [--mb 100] [--repeats 3]
"""

from __future__ import annotations

import argparse
import gc
import gzip
import json
import random
import resource
import shutil
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

from traces.profiler import read_profile

OPS = ["aten::mm", "aten::addmm", "aten::t", "aten::view", "aten::add_", "aten::mul", "aten::sum"]


def _x(name, cat, ts, dur, tid, pid=100, **args) -> dict:
    return {
        "ph": "X",
        "cat": cat,
        "name": name,
        "pid": pid,
        "tid": tid,
        "ts": ts,
        "dur": dur,
        "args": args,
    }


def write_profile(path: Path, target_bytes: int, seed: int = 0) -> int:
    """Write a GPU-shaped profile of about ``target_bytes``; return the number of events."""
    rng = random.Random(seed)
    ext = corr = 0
    count = 0
    with path.open("w") as out:
        out.write('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}], ')
        out.write('"distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8, ')
        out.write('"nccl_version": "2.21.5"}, "traceEvents": [\n')
        first = True
        step = 0
        t = 1_000_000.0
        while out.tell() < target_bytes:
            events = []
            events.append(_x(f"ProfilerStep#{step}", "user_annotation", t, 90_000, 100))
            events.append(
                _x("DistributedDataParallel.forward", "user_annotation", t + 10, 20_000, 100)
            )
            clock = t + 20
            for phase, tid, span in (("forward", 100, 20_000), ("backward", 200, 50_000)):
                for k in range(2500):
                    ext += 1
                    corr += 1
                    op = OPS[k % len(OPS)]
                    dims = [[rng.randint(1, 4096), rng.randint(1, 4096)], [4096]]
                    events.append(
                        _x(op, "cpu_op", clock, 3.5, tid, **{"External id": ext},
                           **{"Input Dims": dims, "Input type": ["float", "float"],
                              "Record function id": 0, "Ev Idx": ext})
                    )  # fmt: skip
                    events.append(_x("cudaLaunchKernel", "cuda_runtime", clock + 1, 2.0, tid,
                                     correlation=corr, **{"External id": ext}))  # fmt: skip
                    events.append(
                        _x("void at::native::elementwise_kernel<128, 4>(int, Func)", "kernel",
                           clock + 40, 5.0, 7, pid=0, device=0, stream=7, correlation=corr,
                           registers=32, grid=[1024, 1, 1], block=[128, 1, 1],
                           **{"External id": ext, "queued": 0})
                    )  # fmt: skip
                    if phase == "backward" and k % 500 == 499:
                        ext += 1
                        corr += 1
                        n = 6_553_600
                        comm = {"Collective name": "allreduce", "In msg nelems": n,
                                "Out msg nelems": n, "Group size": 8, "dtype": "Float"}  # fmt: skip
                        events.append(_x("nccl:all_reduce", "cpu_op", clock + 2, 30, tid,
                                         **{"External id": ext}, **comm))  # fmt: skip
                        events.append(_x("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "kernel",
                                         clock + 50, 3000, 20, pid=0, device=0, stream=20,
                                         correlation=corr, **comm))  # fmt: skip
                    clock += span / 2500
                if phase == "forward":
                    clock = t + 20_100
            events.append(
                _x("Optimizer.step#AdamW.step", "user_annotation", t + 75_000, 5_000, 100)
            )
            for e in events:
                out.write(("" if first else ",\n") + json.dumps(e))
                first = False
            count += len(events)
            step += 1
            t += 100_000
        out.write('\n], "traceName": "synthetic"}\n')
    return count


def _timed(fn) -> float:
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _peak(fn) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main() -> None:
    """Build the file, time and measure both, print the numbers and whether the targets hold."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100.0, help="file size in MB (1e6 bytes)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="profile-import-"))
    try:
        path = folder / "rank0.json"
        events = write_profile(path, int(args.mb * 1e6))
        size = path.stat().st_size

        def load() -> None:
            with path.open("rb") as f:
                json.load(f)

        def imported() -> None:
            read_profile(path)

        loads, imports = [], []
        for _ in range(max(1, args.repeats)):
            loads.append(_timed(load))
            imports.append(_timed(imported))
        peak_import = _peak(imported)
        peak_load = _peak(load)
        packed = folder / "rank0.json.gz"
        with path.open("rb") as src, gzip.open(packed, "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst)
        gz_time = _timed(lambda: read_profile(packed))
        steps = len(read_profile(path).steps)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    load_s, import_s = statistics.median(loads), statistics.median(imports)
    ratio = import_s / load_s
    print(f"file: {size / 1e6:.1f} MB, {events} events, {steps} steps")
    print(f"json.load: {load_s:.2f} s (runs {', '.join(f'{x:.2f}' for x in loads)})")
    print(f"import:    {import_s:.2f} s (runs {', '.join(f'{x:.2f}' for x in imports)})")
    print(f"ratio: {ratio:.2f}x (target <= 2x) {'met' if ratio <= 2 else 'NOT met'}")
    print(
        f"peak Python memory: import {peak_import / 1e6:.1f} MB = "
        f"{peak_import / size:.2f}x the file "
        f"(target <= 3x) {'met' if peak_import <= 3 * size else 'NOT met'}; "
        f"json.load {peak_load / 1e6:.1f} MB = {peak_load / size:.2f}x"
    )
    print(f"import of the gzipped file ({packed.name}): {gz_time:.2f} s")
    print(f"process peak resident size over all runs: {rss / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
