"""What the trace viewer's page is sent: the measured lanes, the model's, the fit and the what-if.

Numbers only, in ms from the last rank's backward start (the page shows 0.01 ms),
and small records; the words beside them come from ``text``. ``TraceState`` holds
the settings' rules (the iteration is bounded by the chosen trace's) and
``TraceRun`` the result for a shipped trace or an upload, drawn at any moment; no
Panel here.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import param

from traces import MAX_TRACE_BYTES, QUANTITIES, Trace, error_pct, refusal, summarize
from traces import measure as measure_trace
from traces.shipped import DESCRIPTIONS
from traces.upload import MAX_UNPACKED_BYTES, MAX_UPLOAD_BYTES, MAX_UPLOAD_FILES

from ..common.formatting import MILLISECONDS, Quantity, plain_number
from ..common.parsing import parse_setting
from ..common.state_numbers import state_numbers
from ..common.widget_state import Run, WidgetState, drawn, nice_step
from ..model.timeline import Clock
from .model import TraceViewConfig, TraceViewResult, shipped_traces
from .text import (
    cores_known,
    fit_terms,
    layout_words,
    machine_summary,
    profile_limits,
    run_description,
    run_metadata,
    shares_cores,
    what_if_layout,
)

#: The step's quantities in the order they happen: the tail starts at the last gradient.
STEP_ORDER = (
    "compute_end_ms",
    "communication_end_ms",
    "exposed_tail_ms",
    "backward_return_ms",
    "step_ms",
)
#: Each quantity as the readouts and the description name it.
NAMES = {
    "compute_end_ms": "Last gradient ready",
    "backward_return_ms": "Backward return",
    "communication_end_ms": "Communication end",
    "exposed_tail_ms": "Exposed tail",
    "step_ms": "Step",
}
#: The data table's columns: key, label, and the decimals a number is shown with.
CHART_COLUMNS = [
    {"key": key, "label": label, **({"digits": digits} if digits is not None else {})}
    for key, label, digits in (
        ("bar", "Bar", None),
        ("rank", "Rank", None),
        ("source", "Source", None),
        ("kind", "Kind", None),
        ("name", "Name", None),
        ("bucket", "Bucket", None),
        ("bucket_mib", "Bucket size (MiB)", 2),
        ("start_ms", "Start (ms)", 2),
        ("end_ms", "End (ms)", 2),
        ("bucket_ready_ms", "Bucket ready (ms)", 2),
        ("issued_last", "Issued last (defined readiness)", None),
    )
]
#: How well the model predicts in general, from the validation protocol (bench/README.md,
#: "The model on workloads it was not fitted on"): not only on the shipped traces.
PREDICTION_QUALITY = (
    "How well the model predicts in general: on five workloads recorded on the project's "
    "2-core machine with all-reduces and backward also timed alone, fitted on two bucket "
    "layouts and predicting a third (60 cases, on a recording made after the model was "
    "settled), the exposed tail came within max(20 %, 5 ms) in 57 and backward return "
    "within 10 % in 57 (the misses at the narrowest layers, with twelve small all-reduces); "
    "a plain FIFO model without contention was closer on the tail in 12 cases, 3 of them "
    "beyond the measurement's noise (bench/README.md)."
)


def page_state(r: TraceViewResult, quantities: dict, uploaded: bool) -> dict:
    """Everything the page draws the trace, the fit and the what-if from (``state``)."""
    low = float(r.backward_start.min())
    if r.has_model:
        low = min(low, float(r.prediction.schedule.backward_start.min()))
    lanes = [rank_lanes(r, rank) for rank in range(r.n_ranks)]
    return {
        "title": f"{r.iteration_label[:1].upper()}{r.iteration_label[1:]}",
        "source": source_text(r, uploaded),
        "uploaded": uploaded,
        "median": r.iteration is None,
        "n_iterations": r.trace.n_iterations,
        "x_domain": [min(0.0, low) - 2.0, r.end_ms * 1.02],
        "n_buckets": r.n_buckets,
        "ranks": lanes,
        "order": list(STEP_ORDER),
        "names": NAMES,
        "quantities": quantities,
        "has_model": r.has_model,
        "largest_error": largest_error(quantities) if r.has_model else None,
        "run": run_state(r.trace),
        "fit": fit_state(r),
        "defining": defining_state(r),
        "defined_on_device": r.trace.device_times,
        "peer_waits": peer_wait_state(r),
        "machine": machine_state(r.trace),
        "what_if": what_if_state(r),
        "table": chart_table(r, lanes),
    }


def rank_lanes(r: TraceViewResult, rank: int) -> dict:
    """One rank's measured bars and marks, and the model's bars drawn on its lanes."""
    lane = {
        "rank": rank,
        "run_rank": run_rank(r.trace, rank),
        "layers": {
            "start": state_numbers(r.layer_start[rank]),
            "end": state_numbers(r.layer_end[rank]),
            "bucket": [int(b) for b in r.trace.parameter_bucket],
        },
        "comm": {
            "start": state_numbers(r.bucket_start[rank]),
            "issue": state_numbers(r.bucket_issue[rank]),
            "end": state_numbers(r.bucket_complete[rank]),
            "ready": state_numbers(r.bucket_ready[rank]),
            "defines": [bool(r.defining_rank[b] == rank) for b in range(r.n_buckets)],
        },
        "optimizer": state_numbers([r.optimizer_start[rank], r.optimizer_end[rank]]),
        "backward_return": round(float(r.backward_return[rank]), 4),
        "model": None,
    }
    if not r.has_model:
        return lane
    s = r.prediction.schedule
    k = r.model_rank(rank)
    opt = r.predicted_optimizer_start
    lane["model"] = {
        "layers": {
            "start": state_numbers(s.layer_start[k]),
            "end": state_numbers(s.layer_ready[k]),
            "bucket": [int(b) for b in s.layer_bucket],
        },
        "comm": {
            "start": state_numbers(s.bucket_launch[k]),
            "end": state_numbers(s.bucket_end),
            "ready": state_numbers(s.bucket_ready[k]),
        },
        "optimizer": state_numbers([opt, opt + r.fit.after_return_ms]),
    }
    return lane


def source_text(r: TraceViewResult, uploaded: bool) -> str:
    """Where the shown trace came from and its layout, in one sentence."""
    layout = layout_words(r.trace)
    if uploaded:
        if run_metadata(r.trace)["source"] == "torch.profiler":
            return (
                f"Your upload {r.trace.name}: torch.profiler files imported as a trace, "
                f"{layout}, {r.n_ranks} ranks."
            )
        return f"Your upload {r.trace.name}: {layout}, {r.n_ranks} ranks."
    text = DESCRIPTIONS.get(r.trace.name, layout)
    return f"{text[:1].upper()}{text[1:]} ({layout}), {r.n_ranks} ranks."


def run_rank(trace: Trace, rank: int) -> int:
    """The run's number of the trace's rank entry ``rank`` (a file may hold some ranks)."""
    numbers = run_metadata(trace)["ranks_in_run"]
    return numbers[rank] if rank < len(numbers) else rank


def step_quantities(r: TraceViewResult) -> dict[str, dict[str, float | None]]:
    """Each of ``STEP_ORDER``: measured (this iteration, or medians) and predicted, and the error.

    The last gradient ready is the measure module's compute end: of the shown
    iteration, or its median over the iterations, as every other median is.
    Without a model (it could not be fitted) the prediction and error are None.
    """
    measured = dict(r.measured)
    m = measure_trace(r.trace)
    e = m.compute_end_ms
    measured["compute_end_ms"] = (
        summarize(e).median if r.iteration is None else float(e[r.iteration])
    )
    if not r.has_model:
        return {
            q: {"measured": float(measured[q]), "model": None, "error_pct": None}
            for q in STEP_ORDER
        }
    predicted = dict(r.prediction.quantities, compute_end_ms=r.prediction.compute_end_ms)
    return {
        q: {
            "measured": float(measured[q]),
            "model": float(predicted[q]),
            "error_pct": _finite(error_pct(predicted[q], measured[q])),
        }
        for q in STEP_ORDER
    }


def largest_error(q: dict[str, dict[str, float | None]]) -> str:
    """The quantity the model misses by the largest share of its measurement."""
    return max(
        (k for k in STEP_ORDER if q[k]["error_pct"] is not None),
        key=lambda k: abs(q[k]["error_pct"]),
        default="step_ms",
    )


def chart_table(r: TraceViewResult, lanes: list[dict]) -> dict:
    """Every bar of the chart, measured and modelled, with each bucket's numbers."""
    names = r.trace.parameter_names
    mib = r.trace.bucket_bytes / (1024 * 1024)
    rows: list[list] = []
    for lane in lanes:
        rank = lane["run_rank"]
        for source, part in (("measured", lane), ("model", lane["model"])):
            if part is None:
                continue  # no model: it could not be fitted
            layers = part["layers"]
            for p in sorted(range(len(names)), key=lambda p: layers["start"][p]):
                b = layers["bucket"][p]
                rows.append([
                    f"Rank {rank}, {source}: {names[p]} backward", rank, source,
                    "layer", names[p], b, None, layers["start"][p], layers["end"][p],
                    None, None,
                ])  # fmt: skip
            comm = part["comm"]
            for b in range(r.n_buckets):
                defines = comm["defines"][b] if source == "measured" else None
                rows.append([
                    f"Rank {rank}, {source}: bucket {b} all-reduce", rank, source,
                    "all-reduce", f"Bucket {b}", b, _finite(mib[b]), comm["start"][b],
                    comm["end"][b], comm["ready"][b], defines,
                ])  # fmt: skip
            a, e = part["optimizer"]
            rows.append([
                f"Rank {rank}, {source}: optimizer", rank, source, "optimizer",
                "Optimizer", None, None, a, e, None, None,
            ])  # fmt: skip
    return {
        "caption": "Every bar of the chart, measured and modelled, ms from the last rank's "
        "backward start. An all-reduce runs from when it began running (a profile's kernel "
        "start; where the trace has none, its issue; the model: its launch) to its completion "
        "on that rank; a layer's backward ends when its gradient is ready.",
        "columns": CHART_COLUMNS,
        "rows": rows,
    }


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def fit_state(r: TraceViewResult) -> dict:
    f = r.fit
    if f is None:
        return {
            "error": r.fit_error,
            "fitted_on_self": r.fitted_on_self,
            "caveat": (
                f"The model could not be fitted to this trace: {r.fit_error}. What is drawn is "
                "the measurement alone."
            ),
        }
    return {
        "error": None,
        "sources": list(f.sources),
        "iterations_used": f.iterations_used,
        "fitted_on_self": r.fitted_on_self,
        "includes_shown": r.trace.name in f.sources,
        "backward_total_ms": float(sum(f.backward_ms)),
        "overhead_ms": float(f.overhead_ms),
        "bandwidth_gbps": float(f.bandwidth_gbps),
        "contention": float(f.contention),
        "rank_contention": state_numbers(f.rank_contention),
        "transfer_contention": float(f.transfer_contention),
        "backward_quality": {
            "r2": _finite(f.backward_quality.r2),
            "rms_ms": float(f.backward_quality.rms_ms),
            "samples": int(f.backward_quality.samples),
        },
        "transfer_quality": {
            "r2": _finite(f.transfer_quality.r2),
            "rms_ms": float(f.transfer_quality.rms_ms),
            "samples": int(f.transfer_quality.samples),
        },
        "caveat": fit_caveat(r),
    }


