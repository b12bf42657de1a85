"""An imported profile as an overlap-lab trace document (format version 1), where the data allows.

Field by field, per iteration (``ProfilerStep#N``) and imported rank:

- ``forward_start``: ``DistributedDataParallel.forward`` starts (host);
  ``backward_start``: the last forward returns (host; ``loss.backward()`` is
  called right after);
- ``backward_return``: the later of backward end and communication end, i.e.
  when DDP's wait for every bucket is over *on the device*;
- ``optimizer_start`` / ``optimizer_end``: the ``Optimizer.step#...`` range,
  moved no earlier than ``backward_return`` (on GPUs the host runs ahead of the
  device; version 1 has one clock and requires this order);
- buckets in launch order: ``issue`` the launching op's start, ``enqueued`` its
  return (at most the run's end), ``complete`` the run's end (kernel or gloo range);
- beside them (extra keys, ignored by version-1 readers): each bucket's
  ``start`` (when its kernel or gloo range began), the rank's ``backward_end``
  (the last backward compute) and ``overlap`` (measured on the profile's
  compute), so that ``summary`` of the converted trace equals the profile's;
- ``parameters`` and ``grad_ready``: a profile names no parameters, so each
  bucket becomes one pseudo-parameter ``bucket B`` of the bucket's bytes, ready at
  the end of the last backward compute that ended before its all-reduce started
  (the all-reduce waits for its gradients; made non-decreasing in bucket order).
  Per-parameter readiness is not expressible, so the fit's per-layer backward
  terms see buckets, not layers.

Ranks on one machine share the profiler's clock; ranks on different machines
need not (the profiler does not align them), so cross-rank quantities of such a
conversion (``measure``'s latest launch and end over ranks) are only as good as
the machines' clocks. The per-rank summary does not depend on it.

What version 1 cannot say, kept in the extra top-level ``profile`` block (readers
of version 1 ignore unknown keys) and the metadata's ``note``: that times are
device times; the collectives that are not buckets; the approximate readiness
from ``AccumulateGrad``; the original rank numbers when only some ranks were
imported (version 1 numbers ranks 0..n-1 and needs one entry per rank, so
``world_size`` becomes the number of imported ranks); and what a profile does not
record: ``cpu_count``, ``threads_per_rank`` (written as 1) and ``bucket_cap_mb``
(null). Iterations whose bucket layout (count and sizes) differs from the most
common one are left out, as version 1 holds one layout.

Proposed for version 2 (not implemented here; ``schema.py`` is unchanged):
``metadata.times`` (``"device"`` | ``"host"``) and ``metadata.source``
(``"recorder"`` | ``"torch.profiler"``); ``metadata.gpus``, ``nccl_version``;
optional ``cpu_count``, ``threads_per_rank``, ``bucket_cap_mb``; per rank
``rank_in_run`` (so a subset of ranks needs no renumbering) and
``world_size`` distinct from the number of rank entries; ``grad_ready`` optional
and ``grad_ready_approximate`` (a list of times not tied to parameters); per
bucket ``start`` (the collective begins running, distinct from ``issue``);
per rank ``collectives``: ``[{name, bytes, issue, start, complete}]`` for
collectives that are not buckets; per rank ``compute``: intervals of backward
compute, so overlap can be measured from the file.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .profiler import Profile, RankStep
from .schema import FORMAT, VERSION, validate_trace


def _layout(step: RankStep) -> tuple[int, ...]:
    return tuple(int(b.bytes) for b in step.buckets)


def _readiness(step: RankStep) -> list[float]:
    ends = step.compute_ends
    out: list[float] = []
    for b in step.buckets:
        before = ends[ends <= b.start_us]
        t = float(before.max()) if before.size else step.forward_end_us
        out.append(max(t, out[-1] if out else t))
    return out


def to_trace_document(profile: Profile) -> dict[str, Any]:
    """A version-1 trace document of ``profile`` (validated); see the module doc for the mapping."""
    steps = {(s.iteration, r.rank): s for r in profile.ranks for s in r.steps}
    ranks = [r.rank for r in profile.ranks]
    layouts: dict[int, tuple[int, ...] | None] = {}
    for n in profile.iterations:
        seen = {_layout(steps[n, r]) for r in ranks}
        layouts[n] = seen.pop() if len(seen) == 1 else None
    counts = Counter(v for v in layouts.values() if v is not None)
    if not counts:
        raise ValueError("no iteration has the same buckets on every imported rank")
    layout = counts.most_common(1)[0][0]
    kept = [n for n in profile.iterations if layouts[n] == layout]
    dropped = [n for n in profile.iterations if layouts[n] != layout]
    origin_us = min(steps[n, r].forward_start_us for n in kept for r in ranks)

    def ms(us: float) -> float:
        return round((us - origin_us) / 1000.0, 3)

    names = [f"bucket {b}" for b in range(len(layout))]
    iterations = []
    others = []
    for n in kept:
        entries = []
        for k, r in enumerate(ranks):
            s = steps[n, r]
            back_return = max(s.backward_end_us, s.communication_end_us)
            opt_start = s.optimizer_start_us if s.optimizer_start_us is not None else s.step_end_us
            opt_end = s.optimizer_end_us if s.optimizer_end_us is not None else s.step_end_us
            opt_start = max(opt_start, back_return)
            if s.optimizer_device_end_us is not None:
                opt_end = max(opt_end, s.optimizer_device_end_us)
            opt_end = max(opt_end, opt_start)
            ready = [min(max(t, s.forward_end_us), back_return) for t in _readiness(s)]
            entries.append(
                {
                    "rank": k,
                    "forward_start": ms(s.forward_start_us),
                    "backward_start": ms(s.forward_end_us),
                    "backward_return": ms(back_return),
                    "optimizer_start": ms(opt_start),
                    "optimizer_end": ms(opt_end),
                    "grad_ready": [ms(t) for t in ready],
                    "buckets": [
                        {
                            "index": b,
                            "bytes": int(c.bytes),
                            "parameters": [names[b]],
                            "issue": ms(c.launch_us),
                            "enqueued": ms(min(c.launch_end_us, c.end_us)),
                            "complete": ms(max(c.end_us, min(c.launch_end_us, c.end_us))),
                            "start": ms(c.start_us),
                        }
                        for b, c in enumerate(s.buckets)
                    ],
                    "backward_end": ms(s.backward_end_us),
                    "overlap": None if s.overlap is None else round(s.overlap, 4),
                }
            )
            others.append(
                {
                    "iteration": n,
                    "rank": r,
                    "collectives": [
                        {
                            "name": c.kind,
                            "bytes": c.bytes,
                            "issue": ms(c.launch_us),
                            "start": ms(c.start_us),
                            "complete": ms(c.end_us),
                        }
                        for c in s.others
                    ],
                    "grad_ready_approximate": [ms(t) for t in s.readiness_us],
                }
            )
        iterations.append({"iteration": n, "other_load": None, "ranks": entries})
    first = profile.ranks[0]
    meta = first.metadata
    times = "device" if profile.device_times else "host"
    note = (
        f"Imported from torch.profiler traces ({', '.join(r.name for r in profile.ranks)}); "
        f"{times} times on the profiler's timeline. A profile names no parameters: each bucket "
        "is one pseudo-parameter, ready when the last backward compute before its all-reduce "
        "ended. cpu_count and threads_per_rank are not in a profile (written as 1), nor the "
        "bucket cap (null). Not expressible in version 1, kept in the 'profile' block: "
        "collectives that are not buckets, approximate readiness from AccumulateGrad"
        + (
            f", the run's rank numbers {ranks} of world size {first.world_size}"
            if first.world_size not in (None, len(ranks))
            else ""
        )
        + "."
    )
    if dropped:
        note += f" Left out iterations {dropped}: their buckets differ from the others'."
    document = {
        "format": FORMAT,
        "version": VERSION,
        "time_unit": "ms",
        "metadata": {
            "torch_version": str(meta.get("torch_version", "unknown")),
            "backend": first.backend,
            "device": "cuda" if profile.device_times else "cpu",
            "world_size": len(ranks),
            "bucket_cap_mb": None,
            "cpu_count": 1,
            "threads_per_rank": 1,
            "model": "",
            "clock": f"torch.profiler timeline ({times} times), microseconds converted to ms",
            "origin_ns": round(origin_us * 1000),
            "note": note,
        },
        "parameters": [{"name": nm, "bytes": b} for nm, b in zip(names, layout, strict=True)],
        "iterations": iterations,
        "profile": {
            "source": "torch.profiler",
            "times": times,
            "files": [r.name for r in profile.ranks],
            "ranks": ranks,
            "world_size": first.world_size,
            "gpus": meta.get("gpus", []),
            "nccl_version": meta.get("nccl_version"),
            "readiness": (
                "grad_ready holds one pseudo-parameter per bucket; grad_ready_approximate "
                "holds the ends of AccumulateGrad ops (host times, not tied to parameters)"
            ),
            "per_rank": others,
            "notes": list(profile.notes),
        },
    }
    validate_trace(document)
    return document
