"""A real DDP trace beside the model: per-rank lanes, the fit, and a "what if" bucket cap.

(Longer than most views: besides the chart it owns the upload with its error
message and the fit and what-if tables, each a few lines of wiring.)

Shows a shipped trace (or an uploaded one: size-limited, parsed as JSON data
and validated, never executed), the median or one recorded iteration, which
rank defined each bucket's readiness, the model fitted on the other traces
drawn over the measurement, the fit's numbers and quality, and the model's
prediction for another bucket cap with the measured answer where a trace of
that cap was recorded.
"""

from __future__ import annotations

import html

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource

from .base import Widget
from .model.timeline import Clock
from .model.trace import MAX_TRACE_BYTES, QUANTITIES, Trace, TraceError, error_pct, parse_trace
from .model.trace_view import (
    TraceViewConfig,
    TraceViewResult,
    machine_summary,
    shares_cores,
)
from .parts import layout, theme
from .parts.formatting import MILLISECONDS, VALUE_SLOT, Quantity, new_id, readout_html
from .trace_drawing import (
    BAR_COLUMNS,
    KEY,
    MARK_COLUMNS,
    mark_columns,
    measured_columns,
    model_columns,
    set_lanes,
    timeline_figure,
)
from .traces import DESCRIPTIONS

PLAY_SECONDS = 10.0
NAMES = {
    "backward_return_ms": "Backward return",
    "communication_end_ms": "Communication end",
    "exposed_tail_ms": "Exposed tail",
    "step_ms": "Step",
}
SIGNED_PCT = Quantity("%", digits=1)
TABLE_CSS = f"""
.ol-scroll {{ max-width: 100%; overflow-x: auto; }}
.ol-table {{ border-collapse: collapse; margin: 4px 0 8px; font: 14px/1.4 {theme.FONT}; }}
.ol-table th, .ol-table td {{ border: 1px solid {theme.BORDER}; padding: 3px 8px;
  text-align: left; color: {theme.INK}; }}
.ol-table thead th {{ background: {theme.PAGE_BACKGROUND}; }}
.ol-machine {{ border-left: 4px solid {theme.ORANGE}; padding: 2px 10px; }}
.ol-machine p {{ margin: 4px 0; font: 14px/1.45 {theme.FONT}; color: {theme.INK}; }}
"""
R2 = Quantity("", digits=2)


