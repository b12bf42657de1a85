"""The fluid queue lab: predict, then run, a queue fed at one rate and drained at another."""

from __future__ import annotations

import html

import panel as pn
import param
from bokeh.models import ColumnDataSource, Div, HoverTool, Range1d
from bokeh.plotting import figure

from . import layout, theme
from .formatting import (
    ITEMS,
    ITEMS_PER_SECOND,
    SECONDS,
    VALUE_SLOT,
    new_id,
    readout_html,
)
from .model.fluid_queue import FluidQueue, PredictionCheck
from .number_field import NumberField
from .playhead import Playhead
from .time_control import TimeControl

LIMITS = (
    "**What this analogy leaves out.** The fluid queue only tracks average pressure: "
    "traffic arrives as a smooth stream and the link drains it at a steady rate. A real "
    "training step has no such smoothness. It has bucket identities (which gradients travel "
    "together), dependencies (a bucket can leave only when its last layer is ready), a "
    "collective order every rank must follow, streams, and tensor lifetimes. None of those "
    "appear here. Use the lab to build intuition for rates; an actual per-bucket trace is "
    "what validates overlap."
)


#: The settings a learner edits, with units; also the URL keys.
FIELDS = {"arrival": "items/s", "service": "items/s", "initial": "items"}

KEY = theme.key_html(
    [
        ("line", theme.BLUE, "Queue length"),
        ("◆", theme.GREEN, "Rate change"),
        ("▼", theme.VERMILLION, "Your prediction"),
        ("○", theme.INK, "Actual (shown when reached)"),
        ("│", theme.INK, "Playhead"),
    ]
)


class QueueLab(pn.viewable.Viewer):
    """The fluid queue lab: rates and initial items, Reset / Play / Step, predictions checked."""

    def __init__(self, **params):
        super().__init__()
        self.model = FluidQueue(**params)
        self.clock = self.model.clock
        self.playhead = Playhead(self.clock)
        self._sheet = theme.readout_stylesheet()

        self.arrival_field, self.service_field, self.initial_field = (
            NumberField(self.model, name, unit) for name, unit in FIELDS.items()
        )
        self.drain_field = NumberField(
            self.model, "predicted_drain_time", "s", hint="Seconds; checked when the queue empties."
        )
        self.time_field = NumberField(self.model, "prediction_time", "s", hint="Seconds from 0.")
        self.length_field = NumberField(
            self.model, "predicted_length", "items", hint="Items at that time."
        )
        self.initial_note = pn.pane.HTML("", margin=(0, 10), stylesheets=[theme.PAGE_CSS])
        self.time_control = TimeControl(
            self.clock, on_change=self.refresh, on_reset=self.model.reset
        )

        self.run_source = ColumnDataSource({"x": [], "y": []})
        self.edit_source = ColumnDataSource({"x": [], "y": []})
        self.prediction_source = ColumnDataSource({"x": [], "y": [], "what": []})
        self.actual_source = ColumnDataSource({"x": [], "y": [], "what": []})
        self.figure = self._make_figure()

        self.elapsed_div = self._div()
        self.length_div = self._div()
        self.rate_div = self._div()
        self.formula_div = self._div()
        self.drain_outcome = self._div()
        self.drain_pending = self._div()
        self.length_outcome = self._div()
        self.length_pending = self._div()
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
        self.playhead.attach()

        self.length_prediction = pn.Column(
            self.time_field,
            self.length_field,
            pn.pane.Bokeh(self.length_outcome),
            pn.pane.Bokeh(self.length_pending),
            margin=0,
            sizing_mode="stretch_width",
        )
        self.model.param.watch(
            lambda _: self.refresh(),
            [
                "arrival",
                "service",
                "initial",
                "predicted_drain_time",
                "prediction_time",
                "predicted_length",
            ],
        )
        self.refresh()

    def _div(self) -> Div:
        return Div(text="", stylesheets=[self._sheet], sizing_mode="stretch_width", margin=0)

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
        fig.scatter(
            "x",
            "y",
            source=self.edit_source,
            marker="diamond",
            size=13,
            fill_color=theme.GREEN,
            line_color="white",
        )
        predicted = fig.scatter(
            "x",
            "y",
            source=self.prediction_source,
            marker="inverted_triangle",
            size=15,
            fill_color=theme.VERMILLION,
            line_color="white",
        )
        actual = fig.scatter(
            "x",
            "y",
            source=shown_actual,
            marker="circle",
            size=12,
            fill_color="white",
            line_color=theme.INK,
            line_width=2.5,
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

    @property
    def settings(self) -> param.Parameterized:
        """The object holding this widget's URL-addressable settings."""
        return self.model

    def settings_values(self) -> dict[str, float]:
        """The current settings by parameter name (what a link reproduces)."""
        return {name: getattr(self.model, name) for name in FIELDS}

    def apply(self, **settings) -> None:
        """Set these settings and Reset, so the experiment starts from time zero."""
        self.model.param.update(settings)
        self.time_control.reset()

    def refresh(self) -> None:
        """Redraw every source and readout from the model, then re-anchor the browser."""
        # Panel runs some callbacks outside the document lock; raw Bokeh models
        # must then be edited through unlocked() so the changes are sent.
        with pn.io.unlocked():
            self._redraw()

    def _redraw(self) -> None:
        model, clock = self.model, self.clock
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

        self.time_control.sync()
        self.playhead.push()

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
            note = f"Your prediction: {quantity(check.predicted)}. It did not happen by the end."
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

    def __panel__(self) -> pn.viewable.Viewable:
        bokeh = pn.pane.Bokeh
        controls = layout.controls_card(
            theme.heading("Rates"),
            self.arrival_field,
            self.service_field,
            self.initial_field,
            self.initial_note,
            theme.heading("Run"),
            self.time_control,
            theme.heading("Predict, then run"),
            self.drain_field,
            bokeh(self.drain_outcome),
            bokeh(self.drain_pending),
            self.length_prediction,
        )
        main = layout.main_column(
            layout.readout_row([self.elapsed_div, self.length_div, self.rate_div], basis=140),
            pn.Column(self.formula_div, sizing_mode="stretch_width"),
            bokeh(self.figure, sizing_mode="stretch_width"),
            pn.pane.HTML(KEY, sizing_mode="stretch_width", margin=(0, 10)),
            pn.pane.Markdown(LIMITS, sizing_mode="stretch_width"),
        )
        return layout.widget_layout(controls, main)
