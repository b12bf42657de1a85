"""Many ranks: every drawn rank's backward, the link, and each bucket's events.

The bucket timeline draws one merged rank; this view draws each rank with its
own readiness, marks which rank defined each bucket's readiness, shows each
fast rank's idle wait, what a timer around the all-reduce call measures, and
how contention can make a busier overlap slower. When ranks disagree on which
collectives run there is no timeline: the view shows each rank's sequence.
"""

from __future__ import annotations

import html

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, Label

from . import ranks_text
from .base import Widget
from .model.ranks_view import (
    SCENARIO_DESCRIPTIONS,
    SCENARIO_SETTINGS,
    RanksConfig,
    RanksResult,
    sweep_layers_per_bucket,
)
from .model.timeline import Clock
from .parts import layout, theme
from .parts.formatting import MILLISECONDS, VALUE_SLOT, new_id, readout_html
from .ranks_drawing import (
    BAR_COLUMNS,
    KEY,
    MARK_COLUMNS,
    SWEEP_KEY,
    bar_columns,
    mark_columns,
    set_lanes,
    spans,
    sweep_figure,
    timeline_figure,
)

#: Wall-clock seconds one played step takes, whatever its length in ms.
PLAY_SECONDS = 10.0
TIMELINE_READOUTS = ("slowest", "idle", "timer", "step", "tail", "overlap")
DISAGREE_READOUTS = ("matched", "waiting")


