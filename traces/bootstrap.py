"""How sure a fit is: bootstrap intervals over iterations.

A resample draws the fitted traces' iterations with replacement (traces of one
run, whose iterations alternated, draw the same positions, so a round of the
run stays together, with its repetition of each all-reduce timed alone and its
backward alone when there is one per round; else those are drawn on their
own); the fit is repeated on it. A
term's interval is the 5th to 95th percentile of its value over the resamples
(a 90 % interval). Resamples whose fit fails (for example, no positive
bandwidth) are left out; the count kept is the fit's ``resamples``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from .fit_record import term_values
from .load import Trace, TraceError

LOW_PCT, HIGH_PCT = 5.0, 95.0

_PER_ITERATION = (
    "iteration",
    "other_load",
    "forward_start",
    "backward_start",
    "backward_return",
    "optimizer_start",
    "optimizer_end",
    "grad_ready",
    "issue",
    "enqueued",
    "complete",
)


def resample_trace(
    trace: Trace,
    iterations: np.ndarray,
    repetitions: np.ndarray | None = None,
    alone: np.ndarray | None = None,
) -> Trace:
    """A copy of ``trace`` with its iterations at positions ``iterations`` (repeats allowed),
    and, when it has an isolated block, each size's repetitions at ``repetitions`` and
    backward alone's iterations at ``alone``."""
    changes = {key: getattr(trace, key)[iterations] for key in _PER_ITERATION}
    if trace.isolated_ms is not None and repetitions is not None:
        changes["isolated_ms"] = tuple(ms[repetitions % ms.size] for ms in trace.isolated_ms)
    if trace.alone_grad_ready is not None and alone is not None and trace.alone_grad_ready.size:
        changes["alone_grad_ready"] = trace.alone_grad_ready[alone]
        changes["alone_backward_ms"] = trace.alone_backward_ms[alone]
    return replace(trace, **changes)


def resamples_of(traces: list[Trace], count: int, seed: int = 0) -> list[list[Trace]]:
    """``count`` bootstrap resamples of ``traces`` (see the module docstring)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        draws: dict[tuple, np.ndarray] = {}

        def draw(key: tuple, n: int, draws: dict = draws) -> np.ndarray:
            if key not in draws:
                draws[key] = rng.integers(0, n, n)
            return draws[key]

        sample = []
        for t in traces:
            its = draw(("iterations", tuple(t.iteration.tolist())), t.n_iterations)
            reps = alone = None
            # One repetition and one backward alone per round, as recorded: they stay
            # with their round's iterations; otherwise they are drawn on their own.
            if t.isolated_ms is not None:
                n_reps = max(ms.size for ms in t.isolated_ms)
                reps = its if n_reps == t.n_iterations else draw(("repetitions", n_reps), n_reps)
            if t.alone_grad_ready is not None and t.alone_grad_ready.shape[0]:
                n_alone = t.alone_grad_ready.shape[0]
                alone = its if n_alone == t.n_iterations else draw(("alone", n_alone), n_alone)
            sample.append(resample_trace(t, its, reps, alone))
        out.append(sample)
    return out


def intervals(values: list[dict[str, float | tuple[float, ...]]]) -> dict[str, tuple[float, float]]:
    """The 90 % interval of every term over resamples; a tuple-valued term ``x`` gives
    ``x[0]``, ``x[1]``, ..."""
    if not values:
        return {}
    flat: dict[str, list[float]] = {}
    for v in values:
        for name, x in v.items():
            if isinstance(x, tuple):
                for k, xk in enumerate(x):
                    flat.setdefault(f"{name}[{k}]", []).append(float(xk))
            else:
                flat.setdefault(name, []).append(float(x))
    return {
        name: (float(np.percentile(xs, LOW_PCT)), float(np.percentile(xs, HIGH_PCT)))
        for name, xs in flat.items()
        if np.isfinite(xs).all()  # a term a fit could not have (no bucket sizes) gets none
    }


def bootstrap_intervals(
    traces: list[Trace], refit: Callable[[list[Trace]], object], count: int, seed: int = 0
) -> dict[str, tuple[float, float]]:
    """The 90 % interval of each of ``TERMS`` over ``count`` resamples refitted by ``refit``."""
    values = []
    for sample in resamples_of(traces, count, seed):
        try:
            values.append(term_values(refit(sample)))
        except TraceError:
            continue
    return intervals(values)