def fit_caveat(r: TraceViewResult) -> str:
    """What the fit cannot vouch for here, and how well the model predicts in general."""
    f = r.fit
    parts = []
    reason = refusal(f, r.trace.bucket_bytes)
    if reason is not None and not r.fitted_on_self:
        parts.append(f"The fit cannot vouch for this layout: {reason}.")
    if f.unidentified:
        parts.append(f"Not identified by the fitted traces: {'; '.join(f.unidentified)}.")
    parts.append(PREDICTION_QUALITY)
    return " ".join(parts)


def defining_state(r: TraceViewResult) -> list[dict]:
    mib = r.trace.bucket_bytes / (1024 * 1024)
    return [
        {
            "bucket": b,
            "parameters": len(r.trace.bucket_parameters[b]),
            "mib": _finite(mib[b]),  # None: size unknown
            "rank": run_rank(r.trace, int(r.defining_rank[b])),
            "counts": [int(r.defining_counts[k, b]) for k in range(r.n_ranks)],
        }
        for b in range(r.n_buckets)
    ]


def peer_wait_state(r: TraceViewResult) -> list[dict] | None:
    """Per rank: ms its all-reduces waited for the last peer, of how many ms they ran."""
    if r.peer_wait is None:
        return None
    busy = (r.bucket_complete - r.bucket_start).sum(axis=1)
    return [
        {
            "rank": run_rank(r.trace, k),
            "wait_ms": round(float(r.peer_wait[k].sum()), 4),
            "allreduce_ms": round(float(busy[k]), 4),
        }
        for k in range(r.n_ranks)
    ]


