"""Sets of time intervals: merge into disjoint ones, measure their overlap, cut pieces out."""

from __future__ import annotations

import numpy as np


def merge(intervals: np.ndarray) -> np.ndarray:
    """Sorted, disjoint intervals covering the same time as ``intervals`` (K, 2)."""
    if intervals.size == 0:
        return np.empty((0, 2))
    iv = intervals[np.argsort(intervals[:, 0], kind="stable")]
    out = [list(iv[0])]
    for a, b in iv[1:]:
        if a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return np.array(out, float)


def intersection(a: np.ndarray, b: np.ndarray) -> float:
    """Total length of the overlap of two sets of merged intervals."""
    total = 0.0
    i = j = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i, 0], b[j, 0]), min(a[i, 1], b[j, 1])
        if hi > lo:
            total += hi - lo
        if a[i, 1] < b[j, 1]:
            i += 1
        else:
            j += 1
    return total


def subtract(
    intervals: list[tuple[float, float]], cuts: list[tuple[float, float]]
) -> list[tuple[float, float]]:
    """``intervals`` minus ``cuts`` (both lists of (start, end))."""
    out = []
    cuts = sorted(cuts)
    for a, b in intervals:
        pieces = [(a, b)]
        for c, d in cuts:
            if d <= a or c >= b:
                continue
            pieces = [
                piece
                for p, q in pieces
                for piece in ((p, min(q, c)), (max(p, d), q))
                if piece[1] > piece[0]
            ]
        out.extend(pieces)
    return out
