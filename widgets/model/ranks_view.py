"""Many ranks, real events: the settings of the ranks view and what they give.

(Longer than most modules: about a third of it is this docstring, the worked
semantics of each scenario, which belongs next to the code it describes.)

``RanksConfig`` holds every setting once; ``RanksConfig.result()`` turns them
into a ``RanksResult``: either a schedule on every drawn rank (solved by
``ranks.rank_schedule``, event by event) or, when ranks disagree on which
collectives they run, a ``Disagreement`` and no timeline.

**Scenarios** say how the drawn ranks differ (index 0 is rank 0; ``s`` is the
slowdown, layers are numbered 1..n and backward runs from layer n down):

- *One slow rank*: rank 0's backward is ``s`` % slower on every layer (the
  bucket timeline's straggler);
- *Two partial stragglers*: rank 0 is ``s`` % slower on the upper half of the
  layers (12–7 of 12), rank 1 is ``2s`` % slower on the lower half (6–1), so
  the early buckets wait for rank 0 and the late ones for rank 1;
- *Data loading delays one rank*: rank 0 starts backward ``delay`` ms late;
- *Jitter*: every layer on every rank is ``s * u`` % slower, ``u`` uniform in
  [0, 1) drawn from ``seed``;
- *Contention: busier but slower*: equal ranks, and backward slows while a
  transfer is in flight (``contention``);
- *Ranks disagree*: rank 1 takes another branch and never produces the
  gradient of the middle layer (``n // 2 + 1``, layer 7 of 12).

Semantics are ``ranks.rank_schedule``'s (readiness per rank, launch in
bucket-index order plus the host's enqueue cost, one FIFO link, contention)
with the bucket timeline's cost and bucketing, and the same origin: time 0 is
the start of backward on a rank that is on time. Step time is
``forward + optimizer_start + optimizer``. With one drawn rank and no
contention, enqueue cost or delay this is exactly the bucket timeline's
schedule (``bucket_config()`` gives the matching ``BucketConfig``).

Worked example (*One slow rank* with no enqueue cost: 12 layers of 1.8 ms,
rank 0 50 % slower, 3 layers of 25 MB per bucket, 8 ranks on 25 GB/s, 0.05 ms
per ring step): rank 0's backward ends at 32.40 ms, the last 5.95 ms transfer
at 38.35 ms, so every on-time rank (backward end 21.60 ms) waits 16.75 ms
before the optimizer, the bucket timeline's Straggler preset seen per rank.
With the default 0.05 ms enqueue cost every launch, so every start, is
0.05 ms later: the wait is 16.80 ms.

Not modelled: what the collective does with a rank that never joins (the
view states what PyTorch does); topology; stream priority.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import param

from . import step_settings
from .buckets import BucketConfig, assign_by_count, ring_allreduce_ms
from .ranks import RankSchedule, rank_schedule
from .settings import setting

ONE_SLOW = "One slow rank"
TWO_PARTIAL = "Two partial stragglers"
DATA_LOADING = "Data loading delays one rank"
JITTER = "Jitter"
CONTENTION = "Contention: busier but slower"
DISAGREE = "Ranks disagree"
SCENARIOS = (ONE_SLOW, TWO_PARTIAL, DATA_LOADING, JITTER, CONTENTION, DISAGREE)
MAX_DRAWN = 8
MAX_LAYERS = 24


class RanksConfig(param.Parameterized):
    """Every setting of the ranks view, one declaration each."""

    drawn_ranks = param.Integer(
        default=4,
        bounds=(1, MAX_DRAWN),
        label="Drawn ranks",
        doc="How many ranks the timeline draws, each with its own backward.",
        metadata=setting("ranks"),
    )
    ranks = param.Integer(
        default=8,
        bounds=(2, 4096),
        label="Ring ranks",
        doc="Ranks in the ring all-reduce, which sets each transfer's cost; the drawn "
        "ranks are the first of them (never fewer than the drawn ranks).",
        metadata=setting("ranks"),
    )
    n_layers = param.Integer(
        default=12,
        bounds=(2, MAX_LAYERS),
        label="Layers",
        doc="Number of layers; backward runs from the last to the first.",
        metadata=setting("layers"),
    )
    layers_per_bucket = step_settings.layers_per_bucket(MAX_LAYERS)
    backward_ms = step_settings.backward_ms(
        1.8, doc="Time one layer's backward takes on a rank that is not slowed, in ms."
    )
    grad_mb = step_settings.grad_mb()
    bandwidth = step_settings.bandwidth()
    latency_ms = step_settings.latency_ms()
    enqueue_ms = param.Number(
        default=0.05,
        bounds=(0.0, 100.0),
        label="Host enqueue cost",
        doc="Host time to launch one collective, in ms: the call returns after this, "
        "long before the collective completes.",
        metadata=setting("ms"),
    )
    contention = param.Number(
        default=0.0,
        bounds=(0.0, 10.0),
        label="Contention factor",
        doc="While a transfer is in flight, backward runs at 1/(1 + c) of its speed "
        "(communication takes compute units on a GPU, cores on a CPU).",
        metadata=setting("", hint="0 to 10; 1 halves backward speed during a transfer"),
    )
    slowdown_pct = param.Number(
        default=50.0,
        bounds=(0.0, 500.0),
        label="Slowdown",
        doc="How much slower a straggler's backward is, in %: rank 0's in One slow rank "
        "(rank 1's is twice this in Two partial stragglers); the largest jitter.",
        metadata=setting("%"),
    )
    delay_ms = param.Number(
        default=6.0,
        bounds=(0.0, 1000.0),
        label="Data loading delay",
        doc="How late rank 0 starts backward when data loading delays it, in ms.",
        metadata=setting("ms"),
    )
    seed = param.Integer(
        default=1,
        bounds=(0, 9999),
        label="Jitter seed",
        doc="Seed of the random jitter: the same seed gives the same step.",
        metadata=setting(""),
    )
    forward_ms = step_settings.forward_ms()
    optimizer_ms = step_settings.optimizer_ms(
        doc="Optimizer step time, which starts once every rank's backward and every "
        "collective have ended, in ms."
    )
    scenario = param.Selector(
        default=ONE_SLOW,
        objects=list(SCENARIOS),
        label="Scenario",
        doc="How the ranks differ. Choosing one also loads its settings.",
        metadata=setting("", hint="How the ranks differ; loads its settings."),
    )

    @classmethod
    def from_scenario(cls, name: str, **overrides) -> RanksConfig:
        """A configuration set to one of ``SCENARIO_SETTINGS``, then ``overrides``."""
        return cls(**{**SCENARIO_SETTINGS[name], **overrides})

    # -- what the settings mean -------------------------------------------------------

    @property
    def ring_ranks(self) -> int:
        """Ranks in the ring: the setting, raised to the drawn ranks if below them."""
        return max(self.ranks, self.drawn_ranks)

    def assignment(self) -> np.ndarray:
        """Bucket index of each layer (index 0 = layer 1); bucket 0 holds the last layers."""
        return assign_by_count(self.n_layers, self.layers_per_bucket)

    def bucket_sizes(self, assignment: np.ndarray | None = None) -> np.ndarray:
        """Size of each bucket in MB (summed as the bucket timeline sums them)."""
        a = self.assignment() if assignment is None else assignment
        size = np.zeros(int(a.max()) + 1)
        np.add.at(size, a, np.full(self.n_layers, self.grad_mb))
        return size

    def transfer_ms(self, assignment: np.ndarray | None = None) -> np.ndarray:
        """Each bucket's ring all-reduce time at full speed."""
        sizes = self.bucket_sizes(assignment)
        return ring_allreduce_ms(sizes, self.ring_ranks, self.bandwidth, self.latency_ms)

    def skipped_layer(self) -> int:
        """The layer (1-based) rank 1 never computes in *Ranks disagree*."""
        return self.n_layers // 2 + 1

    def rank_work(self) -> tuple[np.ndarray, np.ndarray]:
        """(R, L) backward time of each layer on each drawn rank (index 0 = layer 1)
        and (R,) when each rank's backward starts."""
        n, r = self.n_layers, self.drawn_ranks
        work = np.full((r, n), float(self.backward_ms))
        start = np.zeros(r)
        s = self.slowdown_pct / 100.0
        upper = np.arange(n) >= n // 2  # layers n..n/2+1, computed first
        if self.scenario == ONE_SLOW:
            work[0] *= 1.0 + s
        elif self.scenario == TWO_PARTIAL:
            work[0, upper] *= 1.0 + s
            if r > 1:
                work[1, ~upper] *= 1.0 + 2.0 * s
        elif self.scenario == DATA_LOADING:
            start[0] = self.delay_ms
        elif self.scenario == JITTER:
            rng = np.random.default_rng(self.seed)
            work *= 1.0 + s * rng.random((r, n))
        return work, start

    def bucket_config(self) -> BucketConfig:
        """The bucket timeline's settings for rank 0 of this step (its backward profile)."""
        hi = BucketConfig.param.layers_per_bucket.bounds[1]
        if self.layers_per_bucket > hi:
            raise ValueError(f"the bucket timeline takes at most {hi} layers per bucket")
        work, _ = self.rank_work()
        return BucketConfig(
            n_layers=self.n_layers,
            layers_per_bucket=self.layers_per_bucket,
            layer_backward_ms=work[0],
            grad_mb=self.grad_mb,
            bandwidth=self.bandwidth,
            latency_ms=self.latency_ms,
            ranks=self.ring_ranks,
            forward_ms=self.forward_ms,
            optimizer_ms=self.optimizer_ms,
        )

    def schedule(self, layers_per_bucket: int | None = None) -> RankSchedule:
        """The event-driven schedule of the drawn ranks (any scenario but *Ranks disagree*)."""
        k = self.layers_per_bucket if layers_per_bucket is None else layers_per_bucket
        a = assign_by_count(self.n_layers, k)
        work, start = self.rank_work()
        return rank_schedule(
            work,
            a,
            self.transfer_ms(a),
            order=np.arange(self.n_layers)[::-1],
            start_ms=start,
            enqueue_ms=self.enqueue_ms,
            contention=self.contention,
        )

    def result(self) -> RanksResult:
        """Everything the view shows for these settings."""
        a = self.assignment()
        n_buckets = int(a.max()) + 1
        layers = np.arange(1, self.n_layers + 1)
        bucket_layers = tuple(layers[a == b][::-1] for b in range(n_buckets))
        common = {
            "scenario": self.scenario,
            "bucket_layers": bucket_layers,
            "bucket_size_mb": self.bucket_sizes(a),
            "transfer_ms": self.transfer_ms(a),
            "ring_ranks": self.ring_ranks,
            "forward_ms": float(self.forward_ms),
            "optimizer_ms": float(self.optimizer_ms),
        }
        if self.scenario == DISAGREE:
            return RanksResult(**common, schedule=None, disagreement=self.disagreement())
        return RanksResult(**common, schedule=self.schedule(), disagreement=None)

    def disagreement(self) -> Disagreement:
        """Each rank's launched collectives when rank 1 never computes the skipped layer."""
        a = self.assignment()
        sizes = self.bucket_sizes(a)
        layer = self.skipped_layer()
        stuck = int(a[layer - 1])
        shown = max(2, self.drawn_ranks)
        full = tuple(Collective(b, float(sizes[b])) for b in range(sizes.size))
        sequences = tuple(full[:stuck] if r == 1 else full for r in range(shown))
        return Disagreement(
            sequences=sequences,
            mismatch_index=stuck,
            skipping_rank=1,
            skipped_layer=layer,
        )


