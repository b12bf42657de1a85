"""The fitted model as a record: every term ``predict`` needs, with quality and provenance.

``traces.fit`` makes one; ``traces.predict`` runs a layout's schedule from it,
``traces.identify`` says what it cannot predict, and ``traces.bootstrap`` puts
an interval on each of its reported terms (``TERMS``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from .fit_quality import FitQuality
from .schema import MIB


@dataclass(frozen=True)
class Fit:
    """The fitted model: everything ``predict`` needs, with quality and provenance."""

    parameter_names: tuple[str, ...]
    parameter_bytes: tuple[int | None, ...]  # None: unknown (a profile without sizes)
    order: tuple[int, ...]  # parameter indices in the order their gradients become ready
    backward_ms: tuple[float, ...]  # per parameter, at normal speed (ranks pooled)
    overhead_ms: float
    bandwidth_gbps: float  # GB/s = 1e6 bytes per ms of bucket data
    contention: float
    transfer_contention: float
    rank_contention: tuple[float, ...]  # per iteration, the most slowed rank's first
    enqueue_ms: float
    start_skew_ms: float
    forward_ms: float
    finalize_ms: float
    after_return_ms: float
    world_size: int
    backward_quality: FitQuality
    transfer_quality: FitQuality
    separable: bool  # were there buckets of two sizes or more?
    contention_identified: bool  # were some parameters seen both free and busy?
    sources: tuple[str, ...] = field(default=())
    iterations_used: int = 0
    iterations_dropped: int = 0
    # Where the terms come from, and what they can be trusted for.
    backward_source: str = "overlap"  # "alone": backward alone; "overlap": the DDP traces
    transfer_source: str = "overlap"  # "isolated": all-reduces alone; "overlap": DDP's buckets
    size_range: tuple[float, float] = (0.0, float("inf"))  # bytes the transfer terms hold for
    transfer_contention_identified: bool = True
    contention_terms: bool = True  # False: the plain baseline (c = c_t = 0 by construction)
    isolated_quality: FitQuality | None = None  # the line through the all-reduces alone
    unidentified: tuple[str, ...] = ()  # terms the fitted data could not pin down, in words
    uncertainty: dict[str, tuple[float, float]] = field(default_factory=dict)  # 90 % intervals
    resamples: int = 0  # bootstrap resamples behind ``uncertainty``
    # Backward alone: each model rank's backward as a multiple of ``backward_ms``, the
    # slowest rank of an iteration first (1 each when there is no backward alone).
    rank_backward_scale: tuple[float, ...] = ()
    # Finalize grows with the last bucket: finalize_ms + finalize_ms_per_mib * its MiB.
    finalize_ms_per_mib: float = 0.0
    # Copy-back after backward, per MiB of a bucket (0: not measured, no copies modelled).
    copy_back_ms_per_mib: float = 0.0
    # Collectives in flight at once; above 1, each transfer's overhead is latency that
    # hides behind the previous bucket's bytes (``ranks.rank_schedule``).
    concurrent_collectives: int = 1

    def finalize_for(self, last_bucket_bytes: float) -> float:
        """Backward return after the last transfer, for a last bucket of that many bytes."""
        return self.finalize_ms + self.finalize_ms_per_mib * last_bucket_bytes / MIB

    def backward_matrix(self) -> np.ndarray:
        """(R, P) each model rank's backward per parameter at normal speed."""
        w = np.asarray(self.backward_ms, float)
        scale = np.asarray(self.rank_backward_scale or (1.0,) * self.world_size, float)
        return scale[:, None] * w[None, :]

    def copy_back_ms(self, nbytes: np.typing.ArrayLike) -> np.ndarray | None:
        """Each bucket's copy back into the gradients after backward (None: not measured)."""
        if self.copy_back_ms_per_mib <= 0:
            return None
        return self.copy_back_ms_per_mib * np.asarray(nbytes, float) / MIB

    @property
    def sizes_known(self) -> bool:
        """Whether some fitted bucket had a known size, so overhead and bandwidth were fitted."""
        return bool(np.isfinite(self.bandwidth_gbps))

    def layout_bytes(self, bucket_parameters: Sequence[np.typing.ArrayLike]) -> np.ndarray:
        """Each bucket's bytes for parameters bucketed as given (nan where a size is unknown)."""
        size = np.array([np.nan if b is None else b for b in self.parameter_bytes], float)
        return np.array([size[np.asarray(m, int)].sum() for m in bucket_parameters], float)

    def transfer_ms(self, nbytes: np.typing.ArrayLike) -> np.ndarray:
        """Transfer time at full speed of buckets of ``nbytes`` bytes."""
        return self.overhead_ms + np.asarray(nbytes, float) / (self.bandwidth_gbps * 1e6)

    def to_dict(self) -> dict:
        """A JSON-ready dictionary (a number the fit could not have, such as NaN, is null)."""
        d = asdict(self)
        d["backward_total_ms"] = float(sum(self.backward_ms))
        return _json_numbers(d)


def _json_numbers(value):
    """``value`` with every non-finite float replaced by None, which JSON can hold."""
    if isinstance(value, float):
        return value if np.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _json_numbers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_numbers(v) for v in value]
    return value


#: The terms a fit reports (each with a bootstrap interval when resampled), by name.
TERMS = (
    "backward_total_ms",
    "overhead_ms",
    "bandwidth_gbps",
    "contention",
    "rank_contention",
    "transfer_contention",
    "enqueue_ms",
    "finalize_ms",
    "finalize_ms_per_mib",
    "copy_back_ms_per_mib",
)


def term_values(f: Fit) -> dict[str, float | tuple[float, ...]]:
    """The reported terms of a fit (``TERMS``), by name."""
    return {
        name: float(sum(f.backward_ms)) if name == "backward_total_ms" else getattr(f, name)
        for name in TERMS
    }
