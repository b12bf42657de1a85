"""A real DDP trace beside the model: per-rank lanes, the fit, and a "what if" bucket cap.

Shows a shipped trace or an upload (an overlap-lab trace, or torch.profiler
files, one per rank, gzipped or not: size-limited before and after unpacking,
parsed as JSON data and validated, never executed), the median or one recorded
iteration, which rank defined each bucket's readiness, the model fitted on the
other traces drawn beside the measurement, the fit's numbers and quality, and
the model's prediction for another bucket cap with the measured answer where a
trace of that cap was recorded. It says what the run was (``state["run"]``) and,
for a profile, what a profile cannot show and what that does to the fit. A
trace the model cannot be fitted to is drawn as measured, with the reason.

The page (``trace_viewer.js``) draws it all from ``state``. An upload arrives as
one message, ``{"upload_files": [{"name": ..., "size": bytes, "base64": ...}, ...]}``
(the files' bytes in base64, so gzip travels safely); ``{"upload": filename,
"text": ...}`` (a trace's text) is still taken.
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import panel as pn
import param

from traces import (
    MAX_TRACE_BYTES,
    QUANTITIES,
    Trace,
    TraceError,
    error_pct,
    refusal,
    summarize,
)
from traces import measure as measure_trace
from traces.shipped import DESCRIPTIONS
from traces.upload import (
    MAX_UNPACKED_BYTES,
    MAX_UPLOAD_BYTES,
    MAX_UPLOAD_FILES,
    NAME_CHARS,
    Upload,
    load_upload_files,
)

from ..common.component import WidgetComponent
from ..common.fields import field_specs
from ..common.formatting import MILLISECONDS, Quantity, plain_number
from ..common.parsing import parse_setting
from ..common.state_numbers import state_numbers
from ..model.timeline import Clock
from .model import TraceViewConfig, TraceViewResult, shipped_traces
from .text import (
    cores_known,
    fit_terms,
    layout_words,
    listing,
    machine_summary,
    profile_limits,
    run_description,
    run_metadata,
    shares_cores,
    what_if_layout,
)

HERE = Path(__file__).resolve().parent
LOG = logging.getLogger(__name__)

#: Uploads are read and imported off the server's event loop, one at a time per process: a
#: profile at the unpacked limit takes seconds, and the other sessions must be served meanwhile.
_READER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trace-upload")

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
#: The most base64 an upload message may carry, every file together: MAX_UPLOAD_BYTES of
#: files in base64 (4 characters for every 3 bytes, and up to 4 more for each file's last
#: bytes). With the names and Bokeh's envelope it stays within the server's websocket
#: limit (20 MiB by default); the page refuses larger uploads before sending, and the
#: server refuses them again.
MAX_UPLOAD_MESSAGE_BYTES = 4 * -(-MAX_UPLOAD_BYTES // 3) + 4 * MAX_UPLOAD_FILES
SIGNED_PCT = Quantity("%", digits=1)
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
        if not isinstance(msg, Mapping):
            return
        if self.message_lock is not None and self.message_lock(msg):
            return  # a class round keeps the settings, the shown trace included
        if "upload_files" in msg:
            files = self._decoded_files(msg.get("upload_files"))
            if files is None:
                return
            doc = self._server_document()
            if doc is None:
                self.load_files(files)  # no server loop to keep free (a notebook, a test)
            else:
                self._read_in_background(files, doc)
            return
        if "upload" in msg:
            name, text = msg.get("upload"), msg.get("text")
            if isinstance(name, str) and isinstance(text, str):
                self.load_upload(text, name)
            return
        if msg.get("action") == "shipped":
            self.show_shipped()
            return
        super()._handle_msg(msg)

    def _decoded_files(self, files: Any) -> list[tuple[str, bytes]] | None:
        """The files of an ``upload_files`` message, their base64 decoded and its length checked.

        A message of another shape (no page sends one) is ignored; one too large, or
        whose base64 is damaged or does not decode to the size the page read, is
        refused with the message at the control.
        """
        if not isinstance(files, list) or not files:
            return None
        for f in files:
            if not (
                isinstance(f, Mapping)
                and isinstance(f.get("name"), str)
                and isinstance(f.get("base64"), str)
                and isinstance(f.get("size"), int)
                and not isinstance(f.get("size"), bool)
            ):
                return None
        names = [f["name"][:NAME_CHARS] or "upload.json" for f in files]
        what = names[0] if len(files) == 1 else f"{len(files)} files"
        total = sum(len(f["base64"]) for f in files)
        if len(files) > MAX_UPLOAD_FILES or total > MAX_UPLOAD_MESSAGE_BYTES:
            self._refuse(
                f"{what}: more than an upload here takes (at most {MAX_UPLOAD_FILES} files and "
                f"{MAX_UPLOAD_BYTES:,} bytes together, {MAX_UPLOAD_BYTES // 2**20} MiB)"
            )
            return None
        out = []
        for name, f in zip(names, files, strict=True):
            try:
                data = base64.b64decode(f["base64"], validate=True)
            except (binascii.Error, ValueError):
                self._refuse(f"{name}: its bytes did not arrive intact (damaged base64)")
                return None
            if len(data) != f["size"]:
                self._refuse(
                    f"{name}: {len(data):,} bytes arrived of the {f['size']:,} the page read"
                )
                return None
            out.append((name, data))
        return out

    def _refuse(self, why: str) -> None:
        """Say why an upload was not loaded; the trace shown stays (a new answer each time)."""
        self._upload_count += 1
        self.upload = self._upload_state(error=f"Not loaded: {why}. The trace shown is unchanged.")

    def load_upload(self, data: bytes | str, filename: str) -> bool:
        """Parse one uploaded file and show it; on error keep the shown trace and say why."""
        raw = data.encode("utf-8", errors="surrogatepass") if isinstance(data, str) else data
        return self.load_files([((filename or "upload.json")[:NAME_CHARS], raw)])

    @staticmethod
    def _server_document() -> Any:
        """The served page's document, or None outside a server session."""
        doc = pn.state.curdoc
        return doc if doc is not None and doc.session_context is not None else None

    def _read_in_background(self, files: list[tuple[str, bytes]], doc: Any) -> None:
        """Read the files on the reader thread, then show them on the page's own loop."""
        what = files[0][0] if len(files) == 1 else f"{len(files)} files"
        self.upload = self._upload_state(status=f"Reading {what}…")

        def read() -> Upload | Exception:
            try:
                return load_upload_files(files)
            except (TraceError, ValueError) as exc:
                return exc
            except Exception as exc:  # a bug must not kill the page: say so in one log line
                LOG.error("reading an upload failed: %s: %s", type(exc).__name__, exc)
                return ValueError(f"{what} could not be read")

        def done(future: Future) -> None:
            # Bokeh's one document method that is safe to call from another thread.
            try:
                doc.add_next_tick_callback(lambda: self._show_read(future.result()))
            except Exception:  # the page was closed meanwhile: nothing to show it on
                LOG.info("an upload finished after its page closed")

        _READER.submit(read).add_done_callback(done)

    def _show_read(self, outcome: Upload | Exception) -> None:
        if isinstance(outcome, Exception):
            self._refuse(str(outcome))
        else:
            self._show_upload(outcome)

    def load_files(self, files: list[tuple[str, bytes]]) -> bool:
        """Load an upload's files (one trace, or profiles) and show them; else say why.

        On any error the trace shown, the clock and everything drawn stay as they were.
        """
        try:
            upload = load_upload_files(files)
        except (TraceError, ValueError) as exc:
            self._refuse(str(exc))
            return False
        return self._show_upload(upload)

    def _show_upload(self, upload: Upload) -> bool:
        try:
            self.settings.result(uploaded=upload.trace)  # it must also be drawn
        except (TraceError, ValueError) as exc:
            self._refuse(str(exc))
            return False
        self._upload_count += 1
        trace = upload.trace
        self.uploaded = trace
        changed = self.settings.iteration > trace.n_iterations
        self._set_range(trace.n_iterations)
        if upload.kind == "profile":
            n = len(upload.files)
            status = (
                f"Showing your upload, {listing(upload.files)}: torch.profiler "
                f"file{'s' * (n != 1)} of {trace.n_ranks} rank{'s' * (trace.n_ranks != 1)}, "
                f"imported as a trace of {trace.n_iterations} iteration"
                f"{'s' * (trace.n_iterations != 1)}."
            )
        else:
            status = f"Showing your upload, {trace.name}."
        if changed:
            status += f" It has {trace.n_iterations} iterations: the median is shown."
        if upload.notes:
            notes = "; ".join(upload.notes)
            status += f" Import notes: {notes[:400]}{'…' * (len(notes) > 400)}."
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
            "max_bytes": MAX_UPLOAD_BYTES,
            "max_unpacked_bytes": MAX_UNPACKED_BYTES,
            "max_trace_bytes": MAX_TRACE_BYTES,
            "max_files": MAX_UPLOAD_FILES,
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
        low = float(r.backward_start.min())
        if r.has_model:
            low = min(low, float(r.prediction.schedule.backward_start.min()))
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
            "has_model": r.has_model,
            "largest_error": largest_error(quantities) if r.has_model else None,
            "run": _run_state(r.trace),
            "fit": _fit_state(r),
            "defining": _defining_state(r),
            "machine": _machine_state(r.trace),
            "what_if": _what_if_state(r),
            "table": _table(r, lanes),
        }

    @staticmethod
    def _rank_lanes(r: TraceViewResult, rank: int) -> dict:
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

    def _source_text(self, r: TraceViewResult) -> str:
        layout = layout_words(r.trace)
        if self.uploaded is not None:
            if run_metadata(r.trace)["source"] == "torch.profiler":
                return (
                    f"Your upload {r.trace.name}: torch.profiler files imported as a trace, "
                    f"{layout}, {r.n_ranks} ranks."
                )
            return f"Your upload {r.trace.name}: {layout}, {r.n_ranks} ranks."
        text = DESCRIPTIONS.get(r.trace.name, layout)
        return f"{text[:1].upper()}{text[1:]} ({layout}), {r.n_ranks} ranks."

    def describe(self) -> str:
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
        defined = (
            f"Readiness of buckets 0 to {r.n_buckets - 1} is defined by rank "
            f"{', '.join(str(run_rank(r.trace, int(x))) for x in r.defining_rank)}. "
        )
        if not r.has_model:
            return (
                head
                + f"No model is drawn: it could not be fitted to this trace ({r.fit_error}). "
                + defined
                + f"Playhead at {ms(self.clock.now())}."
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
            + f"Playhead at {ms(self.clock.now())}."
        )


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


