"""A real DDP trace beside the model: per-rank lanes, the fit, and a "what if" bucket cap.

Shows a shipped trace (or an uploaded one: size-limited, parsed as JSON data
and validated, never executed), the median or one recorded iteration, which
rank defined each bucket's readiness, the model fitted on the other traces
drawn beside the measurement, the fit's numbers and quality, and the model's
prediction for another bucket cap with the measured answer where a trace of
that cap was recorded. The page (``trace_viewer.js``) draws it all from
``state``; an upload arrives as one message, ``{"upload": filename, "text": ...}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import param

from ..common.component import WidgetComponent
from ..common.fields import field_specs
from ..common.formatting import MILLISECONDS, Quantity, plain_number
from ..common.parsing import parse_setting
from ..model.timeline import Clock
from ..traces import (
    MAX_TRACE_BYTES,
    QUANTITIES,
    Trace,
    TraceError,
    error_pct,
    parse_trace,
    refusal,
    summarize,
)
from ..traces import measure as measure_trace
from ..traces.shipped import DESCRIPTIONS
from ..traces.trace_view import (
    TraceViewConfig,
    TraceViewResult,
    machine_summary,
    shares_cores,
    shipped_traces,
)

HERE = Path(__file__).resolve().parent

#: Wall-clock seconds one run of the playhead takes.
PLAY_SECONDS = 10.0
#: The step's quantities in the order they happen: the tail starts at the last gradient.
STEP_ORDER = (
    "compute_end_ms",
    "communication_end_ms",
    "exposed_tail_ms",
    "backward_return_ms",
    "step_ms",
)
NAMES = {
    "compute_end_ms": "Last gradient ready",
    "backward_return_ms": "Backward return",
    "communication_end_ms": "Communication end",
    "exposed_tail_ms": "Exposed tail",
    "step_ms": "Step",
}
#: The largest text an upload message may carry. JSON text of at most MAX_TRACE_BYTES
#: is at most twice as long once escaped in the message (``"`` and ``\\`` become two
#: characters; raw control characters other than whitespace are not JSON): the page
#: refuses anything longer before sending, and Bokeh's websocket limit (20 MiB) holds it.
MAX_UPLOAD_MESSAGE_BYTES = 2 * MAX_TRACE_BYTES
NAME_CHARS = 80
SIGNED_PCT = Quantity("%", digits=1)
#: How well the model predicts in general, from the validation protocol (bench/README.md,
#: "The model on workloads it was not fitted on"): not only on the shipped traces.
PREDICTION_QUALITY = (
    "How well the model predicts in general: on five workloads recorded on the project's "
    "2-core machine with all-reduces and backward also timed alone, fitted on two bucket "
    "layouts and predicting a third (60 cases), backward return came within 10 % in 56 and "
    "the exposed tail within max(20 %, 5 ms) in 56 (in an earlier recording, 52 and 51); "
    "a plain FIFO model without contention was closer on the tail in 16 cases "
    "(bench/README.md)."
)


class TraceView(WidgetComponent):
    """A recorded iteration on every rank, the fitted model beside it, and a what-if."""

    widget_name = "trace"
    settings_class = TraceViewConfig
    entry = HERE / "trace_viewer.js"
    _bundle = HERE / "trace_viewer.bundle.js"

    upload = param.Dict(
        default={}, doc="The upload control's limits, its message and the shown upload's name."
    )

    def __init__(self, **settings: Any):
        self.uploaded: Trace | None = None
        self._url_notices: list[str] = []
        self._upload_count = 0
        super().__init__(**settings)
        self.upload = self._upload_state()

    # -- settings ------------------------------------------------------------------

    def make_settings(self, **settings: Any) -> TraceViewConfig:
        """The settings, with the iteration bounded by the chosen trace's iterations.

        An iteration past them (``?iteration=999``) is ignored with a notice, as any
        other bad value is; the median iteration is shown instead.
        """
        iteration = settings.pop("iteration", None)
        config = TraceViewConfig(**settings)
        _bound_iteration(config, shipped_traces()[config.trace].n_iterations)
        if iteration is not None:
            text = plain_number(iteration)
            try:
                config.iteration = parse_setting(text, config.param["iteration"])
            except ValueError as exc:
                self._url_notices.append(f"Ignored iteration={text}: {exc}")
        return config

    def make_clock(self) -> Clock:
        return Clock(horizon=1.0, step_size=1.0)

    def show_notices(self, notices: list[str]) -> None:
        """The page's notices, and those of settings this trace cannot show."""
        self.notices = [*notices, *self._url_notices]

    def _settings_changed(self, *events: param.parameterized.Event) -> None:
        if any(e.name == "trace" for e in events):
            # Choosing a shipped trace replaces the upload.
            self.uploaded = None
            self._set_range(shipped_traces()[self.settings.trace].n_iterations)
            self.upload = self._upload_state()
        self.refresh()

    def _set_range(self, n: int) -> None:
        """Bound the iteration by ``n`` recorded iterations (the median when past them)."""
        with param.discard_events(self.settings):
            if self.settings.iteration > n:
                self.settings.iteration = 0
            _bound_iteration(self.settings, n)
        self.fields = field_specs(self.settings)

    # -- the upload ------------------------------------------------------------------

    def _handle_msg(self, msg: Any) -> None:
        """Besides the base's actions and edits: an upload, and back to the shipped trace."""
        if isinstance(msg, Mapping) and "upload" in msg:
            name, text = msg.get("upload"), msg.get("text")
            if isinstance(name, str) and isinstance(text, str):
                self.load_upload(text, name)
            return
        if isinstance(msg, Mapping) and msg.get("action") == "shipped":
            self.show_shipped()
            return
        super()._handle_msg(msg)

    def load_upload(self, data: bytes | str, filename: str) -> bool:
        """Parse an uploaded trace and show it; on error keep the shown trace and say why."""
        name = (filename or "upload.json")[:NAME_CHARS]
        self._upload_count += 1
        try:
            trace = parse_trace(data, name=name, max_bytes=MAX_TRACE_BYTES)
            self.settings.result(uploaded=trace)  # it must also fit and predict
        except (TraceError, ValueError) as exc:
            self.upload = self._upload_state(
                error=f"Not loaded: {exc}. The trace shown is unchanged."
            )
            return False
        self.uploaded = trace
        changed = self.settings.iteration > trace.n_iterations
        self._set_range(trace.n_iterations)
        status = f"Showing your upload, {name}."
        if changed:
            status += f" It has {trace.n_iterations} iterations: the median is shown."
        status += " A link to these settings shows the shipped trace; the upload stays here."
        self.upload = self._upload_state(status=status)
        self.reset_model()
        self._errors.clear()
        self.refresh()
        return True

    def show_shipped(self) -> None:
        """Back from an upload to the chosen shipped trace."""
        if self.uploaded is None:
            return
        self.uploaded = None
        self._set_range(shipped_traces()[self.settings.trace].n_iterations)
        self.upload = self._upload_state()
        self.reset_model()
        self.refresh()

    def _upload_state(self, status: str = "", error: str = "") -> dict:
        return {
            "max_bytes": MAX_TRACE_BYTES,
            "max_message_bytes": MAX_UPLOAD_MESSAGE_BYTES,
            "shown": self.uploaded.name if self.uploaded is not None else None,
            "status": status if not error else "",
            "error": error,
            "n": self._upload_count,
        }

    # -- the model's result ------------------------------------------------------------

    def fit_to_model(self) -> None:
        self.result = r = self.settings.result(uploaded=self.uploaded)
        self.quantities = step_quantities(r)
        self.fit_clock(r.end_ms, PLAY_SECONDS)

    def model_state(self) -> dict:
        r = self.result
        quantities = self.quantities
        s = r.prediction.schedule
        low = float(min(r.backward_start.min(), s.backward_start.min()))
        lanes = [self._rank_lanes(r, rank) for rank in range(r.n_ranks)]
        return {
            "title": f"{r.iteration_label[:1].upper()}{r.iteration_label[1:]}",
            "source": self._source_text(r),
            "uploaded": self.uploaded is not None,
            "median": r.iteration is None,
            "n_iterations": r.trace.n_iterations,
            "x_domain": [min(0.0, low) - 2.0, r.end_ms * 1.02],
            "n_buckets": r.n_buckets,
            "ranks": lanes,
            "order": list(STEP_ORDER),
            "names": NAMES,
            "quantities": quantities,
            "largest_error": largest_error(quantities),
            "fit": _fit_state(r),
            "defining": _defining_state(r),
            "machine": _machine_state(r.trace),
            "what_if": _what_if_state(r),
            "table": _table(r, lanes),
        }

    @staticmethod
    def _rank_lanes(r: TraceViewResult, rank: int) -> dict:
        """One rank's measured bars and marks, and the model's bars drawn on its lanes."""
        s = r.prediction.schedule
        k = r.model_rank(rank)
        opt = r.predicted_optimizer_start
        return {
            "rank": rank,
            "layers": {
                "start": _numbers(r.layer_start[rank]),
                "end": _numbers(r.layer_end[rank]),
                "bucket": [int(b) for b in r.trace.parameter_bucket],
            },
            "comm": {
                "start": _numbers(r.bucket_issue[rank]),
                "end": _numbers(r.bucket_complete[rank]),
                "ready": _numbers(r.bucket_ready[rank]),
                "defines": [bool(r.defining_rank[b] == rank) for b in range(r.n_buckets)],
            },
            "optimizer": _numbers([r.optimizer_start[rank], r.optimizer_end[rank]]),
            "backward_return": round(float(r.backward_return[rank]), 4),
            "model": {
                "layers": {
                    "start": _numbers(s.layer_start[k]),
                    "end": _numbers(s.layer_ready[k]),
                    "bucket": [int(b) for b in s.layer_bucket],
                },
                "comm": {
                    "start": _numbers(s.bucket_launch[k]),
                    "end": _numbers(s.bucket_end),
                    "ready": _numbers(s.bucket_ready[k]),
                },
                "optimizer": _numbers([opt, opt + r.fit.after_return_ms]),
            },
        }

    def _source_text(self, r: TraceViewResult) -> str:
        if self.uploaded is not None:
            return f"Your upload {r.trace.name}: {r.trace.layout}, {r.n_ranks} ranks."
        text = DESCRIPTIONS.get(r.trace.name, r.trace.layout)
        return f"{text[:1].upper()}{text[1:]} ({r.trace.layout}), {r.n_ranks} ranks."

    def describe(self) -> str:
        r = self.result
        ms = MILLISECONDS
        q = self.quantities
        m = {k: v["measured"] for k, v in q.items()}
        p = {k: v["model"] for k, v in q.items()}
        w = r.what_if
        worst = largest_error(q)
        return (
            f"{r.trace.name}, {r.iteration_label}: {r.n_ranks} ranks, {r.trace.layout}. "
            f"Measured: the last gradient is ready at {ms(m['compute_end_ms'])}, the last "
            f"all-reduce ends at {ms(m['communication_end_ms'])}, exposed tail "
            f"{ms(m['exposed_tail_ms'])}, backward returns at {ms(m['backward_return_ms'])}, "
            f"step {ms(m['step_ms'])}. The model predicts {ms(p['compute_end_ms'])}, "
            f"{ms(p['communication_end_ms'])}, {ms(p['exposed_tail_ms'])}, "
            f"{ms(p['backward_return_ms'])} and {ms(p['step_ms'])}; its largest error is the "
            f"{NAMES[worst].lower()}, {SIGNED_PCT(q[worst]['error_pct'], signed=True)}. "
            f"Readiness of buckets 0 to {r.n_buckets - 1} is defined by rank "
            f"{', '.join(str(int(x)) for x in r.defining_rank)}. "
            f"What if: at a {w.cap_mb:g} MiB cap ({w.layout}) the model predicts a step of "
            f"{ms(w.predicted['step_ms'])}"
            + (
                f", measured {ms(w.measured['step_ms'])} in {w.measured_name}. "
                if w.measured is not None
                else " (no trace of that layout recorded). "
            )
            + f"Playhead at {ms(self.clock.now())}."
        )


