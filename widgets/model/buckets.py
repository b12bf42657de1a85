"""The bucket schedule: layers -> buckets -> link -> intervals.

Backward runs from the last layer to the first; a layer's gradient is ready when
its backward finishes. Buckets group whole layers in reverse layer order (bucket 0
holds the last layers, ready first). The link serves one ring all-reduce at a time
in bucket-index order, so ``start_b = max(ready_b, end_(b-1))``.

Units: sizes in MB, bandwidth in GB/s, times in ms. MB / (GB/s) = ms, so no
conversion factor appears anywhere. Times are measured from the start of backward;
forward runs before it and the optimizer after ``max(E, C)``.

Every numeric function takes arrays, and the engine evaluates many bucket
assignments at once (one row each), so a sweep is one numpy call per step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import param

from .settings import setting
from .timeline import Intervals

MAX_LAYERS = 64
DDP_DEFAULT_CAP_MB = 25.0

REGIMES = ("latency-bound", "overlap-limited", "link-saturated", "communication-bound")

# The last bucket must wait for the link by at least this share of its own
# transfer before the link, not the last transfer, is said to set the tail.
SATURATION_SHARE = 0.1


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


# ---------------------------------------------------------------------------
# Costs and assignments
# ---------------------------------------------------------------------------


def ring_overhead_ms(ranks: np.typing.ArrayLike, latency: np.typing.ArrayLike) -> np.ndarray:
    """Per-transfer latency cost of a ring all-reduce: ``2(p-1) * latency``."""
    return 2.0 * (np.asarray(ranks, float) - 1.0) * np.asarray(latency, float)


def ring_traffic_ms(
    bytes_mb: np.typing.ArrayLike, ranks: np.typing.ArrayLike, bandwidth: np.typing.ArrayLike
) -> np.ndarray:
    """Bandwidth cost of a ring all-reduce: ``2(p-1)/p * S / bandwidth``."""
    p = np.asarray(ranks, float)
    return 2.0 * (p - 1.0) / p * np.asarray(bytes_mb, float) / np.asarray(bandwidth, float)


def ring_allreduce_ms(
    bytes_mb: np.typing.ArrayLike,
    ranks: np.typing.ArrayLike,
    bandwidth: np.typing.ArrayLike,
    latency: np.typing.ArrayLike,
) -> np.ndarray:
    """Ring all-reduce time (alpha-beta): ``2(p-1)*latency + 2(p-1)/p * S / bandwidth``."""
    return ring_overhead_ms(ranks, latency) + ring_traffic_ms(bytes_mb, ranks, bandwidth)


def layer_ready_times(backward_ms: np.typing.ArrayLike, straggler_pct: float = 0.0) -> np.ndarray:
    """When each layer's gradient is ready everywhere (index 0 is layer 1).

    Backward runs from the last layer to the first, so layer i is ready after the
    backward of layers n..i. The slowest rank sets global readiness, so a
    straggler scales every ready time by ``1 + straggler_pct / 100``.
    """
    slow = np.asarray(backward_ms, float) * (1.0 + straggler_pct / 100.0)
    return np.cumsum(slow[::-1])[::-1]


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


def link_schedule(
    ready: np.typing.ArrayLike, transfer_ms: np.typing.ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Start and end of each transfer on a link that serves buckets in index order.

    Solves ``start_b = max(ready_b, end_(b-1))`` along the last axis without a
    loop: with ``P_b`` the transfer time queued before b,
    ``start_b = P_b + max_(j<=b) (ready_j - P_j)``, a running maximum.
    """
    ready = np.asarray(ready, float)
    transfer = np.asarray(transfer_ms, float)
    before = np.cumsum(transfer, axis=-1) - transfer
    start = before + np.maximum.accumulate(ready - before, axis=-1)
    # Rounding in the sum may leave start a hair below ready; never start early.
    start = np.maximum(start, ready)
    return start, start + transfer


def _regime_codes(
    traffic: np.ndarray,
    backward_end: np.ndarray,
    overhead: np.ndarray,
    last_wait: np.ndarray,
    last_transfer: np.ndarray,
) -> np.ndarray:
    """Index into ``REGIMES`` for each row; the rules are listed on ``Schedule.regime``."""
    return np.select(
        [
            traffic >= backward_end,
            overhead >= traffic,
            last_wait > SATURATION_SHARE * last_transfer,
        ],
        [3, 0, 2],
        default=1,
    )


