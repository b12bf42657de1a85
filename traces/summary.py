"""Per iteration and rank: buckets, backward end, communication end, exposed tail, step, overlap.

One shape for recorded traces and imported profiles alike (what
``overlap-lab summary --json`` prints)::

    {"iterations": [{"iteration": N, "ranks": [{"rank": R,
        "buckets": [{"index": I, "mib": X, "start_ms": S, "end_ms": E}, ...],
        "backward_end_ms": ..., "communication_end_ms": ..., "exposed_tail_ms": ...,
        "step_ms": ..., "overlap": ...}]}],
     "median": {"backward_end_ms": ..., ...}}

Times are ms from the start of that rank's forward in that iteration. A bucket's
start and end are when its all-reduce ran: in an imported profile the kernel's
(NCCL) or gloo range's start and end, in a recorded trace the launch (``issue``;
when gloo's worker thread took it up is not recorded) and ``complete``; both add
``launch_ms``, and, for an imported profile of every rank of a GPU run,
``peer_wait_ms``: how long the rank's all-reduce kernel waited for the last
rank's to start (per bucket, and summed per rank; ``profiler_ranks``).
**Backward end** is the last backward compute in a profile and
the last gradient ready in a recorded trace; **overlap** is the share of the
buckets' all-reduce time (their union) during which compute runs, for a
recorded trace taking compute to run from backward start to backward end.
Each rank's entry is that rank's own view; ``measure`` gives the cross-rank
quantities the model is fitted to. ``median`` is over every (iteration, rank).
"""

from __future__ import annotations

import statistics
from typing import Any

import numpy as np

from .intervals import intersection, merge
from .load import Trace, from_document
from .profiler import Profile, RankStep
from .schema import MIB, UNKNOWN_SIZES, validate_trace

QUANTITIES = ("backward_end_ms", "communication_end_ms", "exposed_tail_ms", "step_ms", "overlap")


def _ms(us: float) -> float:
    return round(us / 1000.0, 3)


def _rank_from_step(step: RankStep) -> dict[str, Any]:
    origin = step.forward_start_us
    overlap = step.overlap
    return {
        "rank": step.rank,
        "buckets": [
            {
                "index": i,
                "mib": None if b.bytes is None else round(b.bytes / MIB, 6),
                "start_ms": _ms(b.start_us - origin),
                "end_ms": _ms(b.end_us - origin),
                "launch_ms": _ms(b.launch_us - origin),
                **(
                    {} if step.peer_wait_us is None else {"peer_wait_ms": _ms(step.peer_wait_us[i])}
                ),
            }
            for i, b in enumerate(step.buckets)
        ],
        **({} if step.peer_wait_us is None else {"peer_wait_ms": _ms(sum(step.peer_wait_us))}),
        "backward_end_ms": _ms(step.backward_end_us - origin),
        "communication_end_ms": _ms(step.communication_end_us - origin),
        "exposed_tail_ms": _ms(step.exposed_tail_us),
        "step_ms": _ms(step.step_us),
        "overlap": None if overlap is None else round(overlap, 4),
        "other_collectives": [
            {
                "name": c.kind,
                "mib": None if c.bytes is None else round(c.bytes / MIB, 6),
                "start_ms": _ms(c.start_us - origin),
                "end_ms": _ms(c.end_us - origin),
            }
            for c in step.others
        ],
        # AccumulateGrad's gradients ready (device side on GPUs), not tied to parameters.
        "grad_ready_approximate_ms": [_ms(t - origin) for t in step.readiness_us],
    }


def _rank_from_trace(trace: Trace, i: int, r: int) -> dict[str, Any]:
    # A trace imported from a profile carries each bucket's ``start``, the rank's
    # ``backward_end``, ``overlap`` (measured on the profile's compute), the other
    # collectives and AccumulateGrad's ends; a recorded trace has none of them.
    entry = trace.document["iterations"][i]["ranks"][r]
    origin = trace.forward_start[i, r]
    issue, complete = trace.issue[i, r], trace.complete[i, r]
    starts = [b.get("start", issue[k]) for k, b in enumerate(entry["buckets"])]
    waits = [b["peer_wait"] for b in entry["buckets"] if "peer_wait" in b]
    waits = waits if len(waits) == len(entry["buckets"]) else None
    backward_start = trace.backward_start[i, r]
    backward_end = float(entry.get("backward_end", trace.grad_ready[i, r].max()))
    comm_end = float(complete.max())
    if "overlap" in entry:
        overlap = entry["overlap"]
    else:
        comm = merge(np.stack([issue, complete], axis=1))
        total = float((comm[:, 1] - comm[:, 0]).sum())
        compute = np.array([[backward_start, backward_end]])
        overlap = None if total <= 0 else round(intersection(comm, compute) / total, 4)
    return {
        "rank": r,
        "buckets": [
            {
                "index": b,
                "mib": None
                if np.isnan(trace.bucket_bytes[b])
                else round(float(trace.bucket_bytes[b]) / MIB, 6),
                "start_ms": round(float(starts[b] - origin), 3),
                "end_ms": round(float(complete[b] - origin), 3),
                "launch_ms": round(float(issue[b] - origin), 3),
                **({"peer_wait_ms": round(waits[b], 3)} if waits is not None else {}),
            }
            for b in range(trace.n_buckets)
        ],
        **({"peer_wait_ms": round(sum(waits), 3)} if waits is not None else {}),
        "backward_end_ms": round(backward_end - origin, 3),
        "communication_end_ms": round(comm_end - origin, 3),
        "exposed_tail_ms": round(max(0.0, comm_end - backward_end), 3),
        "step_ms": round(float(trace.optimizer_end[i, r] - origin), 3),
        "overlap": overlap,
        **(
            {
                "other_collectives": [
                    {
                        "name": c["name"],
                        "mib": None if c["bytes"] is None else round(c["bytes"] / MIB, 6),
                        "start_ms": round(c["start"] - origin, 3),
                        "end_ms": round(c["complete"] - origin, 3),
                    }
                    for c in entry["collectives"]
                ]
            }
            if "collectives" in entry
            else {}
        ),
        **(
            {"grad_ready_approximate_ms": [round(t - origin, 3) for t in approximate]}
            if (approximate := entry.get("grad_ready_approximate")) is not None
            else {}
        ),
    }


