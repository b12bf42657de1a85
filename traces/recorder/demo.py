"""The demo run behind ``overlap-lab record``: 12 x Linear(1024, 1024, bias=False) on 2 gloo ranks.

Other widths (and layers of different sizes) via ``widths``.

``record_demo`` (torch-free) starts one worker process per rank,
``python -m traces.recorder.demo --rank R ...``, which meet on 127.0.0.1 at a free
port; rank 0 gathers the trace and writes it to a temporary file, which is
validated and moved to the destination only when the run succeeded. Each
layer's gradient is 1024 x 1024 float32 = 4 MiB, so a bucket cap of X MiB puts
about X / 4 layers in a bucket (a bucket closes once it reaches the cap).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

LAYERS = 12
WIDTH = 1024
BATCH = 64
WORLD_SIZE = 2
WIDTHS = [WIDTH] * (LAYERS + 1)  # feature sizes through the model: L + 1 for L layers
ISOLATED_SIZES = 7  # all-reduce sizes timed alone in every round
JOIN_TIMEOUT_S = 120


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity mask, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def rank_environment(
    threads: int, world_size: int, cores: int, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of the demo's rank processes: ``base`` (this process's by default)
    with gloo on loopback and ``OMP_NUM_THREADS`` set to ``threads``.

    When the ranks' compute threads outnumber the cores (``world_size * threads >
    cores``) and ``base`` names no ``OMP_WAIT_POLICY``, OpenMP's threads are told to
    sleep while they wait (``PASSIVE``). By default they spin first, and a spinning
    thread holds a core another rank needs. With 2 ranks of 2 threads on 2 cores,
    backward returned after a median 153-277 ms by bucket layout (30 rounds; the
    90 % intervals of the medians reached 470 ms), and after 78-82 ms with
    ``PASSIVE`` (intervals within ±6 %), about what one thread per rank takes.
    Torch's own launcher avoids it by giving each rank one thread.
    """
    env = {**(os.environ if base is None else base)}
    env.update({"GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": str(threads)})
    if world_size * threads > cores and "OMP_WAIT_POLICY" not in env:
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    return env


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def model_description(widths: list[int], batch: int = BATCH) -> str:
    """The model in words: ``12 x Linear(1024, 1024, bias=False), batch 64 per rank``."""
    pairs = list(itertools.pairwise(widths))
    if len(set(pairs)) == 1:
        a, b = pairs[0]
        layers = f"{len(pairs)} x Linear({a}, {b}, bias=False)"
    else:
        layers = " -> ".join(f"Linear({a}, {b})" for a, b in pairs) + " (bias=False)"
    return f"{layers}, batch {batch} per rank"


def recorded_step(ddp, recorder, optimizer, x) -> None:
    """One training iteration of the demo model, its phases marked for ``recorder``."""
    with recorder.iteration():
        loss = ddp(x).pow(2).mean()
        with recorder.backward():
            loss.backward()
        with recorder.optimizer():
            optimizer.step()
        optimizer.zero_grad(set_to_none=True)