def step_quantities(r: TraceViewResult) -> dict[str, dict[str, float | None]]:
    """Each of ``STEP_ORDER``: measured (this iteration, or medians) and predicted, and the error.

    The last gradient ready is the measure module's compute end: of the shown
    iteration, or its median over the iterations, as every other median is.
    """
    measured = dict(r.measured)
    m = measure_trace(r.trace)
    e = m.compute_end_ms
    measured["compute_end_ms"] = (
        summarize(e).median if r.iteration is None else float(e[r.iteration])
    )
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


def _table(r: TraceViewResult, lanes: list[dict]) -> dict:
    """Every bar of the chart, measured and modelled, with each bucket's numbers."""
    names = r.trace.parameter_names
    mib = r.trace.bucket_bytes / (1024 * 1024)
    rows: list[list] = []
    for lane in lanes:
        rank = lane["rank"]
        for source, part in (("measured", lane), ("model", lane["model"])):
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
                    "all-reduce", f"Bucket {b}", b, float(mib[b]), comm["start"][b],
                    comm["end"][b], comm["ready"][b], defines,
                ])  # fmt: skip
            a, e = part["optimizer"]
            rows.append([
                f"Rank {rank}, {source}: optimizer", rank, source, "optimizer",
                "Optimizer", None, None, a, e, None, None,
            ])  # fmt: skip
    return {
        "caption": "Every bar of the chart, measured and modelled, ms from the last rank's "
        "backward start. An all-reduce runs from its issue (the model: its launch) to its "
        "completion on that rank; a layer's backward ends when its gradient is ready.",
        "columns": [
            {"key": "bar", "label": "Bar"},
            {"key": "rank", "label": "Rank"},
            {"key": "source", "label": "Source"},
            {"key": "kind", "label": "Kind"},
            {"key": "name", "label": "Name"},
            {"key": "bucket", "label": "Bucket"},
            {"key": "bucket_mib", "label": "Bucket size (MiB)", "digits": 2},
            {"key": "start_ms", "label": "Start (ms)", "digits": 2},
            {"key": "end_ms", "label": "End (ms)", "digits": 2},
            {"key": "bucket_ready_ms", "label": "Bucket ready (ms)", "digits": 2},
            {"key": "issued_last", "label": "Issued last (defined readiness)"},
        ],
        "rows": rows,
    }


