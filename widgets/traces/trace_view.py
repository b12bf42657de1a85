"""A real trace beside the model: the settings of the trace view and what they give.

``TraceViewConfig`` holds the settings (which shipped trace, which iteration,
a "what if" bucket cap); ``trace_view(trace, fit_traces, ...)`` turns a trace
and the traces to fit on into a ``TraceViewResult``:

- **measured lanes** per rank on one time axis, ms from ``t0`` (the start of
  backward on the rank that started it last, as in ``trace.measure``): each
  parameter's backward interval (from the previous gradient on that rank, or
  backward start, to its gradient), each bucket from issue to completion on
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
  that cap beside it when there is one; a fit on one bucket layout says which
  terms it could and could not fit (``fit_terms``);
- **uploads** (``load_upload_files``): one overlap-lab trace, or torch.profiler
  files (one per rank, gzipped or not) imported as a trace, within the page's
  limits; ``run_description`` and ``profile_limits`` say what the run was and
  what a profile cannot show. A trace the model cannot be fitted to is still
  drawn as measured, with the reason (``TraceViewResult.fit_error``).

Worked example (``tests/model/test_trace_view.py``): two ranks, two parameters
in one bucket each; rank 1 starts backward 1 ms after rank 0, so it is the late
rank and t0 is its start; with its gradients 3 and 4 ms later and rank 0's at
2 and 3 ms (from t0: 2 and 3 on rank 1, 1 and 2 on rank 0), bucket 0 is
issued last by rank 1, which defines its readiness.
"""

from __future__ import annotations

import functools
import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import param

from ..model.settings import setting
from . import (
    FORMAT,
    MAX_TRACE_BYTES,
    QUANTITIES,
    TERMS,
    Fit,
    Prediction,
    Trace,
    TraceError,
    buckets_for_cap,
    fit,
    from_document,
    load_trace,
    measure,
    parse_trace,
    predict_layout,
    summarize,
)
from .profiler import import_profiles
from .profiler_convert import to_trace_document
from .profiler_read import GZIP_MAGIC
from .shipped import DESCRIPTIONS, shipped

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
    bucket_complete: np.ndarray  # (R, B)
    backward_return: np.ndarray  # (R,)
    optimizer_start: np.ndarray  # (R,)
    optimizer_end: np.ndarray  # (R,)
    defining_rank: np.ndarray  # (B,) the rank that issued each bucket last, in this iteration
    defining_counts: np.ndarray  # (R, B) iterations in which each rank issued the bucket last
    measured: dict[str, float]  # QUANTITIES, of this iteration or medians
    fit: Fit | None  # None: the model could not be fitted (``fit_error`` says why)
    fitted_on_self: bool  # the trace's parameters differ from the others': fitted on itself
    prediction: Prediction | None  # for this trace's own layout (None without a fit)
    what_if: WhatIf | None  # None without a fit
    fit_error: str | None = None  # why the model could not be fitted; the trace is drawn anyway

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
        bucket_complete=shown(trace.complete),
        backward_return=shown(trace.backward_return),
        optimizer_start=shown(trace.optimizer_start),
        optimizer_end=shown(trace.optimizer_end),
        defining_rank=np.argmax(issue, axis=0),
        defining_counts=counts,
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


def machine_summary(trace: Trace) -> str:
    """What kind of machine the trace came from, in words, from its metadata.

    Only what the file says: a profile records no cores or threads per rank (an
    import before format version 2 wrote 1 for each), and names torch only sometimes.
    """
    md = trace.metadata
    run = run_metadata(trace)
    cores = run["cpu_count"]
    threads = run["threads_per_rank"]
    device = md.get("device", "cpu")
    parts = [
        f"{md.get('world_size', trace.n_ranks)} ranks",
        f"{md.get('backend', 'unknown')} backend",
        f"device {device}",
    ]
    if run["gpus"]:
        parts.append(gpu_words(run["gpus"]))
    if cores:
        parts.append(f"{cores} CPU core{'s' * (cores != 1)}")
    if threads:
        parts.append(f"{threads} thread{'s' * (threads != 1)} per rank")
    if md.get("torch_version") not in (None, "", "unknown"):
        parts.append(f"torch {md['torch_version']}")
    return ", ".join(parts)


