"""A trace's run in words: the machine, where the run came from, what a profile cannot show,
and which of the model's terms a fit on one bucket layout could fit.

What the trace viewer says beside the chart; numbers come from the trace and the
fit, never computed here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from traces import TERMS, Fit, Trace
from traces.schema import UNKNOWN_SIZES

from .model import WhatIf

#: What a run's ``OMP_WAIT_POLICY`` meant for its threads (the recorder notes it).
WAIT_POLICY_WORDS = {
    "PASSIVE": "OpenMP threads sleep while they wait (OMP_WAIT_POLICY=PASSIVE)",
    "ACTIVE": "OpenMP threads spin while they wait (OMP_WAIT_POLICY=ACTIVE)",
}


def machine_summary(trace: Trace) -> str:
    """What kind of machine the trace came from, in words, from its metadata.

    Only what the file says: a profile records no cores or threads per rank (an
    import before format version 2 wrote 1 for each), and names torch only sometimes.
    """
    md = trace.metadata
    run = run_metadata(trace)
    cores = run["cpu_count"]
    threads = run["threads_per_rank"]
    device = md.get("device", "cpu")
    parts = [
        f"{md.get('world_size', trace.n_ranks)} ranks",
        f"{md.get('backend', 'unknown')} backend",
        f"device {device}",
    ]
    if run["gpus"]:
        parts.append(gpu_words(run["gpus"]))
    if cores:
        parts.append(f"{cores} CPU core{'s' * (cores != 1)}")
    if threads:
        parts.append(f"{threads} thread{'s' * (threads != 1)} per rank")
    policy = md.get("omp_wait_policy")
    if isinstance(policy, str) and policy:
        parts.append(WAIT_POLICY_WORDS.get(policy.upper(), f"OMP_WAIT_POLICY={policy}"))
    if md.get("torch_version") not in (None, "", "unknown"):
        parts.append(f"torch {md['torch_version']}")
    return ", ".join(parts)


def shares_cores(trace: Trace) -> bool:
    """Whether compute and communication share the CPU cores (a CPU run with few cores)."""
    md = trace.metadata
    cores = md.get("cpu_count")
    threads = md.get("threads_per_rank") or 1
    if md.get("device", "cpu") != "cpu":
        return False
    # Each rank's compute threads plus gloo's worker threads: more than the cores.
    return cores is None or cores < trace.n_ranks * (threads + 1)


def cores_known(trace: Trace) -> bool:
    """Whether the file says how many CPU cores the run had (a profile does not)."""
    return bool(run_metadata(trace)["cpu_count"])


# --- where the run came from, and what a profile cannot show ---------------------------------


def run_metadata(trace: Trace) -> dict[str, Any]:
    """Where the trace's run came from and how it was timed, whichever way the file says it.

    The one place the view reads it. Format version 2 says it in ``metadata``
    (``source``, ``times``, ``readiness``, ``gpus``, ``backend``, ``world_size``,
    ``run_world_size``, ``ranks_in_run``, ``nccl_version``, ``profile_files``), and
    ``Trace`` reads source, times and readiness for both versions; a profile imported
    before version 2 says the rest in a top-level ``profile`` block (``gpus``, the run's
    ``world_size``, ``ranks``, ``files``, ``nccl_version``), and it wrote ``cpu_count``
    and ``threads_per_rank`` as 1 for want of a value, so those read as unknown.
    ``world_size`` here is the number of rank entries in the file, ``run_world_size``
    the run's.
    """
    md = trace.metadata
    old = trace.document.get("profile")
    old = old if isinstance(old, dict) else {}
    source = trace.source
    placeholders = source == "torch.profiler" and "source" not in md
    n = trace.n_ranks
    return {
        "source": source,
        "times": "device" if trace.device_times else "host",
        "readiness": md.get(
            "readiness",
            "per-bucket, approximate" if trace.approximate_readiness else "per-parameter",
        ),
        "gpus": [str(g) for g in md.get("gpus", old.get("gpus")) or ()],
        "backend": str(md.get("backend", "unknown")),
        "world_size": n,
        "run_world_size": int(md.get("run_world_size", old.get("world_size")) or n),
        "ranks_in_run": [int(r) for r in md.get("ranks_in_run", old.get("ranks")) or range(n)],
        "nccl_version": md.get("nccl_version", old.get("nccl_version")),
        "profile_files": [str(f) for f in md.get("profile_files", old.get("files")) or ()],
        "cpu_count": None if placeholders else md.get("cpu_count"),
        "threads_per_rank": None if placeholders else md.get("threads_per_rank"),
    }


def listing(items: Sequence[object]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    words = [str(i) for i in items]
    if len(words) <= 2:
        return " and ".join(words)
    return f"{', '.join(words[:-1])} and {words[-1]}"


def gpu_words(gpus: Sequence[str]) -> str:
    """``"GPU: NVIDIA A100"``, ``"GPUs: 8 × NVIDIA A100"``, ``"GPUs: 2 × A, 1 × B"``."""
    counts: dict[str, int] = {}
    for g in gpus:
        counts[g] = counts.get(g, 0) + 1
    if len(gpus) == 1:
        return f"GPU: {gpus[0]}"
    return "GPUs: " + ", ".join(f"{k} × {name}" for name, k in counts.items())


def run_description(trace: Trace) -> str:
    """What the run was, in words: where the trace comes from, the ranks, backend, GPUs, times."""
    run = run_metadata(trace)
    n = trace.n_ranks
    ranks, world = run["ranks_in_run"], run["run_world_size"]
    if run["source"] == "torch.profiler":
        files = run["profile_files"]
        head = "Imported from torch.profiler"
        if files:
            head += f": {len(files)} file{'s' * (len(files) != 1)} ({listing(files)})"
    else:
        head = "Recorded by overlap-lab's recorder"
    rank_word = "rank" if len(ranks) == 1 else "ranks"
    if world > n:
        who = (
            f"{rank_word} {listing(ranks)} of a run of {world} (the other ranks are not in "
            "the file; every all-reduce also waited for them)"
        )
    else:
        who = f"{rank_word} {listing(ranks)}, the whole run" if n > 1 else "the run's one rank"
    backend = f"{run['backend']} backend"
    if run["nccl_version"]:
        backend += f", NCCL {run['nccl_version']}"
    parts = [f"{head}, {who}", backend]
    if run["gpus"]:
        parts.append(gpu_words(run["gpus"]))
    if run["times"] == "device":
        times = (
            "Device times: when the GPU ran each kernel (the all-reduces and backward's "
            "compute), on the profiler's timeline."
            if run["source"] == "torch.profiler"
            else "Device times (CUDA events)."
        )
    else:
        times = (
            "Host times: when the CPU ran each op, on the profiler's timeline (no GPU kernels)."
            if run["source"] == "torch.profiler"
            else "Host times: each rank's clock on the CPU."
        )
    return f"{'; '.join(parts)}. {times}"


def profile_limits(trace: Trace) -> str | None:
    """What a profile cannot show and what that does to the fit (None for a recorded trace)."""
    run = run_metadata(trace)
    if run["readiness"] == "per-parameter":
        return None
    b = trace.n_buckets
    names = f'"{trace.parameter_names[0]}"' + (
        f' to "{trace.parameter_names[-1]}"' if b > 1 else ""
    )
    when = (
        " (a host time: when the CPU finished the op, not when the device did)"
        if run["times"] != "device"
        else ""
    )
    return (
        "What a profile cannot show: which parameter each gradient belongs to, and when "
        "each one was ready. A profile names no parameters, so each of the "
        f"{b} bucket{'s' * (b != 1)} is one pseudo-parameter ({names}), ready when the last "
        f"backward compute launched before its all-reduce ended: approximate{when}. Nor does it "
        "record the machine's CPU cores, threads per rank or the bucket cap. What that does "
        "to the fit: the per-layer backward terms are fitted per bucket, not per layer (all "
        "the backward between two all-reduces is one term), and a what-if cap can only "
        "group whole measured buckets, never split one."
        + (
            ""
            if trace.sizes_known
            else f" Nor does this one give the buckets' sizes ({UNKNOWN_SIZES}): the buckets "
            "and their times are drawn as measured, but no bandwidth or per-transfer overhead "
            "can be fitted to them, so no model and no what-if are drawn."
        )
    )


def layout_words(trace: Trace) -> str:
    """The layout in words; a profile's pseudo-parameters are buckets, so by their sizes."""
    if run_metadata(trace)["readiness"] == "per-parameter":
        return trace.layout
    b = trace.n_buckets
    if not np.isfinite(trace.bucket_bytes).any():
        return f"{b} bucket{'s' * (b != 1)}, size unknown"
    if not trace.sizes_known:
        sizes = [
            "size unknown" if np.isnan(x) else f"{float(x) / (1024 * 1024):.3g} MiB"
            for x in trace.bucket_bytes
        ]
        return f"{b} bucket{'s' * (b != 1)} of {listing(sizes)}"
    mib = [f"{float(x) / (1024 * 1024):.3g}" for x in trace.bucket_bytes]
    return f"{b} bucket{'s' * (b != 1)} of {listing(mib)} MiB"