@dataclass(frozen=True)
class Collective:
    """One launched all-reduce: which bucket, how many MB."""

    bucket: int
    size_mb: float


@dataclass(frozen=True)
class Disagreement:
    """Ranks that run different collectives: there is no timeline, only sequences.

    Rank ``skipping_rank`` takes a branch that never produces layer
    ``skipped_layer``'s gradient (a skipped layer, or a parameter left unused
    without ``find_unused_parameters=True``). Its bucket ``mismatch_index`` is
    then never ready there, and since buckets launch in index order, neither
    it nor any later bucket is ever launched on that rank: the sequences agree
    on collectives ``0 .. mismatch_index - 1`` and stop matching at collective
    ``mismatch_index``, where every other rank waits for a partner that never
    comes. Example: 12 layers, 3 per bucket, rank 1 skips layer 7: buckets hold
    layers 12–10, 9–7, 6–4, 3–1, so the sequences stop matching at collective 1
    (bucket 1); rank 1 has launched only bucket 0.
    """

    sequences: tuple[tuple[Collective, ...], ...]  # per shown rank, in launch order
    mismatch_index: int
    skipping_rank: int
    skipped_layer: int

    @property
    def matched(self) -> int:
        """Collectives every rank launched before the sequences stop matching."""
        return self.mismatch_index

    @property
    def waiting_ranks(self) -> list[int]:
        """The ranks that launch the mismatched collective and wait in it."""
        return [r for r, seq in enumerate(self.sequences) if len(seq) > self.mismatch_index]

    def outcome(self) -> str:
        """What happens to the job, as PyTorch reports it."""
        k, r, layer = self.mismatch_index, self.skipping_rank, self.skipped_layer
        others = ", ".join(str(x) for x in self.waiting_ranks)
        return (
            f"The job hangs at collective {k}. Ranks {others} launch the all-reduce of bucket "
            f"{k} and wait in it for rank {r}, which never launches it: layer {layer}'s "
            f"gradient never arrives there, and buckets launch in index order, so no later "
            f"bucket launches on rank {r} either. The waiting ranks stay blocked until the "
            "collective times out (an NCCL watchdog or gloo timeout error). Rank "
            f"{r}'s backward returns with bucket {k} unreduced, and its next iteration fails "
            "with “Expected to have finished reduction in the prior iteration before starting "
            "a new one”. With TORCH_DISTRIBUTED_DEBUG=DETAIL, PyTorch checks that every rank "
            f"runs the same collective, reports the mismatch, and names the parameters that "
            f"received no gradient on rank {r}."
        )

    @staticmethod
    def fix() -> str:
        """What makes the ranks agree again."""
        return (
            "Make every rank run the same branch (the same layers, every step), or construct "
            "DDP with find_unused_parameters=True: it marks parameters that got no gradient "
            "as ready after forward, so their bucket still launches on every rank (at the "
            "cost of a graph traversal every step)."
        )


