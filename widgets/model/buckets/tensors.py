"""Gradients as tensors: each layer's weight and bias, their registration and readiness.

DDP buckets gradient *tensors*, not layers. Here a layer of S MB of fp32
gradient is a square linear layer, d x d weights plus d biases, so
``S * 1e6 = 4 (d^2 + d)`` bytes and the bias holds ``4 d`` bytes (0.01 MB of
a 25 MB layer). A layer registers its weight, then its bias (as ``nn.Linear``
does); layers register in ``layer_registration`` order (position 1 first).

Readiness. Backward runs from the last layer to the first; a tensor is ready
when the backward of the layer that uses it finishes. Within a layer the bias
is ready just before the weight (the order PyTorch's hooks fire for
``nn.Linear``); both are at the same time here. With tied embeddings the last
layer (the output head) uses layer 1's weight: that one shared tensor is
registered with layer 1 and is ready only when layer 1's backward ends, the
very end of backward, and the head keeps only its bias.

Worked example: 3 layers of 1 ms and 25 MB, registered 3, 1, 2 (positions
``[2, 3, 1]``). Ready times: layer 3 at 1 ms, layer 2 at 2 ms, layer 1 at 3 ms.
Registration order: w3 b3 w1 b1 w2 b2. Readiness order: b3 w3 b2 w2 b1 w1.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

#: MB (1e6 bytes) in one MiB (2^20 bytes).
MB_PER_MIB = 1.048576


class TensorKind(StrEnum):
    """What a gradient tensor is."""

    WEIGHT = "weight"
    BIAS = "bias"


def bias_mb(layer_mb: np.typing.ArrayLike) -> np.ndarray:
    """Bias size of a square fp32 linear layer of ``layer_mb`` MB in all: 4 d bytes
    where ``4 (d^2 + d)`` bytes is the layer."""
    elements = np.asarray(layer_mb, float) * 1e6 / 4.0
    d = (np.sqrt(1.0 + 4.0 * elements) - 1.0) / 2.0
    return 4.0 * d / 1e6


def layer_ready_times(backward_ms: np.typing.ArrayLike, straggler_pct: float = 0.0) -> np.ndarray:
    """When each layer's gradient is ready everywhere (index 0 is layer 1).

    Backward runs from the last layer to the first, so layer i is ready after the
    backward of layers n..i. The slowest rank sets global readiness, so a
    straggler scales every ready time by ``1 + straggler_pct / 100``.
    """
    slow = np.asarray(backward_ms, float) * (1.0 + straggler_pct / 100.0)
    return np.cumsum(slow[::-1])[::-1]


@dataclass(frozen=True, eq=False)
class GradientTensors:
    """Every gradient tensor, in registration order (index = registration position).

    ``layer`` is 1-based; ``readiness_order`` lists tensor indices in the order
    their gradients become ready (the order DDP records in iteration 0).
    """

    layer: np.ndarray
    kind: np.ndarray
    size_mb: np.ndarray
    ready: np.ndarray
    shared: np.ndarray
    readiness_order: np.ndarray
    layer_ready: np.ndarray

    def __len__(self) -> int:
        return len(self.layer)

    @property
    def n_layers(self) -> int:
        """Number of layers."""
        return len(self.layer_ready)

    def layer_order(self) -> np.ndarray:
        """Layers (1-based) in the order their tensors first appear in registration."""
        _, first = np.unique(self.layer, return_index=True)
        return self.layer[np.sort(first)]

    def layers_by_readiness(self) -> np.ndarray:
        """Layers (1-based) in the order their last tensor becomes ready."""
        last = np.zeros(self.n_layers + 1, int)
        last[self.layer[self.readiness_order]] = np.arange(len(self))
        layers = np.arange(1, self.n_layers + 1)
        present = np.isin(layers, self.layer)
        return layers[present][np.argsort(last[1:][present], kind="stable")]


def check_registration(positions: np.ndarray, n_layers: int) -> None:
    """Refuse a registration profile that is not a permutation of 1..n."""
    if positions.shape != (n_layers,) or sorted(positions.tolist()) != list(range(1, n_layers + 1)):
        raise ValueError(f"layer_registration must list the positions 1 to {n_layers} once each")


def gradient_tensors(
    backward_ms: np.ndarray,
    layer_mb: np.ndarray,
    *,
    registration: np.ndarray | None = None,
    tied_embeddings: bool = False,
    straggler_pct: float = 0.0,
) -> GradientTensors:
    """The gradient tensors of a model with these per-layer profiles (index 0 = layer 1)."""
    n = len(backward_ms)
    positions = np.arange(1, n + 1) if registration is None else np.asarray(registration, int)
    check_registration(positions, n)
    ready_layer = layer_ready_times(backward_ms, straggler_pct)
    b = bias_mb(layer_mb)
    w = np.asarray(layer_mb, float) - b
    layers, kinds, sizes, shared = [], [], [], []
    for i in np.argsort(positions, kind="stable") + 1:  # layers in registration order
        head_tied = tied_embeddings and i == n and n > 1
        if not head_tied:
            layers.append(i)
            kinds.append(TensorKind.WEIGHT)
            # Tied: layer 1's weight is the head's too; its size is layer 1's own.
            shared.append(tied_embeddings and i == 1 and n > 1)
            sizes.append(w[i - 1])
        layers.append(i)
        kinds.append(TensorKind.BIAS)
        shared.append(False)
        sizes.append(b[i - 1])
    layer = np.array(layers, int)
    ready = ready_layer[layer - 1]
    # Ready order: by time, a layer's bias before its weight.
    is_weight = np.array([k == TensorKind.WEIGHT for k in kinds])
    order = np.lexsort((is_weight, ready))
    return GradientTensors(
        layer=layer,
        kind=np.array(kinds, dtype=object),
        size_mb=np.array(sizes, float),
        ready=ready,
        shared=np.array(shared, bool),
        readiness_order=order,
        layer_ready=ready_layer,
    )
