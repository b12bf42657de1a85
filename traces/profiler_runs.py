"""Say what a run is when the profiler import finds no DDP step in it, and what it needs.

The import takes DDP's gradient buckets: the all-reduces launched between the
end of ``DistributedDataParallel.forward`` and ``Optimizer.step#...`` inside a
``ProfilerStep#N``. A profile that holds none is one of these, told apart by
what it does hold:

- no ``ProfilerStep#N`` ranges (profiled without a schedule or ``prof.step()``);
- a single rank (world size 1, or no collective at all): nothing to overlap;
- FSDP or ZeRO: ``reduce_scatter`` / ``all_gather`` launched inside steps
  before the optimizer, the sharded gradient traffic, not bucket all-reduces;
- all-reduces without ``DistributedDataParallel.forward``: made by hand (or by
  another wrapper). They are not imported as buckets, even between a step's
  start and its optimizer step: without DDP's forward the import cannot tell
  forward from backward, and hand-made reductions follow no bucket order, so
  the model's schedule would not describe them.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Sequence

SHARDED = ("reduce_scatter", "all_gather")
NEEDS = (
    "the import needs DDP's gradient buckets: all-reduces launched between "
    "DistributedDataParallel.forward and Optimizer.step inside ProfilerStep#N ranges"
)


def _kinds(counts: Counter) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items(), key=lambda kv: -kv[1]))


def _in_steps(
    launches: Sequence[tuple],
    steps: Sequence[tuple[int, float, float]],
    optimizers: Sequence[tuple[float, float]],
) -> Counter:
    """Kinds of the launches inside a step and before its optimizer step."""
    starts = [launch[1] for launch in launches]
    opt_starts = sorted(a for a, _ in optimizers)
    found: Counter = Counter()
    for _, s, e in steps:
        k = bisect.bisect_left(opt_starts, s)
        end = opt_starts[k] if k < len(opt_starts) and opt_starts[k] < e else e
        for launch in launches[bisect.bisect_left(starts, s) : bisect.bisect_left(starts, end)]:
            found[launch[0]] += 1
    return found


def no_steps_message(
    label: str,
    *,
    steps: Sequence[tuple[int, float, float]],
    launches: Sequence[tuple],
    forwards: int,
    optimizers: Sequence[tuple[float, float]],
    world_size: int | None,
    notes: Sequence[str],
    unrun: Sequence[int] = (),
) -> str:
    """Why ``label`` gives no step to import: what was found and what the import needs.

    ``launches`` are the collective launches sorted by start (kind first);
    ``forwards`` counts the ``DistributedDataParallel.forward`` ranges;
    ``unrun`` the steps left out because an all-reduce launched during their
    backward has no kernel (or gloo range) in the file.
    """
    every = Counter(launch[0] for launch in launches)
    if not steps:
        found = f" (it holds {_kinds(every)} collective launches)" if every else ""
        return (
            f"{label}: no ProfilerStep#N ranges; profile with a schedule and call "
            f"prof.step() after every iteration{found}"
        )
    if not launches and world_size is not None and world_size > 1:
        return (
            f"{label}: no collectives (no collective ops or runs) in a run of world size "
            f"{world_size}; was it profiled during training iterations? {NEEDS}"
        )
    if world_size == 1 or not launches:
        size = "world size 1" if world_size == 1 else "no collectives: no collective ops or runs"
        return (
            f"{label}: a single-rank run ({size}): no gradient communication to import; "
            "profile each rank of a distributed (DDP) run of 2 or more ranks"
        )
    per_step = _in_steps(launches, steps, optimizers)
    n = len(steps)
    sharded = Counter({k: v for k, v in per_step.items() if k in SHARDED})
    if sharded and not per_step.get("all_reduce"):
        return (
            f"{label}: FSDP or ZeRO gradient traffic ({_kinds(sharded)} launches before the "
            f"optimizer in {n} steps), not DDP's bucket all-reduces; {NEEDS}"
        )
    if not forwards and per_step.get("all_reduce"):
        where = "before the optimizer" if optimizers else "and no Optimizer.step"
        return (
            f"{label}: all-reduces without DDP (about {per_step['all_reduce'] / n:.0f} a step "
            f"{where}, no DistributedDataParallel.forward): all-reduces made "
            f"by hand are not imported as buckets; {NEEDS}"
        )
    if not forwards:
        return f"{label}: no DistributedDataParallel.forward in any step; {NEEDS}"
    if unrun and len(unrun) == n:
        shown = ", ".join(f"#{k}" for k in unrun[:3]) + (", ..." if len(unrun) > 3 else "")
        return (
            f"{label}: in each of its {n} steps (ProfilerStep{shown}) the all-reduce launched "
            "during backward has no kernel in the file, so when it ran is unknown; "
            "profile with ProfilerActivity.CUDA over whole steps"
        )
    reasons = f" ({'; '.join(notes[:3])})" if notes else ""
    return f"{label}: no step has an all-reduce launched during backward{reasons}"