@dataclass(frozen=True, eq=False)
class RanksResult:
    """The ranks view's numbers: a schedule, or a disagreement and no timeline."""

    scenario: str
    bucket_layers: tuple[np.ndarray, ...]  # per bucket, its layers (1-based), highest first
    bucket_size_mb: np.ndarray
    transfer_ms: np.ndarray  # at full speed
    ring_ranks: int
    forward_ms: float
    optimizer_ms: float
    schedule: RankSchedule | None
    disagreement: Disagreement | None

    @property
    def n_buckets(self) -> int:
        """Number of buckets."""
        return self.bucket_size_mb.size

    @property
    def step_time(self) -> float:
        """Forward + start of the optimizer + optimizer (NaN when there is no timeline)."""
        if self.schedule is None:
            return float("nan")
        return self.forward_ms + self.schedule.optimizer_start + self.optimizer_ms

    @property
    def fastest_rank(self) -> int:
        """The rank whose backward ends first (it idles longest)."""
        return int(np.argmin(self.schedule.backward_end))

    @property
    def fastest_idle_ms(self) -> float:
        """How long the fastest rank waits between its backward end and the optimizer."""
        return float(self.schedule.idle_ms[self.fastest_rank])

    @property
    def defining_mask(self) -> np.ndarray:
        """(R, B) every rank whose launch of a bucket was the last (ties give several)."""
        launch = self.schedule.bucket_launch
        tol = 1e-9 * max(1.0, float(np.abs(launch).max()))
        return launch >= launch.max(axis=0) - tol

    @property
    def tied(self) -> np.ndarray:
        """(B,) whether more than one rank launched a bucket last, at the same time."""
        return self.defining_mask.sum(axis=0) > 1

    @property
    def global_ready(self) -> np.ndarray:
        """(B,) when each bucket is ready on every rank: the latest rank's readiness."""
        return self.schedule.bucket_ready.max(axis=0)

    @property
    def defining_ranks(self) -> np.ndarray:
        """(B,) the rank whose launch came last, so defined when each bucket could start."""
        return self.schedule.bucket_defining_rank

    def issue_to_completion(self, rank: int = 0) -> np.ndarray:
        """(B,) time from a rank's launch of each collective to its completion."""
        s = self.schedule
        return s.bucket_end - s.bucket_launch[rank]