def shares_cores(trace: Trace) -> bool:
    """Whether compute and communication share the CPU cores (a CPU run with few cores)."""
    md = trace.metadata
    cores = md.get("cpu_count")
    threads = md.get("threads_per_rank") or 1
    if md.get("device", "cpu") != "cpu":
        return False
    # Each rank's compute threads plus gloo's worker threads: more than the cores.
    return cores is None or cores < trace.n_ranks * (threads + 1)


def cores_known(trace: Trace) -> bool:
    """Whether the file says how many CPU cores the run had (a profile does not)."""
    return bool(run_metadata(trace)["cpu_count"])


# --- where the run came from, and what a profile cannot show ---------------------------------


def run_metadata(trace: Trace) -> dict[str, Any]:
    """Where the trace's run came from and how it was timed, whichever way the file says it.

    The one place the view reads it. Format version 2 says it in ``metadata``
    (``source``, ``times``, ``readiness``, ``gpus``, ``backend``, ``world_size``,
    ``run_world_size``, ``ranks_in_run``, ``nccl_version``, ``profile_files``), and
    ``Trace`` reads source, times and readiness for both versions; a profile imported
    before version 2 says the rest in a top-level ``profile`` block (``gpus``, the run's
    ``world_size``, ``ranks``, ``files``, ``nccl_version``), and it wrote ``cpu_count``
    and ``threads_per_rank`` as 1 for want of a value, so those read as unknown.
    ``world_size`` here is the number of rank entries in the file, ``run_world_size``
    the run's.
    """
    md = trace.metadata
    old = trace.document.get("profile")
    old = old if isinstance(old, dict) else {}
    source = trace.source
    placeholders = source == "torch.profiler" and "source" not in md
    n = trace.n_ranks
    return {
        "source": source,
        "times": "device" if trace.device_times else "host",
        "readiness": md.get(
            "readiness",
            "per-bucket, approximate" if trace.approximate_readiness else "per-parameter",
        ),
        "gpus": [str(g) for g in md.get("gpus", old.get("gpus")) or ()],
        "backend": str(md.get("backend", "unknown")),
        "world_size": n,
        "run_world_size": int(md.get("run_world_size", old.get("world_size")) or n),
        "ranks_in_run": [int(r) for r in md.get("ranks_in_run", old.get("ranks")) or range(n)],
        "nccl_version": md.get("nccl_version", old.get("nccl_version")),
        "profile_files": [str(f) for f in md.get("profile_files", old.get("files")) or ()],
        "cpu_count": None if placeholders else md.get("cpu_count"),
        "threads_per_rank": None if placeholders else md.get("threads_per_rank"),
    }