class RanksView(Widget):
    """One step on every drawn rank: readiness, events, idle waits, contention, disagreement."""

    settings_class = RanksConfig
    widget_name = "ranks"

    def make_settings(self, **settings) -> RanksConfig:
        self._loading = False  # a scenario's settings are being loaded
        self._applying = False  # apply() sets the scenario and its overrides at once
        scenario = settings.get("scenario", RanksConfig.param.scenario.default)
        return RanksConfig(**{**SCENARIO_SETTINGS[scenario], **settings})

    def make_clock(self) -> Clock:
        return Clock(horizon=1.0, step_size=1.0)

    def build(self) -> None:
        self.scenario_note = pn.pane.HTML("", margin=(0, 10, 4, 10), stylesheets=[theme.PAGE_CSS])
        self.bars = ColumnDataSource({k: [] for k in BAR_COLUMNS})
        self.marks = ColumnDataSource({k: [] for k in MARK_COLUMNS})
        self.spans = spans()
        self.figure = timeline_figure(
            self.bars, self.marks, self.playhead, list(self.spans.values())
        )
        self.empty_note = Label(
            x=0.5,
            y=1.5,
            text="No timeline: see each rank's collectives above",
            text_align="center",
            text_font_size="14px",
            text_color=theme.MUTED,
            visible=False,
        )
        self.figure.add_layout(self.empty_note)
        self.sweep_source = ColumnDataSource({"x": [], "step": [], "overlap": [], "buckets": []})
        self.current_source = ColumnDataSource({"x": [], "y": []})
        self.best_source = ColumnDataSource({"x": [], "y": []})
        self.sweep_figure = sweep_figure(self.sweep_source, self.current_source, self.best_source)

        keys = ("elapsed", *TIMELINE_READOUTS, *DISAGREE_READOUTS)
        self.readouts = {key: self.readout() for key in keys}
        self._ids = {key: new_id(f"ranks-{key}") for key in keys}
        self._panel_id = new_id("ranks-sequences")
        self.playhead.live_readout(
            self.readouts["elapsed"],
            readout_html(
                "Elapsed time", VALUE_SLOT, self._ids["elapsed"], note="from the start of backward"
            ),
            MILLISECONDS,
        )
        # One row: the elapsed time, then the readouts of a timeline or of a disagreement
        # (only one of those two groups is visible at a time).
        self.readout_row = layout.readout_row([self.readouts[k] for k in keys], basis=190)
        self._cells = dict(zip(keys, self.readout_row.objects, strict=True))
        self.sequences = pn.pane.HTML(
            "",
            sizing_mode="stretch_width",
            margin=(4, 10),
            stylesheets=[theme.PAGE_CSS, ranks_text.PANEL_CSS],
        )
        self.key = pn.pane.HTML(KEY, sizing_mode="stretch_width", margin=(0, 10))
        self.sweep_pane = pn.Column(
            pn.pane.Bokeh(self.sweep_figure, sizing_mode="stretch_width"),
            pn.pane.HTML(SWEEP_KEY, sizing_mode="stretch_width", margin=(0, 10)),
            sizing_mode="stretch_width",
            margin=0,
        )

    # -- reacting to the learner ---------------------------------------------------

    def settings_changed(self, *events: param.parameterized.Event) -> None:
        if self._loading:
            return
        chosen = [e.new for e in events if e.name == "scenario"]
        if chosen and not self._applying:
            # Choosing a scenario loads its settings, as a preset does.
            self._loading = True
            try:
                values = {k: v for k, v in SCENARIO_SETTINGS[chosen[-1]].items() if k != "scenario"}
                self.settings.param.update(values)
            finally:
                self._loading = False
        self.refresh()

    def apply(self, **settings) -> None:
        """Load a scenario's settings (if one is given), then these, as a new experiment."""
        if "scenario" in settings:
            settings = {**SCENARIO_SETTINGS[settings["scenario"]], **settings}
        self._applying = True
        try:
            super().apply(**settings)
        finally:
            self._applying = False

    # -- drawing -------------------------------------------------------------------

    def update(self) -> None:
        r = self.result = self.settings.result()
        desc = SCENARIO_DESCRIPTIONS[r.scenario]
        self.scenario_note.object = f'<div class="ol-hint">{html.escape(desc)}</div>'
        timed = r.schedule is not None
        for key in TIMELINE_READOUTS:
            self._cells[key].visible = timed
        for key in DISAGREE_READOUTS:
            self._cells[key].visible = not timed
        self.sweep_pane.visible = timed
        self.key.visible = timed
        self.empty_note.visible = not timed
        self.sequences.visible = not timed
        if timed:
            self._draw_timeline(r)
        else:
            self._draw_disagreement(r)

    def _draw_timeline(self, r: RanksResult) -> None:
        s = r.schedule
        horizon = s.optimizer_start + r.optimizer_ms
        self.fit_clock(horizon, PLAY_SECONDS)
        set_lanes(self.figure, s.n_ranks)
        self.figure.title.text = "One training step on every drawn rank"
        self.bars.data = bar_columns(r)
        self.marks.data = mark_columns(r)
        self.spans["backward_end"].location = s.last_backward_end
        self.spans["optimizer_start"].location = s.optimizer_start
        for span in self.spans.values():
            span.visible = True
        self.figure.x_range.update(start=0, end=horizon * 1.02)
        for key, (label, value, note) in ranks_text.readout_values(r).items():
            self.readouts[key].text = readout_html(label, value, self._ids[key], note=note)
        self._sweep()
        self.sequences.object = ""

    def _draw_disagreement(self, r: RanksResult) -> None:
        # The figure stays (the page keeps its shape), empty, and says why.
        self.fit_clock(1.0, PLAY_SECONDS)
        shown = len(r.disagreement.sequences)
        set_lanes(self.figure, shown)
        self.empty_note.y = shown / 2
        self.figure.title.text = "No timeline: the ranks disagree on which collectives run"
        self.bars.data = {k: [] for k in BAR_COLUMNS}
        self.marks.data = {k: [] for k in MARK_COLUMNS}
        for span in self.spans.values():
            span.visible = False
        self.figure.x_range.update(start=0, end=1.0)
        for key, (label, value, note) in ranks_text.disagreement_values(r.disagreement).items():
            self.readouts[key].text = readout_html(label, value, self._ids[key], note=note)
        self.sequences.object = ranks_text.disagreement_html(r, self._panel_id)

    def _sweep(self) -> None:
        sw = self.sweep = sweep_layers_per_bucket(self.settings)
        self.sweep_source.data = {
            "x": sw.setting,
            "step": sw.step_time,
            "overlap": 100 * sw.overlap_fraction,
            "buckets": sw.n_buckets,
        }
        k = self.settings.layers_per_bucket
        current = min(k, self.settings.n_layers)
        self.current_source.data = {"x": [current], "y": [self.result.step_time]}
        best = sw.best_index
        self.best_source.data = {"x": [int(sw.setting[best])], "y": [sw.step_time[best]]}
        self.sweep_figure.x_range.update(start=0.5, end=self.settings.n_layers + 0.5)
        self.sweep_figure.xaxis.ticker = list(range(1, self.settings.n_layers + 1))
        top = float(sw.step_time.max())
        self.sweep_figure.y_range.update(start=0, end=float(np.ceil(top * 1.12)))
        k_best = int(sw.setting[best])
        self.sweep_figure.title.text = (
            f"Shortest step: {k_best} layer{'s' if k_best > 1 else ''} per bucket "
            f"({MILLISECONDS(sw.step_time[best])})"
        )

    def describe(self) -> str:
        return ranks_text.description(self.result)

    def export_readouts(self) -> list[tuple[str, str]]:
        r = self.result
        if r.schedule is None:
            values = ranks_text.disagreement_values(r.disagreement)
        else:
            values = ranks_text.readout_values(r)
        return [(label, value) for label, value, _ in values.values()]

    def export_columns(self) -> dict[str, list]:
        r = self.result
        if r.schedule is None:
            d = r.disagreement
            rows = [
                (x, position, c.bucket, c.size_mb)
                for x, seq in enumerate(d.sequences)
                for position, c in enumerate(seq)
            ]
            return {
                "rank": [row[0] for row in rows],
                "collective": [row[1] for row in rows],
                "bucket": [row[2] for row in rows],
                "size_mb": [row[3] for row in rows],
            }
        bars, marks = self.bars.data, self.marks.data
        return {
            "start_ms": [*bars["left"], *marks["x"]],
            "end_ms": [*bars["right"], *marks["x"]],
            "lane": [*bars["lane"], *marks["lane"]],
            "kind": [*bars["kind"], *marks["event"]],
            "label": [*bars["label"], *marks["detail"]],
        }

    # -- layout --------------------------------------------------------------------

    def controls(self) -> list[pn.viewable.Viewable]:
        f = self.fields
        return [
            theme.heading("Scenario"),
            f["scenario"],
            self.scenario_note,
            *(f[k] for k in ("drawn_ranks", "slowdown_pct", "delay_ms", "seed")),
            theme.heading("Buckets and events"),
            *(f[k] for k in ("layers_per_bucket", "enqueue_ms", "contention")),
            theme.heading("Hardware"),
            *(f[k] for k in ("n_layers", "backward_ms", "grad_mb", "bandwidth", "latency_ms")),
            f["ranks"],
            theme.heading("Rest of the step"),
            f["forward_ms"],
            f["optimizer_ms"],
        ]

    def main(self) -> list[pn.viewable.Viewable]:
        return [
            pn.Row(self.time_control, sizing_mode="stretch_width"),
            self.readout_row,
            self.sequences,
            self.chart_panel(self.key),
            self.sweep_pane,
        ]