class TraceView(Widget):
    """A recorded iteration on every rank, the fitted model over it, and a what-if."""

    settings_class = TraceViewConfig
    widget_name = "trace"

    def make_clock(self) -> Clock:
        return Clock(horizon=1.0, step_size=1.0)

    def build(self) -> None:
        self.uploaded: Trace | None = None
        self.measured_source = ColumnDataSource({k: [] for k in BAR_COLUMNS})
        self.model_source = ColumnDataSource({k: [] for k in BAR_COLUMNS})
        self.marks = ColumnDataSource({k: [] for k in MARK_COLUMNS})
        self.figure = timeline_figure(
            self.measured_source, self.model_source, self.marks, self.playhead
        )
        keys = ["elapsed"]
        for q in QUANTITIES:
            keys += [f"{q}:measured", f"{q}:model"]
        keys += [f"{q}:what_if" for q in QUANTITIES]
        self.readouts = {key: self.readout() for key in keys}
        self._ids = {key: new_id("trace-readout") for key in keys}
        self.playhead.live_readout(
            self.readouts["elapsed"],
            readout_html(
                "Elapsed time",
                VALUE_SLOT,
                self._ids["elapsed"],
                note="from the start of backward on the last rank",
            ),
            MILLISECONDS,
        )
        self.readout_row = layout.readout_row(
            [self.readouts[k] for k in keys if not k.endswith(":what_if")], basis=170
        )
        self.what_if_row = layout.readout_row(
            [self.readouts[f"{q}:what_if"] for q in QUANTITIES], basis=170
        )
        css = [theme.PAGE_CSS, TABLE_CSS]
        self.source_note = pn.pane.HTML("", margin=(0, 10, 4, 10), stylesheets=css)
        self.upload = pn.widgets.FileInput(
            accept=".json",
            multiple=False,
            label="Upload a trace",
            description=f"A trace file (.json, at most {MAX_TRACE_BYTES // (1024 * 1024)} MiB) "
            "written by overlap-lab record or the recorder.",
            sizing_mode="stretch_width",
            margin=(4, 10),
        )
        self.upload.param.watch(self._uploaded, "value")
        self.upload_label = pn.pane.HTML(
            '<div class="ol-hint">Upload a trace (.json, at most '
            f"{MAX_TRACE_BYTES // (1024 * 1024)} MiB): it is read as data and checked "
            "against the trace format.</div>",
            margin=(6, 10, 0, 10),
            stylesheets=css,
        )
        self.upload_message = pn.pane.HTML("", margin=(0, 10, 6, 10), stylesheets=css)
        self.back_button = pn.widgets.Button(
            label="Show the shipped trace again", visible=False, margin=(0, 10, 6, 10)
        )
        self.back_button.on_click(lambda _: self._clear_upload())
        self.machine = pn.pane.HTML(
            "", sizing_mode="stretch_width", margin=(4, 10), stylesheets=css
        )
        self.defining = pn.pane.HTML(
            "", sizing_mode="stretch_width", margin=(4, 10), stylesheets=css
        )
        self.fit_panel = pn.pane.HTML(
            "", sizing_mode="stretch_width", margin=(4, 10), stylesheets=css
        )
        self.what_if_note = pn.pane.HTML(
            "", sizing_mode="stretch_width", margin=(4, 10), stylesheets=css
        )
        self.key = pn.pane.HTML(KEY, sizing_mode="stretch_width", margin=(0, 10))

    # -- the upload ----------------------------------------------------------------

    def load_upload(self, data: bytes, filename: str) -> bool:
        """Parse an uploaded trace and show it; on error keep the shown trace and say why."""
        name = (filename or "upload.json")[:80]
        try:
            trace = parse_trace(data, name=name, max_bytes=MAX_TRACE_BYTES)
            self.settings.result(uploaded=trace)  # it must also fit and predict
        except (TraceError, ValueError) as exc:
            self.upload_message.object = (
                f'<div class="ol-error" role="alert">Not loaded: {html.escape(str(exc))}. '
                "The trace shown is unchanged.</div>"
            )
            return False
        self.uploaded = trace
        self.upload_message.object = (
            f'<div class="ol-hint" role="status">Showing your upload, {html.escape(name)}.</div>'
        )
        self.back_button.visible = True
        self._drawn = None
        self.time_control.reset()
        return True

    def _uploaded(self, event: param.parameterized.Event) -> None:
        if event.new is None:
            return
        self.load_upload(event.new, self.upload.filename)

    def _clear_upload(self) -> None:
        self.uploaded = None
        self.upload_message.object = ""
        self.back_button.visible = False
        self._drawn = None
        self.time_control.reset()

    def settings_changed(self, *events: param.parameterized.Event) -> None:
        if any(e.name == "trace" for e in events) and self.uploaded is not None:
            # Choosing a shipped trace replaces the upload.
            self.uploaded = None
            self.upload_message.object = ""
            self.back_button.visible = False
        self.refresh()

    # -- drawing -------------------------------------------------------------------

    def update(self) -> None:
        r = self.result = self.settings.result(uploaded=self.uploaded)
        self.fit_clock(r.end_ms, PLAY_SECONDS)
        set_lanes(self.figure, r.n_ranks)
        self.figure.title.text = f"{r.iteration_label.capitalize()}: measured and model"
        self.measured_source.data = measured_columns(r)
        self.model_source.data = model_columns(r)
        self.marks.data = mark_columns(r)
        low = float(min(r.backward_start.min(), r.prediction.schedule.backward_start.min()))
        self.figure.x_range.update(start=min(0.0, low) - 2, end=r.end_ms * 1.02)
        for key, (label, value, note) in self.readout_values(r).items():
            self.readouts[key].text = readout_html(label, value, self._ids[key], note=note)
        self.source_note.object = f'<div class="ol-hint">{html.escape(self._source_text(r))}</div>'
        self.machine.object = self._machine_html(r)
        self.defining.object = self._defining_html(r)
        self.fit_panel.object = self._fit_html(r)
        self.what_if_note.object = self._what_if_html(r)

    @staticmethod
    def readout_values(r: TraceViewResult) -> dict[str, tuple[str, str, str]]:
        """Label, value and note of every readout but the elapsed time."""
        ms = MILLISECONDS
        out = {}
        predicted = r.prediction.quantities
        for q in QUANTITIES:
            name = NAMES[q]
            out[f"{q}:measured"] = (f"{name}, measured", ms(r.measured[q]), r.iteration_label)
            err = error_pct(predicted[q], r.measured[q])
            out[f"{q}:model"] = (
                f"{name}, model",
                ms(predicted[q]),
                f"{SIGNED_PCT(err, signed=True)} against the measurement",
            )
        w = r.what_if
        for q in QUANTITIES:
            if w.measured is None:
                note = "no trace of this cap recorded"
            else:
                note = f"measured {ms(w.measured[q])} ({w.measured_name}, median)"
            out[f"{q}:what_if"] = (
                f"{NAMES[q]}, model at {w.cap_mb:g} MiB",
                ms(w.predicted[q]),
                note,
            )
        return out

    def _source_text(self, r: TraceViewResult) -> str:
        if self.uploaded is not None:
            return f"Showing your upload {r.trace.name}: {r.trace.layout}."
        text = DESCRIPTIONS.get(r.trace.name, r.trace.layout)
        return f"{text[:1].upper()}{text[1:]}."

    @staticmethod
    def _machine_html(r: TraceViewResult) -> str:
        md = r.trace.metadata
        load = r.trace.other_load
        known = load[~np.isnan(load)]
        busy = ""
        if known.size:
            low, high = (f"{100 * x:.0f}" for x in (known.min(), known.max()))
            share = f"{low} %" if low == high else f"{low}–{high} %"
            busy = f" Other processes kept {share} of the cores busy during these iterations."
        if shares_cores(r.trace):
            effect = (
                "The ranks' compute and gloo's all-reduces share these cores, so they slow "
                "each other down (contention): backward is slower while a transfer runs, "
                "and a transfer is slower while backward runs. Overlap hides less than the "
                "diagrams suggest, and a busier overlap can be slower."
            )
        else:
            effect = (
                "There are enough cores for compute and communication to run side by side, "
                "so they interfere little."
            )
        return (
            '<section class="ol-machine" aria-label="Where this trace was recorded">'
            f"<p><strong>Recorded on:</strong> {html.escape(machine_summary(r.trace))}"
            f" ({html.escape(str(md.get('model', 'model not stated')))}).{html.escape(busy)}</p>"
            f"<p><strong>What that does to overlap:</strong> {html.escape(effect)}</p></section>"
        )

    @staticmethod
    def _defining_html(r: TraceViewResult) -> str:
        n = r.trace.n_iterations
        rows = []
        for b in range(r.n_buckets):
            rank = int(r.defining_rank[b])
            counts = ", ".join(
                f"rank {k}: {int(r.defining_counts[k, b])}" for k in range(r.n_ranks)
            )
            rows.append(
                f"<tr><th scope='row'>Bucket {b}</th><td>{len(r.trace.bucket_parameters[b])}"
                f"</td><td>Rank {rank}</td><td>{counts} of {n}</td></tr>"
            )
        return (
            "<h3 class='ol-title'>Which rank defined each bucket's readiness</h3>"
            "<p class='ol-hint'>The rank that issued a bucket's all-reduce last: every other "
            "rank waited for it.</p>"
            "<div class='ol-scroll'><table class='ol-table'><thead><tr><th scope='col'>Bucket</th>"
            "<th scope='col'>Parameters</th><th scope='col'>Issued last, shown iteration</th>"
            "<th scope='col'>Issued last, iterations</th></tr></thead><tbody>"
            + "".join(rows)
            + "</tbody></table></div>"
        )

    @staticmethod
    def _fit_html(r: TraceViewResult) -> str:
        f = r.fit
        if r.fitted_on_self:
            source = (
                f"fitted on this trace itself ({f.iterations_used} iterations): its parameters "
                "differ from the shipped traces', so this is a fit, not a prediction"
            )
        else:
            source = f"fitted on {', '.join(f.sources)} ({f.iterations_used} iterations), " + (
                "not on the trace shown: what is drawn is a prediction"
                if r.trace.name not in f.sources
                else "which include the trace shown"
            )
        ms = MILLISECONDS
        items = [
            ("Backward, all layers", ms(sum(f.backward_ms)), "at normal speed"),
            ("Per-transfer overhead", ms(f.overhead_ms), ""),
            ("Bandwidth", f"{f.bandwidth_gbps:.2f} GB/s", ""),
            ("Contention, backward", f"{f.contention:.2f}", "slows by 1 + c while a transfer runs"),
            (
                "Contention by rank",
                " / ".join(f"{c:.2f}" for c in f.rank_contention),
                "each iteration's most slowed rank first",
            ),
            (
                "Contention, transfers",
                f"{f.transfer_contention:.2f}",
                "slows by 1 + c while any rank computes",
            ),
            (
                "Backward fit quality",
                f"R² {R2(f.backward_quality.r2)}",
                f"RMS {ms(f.backward_quality.rms_ms)} over {f.backward_quality.samples} intervals",
            ),
            (
                "Transfer fit quality",
                f"R² {R2(f.transfer_quality.r2)}",
                f"RMS {ms(f.transfer_quality.rms_ms)} over {f.transfer_quality.samples} transfers",
            ),
        ]
        rows = "".join(
            f"<tr><th scope='row'>{html.escape(a)}</th><td>{html.escape(b)}</td>"
            f"<td>{html.escape(c)}</td></tr>"
            for a, b, c in items
        )
        return (
            "<h3 class='ol-title'>The fitted model</h3>"
            f"<p class='ol-hint'>The schedule model, {html.escape(source)}.</p>"
            f"<div class='ol-scroll'><table class='ol-table'><tbody>{rows}</tbody></table></div>"
        )

    @staticmethod
    def _what_if_html(r: TraceViewResult) -> str:
        w = r.what_if
        beside = (
            f"Measured beside it: {w.measured_name}, recorded with that layout."
            if w.measured is not None
            else "No shipped trace has this layout: record one to check the prediction."
        )
        return (
            f"<p class='ol-hint'>At {w.cap_mb:g} MiB DDP makes {html.escape(w.layout)}. "
            f"{html.escape(beside)}</p>"
        )

    def describe(self) -> str:
        r = self.result
        ms = MILLISECONDS
        p = r.prediction.quantities
        m = r.measured
        w = r.what_if
        return (
            f"{r.trace.name}, {r.iteration_label}: {r.n_ranks} ranks, {r.trace.layout}. "
            f"Measured: backward returns at {ms(m['backward_return_ms'])}, the last "
            f"all-reduce ends at {ms(m['communication_end_ms'])}, exposed tail "
            f"{ms(m['exposed_tail_ms'])}, step {ms(m['step_ms'])}. The model predicts "
            f"{ms(p['backward_return_ms'])}, {ms(p['communication_end_ms'])}, "
            f"{ms(p['exposed_tail_ms'])} and {ms(p['step_ms'])}. Readiness of buckets 0 to "
            f"{r.n_buckets - 1} is defined by rank "
            f"{', '.join(str(int(x)) for x in r.defining_rank)}. "
            f"What if: at a {w.cap_mb:g} MiB cap ({w.layout}) the model predicts a step of "
            f"{ms(w.predicted['step_ms'])}"
            + (
                f", measured {ms(w.measured['step_ms'])} in {w.measured_name}. "
                if w.measured is not None
                else " (no trace of that layout recorded). "
            )
            + f"Playhead at {ms(self.clock.elapsed)}."
        )

    def export_readouts(self) -> list[tuple[str, str]]:
        return [(label, value) for label, value, _ in self.readout_values(self.result).values()]

    def export_columns(self) -> dict[str, list]:
        a, b = self.measured_source.data, self.model_source.data
        return {
            "start_ms": [*a["left"], *b["left"]],
            "end_ms": [*a["right"], *b["right"]],
            "rank": [*a["rank"], *b["rank"]],
            "source": [*a["source"], *b["source"]],
            "kind": [*a["kind"], *b["kind"]],
            "label": [*a["label"], *b["label"]],
        }

    # -- layout --------------------------------------------------------------------

    def controls(self) -> list[pn.viewable.Viewable]:
        f = self.fields
        return [
            theme.heading("Trace"),
            f["trace"],
            self.source_note,
            self.upload_label,
            self.upload,
            self.upload_message,
            self.back_button,
            f["iteration"],
            theme.heading("What if"),
            f["what_if_cap_mb"],
        ]

    def main(self) -> list[pn.viewable.Viewable]:
        return [
            self.machine,
            pn.Row(self.time_control, sizing_mode="stretch_width"),
            self.readout_row,
            self.chart_panel(self.key),
            self.defining,
            self.fit_panel,
            theme.heading("What if the bucket cap were different?"),
            self.what_if_note,
            self.what_if_row,
        ]
