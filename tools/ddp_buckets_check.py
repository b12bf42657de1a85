"""Print the buckets real PyTorch DDP builds, to check ``widgets.model.buckets`` against.

Not part of the test suite (it needs torch; the model never imports it). Run with
a CPU build of torch installed, e.g. ``pip install torch==2.13.0``, then
``python tools/ddp_buckets_check.py``. Each case runs DDP on two gloo ranks on
127.0.0.1 for three iterations and prints, per iteration, the order gradients
became ready and each bucket as launched (a comm hook sees buckets in launch
order), with the time in ms since backward started. ``tests/model/test_ddp.py``
holds what this printed for PyTorch 2.13, written out as expected values.
"""

from __future__ import annotations

import os
import socket
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Slow(torch.autograd.Function):
    """Identity whose backward takes 20 ms, so readiness times are far apart."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        time.sleep(0.02)
        return grad


class Chain(nn.Module):
    """Linear(d, d) layers registered in ``registration`` order, used in name order."""

    def __init__(self, d: int, used: list[str], registration: list[str]):
        super().__init__()
        for name in registration:
            self.add_module(name, nn.Linear(d, d))
        self.used = used

    def forward(self, x):
        for name in self.used:
            x = Slow.apply(getattr(self, name)(x))
        return x


SIX = [f"l{i}" for i in range(6)]
CASES = {
    "plain, default cap": (1024, SIX, SIX, {}),
    "plain, find_unused_parameters": (1024, SIX, SIX, {"find_unused_parameters": True}),
    "plain, bucket_cap_mb=4": (1024, SIX, SIX, {"bucket_cap_mb": 4}),
    "reordered module": (1024, ["a", "late", "c", "d"], ["a", "c", "d", "late"], {}),
    "reordered module, find_unused_parameters": (
        1024,
        ["a", "late", "c", "d"],
        ["a", "c", "d", "late"],
        {"find_unused_parameters": True},
    ),
    "registered in reverse, 0.25 MiB cap, find_unused_parameters": (
        256,
        ["l0", "l1", "l2", "l3"],
        ["l3", "l2", "l1", "l0"],
        {"find_unused_parameters": True, "bucket_cap_mb": 0.25},
    ),
}


def worker(rank: int, port: int, case: str, out: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    d, used, registration, options = CASES[case]
    model = Chain(d, used, registration)
    names = {id(p): n for n, p in model.named_parameters()}
    ddp = DDP(model, **options)
    events: list[str] = []
    t0 = [0.0]

    def stamp() -> str:
        return f"{(time.perf_counter() - t0[0]) * 1000:7.1f} ms"

    def hook(state, bucket):
        params = " ".join(names[id(p)] for p in bucket.parameters())
        events.append(f"{stamp()}  launch bucket {bucket.index()}: {params}")
        fut = dist.all_reduce(bucket.buffer(), async_op=True).get_future()
        return fut.then(lambda f: f.value()[0])

    ddp.register_comm_hook(None, hook)
    for n, p in model.named_parameters():
        p.register_post_accumulate_grad_hook(lambda p, n=n: events.append(f"{stamp()}  ready {n}"))
    lines = [f"== {case}: registered {' '.join(registration)}; used {' '.join(used)}"]
    for iteration in range(3):
        events.clear()
        loss = ddp(torch.randn(4, d)).sum()
        t0[0] = time.perf_counter()
        loss.backward()
        lines += [f" iteration {iteration}", *(f"   {e}" for e in events)]
        model.zero_grad(set_to_none=True)
    if rank == 0:
        with open(out, "w") as f:
            f.write("\n".join(lines) + "\n")
    dist.destroy_process_group()


def main() -> None:
    for case in CASES:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with tempfile.NamedTemporaryFile("r", suffix=".txt") as out:
            mp.spawn(worker, args=(port, case, out.name), nprocs=2)
            sys.stdout.write(out.read())


if __name__ == "__main__":
    main()
