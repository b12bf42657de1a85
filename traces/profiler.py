"""Import torch.profiler traces (one Chrome-trace file per rank) into per-iteration measurements.

What a profile holds and what is taken from it, per ``ProfilerStep#N`` and rank
(``ts``/``dur`` are microseconds on one timeline; on GPUs the profiler puts the
kernels' device times on the host's clock):

- **buckets**: the all-reduces DDP launches during backward, i.e. launched
  between the end of ``DistributedDataParallel.forward`` and ``Optimizer.step#...``,
  in launch order (bucket index 0 is launched first). With NCCL the
  ``nccl:all_reduce`` CPU op is the launch and the kernel it queued (matched by
  ``profiler_match``: id, correlation, then kind and order, on any stream)
  gives the start and end on the device; bytes are ``In msg nelems`` x the size
  of ``dtype``, else the enclosing ``c10d::allreduce_``'s ``Input Dims`` x the
  size of its ``Input type``, else unknown (None, and noted). With gloo the
  launch is the ``c10d::allreduce_`` CPU op and the ``gloo:all_reduce`` range on
  gloo's worker thread the start and end (host times); bytes from the shapes;
- **other collectives** (all_to_all, broadcasts, all-gathers, reduce-scatters,
  barriers, sends and receives, all-reduces outside backward) are kept apart
  with their names, never counted as buckets; one whose run is not found is
  noted and its step kept. A step is left out only for its own buckets (one
  whose run is missing) or for having none; a file with no step left says
  what the run is instead (``profiler_runs``);
- **forward**: from the first ``DistributedDataParallel.forward`` to the end
  of the outermost (a model holding several DDP modules, nested or side by
  side, has several ranges per step);
- **backward compute**: what autograd's engine launched in the step
  (``profiler_backward``): on GPUs the compute kernels launched from the
  engine's thread, so AMP's unscale, clipping and the optimizer on the main
  thread are not backward; on the CPU the engine's ops, each cut where it
  launches a collective. **Backward end** is the end of the last;
- **communication end** the end of the last bucket's all-reduce, **exposed tail**
  ``max(0, communication end - backward end)``, **step** from the start of
  forward to the end of the optimizer (or of the step's last device activity if
  later), **overlap** the share of the buckets' all-reduce time (their union)
  during which backward compute runs;
- **gradient readiness** (``AccumulateGrad`` ops, not tied to parameter
  names; a profile without them says so) and **bucket readiness**, by the
  same rule: on GPUs when the kernel that produced the gradient ends on the
  device, not when the host issued it;
- **metadata**: ``distributedInfo`` (backend, world size, rank, NCCL version),
  ``deviceProperties`` (GPU names) and whatever versions the file names, and
  whether the times are device or host times.

Reading is ``profiler_read`` (streamed, size-limited, data only);
``profiler_events`` keeps only the events above, as small tuples, so memory
follows what is kept; ``profiler_match`` ties launches to what ran them,
``profiler_sizes`` gives their bytes and ``profiler_steps`` holds the result.
``profiler_file`` cuts the kept events into ranks (a merged file by its
``args.rank`` marks) and steps, and ``profiler_ranks`` puts every rank's files
together. This module is the import's front door.
"""

from .profiler_file import read_profile, read_profiles
from .profiler_ranks import import_profiles
from .profiler_read import ProfileError
from .profiler_sizes import dtype_bytes
from .profiler_steps import Collective, Profile, RankProfile, RankStep

__all__ = [
    "Collective",
    "Profile",
    "ProfileError",
    "RankProfile",
    "RankStep",
    "dtype_bytes",
    "import_profiles",
    "read_profile",
    "read_profiles",
]
