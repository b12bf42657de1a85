"""Which bucket each gradient tensor goes into, as PyTorch DDP decides it.

Two ways to cut, each for many knob settings at once (one row per setting):

- **Layers per bucket** (the teaching mode): whole layers, k per bucket.
- **Byte cap** (DDP's own): tensors are added to a bucket until its size
  *reaches* the cap (``size >= cap`` closes it, so a bucket overshoots by at
  most one tensor). Caps are in MiB. When the cap is left at its default
  (25 MiB) the first bucket cut is limited to 1 MiB instead; a cap the user
  sets applies to the first bucket too. A bucket may hold a layer's bias but
  not its weight.

Which list is cut, and in which iteration (checked against PyTorch 2.13,
``DistributedDataParallel._ddp_init_helper``, ``_BucketCapacityConfig`` and
``dist._compute_bucket_assignment_by_size``, and a two-rank gloo run):

- ``find_unused_parameters=False`` (the default), **iteration 0**: the initial
  limit is ``sys.maxsize``: every tensor in **one bucket**, reduced once the
  whole backward is done.
- ``find_unused_parameters=False``, **iteration >= 1**: the reducer rebuilt
  its buckets once, after iteration 0, by cutting the tensors **in the order
  their gradients became ready** (first ready first); the 1 MiB limit falls on
  bucket 0, the first ready.
- ``find_unused_parameters=True``, **every iteration**: buckets are cut at
  construction from the tensors **in registration order** (the 1 MiB limit
  on the bucket holding the first-registered tensors), then the list of
  buckets is **reversed** (``reversed(bucket_indices)``) and never rebuilt. So
  bucket 0 holds the last-registered tensors (the leftover of the cut) and the
  last bucket the first-registered ones.

Worked example (byte cap, default 25 MiB, six 4 MiB + 4 KiB linear layers
registered in use order, as measured): rebuilt buckets are {b6 w6}, then
{b5 w5 ... b1 w1} (4.004 MiB reached 1 MiB; 20 MiB never reaches 25);
with ``find_unused_parameters=True`` they are {b1 w2 b2 ... w6 b6}, then
{w1}: layer 1's weight and bias sit in different buckets.

Layers per bucket follows the same three cases with layers for tensors: one
bucket in iteration 0, k layers per bucket in readiness order once rebuilt,
and k per bucket from the last-registered layer back (the bucket holding the
first-registered layer may be smaller) with ``find_unused_parameters=True``.
"""

from __future__ import annotations

import numpy as np

from .tensors import MB_PER_MIB, GradientTensors

DDP_DEFAULT_CAP_MIB = 25.0
DDP_FIRST_BUCKET_MIB = 1.0


def cut_by_size(
    sizes: np.typing.ArrayLike, first_limit: np.typing.ArrayLike, limit: np.typing.ArrayLike
) -> np.ndarray:
    """Bucket index of each item of ``sizes`` (already in the order they are added).

    A bucket closes as soon as its size reaches its limit: ``first_limit`` for
    bucket 0, ``limit`` after. Arrays of limits give one row each; the loop runs
    over items with every row at once.
    """
    sizes = np.asarray(sizes, float)
    first = np.atleast_1d(np.asarray(first_limit, float))
    rest = np.broadcast_to(np.atleast_1d(np.asarray(limit, float)), first.shape)
    if np.any(first <= 0) or np.any(rest <= 0):
        raise ValueError("a byte cap must be positive")
    out = np.empty((first.size, sizes.size), dtype=int)
    bucket = np.zeros(first.size, dtype=int)
    filled = np.zeros(first.size)
    for i, size in enumerate(sizes):
        out[:, i] = bucket
        filled += size
        full = filled >= np.where(bucket == 0, first, rest)
        bucket += full
        filled[full] = 0.0
    return out


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
    """Bucket index of each layer (index 0 is layer 1), whole layers from the last back.

    A bucket closes as soon as its size reaches ``cap_mb`` (same unit as the
    sizes); whatever is left forms the final bucket. An array of caps gives one
    row per cap. (``ddp_assignment`` is DDP's own rule, on tensors and in MiB.)
    """
    caps = np.asarray(cap_mb, float)
    rows = cut_by_size(np.asarray(sizes_mb, float)[::-1], caps, caps)[:, ::-1]
    return rows[0] if caps.ndim == 0 else rows


def one_bucket(tensors: GradientTensors, rows: int) -> np.ndarray:
    """Every tensor in bucket 0: DDP's first iteration without find_unused_parameters."""
    return np.zeros((rows, len(tensors)), dtype=int)


def layer_assignment(
    tensors: GradientTensors, per_bucket: np.typing.ArrayLike, *, rebuilt: bool
) -> np.ndarray:
    """Bucket of each tensor, ``per_bucket`` whole layers per bucket (one row per value).

    ``rebuilt``: layers in the order they became ready; otherwise from the
    last-registered layer back (find_unused_parameters=True).
    """
    k = np.atleast_1d(np.asarray(per_bucket, int))
    if np.any(k < 1):
        raise ValueError("a bucket holds at least one layer")
    sequence = tensors.layers_by_readiness() if rebuilt else tensors.layer_order()[::-1]
    position = np.empty(tensors.n_layers + 1, int)
    position[sequence] = np.arange(len(sequence))
    return position[tensors.layer][None, :] // k[:, None]


def ddp_caps_mb(cap_mib: float | None) -> tuple[float, float]:
    """(first bucket limit, limit) in MB for a ``bucket_cap_mb`` setting in MiB.

    None is DDP's default: 25 MiB, with 1 MiB for the first bucket cut.
    """
    if cap_mib is None:
        return DDP_FIRST_BUCKET_MIB * MB_PER_MIB, DDP_DEFAULT_CAP_MIB * MB_PER_MIB
    return cap_mib * MB_PER_MIB, cap_mib * MB_PER_MIB


def ddp_assignment(
    tensors: GradientTensors,
    first_limit_mb: np.typing.ArrayLike,
    limit_mb: np.typing.ArrayLike,
    *,
    rebuilt: bool,
) -> np.ndarray:
    """Bucket of each tensor under DDP's byte-cap rule (one row per pair of limits).

    ``rebuilt``: cut in readiness order, bucket 0 first ready. Otherwise cut in
    registration order and reverse the buckets (find_unused_parameters=True).
    """
    if rebuilt:
        order = tensors.readiness_order
        cut = cut_by_size(tensors.size_mb[order], first_limit_mb, limit_mb)
        out = np.empty_like(cut)
        out[:, order] = cut
        return out
    cut = cut_by_size(tensors.size_mb, first_limit_mb, limit_mb)
    return cut.max(axis=1, keepdims=True) - cut
