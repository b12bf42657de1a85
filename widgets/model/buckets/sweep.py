"""Sweeps: the whole step evaluated for every setting of one bucketing knob, in one pass."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bucketing import assign_by_cap, assign_by_count
from .config import BucketConfig
from .regimes import REGIMES
from .schedule import evaluate


@dataclass(frozen=True, eq=False)
class SweepResult:
    """Step time and tail for each setting of one bucketing knob, in one pass."""

    setting: np.ndarray
    assignment: np.ndarray
    n_buckets: np.ndarray
    comm_end: np.ndarray
    exposed_tail: np.ndarray
    step_time: np.ndarray
    overhead_ms: np.ndarray
    regime: np.ndarray
    backward_end: float
    best_index: int

    @property
    def best_setting(self) -> int | float:
        """The setting with the shortest step (ties go to the larger bucket)."""
        return self.setting[self.best_index].item()


def _sweep(config: BucketConfig, setting: np.ndarray, assignment: np.ndarray) -> SweepResult:
    r = evaluate(
        config.backward_profile(),
        config.size_profile(),
        assignment,
        **config.link_settings(),
    )
    optimizer_start = np.maximum(r["backward_end"], r["comm_end"])
    step = config.forward_ms + optimizer_start + config.optimizer_ms
    # Settings are ordered from small buckets to large; among equal step times the
    # last one wins: fewer transfers for the same result.
    tied = np.flatnonzero(np.isclose(step, step.min(), rtol=1e-12, atol=0.0))
    return SweepResult(
        setting=setting,
        assignment=assignment,
        n_buckets=r["n_buckets"],
        comm_end=r["comm_end"],
        exposed_tail=r["exposed_tail"],
        step_time=step,
        overhead_ms=r["overhead"],
        regime=np.array(REGIMES)[r["regime_code"]],
        backward_end=float(r["backward_end"]),
        best_index=int(tied[-1]),
    )


def sweep_layers_per_bucket(config: BucketConfig) -> SweepResult:
    """Every layers-per-bucket value from 1 to the number of layers, in one pass."""
    per_bucket = np.arange(1, config.n_layers + 1)
    return _sweep(config, per_bucket, assign_by_count(config.n_layers, per_bucket))


def default_caps(sizes_mb: np.typing.ArrayLike, num: int = 40) -> np.ndarray:
    """Byte caps from the smallest layer to the whole model, evenly spaced in log."""
    sizes = np.asarray(sizes_mb, float)
    return np.geomspace(sizes.min(), sizes.sum(), num)


def sweep_byte_caps(
    config: BucketConfig, caps_mb: np.typing.ArrayLike | None = None
) -> SweepResult:
    """Each DDP byte cap in ``caps_mb`` (default: ``default_caps``), in one pass."""
    sizes = config.size_profile()
    caps = default_caps(sizes) if caps_mb is None else np.sort(np.atleast_1d(caps_mb))
    caps = np.asarray(caps, float)
    return _sweep(config, caps, np.atleast_2d(assign_by_cap(sizes, caps)))
