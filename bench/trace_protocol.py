"""The validation protocol's pure logic: workloads, cases, targets and the tally (no torch).

``bench/trace_prediction.py`` records each workload and runs every case; this
module says what a workload is, which cases there are, what counts as a hit,
and how the cases add up, so that all of it can be unit-tested by hand.

- A **workload** is a model (feature sizes through bias-free linear layers),
  torch threads per rank, and three or four bucket caps recorded together,
  their iterations alternating. Where the ranks' threads outnumber the cores
  (two threads per rank on two cores), ``overlap-lab record`` has them sleep
  while they wait (``traces.recorder.demo.rank_environment``).
- Its **cases** are every fit-two-predict-one choice: each pair of layouts
  fitted, each other layout predicted (4 layouts: 6 pairs x 2 targets = 12).
- A case **hits** when backward return is within ``RETURN_TARGET_PCT`` of the
  measured median and the exposed tail within max(``TAIL_TARGET_PCT``,
  ``TAIL_TARGET_MS``); the model must also be **at least as close as the
  baseline** on the exposed tail (within ``TIE_MS``, the rounding of a
  comparison). A refused case (the fit cannot constrain a term it needs) is
  no hit: it is counted, with its reason.
- Whether the model is farther than the baseline **beyond the measurement's
  noise**: the measured tail is the median of some 30 iterations, so where
  the two predictions differ by less than that median's own spread, which one
  is closer is a coin toss. ``farther_share`` resamples the iterations and
  counts how often the model is the farther; at ``NOISE_SHARE`` or more the
  case counts as farther beyond noise. Likewise the measured backward
  return's median has a bootstrap interval (``median_interval``), and a
  return that misses its 10 % but lies inside that interval is counted as a
  miss **inside the measurement's noise**. Both are reported beside the
  targets, not instead of them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

RETURN_TARGET_PCT = 10.0
TAIL_TARGET_PCT, TAIL_TARGET_MS = 20.0, 5.0
SHARE_TARGET = 0.9  # of all cases, for each of the two targets
TIE_MS = 1e-3  # comparisons are rounded to the microsecond
MIB = 1024 * 1024
NOISE_RESAMPLES = 2000
NOISE_SHARE = 0.95  # farther in at least this share of resamples: farther beyond noise


@dataclass(frozen=True)
class Workload:
    """A model, threads per rank and the bucket caps recorded together."""

    name: str
    widths: tuple[int, ...]  # feature sizes: L + 1 for L layers
    threads: int
    caps_mb: dict[str, float]  # layout name -> DDP's bucket_cap_mb

    @property
    def layer_mib(self) -> tuple[float, ...]:
        """Each layer's gradient in MiB (float32)."""
        return tuple(a * b * 4 / MIB for a, b in itertools.pairwise(self.widths))


def _square(width: int, layers: int = 12) -> tuple[int, ...]:
    return (width,) * (layers + 1)


def _caps(layer_mib: float) -> dict[str, float]:
    """Caps for 1 and 3 layers per bucket, one bucket, and 5 + 5 + 2, for equal layers of
    ``layer_mib``: a bucket closes once it reaches the cap, so a cap a little under n
    layers' size makes buckets of n layers."""
    return {
        "1 per bucket": layer_mib / 2,
        "3 per bucket": 2.75 * layer_mib,
        "one bucket": 100 * layer_mib,
        "5+5+2": 4.75 * layer_mib,
    }


# Layers of 8, 4, 2, 6, 3, 4, 8, 3, 3, 2, 2 and 4 MiB (49 MiB in all).
MIXED_WIDTHS = (1024, 2048, 512, 1024, 1536, 512, 2048, 1024, 768, 1024, 512, 1024, 1024)

WORKLOADS = (
    Workload("width 1024, 1 thread", _square(1024), 1, _caps(4.0)),
    Workload("width 512, 1 thread", _square(512), 1, _caps(1.0)),
    Workload("width 2048, 1 thread", _square(2048), 1, _caps(16.0)),
    Workload("width 1024, 2 threads", _square(1024), 2, _caps(4.0)),
    Workload(
        "layers of 2 to 8 MiB, 1 thread",
        MIXED_WIDTHS,
        1,
        {
            "1 per bucket": 1.0,
            "about 3 per bucket": 11.0,
            "one bucket": 100.0,
            "about 19 MiB": 19.0,
        },
    ),
)