def _evaluate(
    backward_ms: np.ndarray,
    grad_mb: np.ndarray,
    assignment: np.ndarray,
    ranks: int,
    bandwidth: float,
    latency_ms: float,
    straggler_pct: float,
) -> dict[str, np.ndarray]:
    """Schedule every row of a 2-D ``assignment`` (settings x layers) at once.

    Bucket axes are padded to one column per layer: an empty bucket is ready at 0
    and takes no time, so it never moves the link.
    """
    m, n = assignment.shape
    ready_layer = layer_ready_times(backward_ms, straggler_pct)
    backward_end = ready_layer[0]  # layer 1 finishes last

    rows = np.broadcast_to(np.arange(m)[:, None], (m, n))
    size = np.zeros((m, n))
    count = np.zeros((m, n), dtype=int)
    ready = np.zeros((m, n))
    np.add.at(size, (rows, assignment), np.broadcast_to(grad_mb, (m, n)))
    np.add.at(count, (rows, assignment), 1)
    np.maximum.at(ready, (rows, assignment), np.broadcast_to(ready_layer, (m, n)))
    used = count > 0
    transfer = np.where(used, ring_allreduce_ms(size, ranks, bandwidth, latency_ms), 0.0)

    start, end = link_schedule(ready, transfer)
    n_buckets = used.sum(axis=1)
    last = (n_buckets - 1)[:, None]
    comm_end = np.take_along_axis(end, last, axis=1)[:, 0]
    last_transfer = np.take_along_axis(transfer, last, axis=1)[:, 0]
    last_wait = np.take_along_axis(start - ready, last, axis=1)[:, 0]

    total_transfer = transfer.sum(axis=1)
    hidden = np.clip(np.minimum(end, backward_end) - start, 0.0, None).sum(axis=1)
    overhead = n_buckets * ring_overhead_ms(ranks, latency_ms)
    traffic = ring_traffic_ms(grad_mb.sum(), ranks, bandwidth)
    return {
        "ready_layer": ready_layer,
        "backward_end": backward_end,
        "size": size,
        "ready": ready,
        "transfer": transfer,
        "start": start,
        "end": end,
        "n_buckets": n_buckets,
        "comm_end": comm_end,
        "exposed_tail": np.maximum(0.0, comm_end - backward_end),
        "last_transfer": last_transfer,
        "last_wait": last_wait,
        "total_transfer": total_transfer,
        "overlap_fraction": hidden / total_transfer,
        "overhead": overhead,
        "traffic": np.full(m, traffic),
        "regime_code": _regime_codes(
            np.full(m, traffic), np.full(m, backward_end), overhead, last_wait, last_transfer
        ),
    }


def _check_assignment(assignment: np.ndarray, n_layers: int) -> None:
    if assignment.shape != (n_layers,):
        raise ValueError("give one bucket index per layer")
    in_taking_order = assignment[::-1]
    steps = np.diff(in_taking_order)
    if in_taking_order[0] != 0 or np.any((steps != 0) & (steps != 1)):
        raise ValueError("buckets must be numbered 0, 1, ... over layers in reverse order")


