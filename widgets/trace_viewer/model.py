"""A real trace beside the model: the settings of the trace view and what they give.

``TraceViewConfig`` holds the settings (which shipped trace, which iteration,
a "what if" bucket cap); ``trace_view(trace, fit_traces, ...)`` turns a trace
and the traces to fit on into a ``TraceViewResult``:

- **measured lanes** per rank on one time axis, ms from ``t0`` (the start of
  backward on the rank that started it last, as in ``trace.measure``): each
  parameter's backward interval (from the previous gradient on that rank, or
  backward start, to its gradient), each bucket from when it ran (a profile's
  kernel start; its issue where the trace has no start) to its completion on
  that rank, and the optimizer. Iteration 0 of the setting means the
  *median iteration*: every event's median over the iterations (each taken
  from its own ``t0``); 1..N is one recorded iteration;
- **which rank defined each bucket's readiness** (issued it last) in the shown
  iteration, and in how many of the iterations each rank did;
- the **fit** of the schedule model on the other traces given (the view passes
  the shipped traces other than the one shown; a trace whose parameters differ
  from theirs is fitted on itself), its prediction for this trace's layout
  drawn over the measurement, and its numbers and quality;
- a **what if**: the layout DDP would make for ``what_if_cap_mb`` and the
  model's prediction for it, with the measured medians of a given trace of
  that cap beside it when there is one. A trace the model cannot be fitted to
  is still drawn as measured, with the reason (``TraceViewResult.fit_error``).

What the run was, in words, is ``text``, and reading an upload's files is
``upload``.

Worked example (``tests/trace/test_trace_view_model.py``): two ranks, two parameters
in one bucket each; rank 1 starts backward 1 ms after rank 0, so it is the late
rank and t0 is its start; with its gradients 3 and 4 ms later and rank 0's at
2 and 3 ms (from t0: 2 and 3 on rank 1, 1 and 2 on rank 0), bucket 0 is
issued last by rank 1, which defines its readiness.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import param

from traces import (
    QUANTITIES,
    Fit,
    Prediction,
    Trace,
    TraceError,
    buckets_for_cap,
    fit,
    load_trace,
    measure,
    predict_layout,
    summarize,
)
from traces.shipped import DESCRIPTIONS, shipped

from ..model.settings import setting

MEDIAN = 0  # the iteration setting's value for "the median iteration"
DEFAULT_TRACE = "three-layers-per-bucket.json"


class TraceViewConfig(param.Parameterized):
    """Every setting of the trace view, one declaration each."""

    iteration = param.Integer(
        default=MEDIAN,
        bounds=(0, 1000),
        label="Iteration",
        doc="Which recorded iteration to draw: 0 draws the median iteration (every event's "
        "median over the iterations), 1 to N one recorded iteration.",
        metadata=setting("", hint="0: the median iteration; 1 to N: one recorded iteration"),
    )
    what_if_cap_mb = param.Number(
        default=20.0,
        bounds=(1.0, 1024.0),
        label="What-if bucket cap",
        doc="A bucket cap (DDP's bucket_cap_mb, in MiB) for the model to predict.",
        metadata=setting("MiB"),
    )
    trace = param.Selector(
        default=DEFAULT_TRACE,
        objects=list(DESCRIPTIONS),
        label="Shipped trace",
        doc="A trace recorded on this project's machine (or upload your own below).",
        metadata=setting(""),
    )

    def result(self, uploaded: Trace | None = None) -> TraceViewResult:
        """The shown trace (``uploaded`` if given, else the chosen shipped one) beside the model.

        A shipped trace is fitted on the other shipped traces, an uploaded one on
        all of them (or on itself when its parameters differ from theirs).
        """
        traces = shipped_traces()
        if uploaded is None:
            shown = traces[self.trace]
            others = [t for name, t in traces.items() if name != self.trace]
        else:
            shown, others = uploaded, list(traces.values())
        return trace_view(shown, others, self.iteration, self.what_if_cap_mb, list(traces.values()))


@functools.cache
def shipped_traces() -> dict[str, Trace]:
    """The shipped traces, loaded once per process (they are read-only)."""
    return {name: load_trace(path) for name, path in shipped().items()}


@dataclass(frozen=True, eq=False)
class WhatIf:
    """The model's prediction for a bucket cap, and a measurement of that cap if one exists."""

    cap_mb: float
    bucket_parameters: tuple[np.ndarray, ...]
    predicted: dict[str, float]
    measured: dict[str, float] | None  # medians of the trace recorded with that cap
    measured_name: str | None

    @property
    def n_buckets(self) -> int:
        """Number of buckets at this cap."""
        return len(self.bucket_parameters)

    @property
    def layout(self) -> str:
        """``"3 buckets: 5+5+2 parameters"``."""
        counts = "+".join(str(len(b)) for b in self.bucket_parameters)
        return f"{self.n_buckets} bucket{'s' * (self.n_buckets != 1)}: {counts} parameters"


