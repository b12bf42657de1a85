"""The demo run behind ``overlap-lab record``: 12 x Linear(1024, 1024, bias=False) on 2 gloo ranks.

``record_demo`` (torch-free) starts one worker process per rank,
``python -m app.tracing.demo --rank R ...``, which meet on 127.0.0.1 at a free
port; rank 0 gathers the trace and writes it to a temporary file, which is
validated and moved to the destination only when the run succeeded. Each
layer's gradient is 1024 x 1024 float32 = 4 MiB, so a bucket cap of X MiB puts
about X / 4 layers in a bucket (a bucket closes once it reaches the cap).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

LAYERS = 12
WIDTH = 1024
BATCH = 64
WORLD_SIZE = 2
MODEL_DESCRIPTION = f"{LAYERS} x Linear({WIDTH}, {WIDTH}, bias=False), batch {BATCH} per rank"
JOIN_TIMEOUT_S = 120


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _worker(args: argparse.Namespace) -> None:
    from datetime import timedelta

    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel

    from .recorder import TraceRecorder, write_trace

    torch.set_num_threads(args.threads)
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://127.0.0.1:{args.port}",
        rank=args.rank,
        world_size=args.world_size,
        timeout=timedelta(seconds=JOIN_TIMEOUT_S),
    )
    caps = args.bucket_cap_mb
    runs = []
    for cap in caps:
        torch.manual_seed(0)  # same weights on every rank and for every cap
        model = nn.Sequential(*[nn.Linear(WIDTH, WIDTH, bias=False) for _ in range(LAYERS)])
        ddp = DistributedDataParallel(model, bucket_cap_mb=cap)
        recorder = TraceRecorder(ddp, bucket_cap_mb=cap, model_description=MODEL_DESCRIPTION)
        runs.append((ddp, recorder, torch.optim.SGD(ddp.parameters(), lr=1e-3)))
    generator = torch.Generator().manual_seed(1 + args.rank)
    x = torch.randn(BATCH, WIDTH, generator=generator)
    total = args.warmup + args.iterations
    for i in range(total):
        # With several caps, their iterations alternate, so that whatever else the
        # machine does at the time falls on every cap alike.
        for ddp, recorder, optimizer in runs:
            with recorder.iteration():
                loss = ddp(x).pow(2).mean()
                with recorder.backward():
                    loss.backward()
                with recorder.optimizer():
                    optimizer.step()
                optimizer.zero_grad(set_to_none=True)
        if args.rank == 0:
            print(f"iteration {i + 1}/{total}", flush=True)
    command = (
        f"overlap-lab record --bucket-cap-mb {' '.join(f'{c:g}' for c in caps)} "
        f"--iterations {args.iterations} --warmup {args.warmup}"
    )
    together = (
        "; one model per cap, their iterations alternating; this trace is cap {cap:g} MiB"
        if len(caps) > 1
        else ""
    )
    for cap, (_, recorder, _), out in zip(caps, runs, args.out, strict=True):
        note = (
            f"{command}: {MODEL_DESCRIPTION}, SGD, {args.world_size} gloo ranks on 127.0.0.1, "
            f"{args.threads} thread(s) per rank{together.format(cap=cap)}."
        )
        trace = recorder.gather(warmup=args.warmup, note=note)
        if trace is not None:
            write_trace(trace, out)
    dist.barrier()
    dist.destroy_process_group()


def record_demo(
    out: Path | list[Path],
    *,
    bucket_cap_mb: float | list[float],
    iterations: int,
    warmup: int,
    threads: int = 1,
    world_size: int = WORLD_SIZE,
    progress: Callable[[str], None] | None = None,
) -> dict | list[dict]:
    """Run the demo on ``world_size`` local gloo ranks and write its trace to ``out``.

    With a list of caps (and one ``out`` per cap), one model per cap is trained
    in the same run, their iterations alternating, and each gets its own trace:
    the layouts then share whatever else the machine was doing. ``progress``
    receives rank 0's progress lines as they come. Returns the trace (a list of
    them for a list of caps). Raises ``RuntimeError`` with the workers' output
    when a rank fails; nothing is written then.
    """
    from widgets.model.trace import validate_trace

    several = isinstance(bucket_cap_mb, list | tuple)
    caps = list(bucket_cap_mb) if several else [bucket_cap_mb]
    outs = [Path(p) for p in out] if several else [Path(out)]
    if len(caps) != len(outs):
        raise ValueError("give one output file per bucket cap")
    port = free_port()
    env = {**os.environ, "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": str(threads)}
    with tempfile.TemporaryDirectory(prefix="overlap-lab-record-") as tmp:
        partials = [Path(tmp) / f"trace{k}.json" for k in range(len(caps))]
        common = [
            sys.executable,
            "-m",
            "app.tracing.demo",
            "--port",
            str(port),
            "--world-size",
            str(world_size),
            "--bucket-cap-mb",
            *[str(c) for c in caps],
            "--iterations",
            str(iterations),
            "--warmup",
            str(warmup),
            "--threads",
            str(threads),
            "--out",
            *[str(p) for p in partials],
        ]
        logs = [Path(tmp) / f"rank{r}.log" for r in range(world_size)]
        procs = []
        try:
            for r in range(world_size):
                procs.append(
                    subprocess.Popen(
                        [*common, "--rank", str(r)],
                        env=env,
                        stdout=subprocess.PIPE if r == 0 else logs[r].open("w"),
                        stderr=subprocess.STDOUT,
                        text=True,
                    )
                )
            lines = []
            assert procs[0].stdout is not None
            for line in procs[0].stdout:
                lines.append(line)
                if progress is not None and line.startswith("iteration "):
                    progress(line.strip())
            codes = [p.wait(timeout=JOIN_TIMEOUT_S) for p in procs]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        if any(codes):
            others = "".join(log.read_text() for log in logs[1:] if log.exists())
            raise RuntimeError(
                f"a rank failed (exit codes {codes}):\n{''.join(lines)[-3000:]}{others[-3000:]}"
            )
        traces = []
        for partial in partials:
            trace = json.loads(partial.read_text())
            validate_trace(trace)
            traces.append(trace)
        for partial, dest in zip(partials, outs, strict=True):
            dest.parent.mkdir(parents=True, exist_ok=True)
            staged = dest.with_name(dest.name + ".partial")
            staged.write_text(partial.read_text())
            staged.replace(dest)
    return traces if several else traces[0]


def main(argv: list[str] | None = None) -> None:
    """One rank of the demo run (started by ``record_demo``)."""
    parser = argparse.ArgumentParser(description="one rank of the overlap-lab demo recording")
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world-size", type=int, default=WORLD_SIZE)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--bucket-cap-mb", type=float, nargs="+", required=True)
    parser.add_argument("--iterations", type=int, required=True)
    parser.add_argument("--warmup", type=int, required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", nargs="+", required=True)
    _worker(parser.parse_args(argv))
    # Interpreter shutdown can destroy gloo's still-joinable threads and abort
    # ("terminate called without an active exception") after everything is
    # written; leave without running static destructors.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
