"""``BucketConfig``: every setting of the bucket timeline, one ``param`` declaration each.

How buckets are cut follows three settings (see ``bucketing`` for DDP's rules):
the knob (``layers_per_bucket``, or a byte cap when ``ddp_bucketing`` is on or
``bucket_cap_mb`` is set), the ``iteration`` (0 is the first) and
``find_unused_parameters``.
"""

from __future__ import annotations

import numpy as np
import param

from .. import step_settings
from ..settings import setting
from .bucketing import (
    DDP_DEFAULT_CAP_MIB,
    ddp_assignment,
    ddp_caps_mb,
    layer_assignment,
    one_bucket,
)
from .tensors import MB_PER_MIB, GradientTensors, gradient_tensors

MAX_LAYERS = 64


class LayerProfile(param.Array):
    """A per-layer array (index 0 is layer 1) of finite positive values, or None."""

    def _validate(self, val):
        super()._validate(val)
        if val is None:
            return
        if val.ndim != 1 or not 1 <= len(val) <= MAX_LAYERS:
            raise ValueError(f"{self.name}: a profile is a flat list of 1 to {MAX_LAYERS} values")
        if not np.all(np.isfinite(val)) or np.any(val <= 0):
            raise ValueError(f"{self.name}: every value must be a positive number")