@dataclass(frozen=True, eq=False)
class TraceViewResult:
    """What the trace view draws and says (times in ms from the shown iteration's ``t0``)."""

    trace: Trace
    iteration: int | None  # index into the trace's iterations; None for the median
    late_rank: int  # the rank that started backward last (the model's rank 0)
    backward_start: np.ndarray  # (R,)
    layer_start: np.ndarray  # (R, P) each parameter's backward interval...
    layer_end: np.ndarray  # (R, P) ...ends when its gradient is ready
    bucket_ready: np.ndarray  # (R, B) last gradient of the bucket ready on that rank
    bucket_issue: np.ndarray  # (R, B)
    bucket_start: np.ndarray  # (R, B) when it began running; its issue where not measured
    bucket_complete: np.ndarray  # (R, B)
    backward_return: np.ndarray  # (R,)
    optimizer_start: np.ndarray  # (R,)
    optimizer_end: np.ndarray  # (R,)
    # (B,) the rank that defined each bucket's readiness in this iteration: that issued it
    # last, or on a GPU trace whose gradients for it were ready last on the device
    defining_rank: np.ndarray
    defining_counts: np.ndarray  # (R, B) iterations in which each rank defined the bucket
    measured: dict[str, float]  # QUANTITIES, of this iteration or medians
    fit: Fit | None  # None: the model could not be fitted (``fit_error`` says why)
    fitted_on_self: bool  # the trace's parameters differ from the others': fitted on itself
    prediction: Prediction | None  # for this trace's own layout (None without a fit)
    what_if: WhatIf | None  # None without a fit
    fit_error: str | None = None  # why the model could not be fitted; the trace is drawn anyway
    # (R, B) ms each rank's all-reduce waited for its last peer (this iteration or the
    # median); None when the trace does not hold it (not every rank's profile)
    peer_wait: np.ndarray | None = None

    @property
    def n_ranks(self) -> int:
        """Number of ranks."""
        return self.trace.n_ranks

    @property
    def n_buckets(self) -> int:
        """Number of buckets."""
        return self.trace.n_buckets

    @property
    def iteration_label(self) -> str:
        """``"median of 10 iterations"`` or ``"iteration 24 (3 of 10)"``."""
        n = self.trace.n_iterations
        if self.iteration is None:
            return f"median of {n} iteration{'s' * (n != 1)}"
        number = int(self.trace.iteration[self.iteration])
        return f"iteration {number} ({self.iteration + 1} of {n})"

    @property
    def has_model(self) -> bool:
        """Whether the model was fitted, so a prediction is drawn beside the measurement."""
        return self.fit is not None and self.prediction is not None

    @property
    def end_ms(self) -> float:
        """When the last thing drawn ends (measured or predicted)."""
        ends = [self.optimizer_end.max(), self.bucket_complete.max()]
        if self.has_model:
            ends.append(self.predicted_optimizer_start + self.fit.after_return_ms)
        return float(max(ends))

    @property
    def predicted_optimizer_start(self) -> float:
        """The model's optimizer start: its backward return (nan without a model)."""
        if self.prediction is None:
            return float("nan")
        return self.prediction.quantities["backward_return_ms"]

    def model_rank(self, rank: int) -> int:
        """The model's rank drawn on trace rank ``rank`` (model rank 0 starts last)."""
        if rank == self.late_rank:
            return 0
        return rank + 1 if rank < self.late_rank else rank


def _median_iteration(values: np.ndarray) -> np.ndarray:
    return np.median(values, axis=0)


def _quantities(m, pick: int | None) -> dict[str, float]:
    if pick is None:
        return {q: summarize(m.quantity(q)).median for q in QUANTITIES}
    return {q: float(m.quantity(q)[pick]) for q in QUANTITIES}


_FITS: dict[tuple[int, ...], Fit] = {}


def _fit_sources(trace: Trace, others: Sequence[Trace]) -> list[Trace]:
    """The other traces a fit for ``trace`` can use: the same parameters and ranks."""
    usable = [t for t in others if t.parameter_names == trace.parameter_names]
    return [t for t in usable if t.n_ranks == trace.n_ranks]


def _fit_for(trace: Trace, others: Sequence[Trace]) -> tuple[Fit, bool]:
    usable = _fit_sources(trace, others)
    if not usable:
        return fit([trace], max_other_load=None), True
    # The shipped traces live as long as the process: fit each choice of them once.
    cached = all(t is shipped_traces().get(t.name) for t in usable)
    key = tuple(id(t) for t in usable)
    if cached and key in _FITS:
        return _FITS[key], False
    fitted = fit(usable, max_other_load=None)
    if cached:
        _FITS[key] = fitted
    return fitted, False


