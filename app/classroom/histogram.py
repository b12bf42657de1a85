"""A round's distribution: bins of the predictions, their count and median (no learner)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable

#: About this many bins for a spread of non-integer answers.
TARGET_BINS = 10
#: Integer answers with at most this many distinct values get one bin per value.
MAX_INTEGER_BINS = 25


def nice_width(span: float) -> float:
    """The 1-2-5 width nearest above ``span / TARGET_BINS`` (0.5, 1, 2, 5, 10...)."""
    raw = span / TARGET_BINS
    exp = math.floor(math.log10(raw))
    base = raw / 10**exp
    nice = 1 if base <= 1 else 2 if base <= 2 else 5 if base <= 5 else 10
    return float(nice * 10**exp)


def bins(values: Iterable[float], integer: bool = False) -> list[dict]:
    """Bins ``{lo, hi, count}`` covering every value, in order; none for no values.

    A value on an inner edge counts in the bin above it; the last bin holds its
    upper edge. Integer answers get a bin per value when they span few values.
    """
    xs = sorted(float(v) for v in values)
    if not xs:
        return []
    lo, hi = xs[0], xs[-1]
    if integer and hi - lo < MAX_INTEGER_BINS:
        edges = [lo + i - 0.5 for i in range(int(hi - lo) + 2)]
    elif hi - lo <= 1e-9 * max(1.0, abs(hi)):  # one value, give or take rounding
        half = max(abs(lo) * 0.05, 0.5)
        edges = [lo - half, lo + half]
    else:
        width = nice_width(hi - lo)
        start = math.floor(lo / width) * width
        n = max(1, math.ceil((hi - start) / width - 1e-9))
        if start + n * width <= hi:
            n += 1
        edges = [start + i * width for i in range(n + 1)]
    counts = [0] * (len(edges) - 1)
    for x in xs:
        i = next(
            (k for k in range(len(counts)) if x < edges[k + 1]),
            len(counts) - 1,
        )
        counts[i] += 1
    return [
        {"lo": _clean(edges[i]), "hi": _clean(edges[i + 1]), "count": counts[i]}
        for i in range(len(counts))
    ]


def _clean(x: float) -> float:
    """An edge without the float noise of its arithmetic (0.30000000000000004 → 0.3)."""
    return float(f"{x:.12g}")


def summary(values: Iterable[float], integer: bool = False) -> dict:
    """``{count, median, bins}`` of the predictions (median None without any)."""
    xs = [float(v) for v in values]
    return {
        "count": len(xs),
        "median": statistics.median(xs) if xs else None,
        "bins": bins(xs, integer),
    }
