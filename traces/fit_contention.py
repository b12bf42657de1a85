"""One contention for backward and transfers, matched with the predictor.

When all-reduces and backward were timed alone, overhead, bandwidth and
backward are fixed by them, and what is left to read off the overlap is how
much the ranks slow each other. On shared cores a compute thread and a
communication thread share a core about evenly, so backward under a transfer
and a transfer under backward are slowed alike: the transfer contention c_t is
the most slowed rank's factor c (the other ranks keep their ratio to it, from
the gradient intervals). It is the one factor whose schedules end backward
when the fitted layouts did. The collectives in flight at once come from the
backend: gloo's worker threads run two, so a transfer's overhead hides behind
the previous bucket's bytes.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .fit_record import Fit
from .load import Trace
from .measure import measure, quiet_iterations
from .predict import predict_layout

GLOO_WORKER_THREADS = 2  # ProcessGroupGloo's default: all-reduces in flight at once
MATCH_GRID = np.linspace(0.0, 4.0, 81)


def collectives_in_flight(traces: list[Trace]) -> int:
    """How many all-reduces the fitted runs could have in flight at once.

    Gloo's pool of worker threads runs two (``GLOO_WORKER_THREADS``); NCCL, and
    any run whose backend is not named, one after another."""
    backends = {t.metadata.get("backend") for t in traces}
    return GLOO_WORKER_THREADS if backends == {"gloo"} else 1


def match_contention(f: Fit, traces: list[Trace], max_other_load: float | None) -> Fit:
    """``f`` with one contention for backward and transfers, matched to when the fitted
    layouts' backward ended.

    The most slowed rank's factor c and the transfer contention c_t are one
    number; the other ranks keep their ratio to the most slowed one read off the
    gradient intervals (all alike when none was read). It is the number whose
    schedules end backward (the last rank's last gradient) closest to the fitted
    layouts' medians, squared error, every layout alike: on a grid of 0.05, then
    0.005.
    """
    targets = []
    for t in traces:
        keep = quiet_iterations(t, max_other_load)
        targets.append((t.bucket_parameters, float(np.median(measure(t).compute_end_ms[keep]))))
    read = np.asarray(f.rank_contention, float)
    shape = read / read.max() if read.max() > 0 else np.ones_like(read)

    def with_factor(c: float) -> Fit:
        return replace(f, rank_contention=tuple(float(x) for x in shape * c), transfer_contention=c)

    def error(c: float) -> float:
        g = with_factor(float(c))
        return sum(
            (predict_layout(g, layout).compute_end_ms - measured) ** 2
            for layout, measured in targets
        )

    best = float(MATCH_GRID[int(np.argmin([error(c) for c in MATCH_GRID]))])
    fine = np.clip(np.linspace(best - 0.05, best + 0.05, 21), 0.0, None)
    c = float(fine[int(np.argmin([error(x) for x in fine]))])
    matched = with_factor(c)
    pooled = f.contention * c / read.max() if read.max() > 0 else c
    return replace(matched, contention=float(pooled))