# ---------------------------------------------------------------------------
# One schedule
# ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Schedule:
    """One step's bucket schedule. Per-layer arrays have index 0 = layer 1.

    ``regime`` names what sets the step, by the first rule that holds:

    1. ``"communication-bound"``: the bandwidth part of all traffic,
       ``2(p-1)/p * total MB / bandwidth``, is at least backward time E. It does
       not depend on the bucketing, so no bucketing hides it.
    2. ``"latency-bound"``: the per-transfer overhead of all buckets,
       ``n_buckets * 2(p-1) * latency``, is at least that bandwidth part.
    3. ``"link-saturated"``: the last bucket waits for the link (transfers queued
       behind each other) by more than ``SATURATION_SHARE`` of its own transfer,
       so the tail is the backlog, not just the last transfer.
    4. ``"overlap-limited"``: otherwise; the tail is about the last transfer.
    """

    layer_backward_ms: np.ndarray
    layer_grad_mb: np.ndarray
    layer_backward_start: np.ndarray
    layer_ready: np.ndarray
    layer_bucket: np.ndarray
    bucket_layers: tuple[np.ndarray, ...]
    bucket_size_mb: np.ndarray
    bucket_ready: np.ndarray
    bucket_start: np.ndarray
    bucket_end: np.ndarray
    bucket_transfer_ms: np.ndarray
    bucket_link_wait: np.ndarray
    forward_ms: float
    optimizer_ms: float
    backward_end: float
    comm_end: float
    exposed_tail: float
    optimizer_start: float
    step_time: float
    overlap_fraction: float
    overhead_ms: float
    traffic_ms: float
    total_transfer_ms: float
    regime: str
    regime_reason: dict[str, float]

    @property
    def n_layers(self) -> int:
        """Number of layers."""
        return len(self.layer_ready)

    @property
    def n_buckets(self) -> int:
        """Number of buckets (transfers)."""
        return len(self.bucket_ready)

    @property
    def layer_backward_end(self) -> np.ndarray:
        """When each layer's backward ends (its gradient's ready time)."""
        return self.layer_ready

    def to_intervals(self) -> Intervals:
        """The schedule as labelled intervals, times from the start of backward.

        Lanes: ``"compute"`` (one ``"backward"`` per layer, in backward order),
        ``"link"`` (one ``"transfer"`` per bucket, plus an ``"exposed"`` interval
        [E, C] when the tail is positive) and ``"link-wait"`` (a ``"waiting"``
        interval [ready_b, start_b] for each bucket queued behind the previous).
        """
        order = np.arange(self.n_layers)[::-1]
        tol = 1e-9 * max(1.0, self.comm_end)
        waits = np.flatnonzero(self.bucket_link_wait > tol)
        buckets = np.arange(self.n_buckets)
        parts = [
            (
                self.layer_backward_start[order],
                self.layer_ready[order],
                "compute",
                [f"Layer {i + 1}" for i in order],
                "backward",
            ),
            (
                self.bucket_start,
                self.bucket_end,
                "link",
                [f"Bucket {b}" for b in buckets],
                "transfer",
            ),
            (
                self.bucket_ready[waits],
                self.bucket_start[waits],
                "link-wait",
                [f"Bucket {b} waits" for b in waits],
                "waiting",
            ),
        ]
        if self.exposed_tail > 0:
            parts.append(
                (
                    np.array([self.backward_end]),
                    np.array([self.comm_end]),
                    "link",
                    ["Exposed tail"],
                    "exposed",
                )
            )
        return Intervals(
            np.concatenate([p[0] for p in parts]).astype(float),
            np.concatenate([p[1] for p in parts]).astype(float),
            np.array([p[2] for p in parts for _ in p[3]], dtype=str),
            np.array([label for p in parts for label in p[3]], dtype=str),
            np.array([p[4] for p in parts for _ in p[3]], dtype=str),
        )