def what_if_layout(w: WhatIf, trace: Trace) -> str:
    """The what-if's layout in words; for a profile, which measured buckets each one holds."""
    if run_metadata(trace)["readiness"] == "per-parameter":
        return w.layout
    # A profile's pseudo-parameter p is its measured bucket p.
    mib = [
        f"{sum(float(trace.parameter_bytes[p]) for p in b) / (1024 * 1024):.3g}"
        for b in w.bucket_parameters
    ]
    groups = ", ".join("+".join(str(int(p)) for p in sorted(b)) for b in w.bucket_parameters)
    n = w.n_buckets
    return f"{n} bucket{'s' * (n != 1)} of {listing(mib)} MiB (measured buckets {groups})"


# --- what a fit on one bucket layout could fit --------------------------------------------------

#: Each of the fit's reported terms (``fit.TERMS``) as the page names it.
TERM_LABELS = {
    "backward_total_ms": "Backward, all layers",
    "overhead_ms": "Per-transfer overhead",
    "bandwidth_gbps": "Bandwidth",
    "contention": "Contention, backward",
    "rank_contention": "Contention by rank",
    "transfer_contention": "Contention, transfers",
    "enqueue_ms": "Enqueue",
    "finalize_ms": "Finalize",
    "finalize_ms_per_mib": "Finalize per MiB of the last bucket",
    "copy_back_ms_per_mib": "Copy-back per MiB",
}


