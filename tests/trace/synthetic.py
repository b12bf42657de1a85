"""Synthetic traces made by the schedule engine itself, with known parameters.

Twelve 4 MiB parameters ``0.weight`` .. ``11.weight`` registered in that order,
computed in reverse (``11.weight`` first), two ranks. Each iteration jitters the
per-layer work a little and lets a random rank start backward later.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np

from traces import FORMAT, VERSION
from widgets.model.ranks import rank_schedule

MIB = 1024 * 1024
N_PARAMS = 12
NAMES = [f"{i}.weight" for i in range(N_PARAMS)]


@dataclass(frozen=True)
class Truth:
    """The parameters a synthetic trace is made with."""

    backward_ms: tuple[float, ...] = field(
        default_factory=lambda: tuple([1.5] + [3.0 + 0.1 * i for i in range(1, N_PARAMS)])
    )
    overhead_ms: float = 1.0
    bandwidth_gbps: float = 1.2
    contention: float = 0.5
    #: Per-iteration contention of the most slowed rank first (shuffled over the
    #: ranks each iteration); None: every rank gets ``contention``.
    rank_contention: tuple[float, ...] | None = None
    transfer_contention: float = 1.0
    enqueue_ms: float = 0.3
    skew_ms: float = 2.0
    forward_ms: float = 12.0
    finalize_ms: float = 0.5
    optimizer_ms: float = 8.0
    world_size: int = 2
    #: All-reduces in flight at once (gloo's worker threads: 2); each one's overhead is
    #: then latency that hides behind the previous bucket's bytes.
    concurrent: int = 1

    def transfer_ms(self, nbytes: np.ndarray) -> np.ndarray:
        return self.overhead_ms + nbytes / (self.bandwidth_gbps * 1e6)


def layout_buckets(per_bucket: list[int]) -> list[list[int]]:
    """Parameter indices per bucket for ``per_bucket`` parameters in each (bucket 0 first)."""
    assert sum(per_bucket) == N_PARAMS
    order = list(range(N_PARAMS))[::-1]
    out, k = [], 0
    for n in per_bucket:
        out.append(order[k : k + n])
        k += n
    return out


def synthetic_document(
    per_bucket: list[int],
    truth: Truth | None = None,
    *,
    iterations: int = 12,
    jitter: float = 0.03,
    seed: int = 0,
    other_load: float | None = 0.0,
) -> dict:
    """A valid trace document of the layout ``per_bucket`` made with ``truth``."""
    truth = truth or Truth()
    rng = np.random.default_rng(seed)
    buckets = layout_buckets(per_bucket)
    bucket_of = np.empty(N_PARAMS, int)
    for b, members in enumerate(buckets):
        bucket_of[members] = b
    sizes = np.array([4 * MIB * len(m) for m in buckets], float)
    order = np.arange(N_PARAMS)[::-1]
    base = np.asarray(truth.backward_ms)
    its = []
    clock = 100.0
    for i in range(iterations):
        work = base * (1 + jitter * rng.standard_normal((truth.world_size, N_PARAMS)))
        start = np.full(truth.world_size, -truth.skew_ms)
        start[rng.integers(truth.world_size)] = 0.0
        s = rank_schedule(
            work,
            bucket_of,
            truth.transfer_ms(sizes),
            order=order,
            start_ms=start,
            enqueue_ms=truth.enqueue_ms,
            contention=(
                truth.contention
                if truth.rank_contention is None
                else rng.permutation(np.asarray(truth.rank_contention, float))
            ),
            transfer_contention=truth.transfer_contention,
            concurrent=truth.concurrent,
            latency_ms=truth.overhead_ms,
        )
        ranks = []
        for r in range(truth.world_size):

            def t(x: float, clock: float = clock) -> float:
                return round(clock + float(x), 3)

            ret = max(s.comm_end, s.backward_end[r]) + truth.finalize_ms
            ranks.append(
                {
                    "rank": r,
                    "forward_start": t(start[r] - truth.forward_ms),
                    "backward_start": t(start[r]),
                    "backward_return": t(ret),
                    "optimizer_start": t(ret + 0.05),
                    "optimizer_end": t(ret + 0.05 + truth.optimizer_ms),
                    "grad_ready": [t(x) for x in s.layer_ready[r]],
                    "buckets": [
                        {
                            "index": b,
                            "bytes": int(sizes[b]),
                            "parameters": [NAMES[p] for p in members],
                            "issue": t(s.bucket_launch[r, b]),
                            "enqueued": t(s.bucket_launch[r, b] + 0.1),
                            "complete": t(s.bucket_end[b]),
                        }
                        for b, members in enumerate(buckets)
                    ],
                }
            )
        its.append({"iteration": 5 + i, "other_load": other_load, "ranks": ranks})
        clock += 400.0
    return {
        "format": FORMAT,
        "version": VERSION,
        "time_unit": "ms",
        "metadata": {
            "torch_version": "synthetic",
            "backend": "gloo",
            "device": "cpu",
            "world_size": truth.world_size,
            "bucket_cap_mb": 4.0 * per_bucket[0],
            "cpu_count": 2,
            "threads_per_rank": 1,
            "warmup_iterations": 5,
            "model": "synthetic: made by widgets.model.ranks",
            "origin_ns": 0,
            "source": "recorder",
            "times": "host",
            "readiness": "per-parameter",
        },
        "parameters": [{"name": n, "bytes": 4 * MIB} for n in NAMES],
        "iterations": its,
    }


def isolated_block(
    truth: Truth | None = None,
    *,
    sizes_mib: tuple[float, ...] = (4, 8, 16, 32, 48),
    repetitions: int = 9,
    jitter: float = 0.03,
    seed: int = 0,
) -> dict:
    """An ``isolated`` block made with ``truth``: all-reduces alone take ``transfer_ms``
    of their size and backward alone runs each layer at its ``backward_ms`` (last
    layer first), each repetition jittered by ``jitter`` (relative)."""
    truth = truth or Truth()
    rng = np.random.default_rng(seed)
    allreduce = []
    for mib in sizes_mib:
        t = float(truth.transfer_ms(np.array(mib * MIB)))
        ms = t * (1 + jitter * rng.standard_normal(repetitions))
        allreduce.append({"bytes": int(mib * MIB), "ms": [round(float(x), 4) for x in ms]})
    backward = []
    base = np.asarray(truth.backward_ms)
    for _ in range(repetitions):
        ranks = []
        for _r in range(truth.world_size):
            work = base * (1 + jitter * rng.standard_normal(N_PARAMS))
            ready = np.empty(N_PARAMS)
            ready[::-1] = np.cumsum(work[::-1])  # the last layer is computed first
            ranks.append(
                {
                    "backward_ms": round(float(ready.max()) + truth.finalize_ms, 4),
                    "grad_ready": [round(float(x), 4) for x in ready],
                }
            )
        backward.append({"ranks": ranks})
    return {
        "method": "synthetic: made from the truth",
        "allreduce": allreduce,
        "backward": backward,
    }


def edited(document: dict, path: str, value=None, delete: bool = False) -> dict:
    """A deep copy of ``document`` with the field at ``path`` (``a.b[0].c``) set or deleted."""
    doc = copy.deepcopy(document)
    parts: list[str | int] = []
    for piece in path.replace("]", "").split("."):
        name, *indices = piece.split("[")
        if name:
            parts.append(name)
        parts += [int(i) for i in indices]
    target = doc
    for key in parts[:-1]:
        target = target[key]
    if delete:
        del target[parts[-1]]
    else:
        target[parts[-1]] = value
    return doc


def two_parameter_rank(rank, fwd, bwd, a, b, issue, complete, ret, opt) -> dict:
    """One rank of one iteration of a hand-made trace of two 8-byte parameters.

    Parameter "b" (index 1) is computed first and is bucket 0; "a" (index 0) is
    bucket 1. ``issue`` and ``complete`` are per bucket; ``opt`` is the
    optimizer's (start, end); each bucket is enqueued 0.25 ms after its issue.
    """
    return {
        "rank": rank,
        "forward_start": fwd,
        "backward_start": bwd,
        "backward_return": ret,
        "optimizer_start": opt[0],
        "optimizer_end": opt[1],
        "grad_ready": [a, b],
        "buckets": [
            {
                "index": k,
                "bytes": 8,
                "parameters": [name],
                "issue": issue[k],
                "enqueued": issue[k] + 0.25,
                "complete": complete[k],
            }
            for k, name in enumerate(("b", "a"))
        ],
    }


def two_parameter_document(iterations: list[dict], **metadata) -> dict:
    """A hand-made trace of two 8-byte parameters on two ranks sharing two cores.

    ``iterations``: each ``{"iteration", "other_load", "ranks"}``, the ranks made
    with :func:`two_parameter_rank`; ``metadata``: fields added to the machine's.
    """
    return {
        "format": FORMAT,
        "version": VERSION,
        "time_unit": "ms",
        "metadata": {
            "torch_version": "2.13.0+cpu",
            "backend": "gloo",
            "device": "cpu",
            "world_size": 2,
            "bucket_cap_mb": 1.0,
            "cpu_count": 2,
            "threads_per_rank": 1,
            "origin_ns": 0,
            "source": "recorder",
            "times": "host",
            "readiness": "per-parameter",
            **metadata,
        },
        "parameters": [{"name": "a", "bytes": 8}, {"name": "b", "bytes": 8}],
        "iterations": iterations,
    }


def worked_iteration(number: int) -> dict:
    """The two-rank iteration several tests work out by hand, numbered ``number``.

    Rank 0 | rank 1, in ms: forward 0 | 1, backward 10 | 11 (rank 1 starts last), gradient
    a 14 | 16 and b 12 | 13, buckets 0 and 1 issued 12.5, 14.5 | 13.5, 16.5 and complete at
    16 and 18 on both, backward return 18.5, optimizer 19 to 21.
    """
    return {
        "iteration": number,
        "other_load": 0.0,
        "ranks": [
            two_parameter_rank(0, 0, 10, 14, 12, (12.5, 14.5), (16, 18), 18.5, (19, 21)),
            two_parameter_rank(1, 1, 11, 16, 13, (13.5, 16.5), (16, 18), 18.5, (19, 21)),
        ],
    }


#: The four step quantities every prediction and comparison reports, written out by hand.
QUANTITY_NAMES = {"backward_return_ms", "communication_end_ms", "exposed_tail_ms", "step_ms"}