SCENARIO_SETTINGS: dict[str, dict] = {
    name: {
        **{k: RanksConfig.param[k].default for k in RanksConfig.param if k != "name"},
        "scenario": name,
    }
    for name in SCENARIOS
}
# The bucket timeline's Straggler preset, with each rank drawn: the on-time ranks'
# 16.75 ms of waiting becomes visible.
SCENARIO_SETTINGS[ONE_SLOW].update(backward_ms=1.8, slowdown_pct=50.0)
# Two layers per bucket, so that each bucket sits within one straggler's half.
SCENARIO_SETTINGS[TWO_PARTIAL].update(backward_ms=2.0, layers_per_bucket=2, slowdown_pct=50.0)
SCENARIO_SETTINGS[DATA_LOADING].update(backward_ms=2.0, delay_ms=6.0)
SCENARIO_SETTINGS[JITTER].update(backward_ms=2.0, slowdown_pct=40.0, seed=1)
# Without contention one layer per bucket is the fastest setting here; with c = 1
# it overlaps most (92 %) and is slower than five layers per bucket.
SCENARIO_SETTINGS[CONTENTION].update(
    backward_ms=2.0, layers_per_bucket=1, contention=1.0, bandwidth=50.0
)
SCENARIO_SETTINGS[DISAGREE].update(backward_ms=2.0)