def schedule_arrays(
    backward_ms: np.typing.ArrayLike,
    grad_mb: np.typing.ArrayLike,
    layer_bucket: np.typing.ArrayLike,
    *,
    ranks: int,
    bandwidth: float,
    latency_ms: float,
    straggler_pct: float = 0.0,
    forward_ms: float = 0.0,
    optimizer_ms: float = 0.0,
) -> Schedule:
    """The schedule from per-layer arrays (index 0 = layer 1) and a bucket per layer."""
    backward = np.asarray(backward_ms, float)
    grad = np.asarray(grad_mb, float)
    assignment = np.asarray(layer_bucket, dtype=int)
    if backward.shape != grad.shape or backward.ndim != 1 or backward.size == 0:
        raise ValueError("give one backward time and one gradient size per layer")
    if np.any(backward <= 0) or np.any(grad <= 0):
        raise ValueError("backward times and gradient sizes must be positive")
    _check_assignment(assignment, backward.size)

    r = _evaluate(backward, grad, assignment[None, :], ranks, bandwidth, latency_ms, straggler_pct)
    nb = int(r["n_buckets"][0])
    ready_layer = r["ready_layer"]
    backward_end = float(r["backward_end"])
    comm_end = float(r["comm_end"][0])
    optimizer_start = max(backward_end, comm_end)
    start = r["start"][0, :nb]
    bucket_ready = r["ready"][0, :nb]
    layers = np.arange(1, backward.size + 1)
    regime = REGIMES[int(r["regime_code"][0])]
    reason = {
        "backward_end_ms": backward_end,
        "traffic_ms": float(r["traffic"][0]),
        "overhead_ms": float(r["overhead"][0]),
        "last_transfer_ms": float(r["last_transfer"][0]),
        "last_link_wait_ms": float(r["last_wait"][0]),
        "saturation_wait_ms": SATURATION_SHARE * float(r["last_transfer"][0]),
    }
    return Schedule(
        layer_backward_ms=backward * (1.0 + straggler_pct / 100.0),
        layer_grad_mb=grad,
        layer_backward_start=np.append(ready_layer[1:], 0.0),
        layer_ready=ready_layer,
        layer_bucket=assignment.copy(),
        bucket_layers=tuple(layers[assignment == b][::-1] for b in range(nb)),
        bucket_size_mb=r["size"][0, :nb],
        bucket_ready=bucket_ready,
        bucket_start=start,
        bucket_end=r["end"][0, :nb],
        bucket_transfer_ms=r["transfer"][0, :nb],
        bucket_link_wait=start - bucket_ready,
        forward_ms=float(forward_ms),
        optimizer_ms=float(optimizer_ms),
        backward_end=backward_end,
        comm_end=comm_end,
        exposed_tail=float(r["exposed_tail"][0]),
        optimizer_start=optimizer_start,
        step_time=forward_ms + optimizer_start + optimizer_ms,
        overlap_fraction=float(r["overlap_fraction"][0]),
        overhead_ms=float(r["overhead"][0]),
        traffic_ms=float(r["traffic"][0]),
        total_transfer_ms=float(r["total_transfer"][0]),
        regime=regime,
        regime_reason=reason,
    )


# ---------------------------------------------------------------------------
# The configuration
# ---------------------------------------------------------------------------


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

    def schedule(self) -> Schedule:
        """The schedule of one step with these settings."""
        return schedule_arrays(
            self.backward_profile(),
            self.size_profile(),
            self.assignment(),
            forward_ms=self.forward_ms,
            optimizer_ms=self.optimizer_ms,
            **self.link_settings(),
        )


def schedule(config: BucketConfig) -> Schedule:
    """The schedule of one step for ``config``."""
    return config.schedule()


# ---------------------------------------------------------------------------
# Sweeps and average rates
# ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class SweepResult:
    """Step time and tail for each setting of one bucketing knob, in one pass."""

    setting: np.ndarray
    assignment: np.ndarray
    n_buckets: np.ndarray
    comm_end: np.ndarray
    exposed_tail: np.ndarray
    step_time: np.ndarray
    overhead_ms: np.ndarray
    regime: np.ndarray
    backward_end: float
    best_index: int

    @property
    def best_setting(self) -> int | float:
        """The setting with the shortest step (ties go to the larger bucket)."""
        return self.setting[self.best_index].item()


def _sweep(config: BucketConfig, setting: np.ndarray, assignment: np.ndarray) -> SweepResult:
    r = _evaluate(
        config.backward_profile(),
        config.size_profile(),
        assignment,
        **config.link_settings(),
    )
    optimizer_start = np.maximum(r["backward_end"], r["comm_end"])
    step = config.forward_ms + optimizer_start + config.optimizer_ms
    # Settings are ordered from small buckets to large; among equal step times the
    # last one wins: fewer transfers for the same result.
    tied = np.flatnonzero(np.isclose(step, step.min(), rtol=1e-12, atol=0.0))
    return SweepResult(
        setting=setting,
        assignment=assignment,
        n_buckets=r["n_buckets"],
        comm_end=r["comm_end"],
        exposed_tail=r["exposed_tail"],
        step_time=step,
        overhead_ms=r["overhead"],
        regime=np.array(REGIMES)[r["regime_code"]],
        backward_end=float(r["backward_end"]),
        best_index=int(tied[-1]),
    )


def sweep_layers_per_bucket(config: BucketConfig) -> SweepResult:
    """Every layers-per-bucket value from 1 to the number of layers, in one pass."""
    per_bucket = np.arange(1, config.n_layers + 1)
    return _sweep(config, per_bucket, assign_by_count(config.n_layers, per_bucket))