def run_state(trace: Trace) -> dict:
    """What the run was, and (for a profile) what the file cannot show and what that costs."""
    run = run_metadata(trace)
    return {
        "source": run["source"],
        "times": run["times"],
        "readiness": run["readiness"],
        "ranks_in_run": run["ranks_in_run"],
        "run_world_size": run["run_world_size"],
        "description": run_description(trace),
        "cannot_know": profile_limits(trace),
    }


def machine_state(trace: Trace) -> dict:
    load = trace.other_load
    known = load[~np.isnan(load)]
    device = str(trace.metadata.get("device", "cpu"))
    if device != "cpu":
        effect = "device"
    elif not cores_known(trace):
        effect = "unknown"
    else:
        effect = "shared" if shares_cores(trace) else "roomy"
    return {
        "summary": machine_summary(trace),
        "model": str(trace.metadata.get("model") or "model not stated"),
        "load_low": float(known.min()) if known.size else None,
        "load_high": float(known.max()) if known.size else None,
        "shares_cores": shares_cores(trace),
        "effect": effect,
        "backend": str(trace.metadata.get("backend", "unknown")),
    }


def what_if_state(r: TraceViewResult) -> dict | None:
    w = r.what_if
    if w is None:
        return None
    per_bucket = run_metadata(r.trace)["readiness"] != "per-parameter"
    return {
        "cap_mb": w.cap_mb,
        "layout": what_if_layout(w, r.trace),
        "predicted": {q: float(w.predicted[q]) for q in QUANTITIES},
        "measured": None if w.measured is None else {q: float(w.measured[q]) for q in QUANTITIES},
        "measured_name": w.measured_name,
        "refusal": refusal(r.fit, r.fit.layout_bytes(w.bucket_parameters)),
        # Fitted on one bucket layout (its own): which terms that could fit, and which not.
        "one_layout": r.fitted_on_self,
        "terms": fit_terms(r.fit, per_bucket=per_bucket) if r.fitted_on_self else [],
    }