def cases(layouts: list[str]) -> list[tuple[tuple[str, str], str]]:
    """Every fit-two-predict-one case: ((fitted, fitted), target), pairs in order."""
    return [
        (pair, target)
        for pair in itertools.combinations(layouts, 2)
        for target in layouts
        if target not in pair
    ]


def return_ok(predicted: float, measured: float) -> bool:
    """Backward return within ``RETURN_TARGET_PCT`` of the measurement."""
    return abs(predicted - measured) <= RETURN_TARGET_PCT / 100 * measured


def tail_ok(predicted: float, measured: float) -> bool:
    """Exposed tail within max(``TAIL_TARGET_PCT``, ``TAIL_TARGET_MS``) of the measurement."""
    return abs(predicted - measured) <= max(TAIL_TARGET_PCT / 100 * measured, TAIL_TARGET_MS)


def at_least_as_close(model: float, baseline: float, measured: float) -> bool:
    """The model's miss is no larger than the baseline's (within ``TIE_MS``)."""
    return abs(model - measured) <= abs(baseline - measured) + TIE_MS


def _resampled_medians(values: np.typing.ArrayLike, resamples: int, seed: int) -> np.ndarray:
    """Medians of ``resamples`` bootstrap resamples of ``values`` (one per iteration)."""
    v = np.asarray(values, float).reshape(-1)
    if v.size == 0:
        raise ValueError("no measurements to resample")
    rng = np.random.default_rng(seed)
    return np.median(v[rng.integers(0, v.size, (resamples, v.size))], axis=1)


def farther_share(
    model: float,
    baseline: float,
    tails: np.typing.ArrayLike,
    resamples: int = NOISE_RESAMPLES,
    seed: int = 0,
) -> float:
    """Share of bootstrap resamples of the measured tails (``tails``: one per iteration)
    whose median the model's prediction misses by more than the baseline's
    (``at_least_as_close`` fails). Reproducible by ``seed``."""
    medians = _resampled_medians(tails, resamples, seed)
    return float(np.mean(np.abs(model - medians) > np.abs(baseline - medians) + TIE_MS))


def median_interval(
    values: np.typing.ArrayLike, resamples: int = NOISE_RESAMPLES, seed: int = 0
) -> tuple[float, float]:
    """90 % bootstrap interval of the median of ``values`` (one per iteration)."""
    low, high = np.percentile(_resampled_medians(values, resamples, seed), [5, 95])
    return float(low), float(high)


@dataclass(frozen=True)
class Tally:
    """How the cases add up against the targets."""

    cases: int
    refused: int
    return_hits: int
    tail_hits: int
    closer_than_baseline: int
    baseline_return_hits: int
    baseline_tail_hits: int
    farther_beyond_noise: int = 0  # rows whose ``farther_share`` is at least NOISE_SHARE
    return_misses_in_noise: int = 0  # missed returns inside the measured median's interval

    @property
    def met(self) -> bool:
        """Both shares reach ``SHARE_TARGET`` and the model is never farther than the baseline."""
        n = self.cases
        return (
            n > 0
            and self.return_hits >= SHARE_TARGET * n
            and self.tail_hits >= SHARE_TARGET * n
            and self.closer_than_baseline == n
        )


def tally(rows: list[dict]) -> Tally:
    """Count ``rows`` (one per case: ``refused`` or the predicted and measured numbers of
    ``model`` and ``baseline``, each ``{"return": (p, m), "tail": (p, m)}``, and, where
    known, ``farther_share`` and ``return_interval``, the measured median's interval)."""
    refused = sum(1 for r in rows if r.get("refused"))
    done = [r for r in rows if not r.get("refused")]

    def hits(who: str, key: str, ok) -> int:
        return sum(1 for r in done if ok(*r[who][key]))

    return Tally(
        cases=len(rows),
        refused=refused,
        return_hits=hits("model", "return", return_ok),
        tail_hits=hits("model", "tail", tail_ok),
        closer_than_baseline=sum(
            1
            for r in done
            if at_least_as_close(
                r["model"]["tail"][0], r["baseline"]["tail"][0], r["model"]["tail"][1]
            )
        ),
        baseline_return_hits=hits("baseline", "return", return_ok),
        baseline_tail_hits=hits("baseline", "tail", tail_ok),
        farther_beyond_noise=sum(1 for r in done if r.get("farther_share", 0.0) >= NOISE_SHARE),
        return_misses_in_noise=sum(
            1
            for r in done
            if "return_interval" in r
            and not return_ok(*r["model"]["return"])
            and r["return_interval"][0] <= r["model"]["return"][0] <= r["return_interval"][1]
        ),
    )
