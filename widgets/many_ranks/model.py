"""Many ranks, real events: the ranks view's settings, its scenarios, and what they give.

``RanksConfig`` holds every setting once; ``RanksConfig.result()`` turns them
into a ``RanksResult`` (``result``): either a schedule on every drawn rank (solved by
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
  gradient of the middle layer (``n // 2 + 1``, layer 7 of 12);
- *Readiness order differs*: on odd-numbered ranks backward computes each pair
  of layers the other way round (11, 12, 9, 10, ... of 12 where rank 0 goes
  12, 11, 10, 9, ...), as when a model's independent branches finish in a
  different order on each rank.

**Whose buckets.** DDP cuts its buckets once, after iteration 0, from the
order in which gradients became ready *on rank 0*, and broadcasts that
assignment to every rank (``Reducer::rebuild_buckets`` calls
``sync_bucket_indices``, which broadcasts rank 0's bucket indices; both in
``torch/csrc/distributed/c10d/reducer.cpp``). So every rank launches the same
buckets, holding the same layers, in the same index order, whatever its local
order; a rank whose order differs only finds a bucket ready later. Here
``iteration`` 0 is one bucket (DDP's default flags, ``_ddp_init_helper`` in
``torch/nn/parallel/distributed.py``: ``[sys.maxsize]``), and iterations 1 and
later cut ``layers_per_bucket`` layers per bucket in rank 0's order.

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

import numpy as np
import param

from ..model import step_settings
from ..model.buckets import BucketConfig
from ..model.buckets.cost import allreduce_ms
from ..model.named import NamedConfigurations
from ..model.rank_schedule import RankSchedule
from ..model.ranks import rank_schedule
from ..model.settings import setting
from .result import Collective, Disagreement, RanksResult, RanksSweep

ONE_SLOW = "One slow rank"
TWO_PARTIAL = "Two partial stragglers"
DATA_LOADING = "Data loading delays one rank"
JITTER = "Jitter"
CONTENTION = "Contention: busier but slower"
DISAGREE = "Ranks disagree"
READINESS = "Readiness order differs"
SCENARIO_NAMES = (ONE_SLOW, TWO_PARTIAL, DATA_LOADING, JITTER, CONTENTION, DISAGREE, READINESS)
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
    ranks = step_settings.ranks(
        "Ring ranks",
        doc="Ranks in the ring all-reduce, which sets each transfer's cost; the drawn "
        "ranks are the first of them (never fewer than the drawn ranks).",
    )
    n_layers = step_settings.n_layers(
        MAX_LAYERS, 2, doc="Number of layers; backward runs from the last to the first."
    )
    layers_per_bucket = step_settings.layers_per_bucket(MAX_LAYERS)
    backward_ms = step_settings.backward_ms(
        1.8, doc="Time one layer's backward takes on a rank that is not slowed, in ms."
    )
    grad_mb = step_settings.grad_mb()
    bandwidth = step_settings.bandwidth()
    latency_ms = step_settings.latency_ms()
    algorithm = step_settings.algorithm()
    iteration = param.Integer(
        default=1,
        bounds=(0, 1000),
        label="Iteration",
        doc="Which training iteration to show. In iteration 0 DDP (default flags) reduces "
        "every gradient as one bucket after backward; it then rebuilds its buckets from the "
        "order gradients became ready on rank 0 and broadcasts them to every rank "
        "(Reducer::rebuild_buckets, sync_bucket_indices), used from iteration 1 on.",
        metadata=setting(hint="0 is the first iteration; 1 and later are alike."),
    )
    enqueue_ms = step_settings.enqueue_ms(
        0.05,
        "Host enqueue cost",
        doc="Host time to launch one collective, in ms: the call returns after this, "
        "long before the collective completes.",
    )
    contention = param.Number(
        default=0.0,
        bounds=(0.0, 10.0),
        label="Contention factor",
        doc="While a transfer is in flight, backward runs at 1/(1 + c) of its speed "
        "(communication takes compute units on a GPU, cores on a CPU).",
        metadata=setting("", hint="0 to 10; 1 halves backward speed during a transfer"),
    )
    slowdown_pct = step_settings.slowdown_pct(
        50.0,
        "Slowdown",
        doc="How much slower a straggler's backward is, in %: rank 0's in One slow rank "
        "(rank 1's is twice this in Two partial stragglers); the largest jitter.",
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
        objects=list(SCENARIO_NAMES),
        label="Scenario",
        doc="How the ranks differ. Choosing one also loads its settings.",
        metadata=setting("", hint="How the ranks differ; loads its settings."),
    )

    @property
    def ring_ranks(self) -> int:
        """Ranks in the ring: the setting, raised to the drawn ranks if below them."""
        return max(self.ranks, self.drawn_ranks)

    def rank_orders(self) -> np.ndarray:
        """(R, L) layer indices (0 = layer 1) in the order each drawn rank's backward
        computes them: last layer first, each pair swapped on odd ranks in *Readiness
        order differs*."""
        n, r = self.n_layers, self.drawn_ranks
        standard = np.arange(n)[::-1]
        orders = np.tile(standard, (r, 1))
        if self.scenario == READINESS:
            swapped = standard.copy()
            pairs = n - n % 2
            swapped[:pairs] = swapped[:pairs].reshape(-1, 2)[:, ::-1].reshape(-1)
            orders[1::2] = swapped
        return orders

    def own_assignment(self, rank: int, layers_per_bucket: int | None = None) -> np.ndarray:
        """The buckets rank ``rank`` would cut from its own readiness order (index 0 =
        layer 1): what DDP does *not* use, since every rank takes rank 0's."""
        k = self.layers_per_bucket if layers_per_bucket is None else layers_per_bucket
        if self.iteration == 0:
            return np.zeros(self.n_layers, int)
        order = self.rank_orders()[rank]
        position = np.empty(self.n_layers, int)
        position[order] = np.arange(self.n_layers)
        return position // k

    def assignment(self, layers_per_bucket: int | None = None) -> np.ndarray:
        """Bucket index of each layer (index 0 = layer 1) on every rank: one bucket in
        iteration 0, else rank 0's rebuilt buckets (bucket 0 first ready on rank 0)."""
        return self.own_assignment(0, layers_per_bucket)

    def bucket_sizes(self, assignment: np.ndarray | None = None) -> np.ndarray:
        """Size of each bucket in MB (summed as the bucket timeline sums them)."""
        a = self.assignment() if assignment is None else assignment
        size = np.zeros(int(a.max()) + 1)
        np.add.at(size, a, np.full(self.n_layers, self.grad_mb))
        return size

    def transfer_ms(self, assignment: np.ndarray | None = None) -> np.ndarray:
        """Each bucket's ring all-reduce time at full speed."""
        sizes = self.bucket_sizes(assignment)
        return allreduce_ms(sizes, self.ring_ranks, self.bandwidth, self.latency_ms, self.algorithm)

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
            algorithm=self.algorithm,
            iteration=self.iteration,
            ranks=self.ring_ranks,
            forward_ms=self.forward_ms,
            optimizer_ms=self.optimizer_ms,
        )

    def schedule(self, layers_per_bucket: int | None = None) -> RankSchedule:
        """The event-driven schedule of the drawn ranks (any scenario but *Ranks disagree*)."""
        a = self.assignment(layers_per_bucket)
        work, start = self.rank_work()
        return rank_schedule(
            work,
            a,
            self.transfer_ms(a),
            order=self.rank_orders(),
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
        common["iteration"] = self.iteration
        common["own_buckets"] = tuple(self.own_assignment(r) for r in range(self.drawn_ranks))
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


# What each scenario sets apart from the defaults (``SCENARIOS`` fills in the rest).
_OWN: dict[str, dict] = {
    # The bucket timeline's Straggler preset, with each rank drawn: the on-time ranks'
    # 16.75 ms of waiting becomes visible.
    ONE_SLOW: dict(backward_ms=1.8, slowdown_pct=50.0),
    # Two layers per bucket, so that each bucket sits within one straggler's half.
    TWO_PARTIAL: dict(backward_ms=2.0, layers_per_bucket=2, slowdown_pct=50.0),
    DATA_LOADING: dict(backward_ms=2.0, delay_ms=6.0),
    JITTER: dict(backward_ms=2.0, slowdown_pct=40.0, seed=1),
    # Without contention one layer per bucket is the fastest setting here; with c = 1
    # it overlaps most (92 %) and is slower than five layers per bucket.
    CONTENTION: dict(backward_ms=2.0, layers_per_bucket=1, contention=1.0, bandwidth=50.0),
    DISAGREE: dict(backward_ms=2.0),
    # Two drawn ranks; rank 1 computes 11, 12, 9, 10, ...: each of rank 0's buckets is
    # ready there as late or later (2 ms later for buckets 0 and 2).
    READINESS: dict(backward_ms=2.0, drawn_ranks=2),
}

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
    READINESS: "Rank 1 computes each pair of layers the other way round. After iteration 0 "
    "DDP broadcasts rank 0's buckets to every rank (Reducer::rebuild_buckets, "
    "sync_bucket_indices), so both launch the same buckets in the same order; rank 1 just "
    "has each one ready later.",
}

SCENARIOS = NamedConfigurations(RanksConfig, "scenario", _OWN, SCENARIO_DESCRIPTIONS)


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