def trace_view(
    trace: Trace,
    fit_traces: Sequence[Trace],
    iteration: int = MEDIAN,
    what_if_cap_mb: float = 20.0,
    references: Sequence[Trace] = (),
) -> TraceViewResult:
    """The view's result for ``trace``, fitted on ``fit_traces`` (the others, not ``trace``).

    ``iteration`` 0 is the median iteration, 1..N one recorded iteration (a
    larger number shows the last). ``references`` are traces whose measured
    medians stand beside the what-if prediction when their bucket cap is the
    asked one (shipped traces are trimmed already, so every iteration counts).
    """
    m = measure(trace)
    n_its = trace.n_iterations
    pick = None if iteration == MEDIAN else min(int(iteration), n_its) - 1
    rel = m.t0[:, None]

    def shown(values: np.ndarray) -> np.ndarray:
        # (I, R, ...) times on the trace clock -> the shown iteration, from its t0.
        shifted = values - rel.reshape(rel.shape + (1,) * (values.ndim - 2))
        return _median_iteration(shifted) if pick is None else shifted[pick]

    grad = shown(trace.grad_ready)  # (R, P)
    start = shown(trace.backward_start)
    layer_start = np.empty_like(grad)
    for r in range(trace.n_ranks):
        seq = np.argsort(grad[r], kind="stable")
        before = np.concatenate([[start[r]], grad[r, seq[:-1]]])
        layer_start[r, seq] = before
    ready = np.stack([grad[:, b].max(axis=1) for b in trace.bucket_parameters], axis=1)
    issue = shown(trace.issue)
    if pick is None:
        late = int(np.bincount(m.late_rank, minlength=trace.n_ranks).argmax())
    else:
        late = int(m.late_rank[pick])
    counts = np.stack(
        [(m.bucket_defining_rank == r).sum(axis=0) for r in range(trace.n_ranks)], axis=0
    )
    fitted = prediction = whatif = None
    on_self = not _fit_sources(trace, fit_traces)
    error = None
    try:
        fitted, on_self = _fit_for(trace, fit_traces)
        prediction = predict_layout(fitted, trace.bucket_parameters)
        whatif = what_if(fitted, what_if_cap_mb, [trace, *fit_traces, *references])
    except ValueError as exc:  # TraceError, or numbers a fit cannot use (numpy's LinAlgError)
        # The measurement is still worth seeing: it is drawn without the model, and says why.
        fitted = prediction = whatif = None
        error = str(exc) or type(exc).__name__
    return TraceViewResult(
        trace=trace,
        iteration=pick,
        late_rank=late,
        backward_start=start,
        layer_start=layer_start,
        layer_end=grad,
        bucket_ready=ready,
        bucket_issue=issue,
        bucket_start=issue if trace.start is None else shown(trace.start),
        bucket_complete=shown(trace.complete),
        backward_return=shown(trace.backward_return),
        optimizer_start=shown(trace.optimizer_start),
        optimizer_end=shown(trace.optimizer_end),
        defining_rank=np.argmax(ready if trace.device_times else issue, axis=0),
        defining_counts=counts,
        peer_wait=None
        if trace.peer_wait is None
        else (np.median(trace.peer_wait, axis=0) if pick is None else trace.peer_wait[pick]),
        measured=_quantities(m, pick),
        fit=fitted,
        fitted_on_self=on_self,
        prediction=prediction,
        what_if=whatif,
        fit_error=error,
    )


def what_if(fitted: Fit, cap_mb: float, references: Sequence[Trace] = ()) -> WhatIf:
    """The model's prediction at bucket cap ``cap_mb``, beside a recorded trace of that cap."""
    buckets = tuple(buckets_for_cap(fitted, cap_mb))
    predicted = predict_layout(fitted, buckets).quantities
    measured = name = None
    for t in references:
        same_layout = len(t.bucket_parameters) == len(buckets) and all(
            np.array_equal(np.sort(a), np.sort(b))
            for a, b in zip(t.bucket_parameters, buckets, strict=True)
        )
        if t.parameter_names == fitted.parameter_names and (
            t.metadata.get("bucket_cap_mb") == cap_mb or same_layout
        ):
            mt = measure(t)
            measured = {q: summarize(mt.quantity(q)).median for q in QUANTITIES}
            name = t.name
            break
    return WhatIf(float(cap_mb), buckets, dict(predicted), measured, name)


__all__ = [
    "MEDIAN",
    "TraceError",
    "TraceViewConfig",
    "TraceViewResult",
    "WhatIf",
    "shipped_traces",
    "trace_view",
    "what_if",
]
