"""Sweeps: the whole step evaluated for every setting of one bucketing knob, in one pass.

Why the step-time curve has steps (a sawtooth, not a smooth U). With n layers
and k layers per bucket there are ceil(n / k) buckets, so several k share one
bucket count (for 12 layers: k = 7..11 all give 2 buckets) and the total
per-transfer overhead is flat across them. What changes between them is where
the cut falls: the last bucket, the one holding layer 1 and ready only when
backward ends, holds n - (ceil(n / k) - 1) * k layers, which shrinks as k
grows within a run of equal counts (for 12 layers, k = 7..11 leave 5, 4, 3, 2, 1
layers last) and jumps when the count drops. A smaller last bucket shortens
the final transfer, but the bucket before it grows and may still be on the link
when backward ends, so the last bucket queues behind it. Example (defaults,
Latency-bound preset): k = 2, 3, 4, 5 give 41.50, 41.85, 42.20, 42.05 ms, and
k = 12 (one bucket, 45.00 ms) is faster than k = 11 (45.80 ms), whose 1-layer
last bucket waits 4.65 ms behind an 11-layer one. ``SweepResult`` carries
``n_buckets``, ``last_bucket_layers`` and ``last_bucket_mb`` per setting so a
page can say which of these moved.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .config import BucketConfig
from .link import evaluate
from .regimes import KINDS, SUGGESTIONS, regime_codes, suggestion_codes
from .tensors import MB_PER_MIB, GradientTensors


@dataclass(frozen=True, eq=False)
class SweepResult:
    """Step time, tail, regime and suggestion for each setting of one knob, in one pass.

    Settings run from small buckets to large. ``regime`` holds ``RegimeKind``
    values and ``suggestion`` ``Suggestion`` values, decided row by row exactly as
    ``step_schedule`` decides them for that setting.
    """

    setting: np.ndarray
    assignment: np.ndarray
    n_buckets: np.ndarray
    last_bucket_layers: np.ndarray
    last_bucket_mb: np.ndarray
    comm_end: np.ndarray
    exposed_tail: np.ndarray
    step_time: np.ndarray
    overhead_ms: np.ndarray
    regime: np.ndarray
    suggestion: np.ndarray
    backward_end: float
    best_index: int

    @property
    def best_setting(self) -> int | float:
        """The setting with the shortest step (ties go to the larger bucket)."""
        return self.setting[self.best_index].item()

    @property
    def best_step(self) -> float:
        """The shortest step time."""
        return float(self.step_time[self.best_index])


def best_index(step: np.ndarray) -> int:
    """Index of the shortest step; settings run from small buckets to large, and
    among equal steps the last wins: fewer transfers for the same result."""
    tied = np.flatnonzero(np.isclose(step, step.min(), rtol=1e-12, atol=0.0))
    return int(tied[-1])


def _sweep(
    config: BucketConfig,
    tensors: GradientTensors,
    setting: np.ndarray,
    assignment: np.ndarray,
    best: tuple[float, float] | None = None,
) -> SweepResult:
    """Evaluate every row; ``best`` is the knob's best (setting, step) when it is
    not among these rows (a sweep over chosen caps)."""
    r = evaluate(tensors, assignment, **config.link_settings())
    optimizer_start = np.maximum(r["backward_end"], r["comm_end"])
    step = config.forward_ms + config.no_sync_ms() + optimizer_start + config.optimizer_ms
    best_i = best_index(step)
    if best is None:
        best = (setting[best_i], step[best_i])
    m = len(setting)
    suggestion = suggestion_codes(setting, step, np.full(m, best[0]), np.full(m, best[1]))
    kind = regime_codes(
        r["traffic"],
        np.full(m, r["backward_end"]),
        r["overhead"],
        r["hidden"],
        r["last_wait"],
        suggestion,
    )
    n_buckets = r["n_buckets"]
    in_last = assignment == (n_buckets - 1)[:, None]
    has_layer = np.zeros((m, tensors.n_layers + 1), bool)
    rows = np.broadcast_to(np.arange(m)[:, None], in_last.shape)
    np.logical_or.at(has_layer, (rows, np.broadcast_to(tensors.layer, in_last.shape)), in_last)
    return SweepResult(
        setting=setting,
        assignment=assignment,
        n_buckets=n_buckets,
        last_bucket_layers=has_layer.sum(axis=1),
        last_bucket_mb=np.take_along_axis(r["size"], (n_buckets - 1)[:, None], axis=1)[:, 0],
        comm_end=r["comm_end"],
        exposed_tail=r["exposed_tail"],
        step_time=step,
        overhead_ms=r["overhead"],
        regime=np.array(KINDS, dtype=object)[kind],
        suggestion=np.array(SUGGESTIONS, dtype=object)[suggestion],
        backward_end=float(r["backward_end"]),
        best_index=best_i,
    )


def sweep_layers_per_bucket(config: BucketConfig) -> SweepResult:
    """Every layers-per-bucket value from 1 to the number of layers, in one pass
    (with the configuration's iteration, find_unused_parameters and registration)."""
    tensors = config.tensors()
    per_bucket = np.arange(1, config.n_layers + 1)
    return _sweep(config, tensors, per_bucket, config.count_assignments(per_bucket, tensors))


def default_caps(sizes_mb: np.typing.ArrayLike, num: int = 40) -> np.ndarray:
    """Byte caps in MiB from the smallest layer to the whole model, evenly spaced in log."""
    sizes = np.asarray(sizes_mb, float)
    return np.geomspace(sizes.min(), sizes.sum(), num) / MB_PER_MIB


def sweep_byte_caps(
    config: BucketConfig, caps_mib: np.typing.ArrayLike | None = None
) -> SweepResult:
    """Each DDP byte cap in ``caps_mib`` (default: ``default_caps``), in one pass.

    Each cap is a cap the user sets, so it applies to the first bucket too.
    Suggestions compare each cap with the best of ``default_caps`` and itself,
    as ``step_schedule`` does, whatever caps are asked for.
    """
    tensors = config.tensors()
    standard = default_caps(config.size_profile())
    given = caps_mib is not None
    caps = np.sort(np.atleast_1d(np.asarray(caps_mib, float))) if given else standard
    best = None
    if given:
        ref = _sweep(config, tensors, standard, config.cap_assignments(standard, tensors))
        best = (ref.best_setting, ref.best_step)
    return _sweep(config, tensors, caps, config.cap_assignments(caps, tensors), best)


def knob_best(config: BucketConfig) -> tuple[float, float]:
    """(setting, step) of the best value of the knob in force: layers per bucket, or
    the best of ``default_caps`` when buckets are cut by a byte cap."""
    sw = sweep_byte_caps(config) if config.uses_byte_cap() else sweep_layers_per_bucket(config)
    return sw.best_setting, sw.best_step