SCENARIO_DESCRIPTIONS: dict[str, str] = {
    ONE_SLOW: "Rank 0's backward is slower on every layer: it defines every bucket's "
    "readiness, and the other ranks wait for it before the optimizer.",
    TWO_PARTIAL: "Rank 0 is slow on the upper half of the layers, rank 1 (twice as slow) on "
    "the lower half: early buckets wait for rank 0, late ones for rank 1.",
    DATA_LOADING: "Rank 0 starts backward late because its data arrived late: every bucket "
    "waits for it.",
    JITTER: "Every layer on every rank is randomly a little slower: the rank that defines "
    "readiness changes from bucket to bucket.",
    CONTENTION: "Backward slows while a transfer runs: more, smaller buckets overlap more, "
    "yet the step gets slower.",
    DISAGREE: "Rank 1 takes another branch and skips a layer: the ranks no longer run the "
    "same collectives, and the job hangs.",
}


@dataclass(frozen=True, eq=False)
class RanksSweep:
    """Step time and overlap share for every layers-per-bucket value, 1..n."""

    setting: np.ndarray
    n_buckets: np.ndarray
    step_time: np.ndarray
    overlap_fraction: np.ndarray

    @property
    def best_index(self) -> int:
        """The shortest step (ties go to the larger bucket)."""
        step = self.step_time
        return int(np.flatnonzero(np.isclose(step, step.min(), rtol=1e-12, atol=0.0))[-1])


def sweep_layers_per_bucket(config: RanksConfig) -> RanksSweep:
    """Every layers-per-bucket value, each an event-driven schedule (not for *Ranks disagree*)."""
    ks = np.arange(1, config.n_layers + 1)
    steps, overlaps, counts = [], [], []
    for k in ks:
        s = config.schedule(int(k))
        steps.append(config.forward_ms + s.optimizer_start + config.optimizer_ms)
        overlaps.append(s.overlap_fraction)
        counts.append(s.n_buckets)
    return RanksSweep(ks, np.array(counts), np.array(steps), np.array(overlaps))