def fit_terms(f: Fit, per_bucket: bool = False) -> list[dict[str, Any]]:
    """Each term of ``TERMS``: whether the fitted data pinned it down, and from what.

    The same tests as the fit's own (``Fit.contention_identified``,
    ``transfer_contention_identified``, ``separable``, ``transfer_source``,
    ``backward_source``) and ``identify.refusal``'s size range; ``per_bucket``: the
    trace's readiness is per bucket (a profile), so backward is fitted per bucket.
    """
    mib = 1024 * 1024
    low, high = (x / mib for x in f.size_range)
    sizes = f"{low:.3g} MiB" if low == high else f"{low:.3g} to {high:.3g} MiB"
    alone = f.backward_source == "alone"
    if f.transfer_source == "isolated":
        transfer = (True, f"from all-reduces timed alone ({sizes}), and only for those sizes")
        bandwidth = transfer
    elif f.separable:
        transfer = (
            True,
            f"from buckets of {sizes} that overlapped backward: they absorb contention, and "
            "hold only for those sizes",
        )
        bandwidth = transfer
    else:
        transfer = (
            False,
            f"every bucket is {sizes}: one size cannot tell overhead from bandwidth (taken as 0)",
        )
        bandwidth = (True, f"only as the average speed of {sizes} buckets, overhead included")
    if f.transfer_source == "isolated":
        # Backward and transfers share one factor, matched to when backward ended.
        unseen = (False, "no fitted layout ran a transfer under backward")
        contention, transfers = (
            (
                (True, "matched to when the fitted layouts' backward ended"),
                (True, "the most slowed rank's backward contention: shared cores slow both alike"),
            )
            if f.contention_identified
            else (unseen, unseen)
        )
    else:
        contention = (
            (True, "from layers seen both with and without a transfer in flight")
            if f.contention_identified
            else (False, "no layer was seen both with and without a transfer in flight")
        )
        transfers = (
            (True, "from transfers that ran while a rank computed, and after")
            if f.transfer_contention_identified
            else (False, "too few transfers ran both while a rank computed and after it")
        )
    backward = (
        True,
        ("from backward timed alone" if alone else "from the gradient intervals free of transfers")
        + (
            ": one term per bucket, not per layer (a profile has no per-layer readiness)"
            if per_bucket
            else ""
        ),
    )
    needs_alone = (False, "needs backward timed alone (overlap-lab record); taken as 0")
    status = {
        "backward_total_ms": backward,
        "overhead_ms": transfer,
        "bandwidth_gbps": bandwidth,
        "contention": contention,
        "rank_contention": contention,
        "transfer_contention": transfers,
        "enqueue_ms": (True, "the median from readiness to launch"),
        "finalize_ms": (True, "the median from the last transfer to backward's return"),
        "finalize_ms_per_mib": (True, "from backward timed alone") if alone else needs_alone,
        "copy_back_ms_per_mib": (True, "from backward timed alone") if alone else needs_alone,
    }
    return [
        {"term": t, "label": TERM_LABELS[t], "fitted": status[t][0], "why": status[t][1]}
        for t in TERMS
    ]
