r"""One profile file: its rank (or each rank of a merged file), cut into ``ProfilerStep``\s.

What is taken from each step is described in ``profiler``; ``profiler_ranks``
puts the ranks of a run's files together.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

from .intervals import merge
from .profiler_backward import BackwardIndex
from .profiler_events import EventCollector, RankedEvents, file_metadata
from .profiler_match import pair_launches, run_times
from .profiler_read import MAX_PROFILE_BYTES, MAX_UNCOMPRESSED_BYTES, ProfileError, read_events
from .profiler_runs import no_steps_message
from .profiler_sizes import collective_bytes, sizes_from_enclosing
from .profiler_steps import Collective, RankProfile, RankStep
from .schema import UNKNOWN_SIZES


def read_profile(
    source: str | Path | bytes,
    *,
    name: str | None = None,
    max_bytes: int = MAX_PROFILE_BYTES,
    max_uncompressed: int = MAX_UNCOMPRESSED_BYTES,
) -> RankProfile:
    """Read one rank's profile file (``.json`` or ``.json.gz``, or its bytes).

    Raises ``ProfileError`` as ``read_profiles`` does, and for a file holding
    several ranks (import it with ``import_profiles``).
    """
    found = read_profiles(source, name=name, max_bytes=max_bytes, max_uncompressed=max_uncompressed)
    if len(found) > 1:
        label = name or (Path(source).name if not isinstance(source, bytes) else "profile")
        raise ProfileError(
            f"{label}: holds {len(found)} ranks ({', '.join(str(r.rank) for r in found)}); "
            "import it with the other files of its run, not as one rank"
        )
    return found[0]


def read_profiles(
    source: str | Path | bytes,
    *,
    name: str | None = None,
    max_bytes: int = MAX_PROFILE_BYTES,
    max_uncompressed: int = MAX_UNCOMPRESSED_BYTES,
) -> list[RankProfile]:
    """Every rank a profile file holds: one, or each rank of a merged file, by rank.

    A merged file (TraceLens: ``args.rank`` on every event) is split by those
    marks, each rank named ``FILE (rank R)``. Raises ``ProfileError`` for a file
    that can't be read (see ``profiler_read``), for one that repeats a
    ``ProfilerStep#N`` without rank marks (several processes merged), and for a
    rank without a DDP step to import, saying what the run is instead
    (``profiler_runs``). A collective that is not a bucket and whose run is not
    found is noted, never fatal; unknown sizes are None and noted.
    """
    label = name or (Path(source).name if not isinstance(source, bytes) else "profile")
    got = RankedEvents(label)
    top = read_events(
        source, got, name=label, max_bytes=max_bytes, max_uncompressed=max_uncompressed
    )
    meta = file_metadata(top)
    collectors = got.collectors()
    if len(collectors) > 1:
        meta.pop("rank", None)  # the file's own rank, if any, is not every rank's
        return [
            replace(rank_profile(c.name, c, {**meta, "rank": r}), file=label)
            for r, c in collectors.items()
        ]
    [(rank, only)] = collectors.items()
    numbers = Counter(n for n, _, _ in only.steps)
    repeated = sorted(n for n, k in numbers.items() if k > 1)
    if repeated:
        raise ProfileError(
            f"{label}: holds ProfilerStep#{repeated[0]} {numbers[repeated[0]]} times "
            f"(on threads {', '.join(map(str, sorted(only.step_threads, key=str)[:8]))}), "
            "so several processes' profiles merged without rank marks (args.rank); "
            "give one file per rank"
        )
    if rank is not None and "rank" not in meta:
        meta["rank"] = rank
    return [rank_profile(label, only, meta)]


def rank_profile(label: str, got: EventCollector, meta: dict) -> RankProfile:
    """One rank's profile from the events kept of it (``got``) and its file's metadata."""
    nccl_kernels = [k for k in got.kernels if k[5] is not None]
    backend = meta.get("backend") or (
        "nccl" if got.nccl_ops or nccl_kernels else "gloo" if got.gloo_ops else "unknown"
    )
    if backend == "nccl":
        launches = sorted(got.nccl_ops or got.c10d_ops, key=lambda o: o[1])
        # Older Kineto puts no sizes on nccl:* ops; the c10d op around one has its shapes.
        launches = sizes_from_enclosing(launches, sorted(got.c10d_ops, key=lambda o: o[1]))
        runs: list[tuple] = nccl_kernels
    else:
        launches = sorted(got.c10d_ops, key=lambda o: o[1])
        runs = got.gloo_ops
    notes: list[str] = []
    if "world_size" not in meta and got.group_size is not None:
        meta = {**meta, "world_size": got.group_size}
        notes.append(f"world size {got.group_size} from the collectives' Group size")

    unrun: list[int] = []  # steps whose bucket all-reduce has no run in the file

    def refuse() -> ProfileError:
        return ProfileError(
            no_steps_message(
                label,
                steps=got.steps,
                launches=launches,
                forwards=len(got.forwards),
                optimizers=got.optimizers,
                world_size=meta.get("world_size"),
                notes=notes,
                unrun=unrun,
            )
        )

    if not got.steps or not launches:
        raise refuse()
    if not runs and meta.get("world_size") == 1:
        raise refuse()
    if not runs:
        wanted = (
            "NCCL kernels (profile with ProfilerActivity.CUDA)"
            if backend == "nccl"
            else ("gloo:* ranges")
        )
        raise ProfileError(
            f"{label}: {len(launches)} collective launches but nothing that ran them (no "
            f"{wanted}); was this profiled during training iterations?"
        )
    paired = pair_launches(launches, runs, got.launches)
    index = _Index(got, launches, {k[2] for k in nccl_kernels})
    rank = meta.get("rank", 0)
    unmatched: dict[str, list[int]] = {}
    steps = []
    for number, s, e in sorted(got.steps, key=lambda t: t[1]):
        step = _step(index, label, number, s, e, launches, paired, rank, notes, unmatched)
        if step is None and notes and notes[-1].endswith(_UNRUN):
            unrun.append(number)
        if step is not None:
            steps.append(step)
    for kind, numbers in sorted(unmatched.items()):
        shown = ", ".join(f"#{n}" for n in numbers[:3]) + (", ..." if len(numbers) > 3 else "")
        notes.append(
            f"{len(numbers)} {kind} launches with no run found (ProfilerStep{shown}): "
            "left out of the collectives, their steps kept"
        )
    if not steps:
        raise refuse()
    if any(b.bytes is None for s in steps for b in s.buckets):
        notes.append(f"{UNKNOWN_SIZES}; times hold, bandwidth cannot be fitted from them")
    if not got.accumulate:
        notes.append("no AccumulateGrad ops: gradient readiness is not in this profile")
    modules = max(len(index.forwards_in(s.step_start_us, s.step_end_us)) for s in steps)
    if modules > 1:
        notes.append(
            f"{modules} DistributedDataParallel.forward ranges a step (nested or side by side "
            "DDP modules): their buckets are listed together in launch order, as the profile "
            "does not say which module's reducer launched each"
        )
    return RankProfile(
        name=label,
        rank=rank,
        backend=backend,
        world_size=meta.get("world_size"),
        device_times=index.device,
        metadata=meta,
        steps=tuple(steps),
        notes=tuple(notes),
    )


_UNRUN = "a bucket all-reduce with nothing that ran it, step left out"


class _Index:
    """The kept events sorted by time, so each step takes its share by bisection."""

    def __init__(self, got: EventCollector, launches: list[tuple], comm_streams: set) -> None:
        self.device = got.saw_kernels
        self.optimizers = sorted(got.optimizers)
        self.forwards = sorted(got.forwards)
        self.launch_ts = [launch[1] for launch in launches]
        self.backward = BackwardIndex(got, comm_streams)

    def between(self, keys: list[float], lo: float, hi: float) -> slice:
        """The positions of the sorted ``keys`` in [lo, hi)."""
        return slice(bisect.bisect_left(keys, lo), bisect.bisect_left(keys, hi))

    def forwards_in(self, s: float, e: float) -> list[tuple[float, float]]:
        """The ``DistributedDataParallel.forward`` ranges starting in [s, e)."""
        return [(a, b) for a, b in self.forwards if s <= a < e]


def _step(
    index: _Index,
    label: str,
    number: int,
    s: float,
    e: float,
    launches: list[tuple],
    paired: list[tuple | None],
    rank: int,
    notes: list[str],
    unmatched: dict[str, list[int]],
) -> RankStep | None:
    device = index.device
    opt = next(((a, b) for a, b in index.optimizers if s <= a < e), None)
    window_end = opt[0] if opt is not None else e
    forwards = index.forwards_in(s, window_end)
    if not forwards:
        notes.append(f"ProfilerStep#{number}: no DistributedDataParallel.forward, left out")
        return None
    # Nested DDP modules (or several side by side): forward ends with the outermost range.
    fwd_start, fwd_end = forwards[0][0], max(b for _, b in forwards)
    buckets, others = [], []
    for k in range(*index.between(index.launch_ts, s, e).indices(len(launches))):
        launch, run = launches[k], paired[k]
        in_backward = fwd_end <= launch[1] < window_end
        if run is None:
            if launch[0] == "all_reduce" and in_backward:
                notes.append(f"ProfilerStep#{number}: {_UNRUN}")
                return None
            unmatched.setdefault(launch[0], []).append(number)
            continue
        start, end = run_times(run)
        if not device and opt is not None and in_backward:
            # DDP lets backward return, and the optimizer start, only once every
            # bucket is reduced; a gloo range closing later was descheduled after
            # the work was done, so its end is capped there.
            end = min(end, opt[0])
        elements = run[6] if len(run) == 8 else run[4]
        dtype = run[7] if len(run) == 8 else run[5]
        if elements is None:
            elements, dtype = launch[4], launch[5]
        size = collective_bytes(elements, dtype, label, f"a {launch[0]} in ProfilerStep#{number}")
        c = Collective(
            kind=launch[0],
            bytes=size,
            launch_us=launch[1],
            launch_end_us=launch[2],
            start_us=start,
            end_us=end,
        )
        (buckets if launch[0] == "all_reduce" and in_backward else others).append(c)
    if not buckets:
        notes.append(f"ProfilerStep#{number}: no all-reduce launched during backward, left out")
        return None
    backward = index.backward.step(s, e, fwd_end, window_end)
    optimizer_device_end = None
    if device and opt is not None:
        pieces = index.backward.pieces
        ends = [p[2] for p in pieces[index.between(index.backward.piece_key, opt[0], opt[1])]]
        optimizer_device_end = max(ends) if ends else None
    if not backward.pieces:
        notes.append(f"ProfilerStep#{number}: no backward compute found, left out")
        return None
    merged = merge(np.array(backward.pieces, float))
    # A bucket is ready no later than the last backward work launched before DDP
    # launched it, nor than the last that ended before its all-reduce began.
    ends = np.sort(np.array([b for _, b in backward.pieces], float))
    ready = []
    for b in buckets:
        before = ends[ends <= b.start_us]
        bounds = [t for t in (backward.ready_at(b.launch_us),) if t is not None]
        bounds += [float(before[-1])] if before.size else []
        ready.append(min(bounds) if bounds else fwd_end)
    return RankStep(
        iteration=number,
        rank=rank,
        step_start_us=s,
        step_end_us=e,
        forward_start_us=fwd_start,
        forward_end_us=fwd_end,
        optimizer_start_us=None if opt is None else opt[0],
        optimizer_end_us=None if opt is None else opt[1],
        backward_start_us=float(merged[0, 0]),
        backward_end_us=float(merged[-1, 1]),
        compute=merged,
        compute_ends=ends,
        buckets=tuple(buckets),
        others=tuple(others),
        readiness_us=backward.gradients_ready,
        bucket_ready_us=tuple(ready),
        optimizer_device_end_us=optimizer_device_end,
    )