class BucketConfig(param.Parameterized):
    """Every setting of the bucket timeline, one declaration each."""

    n_layers = step_settings.n_layers(MAX_LAYERS, shown=False)
    layers_per_bucket = step_settings.layers_per_bucket(12)
    backward_ms = step_settings.backward_ms()
    grad_mb = step_settings.grad_mb()
    bandwidth = step_settings.bandwidth()
    latency_ms = step_settings.latency_ms()
    algorithm = step_settings.algorithm()
    ranks = step_settings.ranks()
    straggler_pct = step_settings.slowdown_pct()
    bucket_cap_mb = param.Number(
        default=None,
        allow_None=True,
        bounds=(0.001, 1e6),
        label="Bucket size cap",
        doc="When set, cut buckets the way PyTorch DDP does, by size in MiB: add gradient "
        "tensors and close a bucket once it reaches the cap; the cap applies to the first "
        "bucket too. Overrides layers per bucket.",
        metadata=setting(
            "MiB", hint="MiB, DDP-style; empty: layers per bucket, or DDP's 25 MiB default."
        ),
    )
    ddp_bucketing = param.Boolean(
        default=False,
        label="DDP bucketing",
        doc="Cut buckets by size the way PyTorch DDP does. With the cap left empty that is "
        "DDP's default: 25 MiB, and 1 MiB for the first bucket cut.",
        metadata=setting(),
    )
    iteration = param.Integer(
        default=1,
        bounds=(0, 1000),
        label="Iteration",
        doc="Which training iteration to show. In iteration 0 DDP (without "
        "find_unused_parameters) reduces all gradients as one bucket after backward, then "
        "rebuilds its buckets from the order gradients became ready; iterations 1 and "
        "later all use those buckets.",
        metadata=setting(hint="0 is the first iteration; 1 and later are alike."),
    )
    find_unused_parameters = param.Boolean(
        default=False,
        label="find_unused_parameters",
        doc="DDP's find_unused_parameters=True: buckets are cut once, from the parameters in "
        "reverse registration order, and never rebuilt, even in iteration 0.",
        metadata=setting(),
    )
    enqueue_ms = step_settings.enqueue_ms()
    accumulation_steps = step_settings.accumulation_steps()
    forward_ms = step_settings.forward_ms()
    optimizer_ms = step_settings.optimizer_ms()
    layer_backward_ms = LayerProfile(
        default=None,
        allow_None=True,
        precedence=-1,
        label="Backward time profile",
        doc="Backward time of each layer in ms (first entry is layer 1); "
        "overrides the uniform backward time.",
    )
    layer_grad_mb = LayerProfile(
        default=None,
        allow_None=True,
        precedence=-1,
        label="Gradient size profile",
        doc="Gradient size of each layer in MB (first entry is layer 1); "
        "overrides the uniform gradient size.",
    )
    layer_registration = param.Array(
        default=None,
        allow_None=True,
        precedence=-1,
        label="Registration order",
        doc="Position (1 = first) at which each layer's module is registered in __init__ "
        "(first entry is layer 1); None registers layer 1 first, as forward uses them.",
    )
    tied_embeddings = param.Boolean(
        default=False,
        precedence=-1,
        label="Tied embeddings",
        doc="The last layer (the output head) uses layer 1's weight (tied input and output "
        "embeddings): one shared tensor, registered with layer 1 and ready only when layer "
        "1's backward ends; the head keeps only its bias.",
    )

    def _profile(self, name: str, uniform: float) -> np.ndarray:
        values = getattr(self, name)
        if values is None:
            return np.full(self.n_layers, uniform)
        if len(values) != self.n_layers:
            raise ValueError(f"{name} has {len(values)} values for {self.n_layers} layers")
        return np.asarray(values, float)

    def backward_profile(self) -> np.ndarray:
        """Backward time of each layer on a normal rank (index 0 = layer 1)."""
        return self._profile("layer_backward_ms", self.backward_ms)

    def size_profile(self) -> np.ndarray:
        """Gradient size of each layer (index 0 = layer 1)."""
        return self._profile("layer_grad_mb", self.grad_mb)

    def uses_byte_cap(self) -> bool:
        """Whether buckets are cut by size (DDP) rather than by layer count."""
        return self.ddp_bucketing or self.bucket_cap_mb is not None

    def rebuilt(self) -> bool:
        """Whether the buckets in force were rebuilt from readiness order (else they are
        cut from reverse registration order; iteration 0 is one bucket, see ``assignments``)."""
        return not self.find_unused_parameters

    def single_bucket(self) -> bool:
        """DDP's first iteration without find_unused_parameters: one bucket."""
        return self.iteration == 0 and not self.find_unused_parameters

    def tensors(self) -> GradientTensors:
        """Every gradient tensor of the model, in registration order."""
        registration = self.layer_registration
        if registration is not None and len(registration) != self.n_layers:
            raise ValueError(
                f"layer_registration has {len(registration)} values for {self.n_layers} layers"
            )
        return gradient_tensors(
            self.backward_profile(),
            self.size_profile(),
            registration=registration,
            tied_embeddings=self.tied_embeddings,
            straggler_pct=self.straggler_pct,
        )

    def count_assignments(
        self, per_bucket: np.typing.ArrayLike, tensors: GradientTensors | None = None
    ) -> np.ndarray:
        """Bucket of each tensor for each layers-per-bucket value (one row each)."""
        tensors = self.tensors() if tensors is None else tensors
        k = np.atleast_1d(np.asarray(per_bucket, int))
        if self.single_bucket():
            return one_bucket(tensors, k.size)
        return layer_assignment(tensors, k, rebuilt=self.rebuilt())

    def cap_assignments(
        self,
        caps_mib: np.typing.ArrayLike,
        tensors: GradientTensors | None = None,
        *,
        default_cap: bool = False,
    ) -> np.ndarray:
        """Bucket of each tensor for each byte cap in MiB (one row each). ``default_cap``
        means the cap was left at DDP's default, which limits the first bucket to 1 MiB."""
        tensors = self.tensors() if tensors is None else tensors
        caps = np.atleast_1d(np.asarray(caps_mib, float))
        if self.single_bucket():
            return one_bucket(tensors, caps.size)
        if default_cap:
            first, cap = ddp_caps_mb(None)
            first, cap = np.full(caps.size, first), np.full(caps.size, cap)
        else:
            first = cap = caps * MB_PER_MIB
        return ddp_assignment(tensors, first, cap, rebuilt=self.rebuilt())

    def assignments(self, tensors: GradientTensors | None = None) -> np.ndarray:
        """Bucket of each tensor (registration order) under the settings in force, as a
        one-row array."""
        if self.uses_byte_cap():
            return self.cap_assignments(
                self.knob_setting(), tensors, default_cap=self.cap_left_default()
            )
        return self.count_assignments(self.layers_per_bucket, tensors)

    def cap_left_default(self) -> bool:
        """DDP bucketing with the cap left empty: DDP's 25 MiB, first bucket 1 MiB."""
        return self.ddp_bucketing and self.bucket_cap_mb is None

    def link_settings(self) -> dict[str, float | str]:
        """The link's settings, as ``build_schedule`` and ``evaluate`` take them."""
        return {
            "ranks": self.ranks,
            "bandwidth": self.bandwidth,
            "latency_ms": self.latency_ms,
            "enqueue_ms": self.enqueue_ms,
            "algorithm": self.algorithm,
        }

    def no_sync_ms(self) -> float:
        """Time of the ``accumulation_steps - 1`` micro-batches run under ``no_sync()``
        before the last one: each a forward and a backward, with no communication."""
        backward_end = float(self.tensors().layer_ready.max())
        return (self.accumulation_steps - 1) * (self.forward_ms + backward_end)

    def knob_setting(self) -> float:
        """The value of the bucketing knob in force: the byte cap in MiB (25 when DDP
        bucketing is on with the cap left empty), else layers per bucket."""
        if not self.uses_byte_cap():
            return self.layers_per_bucket
        return DDP_DEFAULT_CAP_MIB if self.bucket_cap_mb is None else self.bucket_cap_mb
