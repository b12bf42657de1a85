"""An imported profile as an overlap-lab trace document (format version 2).

Field by field, per iteration (``ProfilerStep#N``) and imported rank:

- ``forward_start``: ``DistributedDataParallel.forward`` starts (host);
  ``backward_start``: the last forward returns (host; ``loss.backward()`` is
  called right after);
- ``backward_return``: the later of backward end and communication end, i.e.
  when DDP's wait for every bucket is over *on the device*;
- ``optimizer_start`` / ``optimizer_end``: the ``Optimizer.step#...`` range,
  moved no earlier than ``backward_return`` (on GPUs the host runs ahead of the
  device; the format has one clock and requires this order);
- buckets in launch order: ``issue`` the launching op's start, ``enqueued`` its
  return (at most the run's end), ``start`` and ``complete`` the run's start and
  end (kernel or gloo range), and ``peer_wait`` when every rank was imported
  (``profiler_ranks``);
- ``backward_end`` (the last backward compute), ``overlap`` (measured on the
  profile's compute), ``collectives`` (those that are not buckets) and
  ``grad_ready_approximate`` (when each AccumulateGrad's gradient was ready:
  on GPUs on the device, see ``profiler_backward``), so that ``summary`` of the
  imported trace equals the profile's;
- ``parameters`` and ``grad_ready``: a profile names no parameters, so each
  bucket becomes one pseudo-parameter ``bucket B`` of the bucket's bytes, ready
  when the last backward work autograd launched before the bucket's all-reduce
  ends (on GPUs on the device: the kernel that produced its last gradient; see
  ``profiler_backward``; made non-decreasing in bucket order),
  and ``metadata.readiness`` says ``"per-bucket, approximate"``: the fit's
  per-layer backward terms see buckets, not layers.

Ranks on one machine share the profiler's clock; ranks on different machines
need not (the profiler does not align them), so cross-rank quantities of such a
conversion (``measure``'s latest launch and end over ranks) are only as good as
the machines' clocks. The per-rank summary does not depend on it.

Metadata: ``source`` (torch.profiler), ``times`` (device when the profile has
kernels), the GPUs, NCCL and torch versions where the files say, the run's rank
numbers (``ranks_in_run``) and world size (``run_world_size``) when only some
ranks were imported, and the files. A profile does not record ``cpu_count``,
``threads_per_rank`` or ``bucket_cap_mb``: they are null. Iterations whose
bucket layout (count and sizes) differs from the most common one are left out,
as a trace holds one layout. A bucket whose size the profile does not give
(no ``In msg nelems`` on its kernel, no shapes on its op) keeps its times with
``bytes`` null, and so does its pseudo-parameter; the fit then reads no
bandwidth from it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .profiler import Profile, RankStep
from .schema import FORMAT, VERSION, validate_trace


def _layout(step: RankStep) -> tuple[int | None, ...]:
    """The step's bucket sizes in launch order (None where the profile does not give one)."""
    return tuple(None if b.bytes is None else int(b.bytes) for b in step.buckets)


def _readiness(step: RankStep) -> list[float]:
    """Each bucket's readiness (``RankStep.bucket_ready_us``), non-decreasing in bucket order."""
    out: list[float] = []
    for t in step.bucket_ready_us:
        out.append(max(t, out[-1] if out else t))
    return out


def to_trace_document(profile: Profile) -> dict[str, Any]:
    """A version-2 trace document of ``profile`` (validated); see the module doc for the mapping."""
    steps = {(s.iteration, r.rank): s for r in profile.ranks for s in r.steps}
    ranks = [r.rank for r in profile.ranks]
    layouts: dict[int, tuple[int | None, ...] | None] = {}
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
                            "bytes": None if c.bytes is None else int(c.bytes),
                            "parameters": [names[b]],
                            "issue": ms(c.launch_us),
                            "enqueued": ms(min(c.launch_end_us, c.end_us)),
                            "complete": ms(max(c.end_us, min(c.launch_end_us, c.end_us))),
                            "start": ms(c.start_us),
                            **(
                                {"peer_wait": round(s.peer_wait_us[b] / 1000, 6)}
                                if s.peer_wait_us is not None
                                else {}
                            ),
                        }
                        for b, c in enumerate(s.buckets)
                    ],
                    "backward_end": ms(s.backward_end_us),
                    "overlap": None if s.overlap is None else round(s.overlap, 4),
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
        "is one pseudo-parameter, ready when the last backward work launched before its "
        "all-reduce ended. A profile does not record the cores, threads per rank or bucket cap."
    )
    if dropped:
        note += f" Left out iterations {dropped}: their buckets differ from the others'."
    note = " ".join([note, *profile.notes])[:10000]
    metadata: dict[str, Any] = {
        "torch_version": str(meta.get("torch_version", "unknown")),
        "backend": first.backend,
        "device": "cuda" if profile.device_times else "cpu",
        "world_size": len(ranks),
        "bucket_cap_mb": None,
        "cpu_count": None,
        "threads_per_rank": None,
        "model": "",
        "clock": f"torch.profiler timeline ({times} times), microseconds converted to ms",
        "origin_ns": round(origin_us * 1000),
        "note": note,
        "source": "torch.profiler",
        "times": times,
        "readiness": "per-bucket, approximate",
        "gpus": [str(g) for g in meta.get("gpus", [])][:64],
        "nccl_version": meta.get("nccl_version"),
        "profile_files": list(dict.fromkeys(r.file or r.name for r in profile.ranks)),
    }
    if first.world_size is not None and first.world_size != len(ranks):
        metadata["run_world_size"] = first.world_size
    if ranks != list(range(len(ranks))):
        metadata["ranks_in_run"] = ranks
    document = {
        "format": FORMAT,
        "version": VERSION,
        "time_unit": "ms",
        "metadata": metadata,
        "parameters": [{"name": nm, "bytes": b} for nm, b in zip(names, layout, strict=True)],
        "iterations": iterations,
    }
    validate_trace(document)
    return document
