"""The fluid queue lab: predict, then run, a queue fed at one rate and drained at another."""

from __future__ import annotations

import html

import panel as pn
from bokeh.models import ColumnDataSource, Div, HoverTool, Range1d
from bokeh.plotting import figure

from .base import Widget
from .model.fluid_queue import Drain, DrainStatus, FluidQueue, PredictionCheck
from .model.timeline import Clock
from .parts import layout, theme
from .parts.formatting import (
    ITEMS,
    ITEMS_PER_SECOND,
    SECONDS,
    VALUE_SLOT,
    new_id,
    readout_html,
)

LIMITS = (
    "**What this analogy leaves out.** The fluid queue only tracks average pressure: "
    "traffic arrives as a smooth stream and the link drains it at a steady rate. A real "
    "training step has no such smoothness. It has bucket identities (which gradients travel "
    "together), dependencies (a bucket can leave only when its last layer is ready), a "
    "collective order every rank must follow, streams, and tensor lifetimes. None of those "
    "appear here. Use the lab to build intuition for rates; an actual per-bucket trace is "
    "what validates overlap."
)


KEY = theme.key_html(
    [
        ("line", theme.BLUE, "Queue length"),
        ("◆", theme.GREEN, "Rate change"),
        ("▼", theme.VERMILLION, "Your prediction"),
        ("○", theme.INK, "Actual (shown when reached)"),
        ("│", theme.INK, "Playhead"),
    ]
)