#: Wall-clock seconds one run of the playhead takes.
PLAY_SECONDS = 10.0
SIGNED_PCT = Quantity("%", digits=1)
#: The most base64 an upload message may carry, every file together: MAX_UPLOAD_BYTES of
#: files in base64 (4 characters for every 3 bytes, and up to 4 more for each file's last
#: bytes). With the names and Bokeh's envelope it stays within the server's websocket
#: limit (20 MiB by default); the page refuses larger uploads before sending, and the
#: server refuses them again.
MAX_UPLOAD_MESSAGE_BYTES = 4 * -(-MAX_UPLOAD_BYTES // 3) + 4 * MAX_UPLOAD_FILES


class TraceState(WidgetState):
    """The trace viewer's settings rules: the iteration is bounded by the chosen trace's."""

    settings_class = TraceViewConfig

    def make(self, **settings: Any) -> tuple[TraceViewConfig, list[str]]:
        """The settings, with the iteration bounded by the chosen trace's iterations.

        An iteration past them (``?iteration=999``) is ignored with a notice, as any
        other bad value is; the median iteration is shown instead.
        """
        notices = []
        iteration = settings.pop("iteration", None)
        config = TraceViewConfig(**settings)
        bound_iteration(config, shipped_traces()[config.trace].n_iterations)
        if iteration is not None:
            text = plain_number(iteration)
            try:
                config.iteration = parse_setting(text, config.param["iteration"])
            except ValueError as exc:
                notices.append(f"Ignored iteration={text}: {exc}")
        return config, notices

    def choose(self, settings: param.Parameterized, name: str, value: Any) -> dict | None:
        """Choosing a shipped trace bounds the iteration by its iterations."""
        settings.param.update({name: value})
        if name == "trace":
            set_range(settings, shipped_traces()[value].n_iterations)
        return None

    def run(self, settings: param.Parameterized, origin: str | None = None) -> TraceRun:
        return TraceRun(settings)

    def extra(self, settings: param.Parameterized) -> dict[str, Any]:
        return {"upload": upload_state()}


def bound_iteration(config: TraceViewConfig, n: int) -> None:
    """This settings object's iteration takes 0 to ``n``, and its help says so."""
    p = config.param["iteration"]
    p.bounds = (0, n)
    p.metadata = {
        **p.metadata,
        "hint": f"0 to {n}: 0 draws the median iteration, 1 to {n} one recorded iteration",
    }


def set_range(config: TraceViewConfig, n: int) -> None:
    """Bound the iteration by ``n`` recorded iterations (the median when past them)."""
    with param.discard_events(config):
        if config.iteration > n:
            config.iteration = 0
        bound_iteration(config, n)


def upload_state(
    shown: str | None = None, status: str = "", error: str = "", n: int = 0
) -> dict[str, Any]:
    """The upload control's limits, its message and the shown upload's name."""
    return {
        "max_bytes": MAX_UPLOAD_BYTES,
        "max_unpacked_bytes": MAX_UNPACKED_BYTES,
        "max_trace_bytes": MAX_TRACE_BYTES,
        "max_files": MAX_UPLOAD_FILES,
        "max_message_bytes": MAX_UPLOAD_MESSAGE_BYTES,
        "shown": shown,
        "status": status if not error else "",
        "error": error,
        "n": n,
    }


class TraceRun(Run):
    """A recorded iteration on every rank with the fitted model beside it, at any moment."""

    def __init__(self, settings: param.Parameterized, uploaded: Trace | None = None):
        self.uploaded = uploaded
        r = self.result = settings.result(uploaded=uploaded)
        self.quantities = step_quantities(r)
        self.horizon = r.end_ms
        self.speed = self.horizon / PLAY_SECONDS
        self.step = nice_step(self.horizon / 16)

    def state(self, t: float = 0.0) -> dict:
        return page_state(self.result, self.quantities, uploaded=self.uploaded is not None)

    def description(self, t: float) -> str:
        r = self.result
        ms = MILLISECONDS
        q = self.quantities
        m = {k: v["measured"] for k, v in q.items()}
        head = (
            f"{r.trace.name}, {r.iteration_label}: {r.n_ranks} ranks, {layout_words(r.trace)}. "
            f"Measured: the last gradient is ready at {ms(m['compute_end_ms'])}, the last "
            f"all-reduce ends at {ms(m['communication_end_ms'])}, exposed tail "
            f"{ms(m['exposed_tail_ms'])}, backward returns at {ms(m['backward_return_ms'])}, "
            f"step {ms(m['step_ms'])}. "
        )
        ranks = ", ".join(str(run_rank(r.trace, int(x))) for x in r.defining_rank)
        defined = (
            f"Readiness of bucket 0 is defined by rank {ranks}. "
            if r.n_buckets == 1
            else f"Readiness of buckets 0 to {r.n_buckets - 1} is defined by rank {ranks}. "
        )
        if r.peer_wait is not None:
            waits = ", ".join(
                f"rank {run_rank(r.trace, k)} {ms(float(r.peer_wait[k].sum()))}"
                for k in range(r.n_ranks)
            )
            defined += f"Peer waits (all-reduce kernels spinning for the last rank): {waits}. "
        if not r.has_model:
            return (
                head
                + f"No model is drawn: it could not be fitted to this trace ({r.fit_error}). "
                + defined
                + f"Playhead at {ms(t)}."
            )
        p = {k: v["model"] for k, v in q.items()}
        w = r.what_if
        worst = largest_error(q)
        return (
            head + f"The model predicts {ms(p['compute_end_ms'])}, "
            f"{ms(p['communication_end_ms'])}, {ms(p['exposed_tail_ms'])}, "
            f"{ms(p['backward_return_ms'])} and {ms(p['step_ms'])}; its largest error is the "
            f"{NAMES[worst].lower()}, {SIGNED_PCT(q[worst]['error_pct'], signed=True)}. "
            + defined
            + f"What if: at a {w.cap_mb:g} MiB cap ({what_if_layout(w, r.trace)}) the model "
            f"predicts a step of "
            f"{ms(w.predicted['step_ms'])}"
            + (
                f", measured {ms(w.measured['step_ms'])} in {w.measured_name}. "
                if w.measured is not None
                else " (no trace of that layout recorded). "
            )
            + f"Playhead at {ms(t)}."
        )


def trace_view_state(
    settings: param.Parameterized, clock: Clock, uploaded: Trace | None = None
) -> dict[str, Any]:
    """What the trace viewer's page draws for ``settings`` (and an upload) at ``clock``'s time.

    ``{"state", "description", "anchor"}``; the clock is read as it is (a component
    fits its horizon, speed and Step to the run first).
    """
    return drawn(TraceRun(settings, uploaded), clock)