def _medians(iterations: list[dict[str, Any]]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for key in QUANTITIES:
        values = [r[key] for it in iterations for r in it["ranks"] if r[key] is not None]
        out[key] = round(statistics.median(values), 4) if values else None
    return out


def summary(source: Profile | Trace | dict[str, Any]) -> dict[str, Any]:
    """The summary of an imported profile, a loaded trace or a trace document (see module doc)."""
    if isinstance(source, Profile):
        by_iteration: dict[int, list[dict[str, Any]]] = {n: [] for n in source.iterations}
        for rank in source.ranks:
            for step in rank.steps:
                by_iteration[step.iteration].append(_rank_from_step(step))
        iterations = [{"iteration": n, "ranks": ranks} for n, ranks in by_iteration.items()]
        times = "device" if source.device_times else "host"
        kind = "torch.profiler"
        ranks = [r.rank for r in source.ranks]
        first = source.ranks[0]
        run = {
            "backend": first.backend,
            "world_size": first.world_size,
            **{k: v for k, v in first.metadata.items() if k not in ("rank", "world_size")},
        }
        notes = list(source.notes)
    else:
        if isinstance(source, dict):
            validate_trace(source)
            source = from_document(source)
        iterations = [
            {
                "iteration": int(source.iteration[i]),
                "ranks": [_rank_from_trace(source, i, r) for r in range(source.n_ranks)],
            }
            for i in range(source.n_iterations)
        ]
        meta = source.metadata
        run = {
            k: meta[k]
            for k in ("backend", "world_size", "torch_version", "device", "gpus", "nccl_version")
            if k in meta
        }
        if "run_world_size" in meta:
            run["world_size"] = meta["run_world_size"]
        notes = [] if source.sizes_known else [f"{UNKNOWN_SIZES}; times hold"]
        times = "device" if source.device_times else "host"
        kind = "torch.profiler" if source.source == "torch.profiler" else "overlap-lab recorder"
        old_block = source.document.get("profile", {})  # an import written before version 2
        ranks = meta.get("ranks_in_run", old_block.get("ranks", list(range(source.n_ranks))))
        for it in iterations:
            for entry in it["ranks"]:
                entry["rank"] = ranks[entry["rank"]]
    return {
        "source": kind,
        "times": times,
        "ranks": ranks,
        "run": run,
        "notes": notes,
        "iterations": iterations,
        "median": _medians(iterations),
    }


def summary_text(data: dict[str, Any]) -> str:
    """The summary as lines a person reads (what ``overlap-lab summary`` prints)."""
    run = data.get("run", {})
    described = ", ".join(
        str(v) if k != "world_size" else f"world size {v}"
        for k, v in run.items()
        if k in ("backend", "world_size", "nccl_version") and v is not None
    )
    gpus = ", ".join(run.get("gpus", []))
    lines = [
        f"{data['source']}, {data['times']} times, ranks {', '.join(map(str, data['ranks']))} "
        "(ms from each rank's forward start)",
        *([described] if described else []),
        *([f"GPUs: {gpus}"] if gpus else []),
        *(f"note: {n}" for n in data.get("notes", [])),
    ]
    for it in data["iterations"]:
        lines.append(f"iteration {it['iteration']}")
        for r in it["ranks"]:
            overlap = "-" if r["overlap"] is None else f"{r['overlap']:.0%}"
            wait = "" if "peer_wait_ms" not in r else f", peer wait {r['peer_wait_ms']:.3f}"
            lines.append(
                f"  rank {r['rank']}: backward end {r['backward_end_ms']:.3f}, communication end "
                f"{r['communication_end_ms']:.3f}, exposed tail {r['exposed_tail_ms']:.3f}, "
                f"step {r['step_ms']:.3f}, overlap {overlap}{wait}"
            )
            for b in r["buckets"]:
                size = "size unknown" if b["mib"] is None else f"{b['mib']:.3f} MiB"
                wait = "" if "peer_wait_ms" not in b else f" (peer wait {b['peer_wait_ms']:.3f})"
                lines.append(
                    f"    bucket {b['index']}: {size}, all-reduce "
                    f"{b['start_ms']:.3f} to {b['end_ms']:.3f}{wait}"
                )
            for c in r.get("other_collectives", []):
                size = "" if c["mib"] is None else f" {c['mib']:.3f} MiB,"
                lines.append(
                    f"    {c['name']} (not a bucket):{size} "
                    f"{c['start_ms']:.3f} to {c['end_ms']:.3f}"
                )
    m = data["median"]

    def show(key: str, fmt: str) -> str:
        return "-" if m[key] is None else format(m[key], fmt)

    lines.append(
        f"median: backward end {show('backward_end_ms', '.3f')}, communication end "
        f"{show('communication_end_ms', '.3f')}, exposed tail {show('exposed_tail_ms', '.3f')}, "
        f"step {show('step_ms', '.3f')}, overlap {show('overlap', '.0%')}"
    )
    return "\n".join(lines)
