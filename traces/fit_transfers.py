"""Per-transfer overhead, bandwidth and transfer contention from DDP's own buckets.

The way for traces without all-reduces timed alone. A bucket of S bytes needs
``T = a + S / bandwidth`` ms of transfer, done at ``1 / (1 + c_t)`` of full
speed while any rank computes (an all-reduce moves at its slowest
participant's pace). For each c_t on a grid, the measured durations give each
transfer's work T, a and bandwidth follow by least squares, and the c_t whose
predicted durations match the measured ones best wins, on the grid and then
finer. Overhead and bandwidth can only be told apart from buckets of at least
two sizes, and they absorb contention, so they hold only for the fitted sizes.
Buckets of unknown size (a profile without sizes) are left out of all this;
with none of known size there is no overhead, bandwidth or transfer
contention (NaN), and ``why_unidentified`` says why.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .fit_observations import BUSY_SHARE, FREE_SHARE, MIN_BUSY, Transfers
from .fit_quality import FitQuality
from .schema import MIB, UNKNOWN_SIZES, TraceError

TRANSFER_CONTENTION_GRID = np.linspace(0.0, 6.0, 121)


@dataclass(frozen=True)
class TransferTerms:
    """``T = overhead_ms + S * ms_per_byte``, slowed by ``1 + contention`` under compute."""

    overhead_ms: float
    ms_per_byte: float
    contention: float
    separable: bool  # were there buckets of two sizes or more?
    identified: bool  # is the contention pinned down?
    size_range: tuple[float, float]  # bytes the terms hold for
    isolated_quality: FitQuality | None = None  # the line through the all-reduces alone
    unsized: int = 0  # fitted transfers left out because their bucket's size is unknown

    @property
    def sizes_known(self) -> bool:
        """Whether any fitted transfer had a known size (else the terms are NaN)."""
        return bool(np.isfinite(self.ms_per_byte))

    def why_unidentified(self) -> str:
        """What overhead and bandwidth read off overlapping buckets can be trusted for."""
        if not self.sizes_known:
            return (
                f"overhead and bandwidth: {UNKNOWN_SIZES}; the buckets' times hold, but no "
                "bandwidth or per-transfer overhead can be read from them"
            )
        low, high = self.size_range
        left_out = f"; {self.unsized} transfers left out, {UNKNOWN_SIZES}" if self.unsized else ""
        return (
            "overhead and bandwidth: the traces hold no all-reduces timed alone, so they come "
            "from buckets that overlapped backward and absorb contention; trusted only within "
            + (
                f"the {low / MIB:.3g}-{high / MIB:.3g} MiB of the fitted buckets"
                if low != high
                else f"the fitted buckets' size ({low / MIB:.3g} MiB)"
            )
            + left_out
        )


def _line_at(t: Transfers, c_t: float, separable: bool) -> tuple[float, float, float]:
    """Overhead, ms-per-byte slope and squared error of durations, at contention c_t."""
    work = t.work(c_t)
    if separable:
        design = np.stack([np.ones_like(t.size), t.size], axis=1)
        (a, beta), *_ = np.linalg.lstsq(design, work, rcond=None)
        if a < 0:  # overhead can't be negative: all time is bandwidth time
            a, beta = 0.0, float((t.size * work).sum() / (t.size * t.size).sum())
    else:
        a, beta = 0.0, float(work.mean() / t.size[0])
    if beta <= 0:
        return float(a), float(beta), np.inf
    predicted = t.durations(a + beta * t.size, c_t)
    return float(a), float(beta), float(((t.duration - predicted) ** 2).sum())


def transfers_from_overlap(everything: Transfers, with_contention: bool) -> TransferTerms:
    """The transfer terms from the transfers of known size (c_t = 0 without contention)."""
    measured = everything.sized()
    unsized = everything.size.size - measured.size.size
    if measured.size.size == 0:
        nan = float("nan")
        return TransferTerms(
            overhead_ms=nan,
            ms_per_byte=nan,
            contention=0.0,
            separable=False,
            identified=False,
            size_range=(nan, nan),
            unsized=unsized,
        )
    separable = bool(np.unique(measured.size).size >= 2)
    under = measured.computing_share()
    identified = (
        int((under >= BUSY_SHARE).sum()) >= MIN_BUSY
        and int((under <= FREE_SHARE).sum()) >= MIN_BUSY
    )
    c_t = 0.0
    if with_contention:

        def errors_at(c: float) -> float:
            return _line_at(measured, c, separable)[2]

        errors = [errors_at(c) for c in TRANSFER_CONTENTION_GRID]
        best_c = float(TRANSFER_CONTENTION_GRID[int(np.argmin(errors))])
        step = TRANSFER_CONTENTION_GRID[1] - TRANSFER_CONTENTION_GRID[0]
        fine = np.clip(np.linspace(best_c - step, best_c + step, 21), 0.0, None)
        c_t = float(fine[int(np.argmin([errors_at(c) for c in fine]))])
    a, beta, sse = _line_at(measured, c_t, separable)
    if not np.isfinite(sse):
        raise TraceError("the transfers could not be fitted (no positive bandwidth)")
    return TransferTerms(
        overhead_ms=a,
        ms_per_byte=beta,
        contention=c_t,
        separable=separable,
        identified=identified,
        size_range=(float(measured.size.min()), float(measured.size.max())),
        unsized=unsized,
    )
