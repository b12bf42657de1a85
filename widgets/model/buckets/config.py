"""``BucketConfig``: every setting of the bucket timeline, one ``param`` declaration each."""

from __future__ import annotations

import numpy as np
import param

from ..settings import setting
from .bucketing import assign_by_cap, assign_by_count
from .schedule import Schedule, schedule_arrays

MAX_LAYERS = 64
DDP_DEFAULT_CAP_MB = 25.0


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

    n_layers = param.Integer(
        default=12,
        bounds=(1, MAX_LAYERS),
        label="Layers",
        precedence=-1,
        doc="Number of layers in the model.",
    )
    layers_per_bucket = param.Integer(
        default=3,
        bounds=(1, 12),
        label="Layers per bucket",
        doc="Whole layers per bucket, taken from the last layer backwards; "
        "the bucket holding layer 1 may be smaller.",
        metadata=setting("layers"),
    )
    backward_ms = param.Number(
        default=2.0,
        bounds=(0.01, 1000.0),
        label="Backward time per layer",
        doc="Time one layer's backward takes on a normal rank, in ms.",
        metadata=setting("ms"),
    )
    grad_mb = param.Number(
        default=25.0,
        bounds=(0.001, 100000.0),
        label="Gradient size per layer",
        doc="Size of one layer's gradients, in MB.",
        metadata=setting("MB"),
    )
    bandwidth = param.Number(
        default=25.0,
        bounds=(0.01, 10000.0),
        label="Link bandwidth",
        doc="Bandwidth of each rank's link, in GB/s (1 GB = 1000 MB).",
        metadata=setting("GB/s"),
    )
    latency_ms = param.Number(
        default=0.05,
        bounds=(0.0, 100.0),
        label="Latency per ring step",
        doc="Fixed cost of each of the 2(p-1) steps of a ring all-reduce, in ms.",
        metadata=setting("ms"),
    )
    ranks = param.Integer(
        default=8,
        bounds=(2, 4096),
        label="Ranks",
        doc="Number of data-parallel ranks in the ring.",
        metadata=setting("ranks"),
    )
    straggler_pct = param.Number(
        default=0.0,
        bounds=(0.0, 500.0),
        label="Straggler slowdown",
        doc="How much slower one rank's backward is, in %. Every rank needs every "
        "gradient, so that rank decides when each layer is ready.",
        metadata=setting("%"),
    )
    bucket_cap_mb = param.Number(
        default=None,
        allow_None=True,
        bounds=(0.001, 1e6),
        label="Bucket size cap",
        doc="When set, cut buckets the way PyTorch DDP does (MB): add layers from the "
        "last backwards and close a bucket once it reaches the cap. Overrides layers per bucket.",
        metadata=setting("MB", hint="MB, DDP-style; leave empty to use layers per bucket."),
    )
    forward_ms = param.Number(
        default=12.0,
        bounds=(0.0, 100000.0),
        label="Forward time",
        doc="Forward pass time before backward starts, in ms.",
        metadata=setting("ms"),
    )
    optimizer_ms = param.Number(
        default=2.0,
        bounds=(0.0, 100000.0),
        label="Optimizer time",
        doc="Optimizer step time, which starts once backward and communication end, in ms.",
        metadata=setting("ms"),
    )
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

    @classmethod
    def from_preset(cls, name: str, **overrides) -> BucketConfig:
        """A configuration set to one of ``PRESETS``."""
        from .presets import PRESETS

        return cls(**{**PRESETS[name], **overrides})

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

    def assignment(self) -> np.ndarray:
        """Bucket index of each layer under the current bucketing."""
        if self.bucket_cap_mb is not None:
            return assign_by_cap(self.size_profile(), self.bucket_cap_mb)
        return assign_by_count(self.n_layers, self.layers_per_bucket)

    def link_settings(self) -> dict[str, float]:
        """The keyword arguments ``schedule_arrays`` takes from this configuration."""
        return {
            "ranks": self.ranks,
            "bandwidth": self.bandwidth,
            "latency_ms": self.latency_ms,
            "straggler_pct": self.straggler_pct,
        }

    def knob_setting(self) -> float:
        """The value of the bucketing knob in force: the byte cap, else layers per bucket."""
        return self.layers_per_bucket if self.bucket_cap_mb is None else self.bucket_cap_mb

    def schedule(self) -> Schedule:
        """The schedule of one step with these settings, its regime's suggestion
        decided against every setting of the knob in force (see ``regimes``)."""
        from .sweep import knob_best

        return schedule_arrays(
            self.backward_profile(),
            self.size_profile(),
            self.assignment(),
            forward_ms=self.forward_ms,
            optimizer_ms=self.optimizer_ms,
            setting=self.knob_setting(),
            best=knob_best(self),
            **self.link_settings(),
        )