def _bound_iteration(config: TraceViewConfig, n: int) -> None:
    """This settings object's iteration takes 0 to ``n``, and its help says so."""
    p = config.param["iteration"]
    p.bounds = (0, n)
    p.metadata = {
        **p.metadata,
        "hint": f"0 to {n}: 0 draws the median iteration, 1 to {n} one recorded iteration",
    }


def _numbers(values) -> list[float]:
    """Times for the page, to 0.1 µs (the page shows 0.01 ms)."""
    return [round(float(v), 4) for v in values]


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _fit_state(r: TraceViewResult) -> dict:
    f = r.fit
    return {
        "sources": list(f.sources),
        "iterations_used": f.iterations_used,
        "fitted_on_self": r.fitted_on_self,
        "includes_shown": r.trace.name in f.sources,
        "backward_total_ms": float(sum(f.backward_ms)),
        "overhead_ms": float(f.overhead_ms),
        "bandwidth_gbps": float(f.bandwidth_gbps),
        "contention": float(f.contention),
        "rank_contention": _numbers(f.rank_contention),
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


def _defining_state(r: TraceViewResult) -> list[dict]:
    mib = r.trace.bucket_bytes / (1024 * 1024)
    return [
        {
            "bucket": b,
            "parameters": len(r.trace.bucket_parameters[b]),
            "mib": float(mib[b]),
            "rank": int(r.defining_rank[b]),
            "counts": [int(r.defining_counts[k, b]) for k in range(r.n_ranks)],
        }
        for b in range(r.n_buckets)
    ]


def _machine_state(trace: Trace) -> dict:
    load = trace.other_load
    known = load[~np.isnan(load)]
    return {
        "summary": machine_summary(trace),
        "model": str(trace.metadata.get("model", "model not stated")),
        "load_low": float(known.min()) if known.size else None,
        "load_high": float(known.max()) if known.size else None,
        "shares_cores": shares_cores(trace),
    }


def _what_if_state(r: TraceViewResult) -> dict:
    w = r.what_if
    return {
        "cap_mb": w.cap_mb,
        "layout": w.layout,
        "predicted": {q: float(w.predicted[q]) for q in QUANTITIES},
        "measured": None if w.measured is None else {q: float(w.measured[q]) for q in QUANTITIES},
        "measured_name": w.measured_name,
        "refusal": refusal(
            r.fit, [sum(r.fit.parameter_bytes[p] for p in b) for b in w.bucket_parameters]
        ),
    }