def _table(r: TraceViewResult, lanes: list[dict]) -> dict:
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
        "backward start. An all-reduce runs from when it began running (a profile's kernel "
        "start; where the trace has none, its issue; the model: its launch) to its completion "
        "on that rank; a layer's backward ends when its gradient is ready.",
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


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _fit_state(r: TraceViewResult) -> dict:
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


def _defining_state(r: TraceViewResult) -> list[dict]:
    mib = r.trace.bucket_bytes / (1024 * 1024)
    return [
        {
            "bucket": b,
            "parameters": len(r.trace.bucket_parameters[b]),
            "mib": float(mib[b]),
            "rank": run_rank(r.trace, int(r.defining_rank[b])),
            "counts": [int(r.defining_counts[k, b]) for k in range(r.n_ranks)],
        }
        for b in range(r.n_buckets)
    ]


def _run_state(trace: Trace) -> dict:
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


def _machine_state(trace: Trace) -> dict:
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


def _what_if_state(r: TraceViewResult) -> dict | None:
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
        "refusal": refusal(
            r.fit, [sum(r.fit.parameter_bytes[p] for p in b) for b in w.bucket_parameters]
        ),
        # Fitted on one bucket layout (its own): which terms that could fit, and which not.
        "one_layout": r.fitted_on_self,
        "terms": fit_terms(r.fit, per_bucket=per_bucket) if r.fitted_on_self else [],
    }
