"""How well one part of a fitted model reproduces what was measured."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FitQuality:
    """How well one part of the model reproduces what was measured."""

    r2: float
    rms_ms: float
    samples: int

    @classmethod
    def between(cls, measured: np.ndarray, predicted: np.ndarray) -> FitQuality:
        """R^2 and RMS residual of ``predicted`` against ``measured`` (R^2 NaN when constant)."""
        resid = measured - predicted
        sst = float(((measured - measured.mean()) ** 2).sum())
        sse = float((resid**2).sum())
        r2 = 1.0 - sse / sst if sst > 0 else float("nan")
        return cls(r2=r2, rms_ms=float(np.sqrt(np.mean(resid**2))), samples=int(measured.size))