def _worker(args: argparse.Namespace) -> None:
    from datetime import timedelta

    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel

    from .isolated import IsolatedTimer, allreduce_sizes
    from .recorder import TraceRecorder, write_trace

    torch.set_num_threads(args.threads)
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://127.0.0.1:{args.port}",
        rank=args.rank,
        world_size=args.world_size,
        timeout=timedelta(seconds=JOIN_TIMEOUT_S),
    )
    widths = args.widths
    description = model_description(widths, args.batch)

    def build() -> nn.Module:
        torch.manual_seed(0)  # same weights on every rank and for every cap
        return nn.Sequential(*[nn.Linear(a, b, bias=False) for a, b in itertools.pairwise(widths)])

    caps = args.bucket_cap_mb
    runs = []
    for cap in caps:
        ddp = DistributedDataParallel(build(), bucket_cap_mb=cap)
        recorder = TraceRecorder(ddp, bucket_cap_mb=cap, model_description=description)
        runs.append((ddp, recorder, torch.optim.SGD(ddp.parameters(), lr=1e-3)))
    timer = None
    if args.isolated_sizes > 0:
        # Backward alone: a copy whose buckets are handed back unreduced. One bucket of
        # everything, so DDP calls the hook once, after the whole backward.
        whole_mib = sum(a * b for a, b in itertools.pairwise(widths)) * 4 / 2**20
        alone = DistributedDataParallel(build(), bucket_cap_mb=2 * whole_mib + 1)
        alone_recorder = TraceRecorder(alone, communicate=False, model_description=description)
        sizes = allreduce_sizes(alone_recorder.parameter_bytes, args.isolated_sizes)
        timer = IsolatedTimer(sizes, alone_recorder)
        runs.append((alone, alone_recorder, torch.optim.SGD(alone.parameters(), lr=1e-3)))
    generator = torch.Generator().manual_seed(1 + args.rank)
    x = torch.randn(args.batch, widths[0], generator=generator)
    total = args.warmup + args.iterations
    for i in range(total):
        # With several caps, their iterations alternate, so that whatever else the
        # machine does at the time falls on every cap alike; backward alone and the
        # isolated all-reduces take their turn in the same round.
        for ddp, recorder, optimizer in runs:
            recorded_step(ddp, recorder, optimizer, x)
        if timer is not None:
            timer.time_allreduces()
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
    isolated = None if timer is None else timer.gather(args.warmup)
    for cap, (_, recorder, _), out in zip(caps, runs[: len(caps)], args.out, strict=True):
        note = (
            f"{command}: {description}, SGD, {args.world_size} gloo ranks on 127.0.0.1, "
            f"{args.threads} thread(s) per rank{together.format(cap=cap)}."
        )
        if timer is not None:
            note += (
                " Each round also ran backward alone (communication held back) and all-reduces "
                f"alone at {len(timer.sizes)} sizes (the trace's isolated block)."
            )
        trace = recorder.gather(warmup=args.warmup, note=note, isolated=isolated)
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
    widths: list[int] | None = None,
    batch: int = BATCH,
    isolated_sizes: int = ISOLATED_SIZES,
    progress: Callable[[str], None] | None = None,
) -> dict | list[dict]:
    """Run the demo on ``world_size`` local gloo ranks and write its trace to ``out``.

    With a list of caps (and one ``out`` per cap), one model per cap is trained
    in the same run, their iterations alternating, and each gets its own trace:
    the layouts then share whatever else the machine was doing. ``widths`` are
    the feature sizes through the model (L + 1 numbers for L bias-free linear
    layers; default 12 layers of 1024). Unless ``isolated_sizes`` is 0, every
    round also runs backward alone and all-reduces alone at that many sizes
    (``traces.recorder.isolated``), stored in every trace. ``progress``
    receives rank 0's progress lines as they come. Returns the trace (a list of
    them for a list of caps). Raises ``RuntimeError`` with the workers' output
    when a rank fails; nothing is written then.
    """
    from traces import validate_trace

    several = isinstance(bucket_cap_mb, list | tuple)
    caps = list(bucket_cap_mb) if several else [bucket_cap_mb]
    outs = [Path(p) for p in out] if several else [Path(out)]
    if len(caps) != len(outs):
        raise ValueError("give one output file per bucket cap")
    widths = list(WIDTHS if widths is None else widths)
    if len(widths) < 2 or min(widths) < 1:
        raise ValueError("give at least two positive widths (a layer's input and output)")
    port = free_port()
    env = rank_environment(threads, world_size, usable_cores())
    with tempfile.TemporaryDirectory(prefix="overlap-lab-record-") as tmp:
        partials = [Path(tmp) / f"trace{k}.json" for k in range(len(caps))]
        common = [
            sys.executable,
            "-m",
            "traces.recorder.demo",
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
            "--widths",
            *[str(w) for w in widths],
            "--batch",
            str(batch),
            "--isolated-sizes",
            str(isolated_sizes),
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
    parser.add_argument("--widths", type=int, nargs="+", default=WIDTHS)
    parser.add_argument("--batch", type=int, default=BATCH)
    parser.add_argument("--isolated-sizes", type=int, default=ISOLATED_SIZES)
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
