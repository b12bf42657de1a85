"""One run, two records: torch.profiler and overlap-lab's TraceRecorder on the same DDP iterations.

How the shipped profiler example (``traces/shipped/profiled/``) was made,
and what the profile-import test records: ``python -m
traces.recorder.profiled --out DIR [--gzip]``, or ``record(out_dir)``,
starts two gloo ranks on 127.0.0.1. Each trains 6 x Linear(512, 512, bias=False) (1 MiB of gradient
per layer, like the demo model but smaller), bucket cap 2 MiB, batch 64, one
thread, for 5 iterations under both the recorder and ``torch.profiler`` (CPU
activity, ``record_shapes=True``, schedule wait 1, warm-up 1, active 3). The
profiler's active steps are ``ProfilerStep#2..4``; the recorder drops 2
iterations of warm-up, so its iterations are 2..4 too. Writes
``rank0.json``, ``rank1.json`` (profiles, ``.json.gz`` with ``gzip``) and
``recorded.json`` (the trace). ``--extra all_to_all`` (or ``broadcast``) adds,
in every iteration before DDP's forward, a collective of 4096 floats that is
not a bucket (as embedding exchanges are); ``--no-shapes`` profiles with
``record_shapes=False``, so the profile holds no sizes.
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
from pathlib import Path

LAYERS = 6
WIDTH = 512
BATCH = 64
CAP_MB = 2.0
ITERATIONS = 5
WARMUP = 2  # = the profiler schedule's wait + warm-up
EXTRA_ELEMENTS = 4096  # floats of the extra collective (16 KiB)
EXTRAS = ("all_to_all", "broadcast")


def _extra_collective(kind: str | None, buffer, out) -> None:
    import torch.distributed as dist

    if kind == "all_to_all":
        dist.all_to_all_single(out, buffer)
    elif kind == "broadcast":
        dist.broadcast(buffer, 0)


def _rank(args: argparse.Namespace) -> None:
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel

    from traces.recorder.demo import recorded_step
    from traces.recorder.recorder import TraceRecorder, write_trace

    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{args.port}", rank=args.rank, world_size=2
    )
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(WIDTH, WIDTH, bias=False) for _ in range(LAYERS)])
    ddp = DistributedDataParallel(model, bucket_cap_mb=CAP_MB)
    recorder = TraceRecorder(ddp, bucket_cap_mb=CAP_MB, model_description="profiled run")
    optimizer = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    x = torch.randn(BATCH, WIDTH, generator=torch.Generator().manual_seed(1 + args.rank))
    extra_in, extra_out = torch.ones(EXTRA_ELEMENTS), torch.empty(EXTRA_ELEMENTS)
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=ITERATIONS - WARMUP, repeat=1)
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU],
        schedule=schedule,
        record_shapes=not args.no_shapes,
    ) as prof:
        for _ in range(ITERATIONS):
            _extra_collective(args.extra, extra_in, extra_out)
            recorded_step(ddp, recorder, optimizer, x)
            prof.step()
    profile = Path(args.out) / f"rank{args.rank}.json"
    prof.export_chrome_trace(str(profile))
    if args.gzip:
        with profile.open("rb") as raw, gzip.open(profile.with_suffix(".json.gz"), "wb") as out:
            shutil.copyfileobj(raw, out)
        profile.unlink()
    trace = recorder.gather(warmup=WARMUP, note="profiled run")
    if trace is not None:
        write_trace(trace, Path(args.out) / "recorded.json")
    dist.barrier()
    dist.destroy_process_group()


def record(
    out_dir: Path,
    timeout_s: float = 120,
    gzipped: bool = False,
    extra: str | None = None,
    shapes: bool = True,
) -> None:
    """Run both ranks; raise ``RuntimeError`` with their output when one fails.

    ``extra`` adds a collective that is not a bucket (one of ``EXTRAS``);
    ``shapes=False`` profiles without ``record_shapes``.
    """
    from traces.recorder.demo import free_port

    port = free_port()
    env = {**os.environ, "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1"}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                __spec__.name,
                "--rank",
                str(r),
                "--port",
                str(port),
                "--out",
                str(out_dir),
                *(["--gzip"] if gzipped else []),
                *(["--extra", extra] if extra else []),
                *([] if shapes else ["--no-shapes"]),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for r in range(2)
    ]
    outputs = []
    try:
        for p in procs:
            outputs.append(p.communicate(timeout=timeout_s)[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    codes = [p.returncode for p in procs]
    if any(codes):
        raise RuntimeError(f"a rank failed ({codes}):\n" + "\n".join(o[-3000:] for o in outputs))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for the profiles and the trace")
    parser.add_argument("--gzip", action="store_true", help="write the profiles gzipped")
    parser.add_argument("--extra", choices=EXTRAS, help="add a collective that is not a bucket")
    parser.add_argument("--no-shapes", action="store_true", help="record_shapes=False")
    parser.add_argument("--rank", type=int, help=argparse.SUPPRESS)  # one rank's own process
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rank is None:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        record(Path(args.out), gzipped=args.gzip)
        sys.exit(0)
    _rank(args)
    # As in traces.recorder.demo: leave without static destructors (gloo's threads).
    sys.stdout.flush()
    os._exit(0)
