"""Every rank of a run: files (one rank each, or several ranks merged in one) to a ``Profile``.

Each file is read by ``profiler_file.read_profiles``: a file of one rank gives it,
a merged file (TraceLens's ``args.rank`` marks) gives each rank it holds. The
ranks come from each file's ``distributedInfo`` or those marks (a single file
without either is rank 0); two files claiming one rank are refused, naming
both.

**Peer waits.** An NCCL (or RCCL) collective kernel starts on each rank when
that rank's stream reaches it and then spins until every peer has joined:
nothing moves before the last rank's kernel starts (NCCL User Guide,
"Collective Operations": a collective has to be called on every rank to form a
complete operation, and ranks that did call it wait for those that did not). So, when every rank
of the run is given and the files share one clock (ranks on one machine;
the profiler does not align machines' clocks), a bucket's **transfer** begins
when the last rank's kernel starts, and each rank's **peer wait** for it is
the time from its own kernel's start to then (at most its kernel's length).
HolisticTraceAnalysis calls the same time a straggler wait.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from .profiler_file import read_profiles
from .profiler_read import MAX_PROFILE_BYTES, MAX_UNCOMPRESSED_BYTES, ProfileError
from .profiler_steps import Profile, RankProfile, RankStep


def import_profiles(
    sources: Sequence[str | Path | bytes] | Iterable[str | Path | bytes],
    *,
    names: Sequence[str] | None = None,
    max_bytes: int = MAX_PROFILE_BYTES,
    max_uncompressed: int = MAX_UNCOMPRESSED_BYTES,
) -> Profile:
    """Import a run's profile files (any subset of its ranks, even one; see the module doc).

    Raises ``ProfileError`` when two files hold the same rank, the files
    disagree on backend or world size, or share no ``ProfilerStep#N``.
    """
    sources = list(sources)
    if not sources:
        raise ProfileError("give at least one profile file (one per rank)")
    ranks: list[RankProfile] = []
    for i, src in enumerate(sources):
        ranks += read_profiles(
            src,
            name=None if names is None else names[i],
            max_bytes=max_bytes,
            max_uncompressed=max_uncompressed,
        )
    if len(ranks) > 1 and any("rank" not in r.metadata for r in ranks):
        missing = next(r.name for r in ranks if "rank" not in r.metadata)
        raise ProfileError(f"{missing}: no distributedInfo.rank, so its rank is unknown")
    seen: dict[int, str] = {}
    for r in ranks:
        if r.rank in seen:
            raise ProfileError(
                f"{r.name} and {seen[r.rank]} both hold rank {r.rank}; give each rank once"
            )
        seen[r.rank] = r.name
    for key in ("backend", "world_size"):
        values = {getattr(r, key) for r in ranks if key != "world_size" or r.world_size}
        if len(values) > 1:
            raise ProfileError(
                f"the files disagree on the {key.replace('_', ' ')}: {sorted(map(str, values))}"
            )
    world = next((r.world_size for r in ranks if r.world_size), None)
    for r in ranks:
        if world is not None and r.rank >= world:
            raise ProfileError(f"{r.name}: rank {r.rank} in a world of {world}")
    common = set.intersection(*({s.iteration for s in r.steps} for r in ranks))
    if not common:
        listed = "; ".join(f"{r.name}: {[s.iteration for s in r.steps]}" for r in ranks)
        raise ProfileError(f"the files share no ProfilerStep#N ({listed})")
    ordered = sorted(ranks, key=lambda r: r.rank)
    notes = [f"{r.name}: {n}" for r in ordered for n in r.notes]
    trimmed = [
        replace(r, steps=tuple(s for s in r.steps if s.iteration in common)) for r in ordered
    ]
    dropped = {s.iteration for r in ranks for s in r.steps} - common
    if dropped:
        notes.append(f"steps not in every file left out: {sorted(dropped)}")
    every = world is not None and len(trimmed) == world and world > 1
    if every and all(r.device_times for r in trimmed):
        trimmed = _with_peer_waits(trimmed, sorted(common))
    elif len(trimmed) > 1 and all(r.device_times for r in trimmed):
        notes.append(
            f"peer waits need every rank's file ({len(trimmed)} of "
            f"{world if world is not None else 'an unknown number of'} ranks given)"
        )
    return Profile(ranks=tuple(trimmed), iterations=tuple(sorted(common)), notes=tuple(notes))


def peer_waits(steps: Sequence[RankStep]) -> list[tuple[float, ...]] | None:
    """Per rank (in ``steps``' order), each bucket's peer wait (us); None if the buckets differ."""
    counts = {len(s.buckets) for s in steps}
    if len(counts) != 1:
        return None
    n = counts.pop()
    joined = [max(s.buckets[b].start_us for s in steps) for b in range(n)]
    return [
        tuple(
            min(max(0.0, joined[b] - c.start_us), c.end_us - c.start_us)
            for b, c in enumerate(s.buckets)
        )
        for s in steps
    ]


def _with_peer_waits(ranks: list[RankProfile], iterations: list[int]) -> list[RankProfile]:
    by_rank = {r.rank: {s.iteration: s for s in r.steps} for r in ranks}
    waits: dict[tuple[int, int], tuple[float, ...]] = {}
    for n in iterations:
        steps = [by_rank[r.rank][n] for r in ranks]
        found = peer_waits(steps)
        if found is not None:
            waits.update({(r.rank, n): w for r, w in zip(ranks, found, strict=True)})
    return [
        replace(
            r,
            steps=tuple(replace(s, peer_wait_us=waits.get((r.rank, s.iteration))) for s in r.steps),
        )
        for r in ranks
    ]