def default_caps(sizes_mb: np.typing.ArrayLike, num: int = 40) -> np.ndarray:
    """Byte caps from the smallest layer to the whole model, evenly spaced in log."""
    sizes = np.asarray(sizes_mb, float)
    return np.geomspace(sizes.min(), sizes.sum(), num)


def sweep_byte_caps(
    config: BucketConfig, caps_mb: np.typing.ArrayLike | None = None
) -> SweepResult:
    """Each DDP byte cap in ``caps_mb`` (default: ``default_caps``), in one pass."""
    sizes = config.size_profile()
    caps = default_caps(sizes) if caps_mb is None else np.sort(np.atleast_1d(caps_mb))
    caps = np.asarray(caps, float)
    return _sweep(config, caps, np.atleast_2d(assign_by_cap(sizes, caps)))


def average_rates(config: BucketConfig) -> tuple[float, float]:
    """Average gradient arrival and link service, both in MB per ms.

    Arrival is total gradient MB over backward time E. Service is how many MB of
    gradient the ring reduces per ms of bandwidth time, ``bandwidth * p / (2(p-1))``;
    latency is left out, as a fluid picture has no transfers to charge it to.
    """
    sizes = config.size_profile()
    backward_end = layer_ready_times(config.backward_profile(), config.straggler_pct)[0]
    p = config.ranks
    return float(sizes.sum() / backward_end), float(config.bandwidth * p / (2.0 * (p - 1)))


# ---------------------------------------------------------------------------
# Presets
# ---------------------------------------------------------------------------

_DEFAULTS = {
    name: BucketConfig.param[name].default for name in BucketConfig.param if name != "name"
}


def _preset(**overrides) -> dict:
    return {**_DEFAULTS, **overrides}


def _frozen(values: list[float]) -> np.ndarray:
    a = np.array(values, float)
    a.flags.writeable = False
    return a


# Each preset sets every parameter, so applying one never inherits a profile or a
# cap from the previous preset. The regime each one shows is checked by the tests.
PRESETS: dict[str, dict] = {
    # Each bucket's 5.95 ms transfer fits in the 6 ms of backward that follows it.
    "Overlap works": _preset(),
    # 12 buckets each pay 2(p-1) x 0.2 = 2.8 ms of latency for 0.35 ms of traffic.
    "Latency-bound": _preset(layers_per_bucket=1, latency_ms=0.2, grad_mb=5.0),
    # Backward 10% faster on the same link: each 5.95 ms transfer gets 5.4 ms.
    "Link saturated": _preset(backward_ms=1.8),
    # Compute and link both twice as fast, but latency per step stays the same.
    "Fast compute: transfers queue": _preset(
        backward_ms=1.0, bandwidth=50.0, forward_ms=6.0, optimizer_ms=1.0
    ),
    # 21 ms of traffic against 12 ms of backward.
    "Traffic exceeds compute": _preset(backward_ms=1.0),
    # Layer 1 is an embedding: cheap backward, 200 MB of gradient, ready last.
    "Embedding layer": _preset(
        bandwidth=50.0,
        layer_backward_ms=_frozen([1.0] + [2.0] * 11),
        layer_grad_mb=_frozen([200.0] + [25.0] * 11),
    ),
    # "Link saturated" with one rank 50% slower: the link keeps up, the step does not.
    "Straggler": _preset(backward_ms=1.8, straggler_pct=50.0),
}

PRESET_DESCRIPTIONS: dict[str, str] = {
    "Overlap works": "Transfers hide behind backward; only the last bucket's transfer is exposed.",
    "Latency-bound": "Tiny buckets on a high-latency link: per-transfer overhead dominates, "
    "so more buckets is slower.",
    "Link saturated": "Backward slightly outpaces the link: transfers queue behind each other "
    "and the backlog is exposed.",
    "Fast compute: transfers queue": "Faster compute and link, same latency: transfers queue "
    "and traffic is exposed however it is divided.",
    "Traffic exceeds compute": "The link needs longer than backward for all the traffic: "
    "no bucketing hides it.",
    "Embedding layer": "A large first layer is ready last, so its transfer is exposed "
    "whatever the bucketing.",
    "Straggler": "One rank's backward is 50% slower: every rank waits for it, the link "
    "catches up, and the step is longer.",
}
