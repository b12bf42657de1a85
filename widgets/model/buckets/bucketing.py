"""Which bucket each layer goes into.

Layers are taken in reverse order (bucket 0 holds the last layers, whose
gradients are ready first), either a fixed number per bucket or, DDP-style,
until a bucket reaches a byte cap. Both take an array of settings at once and
return one row of bucket indices per setting, so a sweep is one call.
"""

from __future__ import annotations

import numpy as np


def assign_by_count(n_layers: int, per_bucket: np.typing.ArrayLike) -> np.ndarray:
    """Bucket index of each layer (index 0 is layer 1), ``per_bucket`` layers per bucket.

    Layers are taken in reverse order, so bucket 0 holds the last layers and the
    final bucket, holding layer 1, may be smaller. An array of ``per_bucket``
    values gives one row per value.
    """
    k = np.asarray(per_bucket)
    if np.any(k < 1):
        raise ValueError("a bucket holds at least one layer")
    reverse_position = np.arange(n_layers)[::-1]  # layer n is taken first
    return reverse_position // k[..., None] if k.ndim else reverse_position // int(k)


def assign_by_cap(sizes_mb: np.typing.ArrayLike, cap_mb: np.typing.ArrayLike) -> np.ndarray:
    """Bucket index of each layer (index 0 is layer 1), cut the way PyTorch DDP cuts.

    Layers are added in reverse order; a bucket closes as soon as its size
    reaches ``cap_mb`` (so it can overshoot by one layer), and whatever is left
    forms the final bucket. An array of caps gives one row per cap. The loop
    runs over layers, with every cap handled at once.
    """
    sizes = np.asarray(sizes_mb, float)
    caps = np.asarray(cap_mb, float)
    if np.any(caps <= 0):
        raise ValueError("a byte cap must be positive")
    flat_caps = np.atleast_1d(caps)
    out = np.empty((flat_caps.size, sizes.size), dtype=int)
    bucket = np.zeros(flat_caps.size, dtype=int)
    filled = np.zeros(flat_caps.size)
    for i in range(sizes.size - 1, -1, -1):
        out[:, i] = bucket
        filled += sizes[i]
        full = filled >= flat_caps
        bucket += full
        filled[full] = 0.0
    return out[0] if caps.ndim == 0 else out


def check_assignment(assignment: np.ndarray, n_layers: int) -> None:
    """Refuse an assignment that is not buckets 0, 1, ... over layers in reverse order."""
    if assignment.shape != (n_layers,):
        raise ValueError("give one bucket index per layer")
    in_taking_order = assignment[::-1]
    steps = np.diff(in_taking_order)
    if in_taking_order[0] != 0 or np.any((steps != 0) & (steps != 1)):
        raise ValueError("buckets must be numbered 0, 1, ... over layers in reverse order")