class QueueLab(Widget):
    """The fluid queue lab: rates and initial items, Reset / Play / Step, predictions checked."""

    settings_class = FluidQueue
    widget_name = "queue-lab"

    def make_clock(self) -> Clock:
        return self.settings.clock

    def reset_model(self) -> None:
        self.settings.reset()

    def build(self) -> None:
        self.initial_note = pn.pane.HTML("", margin=(0, 10), stylesheets=[theme.PAGE_CSS])
        self.run_source = ColumnDataSource({"x": [], "y": []})
        self.edit_source = ColumnDataSource({"x": [], "y": []})
        self.prediction_source = ColumnDataSource({"x": [], "y": [], "what": []})
        self.actual_source = ColumnDataSource({"x": [], "y": [], "what": []})
        self.figure = self._make_figure()

        self.elapsed_div, self.length_div, self.rate_div, self.formula_div = (
            self.readout() for _ in range(4)
        )
        self.drain_outcome, self.drain_pending, self.length_outcome, self.length_pending = (
            self.readout() for _ in range(4)
        )
        self.playhead.live_readout(
            self.elapsed_div, readout_html("Elapsed time", VALUE_SLOT, new_id("elapsed")), SECONDS
        )
        self.playhead.live_readout(
            self.length_div,
            readout_html("Queue length", VALUE_SLOT, new_id("length")),
            ITEMS,
            series=self.run_source,
        )
        for outcome, pending in (
            (self.drain_outcome, self.drain_pending),
            (self.length_outcome, self.length_pending),
        ):
            self.playhead.gate(outcome, after=True)
            self.playhead.gate(pending, after=False)
        self.length_prediction = pn.Column(
            self.fields["prediction_time"],
            self.fields["predicted_length"],
            pn.pane.Bokeh(self.length_outcome),
            pn.pane.Bokeh(self.length_pending),
            margin=0,
            sizing_mode="stretch_width",
        )

    def _make_figure(self):
        fig = figure(
            height=330,
            sizing_mode="stretch_width",
            min_width=280,
            x_range=Range1d(0, self.clock.horizon),
            y_range=Range1d(0, 5),
            x_axis_label="Time (s)",
            y_axis_label="Queue length (items)",
            title="Queue length over the run",
        )
        theme.style_figure(fig)
        shown_run = self.playhead.reveal("polyline", self.run_source)
        shown_actual = self.playhead.reveal("points", self.actual_source)
        # Scaled to what has happened so far: a range fitted to the whole run would
        # give away how high a growing queue gets before the learner predicts it.
        self.playhead.autoscale(fig.y_range, [shown_run, shown_actual, self.prediction_source])
        line = fig.line("x", "y", source=shown_run, line_color=theme.BLUE, line_width=3)
        # Dots at the kinks and at the playhead: at time zero the start is visible too.
        fig.scatter("x", "y", source=shown_run, size=7, fill_color=theme.BLUE, line_color="white")
        # Rate changes, predictions and outcomes: each its own marker shape, not just colour.
        _, predicted, actual = (
            fig.scatter("x", "y", source=source, line_color=edge, **style)
            for source, edge, style in (
                (
                    self.edit_source,
                    "white",
                    {"marker": "diamond", "size": 13, "fill_color": theme.GREEN},
                ),
                (
                    self.prediction_source,
                    "white",
                    {"marker": "inverted_triangle", "size": 15, "fill_color": theme.VERMILLION},
                ),
                (
                    shown_actual,
                    theme.INK,
                    {"marker": "circle", "size": 12, "fill_color": "white", "line_width": 2.5},
                ),
            )
        )
        self.playhead.add_to(fig, line_color=theme.INK, line_width=2, line_alpha=0.8)
        fig.add_tools(
            HoverTool(renderers=[predicted, actual], tooltips=[("", "@what")]),
            HoverTool(
                renderers=[line],
                tooltips=[("t", "@x{0.00} s"), ("q", "@y{0.00} items")],
                mode="vline",
            ),
        )
        return fig

    def update(self) -> None:
        model, clock = self.settings, self.clock
        xs, ys = model.series.vertices(clock.horizon)
        self.run_source.data = {"x": xs, "y": ys}
        starts = model.segment_starts[1:]
        self.edit_source.data = {"x": starts, "y": model.length_at(starts)}

        drain, length = model.drain_check(), model.length_check()
        self._predictions(drain, length)
        self._outcome(
            self.drain_outcome,
            self.drain_pending,
            drain,
            "Actual drain time",
            "Checked when the run reaches the moment the queue empties.",
            SECONDS,
            missing=_never_drains(model.drain()),
        )
        self._outcome(
            self.length_outcome,
            self.length_pending,
            length,
            "Actual queue length",
            "Checked when the run reaches that time.",
            ITEMS,
        )

        seg = model.segment
        self.rate_div.text = readout_html(
            "Net rate",
            ITEMS_PER_SECOND(seg.net_rate, signed=True),
            new_id("rate"),
            note={
                "drains": "The queue drains.",
                "grows": "The queue grows.",
                "constant": "The queue holds steady.",
            }[seg.trend],
        )
        self.formula_div.text = self._formula_html(seg)
        if model.initial_pending:
            self.initial_note.object = (
                f'<div class="ol-hint" role="status">Initial items {model.initial:g} '
                "applies at the next Reset.</div>"
            )
        else:
            self.initial_note.object = ""
        # Shown while the queue grows, and kept while it holds a prediction.
        self.length_prediction.visible = (
            seg.trend == "grows"
            or model.prediction_time is not None
            or model.predicted_length is not None
        )

    def _predictions(self, drain: PredictionCheck | None, length: PredictionCheck | None) -> None:
        px, py, pw, ax, ay, aw = [], [], [], [], [], []
        if drain is not None:
            px.append(drain.predicted), py.append(0.0)
            pw.append(f"Predicted drain at {SECONDS(drain.predicted)}")
            if drain.actual is not None:
                ax.append(drain.actual), ay.append(0.0)
                aw.append(f"Queue empty at {SECONDS(drain.actual)}")
        if length is not None:
            px.append(length.check_at), py.append(length.predicted)
            pw.append(f"Predicted {ITEMS(length.predicted)} at {SECONDS(length.check_at)}")
            if length.actual is not None:
                ax.append(length.check_at), ay.append(length.actual)
                aw.append(f"{ITEMS(length.actual)} at {SECONDS(length.check_at)}")
        self.prediction_source.data = {"x": px, "y": py, "what": pw}
        self.actual_source.data = {"x": ax, "y": ay, "what": aw}

    def _outcome(
        self,
        outcome: Div,
        pending: Div,
        check: PredictionCheck | None,
        label: str,
        waiting: str,
        quantity,
        missing: str = "It did not happen by the end.",
    ) -> None:
        at = float("inf") if check is None else check.check_at
        outcome.tags = [at]
        pending.tags = [at]
        if check is None:
            pending.text = ""
            outcome.text = ""
            return
        pending.text = f'<div class="ol-note" style="font-size:13px">{html.escape(waiting)}</div>'
        if check.actual is None:
            note = f"Your prediction: {quantity(check.predicted)}. {missing}"
            value = "—"
        else:
            err = check.error
            verdict = "spot on" if check.close() else f"off by {quantity(err, signed=True)}"
            note = f"Your prediction: {quantity(check.predicted)} ({verdict})."
            value = quantity(check.actual)
        text = readout_html(label, value, new_id("outcome"), note=note)
        klass = "ol-good" if check.close() else "ol-off"
        outcome.text = text.replace('class="ol-readout"', f'class="ol-readout {klass}"', 1)

    def _formula_html(self, seg) -> str:
        sign = "−" if seg.net_rate < 0 else "+"
        q0, t0 = f"{seg.length:.2f}", f"{seg.start:.2f}"
        formula = f"q(t) = max(0, {q0} {sign} {abs(seg.net_rate):.2f} × (t − {t0}))"
        note = (
            f"From t = {t0} s with {q0} items: arrival {seg.arrival:g} − service "
            f"{seg.service:g} items/s."
        )
        return readout_html("Formula", formula, new_id("formula"), note=note)

    def controls(self) -> list[pn.viewable.Viewable]:
        f, bokeh = self.fields, pn.pane.Bokeh
        return [
            theme.heading("Rates"),
            f["arrival"],
            f["service"],
            f["initial"],
            self.initial_note,
            theme.heading("Run"),
            self.time_control,
            theme.heading("Predict, then run"),
            f["predicted_drain_time"],
            bokeh(self.drain_outcome),
            bokeh(self.drain_pending),
            self.length_prediction,
        ]

    def main(self) -> list[pn.viewable.Viewable]:
        return [
            layout.readout_row([self.elapsed_div, self.length_div, self.rate_div], basis=140),
            pn.Column(self.formula_div, sizing_mode="stretch_width"),
            self.chart_panel(pn.pane.HTML(KEY, sizing_mode="stretch_width", margin=(0, 10))),
            pn.pane.Markdown(LIMITS, sizing_mode="stretch_width"),
        ]

    def describe(self) -> str:
        model, t = self.settings, self.clock.now()
        seg = model.segment
        parts = [
            f"At {SECONDS(t)} the queue holds {ITEMS(model.length())}.",
            f"Since {SECONDS(seg.start)} it "
            + (
                "holds steady"
                if seg.trend == "constant"
                else f"{seg.trend} at {ITEMS_PER_SECOND(abs(seg.net_rate))}"
            )
            + f" (arrival {ITEMS_PER_SECOND(seg.arrival)}, "
            f"service {ITEMS_PER_SECOND(seg.service)}).",
        ]
        drain = model.drain()
        if drain.status == DrainStatus.DRAINS and drain.time <= t:
            parts.append(f"It was first empty at {SECONDS(drain.time)}.")
        elif drain.status != DrainStatus.DRAINS:
            parts.append(_never_drains(drain))
        edits = len(model.segment_starts) - 1
        if edits:
            parts.append(f"The rates changed {edits} time{'s' if edits > 1 else ''} in this run.")
        return " ".join(parts)

    def export_readouts(self) -> list[tuple[str, str]]:
        model, t = self.settings, self.clock.now()
        return [
            ("Elapsed time", SECONDS(t)),
            ("Queue length", ITEMS(model.length())),
            ("Net rate", ITEMS_PER_SECOND(model.segment.net_rate, signed=True)),
        ]

    def export_columns(self) -> dict[str, list]:
        s = self.settings.series
        ends = [*s.start[1:].tolist(), self.clock.horizon]
        return {
            "segment_start_s": s.start.tolist(),
            "segment_end_s": ends,
            "length_at_start_items": s.value.tolist(),
            "net_rate_items_per_s": s.slope.tolist(),
        }


def _never_drains(drain: Drain) -> str:
    """Why the queue does not empty during the run, in the model's own terms."""
    if drain.status == DrainStatus.GROWS_FROM_EMPTY:
        return "The queue starts empty and grows: it never drains."
    if drain.status == DrainStatus.AFTER_THE_RUN:
        return f"It would empty at {SECONDS(drain.time)}, after the run ends."
    if drain.status == DrainStatus.NEVER:
        return "The queue never drains: it does not shrink."
    return "It did not happen by the end."