def listing(items: Sequence[object]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    words = [str(i) for i in items]
    if len(words) <= 2:
        return " and ".join(words)
    return f"{', '.join(words[:-1])} and {words[-1]}"


def gpu_words(gpus: Sequence[str]) -> str:
    """``"GPU: NVIDIA A100"``, ``"GPUs: 8 × NVIDIA A100"``, ``"GPUs: 2 × A, 1 × B"``."""
    counts: dict[str, int] = {}
    for g in gpus:
        counts[g] = counts.get(g, 0) + 1
    if len(gpus) == 1:
        return f"GPU: {gpus[0]}"
    return "GPUs: " + ", ".join(f"{k} × {name}" for name, k in counts.items())


def run_description(trace: Trace) -> str:
    """What the run was, in words: where the trace comes from, the ranks, backend, GPUs, times."""
    run = run_metadata(trace)
    n = trace.n_ranks
    ranks, world = run["ranks_in_run"], run["run_world_size"]
    if run["source"] == "torch.profiler":
        files = run["profile_files"]
        head = "Imported from torch.profiler"
        if files:
            head += f": {len(files)} file{'s' * (len(files) != 1)} ({listing(files)})"
    else:
        head = "Recorded by overlap-lab's recorder"
    rank_word = "rank" if len(ranks) == 1 else "ranks"
    if world > n:
        who = (
            f"{rank_word} {listing(ranks)} of a run of {world} (the other ranks are not in "
            "the file; every all-reduce also waited for them)"
        )
    else:
        who = f"{rank_word} {listing(ranks)}, the whole run" if n > 1 else "the run's one rank"
    backend = f"{run['backend']} backend"
    if run["nccl_version"]:
        backend += f", NCCL {run['nccl_version']}"
    parts = [f"{head}, {who}", backend]
    if run["gpus"]:
        parts.append(gpu_words(run["gpus"]))
    if run["times"] == "device":
        times = (
            "Device times: when the GPU ran each kernel (the all-reduces and backward's "
            "compute), on the profiler's timeline."
            if run["source"] == "torch.profiler"
            else "Device times (CUDA events)."
        )
    else:
        times = (
            "Host times: when the CPU ran each op, on the profiler's timeline (no GPU kernels)."
            if run["source"] == "torch.profiler"
            else "Host times: each rank's clock on the CPU."
        )
    return f"{'; '.join(parts)}. {times}"


def profile_limits(trace: Trace) -> str | None:
    """What a profile cannot show and what that does to the fit (None for a recorded trace)."""
    run = run_metadata(trace)
    if run["readiness"] == "per-parameter":
        return None
    b = trace.n_buckets
    names = f'"{trace.parameter_names[0]}"' + (
        f' to "{trace.parameter_names[-1]}"' if b > 1 else ""
    )
    when = (
        " (a host time: when the CPU finished the op, not when the device did)"
        if run["times"] != "device"
        else ""
    )
    return (
        "What a profile cannot show: which parameter each gradient belongs to, and when "
        "each one was ready. A profile names no parameters, so each of the "
        f"{b} bucket{'s' * (b != 1)} is one pseudo-parameter ({names}), ready when the last "
        f"backward compute before its all-reduce ended: approximate{when}. Nor does it "
        "record the machine's CPU cores, threads per rank or the bucket cap. What that does "
        "to the fit: the per-layer backward terms are fitted per bucket, not per layer (all "
        "the backward between two all-reduces is one term), and a what-if cap can only "
        "group whole measured buckets, never split one."
    )


def layout_words(trace: Trace) -> str:
    """The layout in words; a profile's pseudo-parameters are buckets, so by their sizes."""
    if run_metadata(trace)["readiness"] == "per-parameter":
        return trace.layout
    mib = [f"{float(x) / (1024 * 1024):.3g}" for x in trace.bucket_bytes]
    b = trace.n_buckets
    return f"{b} bucket{'s' * (b != 1)} of {listing(mib)} MiB"


def what_if_layout(w: WhatIf, trace: Trace) -> str:
    """The what-if's layout in words; for a profile, which measured buckets each one holds."""
    if run_metadata(trace)["readiness"] == "per-parameter":
        return w.layout
    # A profile's pseudo-parameter p is its measured bucket p.
    mib = [
        f"{sum(float(trace.parameter_bytes[p]) for p in b) / (1024 * 1024):.3g}"
        for b in w.bucket_parameters
    ]
    groups = ", ".join("+".join(str(int(p)) for p in sorted(b)) for b in w.bucket_parameters)
    n = w.n_buckets
    return f"{n} bucket{'s' * (n != 1)} of {listing(mib)} MiB (measured buckets {groups})"


# --- what a fit on one bucket layout could fit --------------------------------------------------

#: Each of the fit's reported terms (``fit.TERMS``) as the page names it.
TERM_LABELS = {
    "backward_total_ms": "Backward, all layers",
    "overhead_ms": "Per-transfer overhead",
    "bandwidth_gbps": "Bandwidth",
    "contention": "Contention, backward",
    "rank_contention": "Contention by rank",
    "transfer_contention": "Contention, transfers",
    "enqueue_ms": "Enqueue",
    "finalize_ms": "Finalize",
    "finalize_ms_per_mib": "Finalize per MiB of the last bucket",
    "copy_back_ms_per_mib": "Copy-back per MiB",
}


def fit_terms(f: Fit, per_bucket: bool = False) -> list[dict[str, Any]]:
    """Each term of ``TERMS``: whether the fitted data pinned it down, and from what.

    The same tests as the fit's own (``Fit.contention_identified``,
    ``transfer_contention_identified``, ``separable``, ``transfer_source``,
    ``backward_source``) and ``identify.refusal``'s size range; ``per_bucket``: the
    trace's readiness is per bucket (a profile), so backward is fitted per bucket.
    """
    mib = 1024 * 1024
    low, high = (x / mib for x in f.size_range)
    sizes = f"{low:.3g} MiB" if low == high else f"{low:.3g} to {high:.3g} MiB"
    alone = f.backward_source == "alone"
    if f.transfer_source == "isolated":
        transfer = (True, f"from all-reduces timed alone ({sizes}), and only for those sizes")
        bandwidth = transfer
    elif f.separable:
        transfer = (
            True,
            f"from buckets of {sizes} that overlapped backward: they absorb contention, and "
            "hold only for those sizes",
        )
        bandwidth = transfer
    else:
        transfer = (
            False,
            f"every bucket is {sizes}: one size cannot tell overhead from bandwidth (taken as 0)",
        )
        bandwidth = (True, f"only as the average speed of {sizes} buckets, overhead included")
    contention = (
        (True, "from layers seen both with and without a transfer in flight")
        if f.contention_identified
        else (False, "no layer was seen both with and without a transfer in flight")
    )
    transfers = (
        (True, "from transfers that ran while a rank computed, and after")
        if f.transfer_contention_identified
        else (False, "too few transfers ran both while a rank computed and after it")
    )
    backward = (
        True,
        ("from backward timed alone" if alone else "from the gradient intervals free of transfers")
        + (
            ": one term per bucket, not per layer (a profile has no per-layer readiness)"
            if per_bucket
            else ""
        ),
    )
    needs_alone = (False, "needs backward timed alone (overlap-lab record); taken as 0")
    status = {
        "backward_total_ms": backward,
        "overhead_ms": transfer,
        "bandwidth_gbps": bandwidth,
        "contention": contention,
        "rank_contention": contention,
        "transfer_contention": transfers,
        "enqueue_ms": (True, "the median from readiness to launch"),
        "finalize_ms": (True, "the median from the last transfer to backward's return"),
        "finalize_ms_per_mib": (True, "from backward timed alone") if alone else needs_alone,
        "copy_back_ms_per_mib": (True, "from backward timed alone") if alone else needs_alone,
    }
    return [
        {"term": t, "label": TERM_LABELS[t], "fitted": status[t][0], "why": status[t][1]}
        for t in TERMS
    ]


# --- uploads: one trace, or one profiler file per rank -------------------------------------------

MIB = 1024 * 1024
#: The files of one upload together, as sent (gzipped or not). The page sends them in
#: base64 (4 characters for 3 bytes) in one websocket message, and Bokeh's server takes
#: messages of at most 20 MiB (its default ``websocket_max_message_size``): 12 MiB of
#: files make a 16 MiB message. Measured in Chromium through ``overlap-lab serve``
#: (the page's own limit lifted): 14.9 MiB of files (20,831,712 characters of base64)
#: arrive; 15.0 MiB (20,971,520 characters, Bokeh's 20 MiB before its envelope) close
#: the page's connection, so the page refuses an upload over this limit before sending.
#: Larger profiles import with ``overlap-lab import``, whose trace is small.
MAX_UPLOAD_BYTES = 12 * MIB
#: The files of one upload together once unpacked (gunzipped): reading profiles takes
#: about 2.5 s of one server core for 64 MiB (measured: a 64 MiB profile, 2.1 s as
#: JSON and 2.6 s gzipped), so a gzip bomb, or a very large profile, stops here.
MAX_UNPACKED_BYTES = 64 * MIB
MAX_UPLOAD_FILES = 32  # one profiler file per rank
NAME_CHARS = 80
_SNIFF_CHARS = 256 * 1024  # the top of a file, where a trace or a profile says which it is


@dataclass(frozen=True, eq=False)
class Upload:
    """What an upload gave: the trace to show, what it was made from, and the import's notes."""

    trace: Trace
    kind: str  # "trace" (an overlap-lab trace file) or "profile" (torch.profiler files)
    files: tuple[str, ...]
    notes: tuple[str, ...] = ()


def _gunzip(data: bytes, name: str, budget: int) -> bytes:
    """The file's bytes, gunzipped (recognised by the magic bytes) to at most ``budget``."""
    limit = f"the {MAX_UNPACKED_BYTES // MIB} MiB limit of one upload once unpacked"
    if not data.startswith(GZIP_MAGIC):
        if len(data) > budget:
            raise TraceError(f"{name}: with the files before it, more than {limit}")
        return data
    inflate = zlib.decompressobj(wbits=31)
    try:
        # max_length bounds the output: a gzip bomb stops one byte past the budget.
        out = inflate.decompress(data, budget + 1)
    except zlib.error as exc:
        raise TraceError(f"{name}: damaged gzip data ({exc})") from None
    if len(out) > budget:
        raise TraceError(f"{name}: unpacks to more than {limit} (refused before unpacking further)")
    if not inflate.eof:
        raise TraceError(f"{name}: the gzip data is cut short (truncated file)")
    if inflate.unused_data.strip(b"\0"):
        raise TraceError(f"{name}: holds more than one gzip member; give each rank its own file")
    if out.startswith(GZIP_MAGIC):
        raise TraceError(f"{name}: gzipped twice; unpack it once")
    return out


def _blank(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos


def upload_kind(data: bytes) -> str:
    """``"trace"``, ``"profile"``, ``"foreign"`` (JSON, neither) or ``"unknown"`` (can't tell).

    Reads the top-level keys at the start of the (unpacked) file as JSON data: an
    overlap-lab trace says ``"format": "overlap-lab-trace"`` (its first key, as written),
    a profile has ``traceEvents`` (after a few small keys). Nothing is evaluated.
    """
    text = data[:_SNIFF_CHARS].decode("utf-8", errors="replace")
    whole = len(data) <= _SNIFF_CHARS
    decoder = json.JSONDecoder()
    pos = _blank(text, 0)
    if not text.startswith("{", pos):
        return "unknown"
    pos = _blank(text, pos + 1)
    while pos < len(text):
        if text[pos] == "}":
            return "foreign" if whole else "unknown"
        try:
            key, pos = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return "unknown"
        if key == "traceEvents":
            return "profile"
        pos = _blank(text, pos)
        if not isinstance(key, str) or not text.startswith(":", pos):
            return "unknown"
        try:
            value, pos = decoder.raw_decode(text, _blank(text, pos + 1))
        except (ValueError, RecursionError):
            return "unknown"
        if key == "format" and value == FORMAT:
            return "trace"
        pos = _blank(text, pos)
        if text.startswith(",", pos):
            pos = _blank(text, pos + 1)
        elif not text.startswith("}", pos):
            return "unknown"
    return "unknown"


def _label(names: Sequence[str]) -> str:
    label = " + ".join(names)
    if len(label) > NAME_CHARS and len(names) > 1:
        label = f"{names[0][: NAME_CHARS - 20]} + {len(names) - 1} more files"
    return label[:NAME_CHARS]


def load_upload_files(files: Sequence[tuple[str, bytes]]) -> Upload:
    """An upload's files (name, bytes) as a trace: one overlap-lab trace, or profiles.

    Within ``MAX_UPLOAD_FILES``, ``MAX_UPLOAD_BYTES`` as sent and
    ``MAX_UNPACKED_BYTES`` once unpacked, every file together. One trace file
    (``.json``, or gzipped) is parsed and validated; profiler files, one per rank,
    gzipped or not, are read as data (``profiler_read``), imported
    (``import_profiles``) and made a trace (``to_trace_document``). Raises
    ``TraceError`` (a ``ValueError``) with a message that names the file and what
    is wrong: too large, damaged or cut short, not JSON, JSON that is neither a
    trace nor a profile, a profile without ``ProfilerStep#N`` or collectives.
    """
    files = [(str(name)[:NAME_CHARS] or "upload.json", bytes(data)) for name, data in files]
    if not files:
        raise TraceError("no file was chosen")
    if len(files) > MAX_UPLOAD_FILES:
        raise TraceError(
            f"{len(files)} files; an upload takes at most {MAX_UPLOAD_FILES} (one per rank)"
        )
    total = sum(len(data) for _, data in files)
    if total > MAX_UPLOAD_BYTES:
        what = files[0][0] if len(files) == 1 else f"{len(files)} files"
        raise TraceError(
            f"{what}: {total:,} bytes is more than the {MAX_UPLOAD_BYTES:,}-byte limit "
            f"({MAX_UPLOAD_BYTES // MIB} MiB) of an upload here; import larger profiles with "
            "`overlap-lab import` and upload the trace it writes"
        )
    budget = MAX_UNPACKED_BYTES
    unpacked = []
    for name, data in files:
        if not data:
            raise TraceError(f"{name} is empty (0 bytes)")
        plain = _gunzip(data, name, budget)
        budget -= len(plain)
        unpacked.append((name, plain))
    names = [name for name, _ in unpacked]
    kinds = [upload_kind(plain) for _, plain in unpacked]
    for (name, _), kind in zip(unpacked, kinds, strict=True):
        if kind == "foreign":
            raise TraceError(
                f'{name}: JSON, but neither an overlap-lab trace (it has no "format": '
                f'"{FORMAT}") nor a torch.profiler trace (no "traceEvents")'
            )
    if len(unpacked) == 1:
        name, plain = unpacked[0]
        if kinds[0] == "unknown" and b'"traceEvents"' not in plain:
            if len(plain) > MAX_TRACE_BYTES:
                raise TraceError(
                    f"{name}: {len(plain):,} bytes is more than the {MAX_TRACE_BYTES:,}-byte "
                    "limit of a trace file, and it is not a torch.profiler trace (no "
                    '"traceEvents")'
                )
            kinds[0] = "trace"  # parsing it as a trace says what is wrong with it
        if kinds[0] == "trace":
            return Upload(parse_trace(plain, name=name), "trace", (name,))
    elif "trace" in kinds:
        name = names[kinds.index("trace")]
        raise TraceError(
            f"{name} is an overlap-lab trace: upload it alone (profiler files, one per rank, "
            "go together)"
        )
    profile = import_profiles(
        [plain for _, plain in unpacked],
        names=names,
        max_bytes=MAX_UNPACKED_BYTES,
        max_uncompressed=MAX_UNPACKED_BYTES,
    )
    document = to_trace_document(profile)
    return Upload(from_document(document, _label(names)), "profile", tuple(names), profile.notes)


__all__ = [
    "MEDIAN",
    "TraceError",
    "TraceViewConfig",
    "TraceViewResult",
    "WhatIf",
    "machine_summary",
    "shares_cores",
    "shipped_traces",
    "trace_view",
    "what_if",
]
