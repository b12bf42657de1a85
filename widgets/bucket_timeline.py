"""The bucket timeline: one training step of a twelve-layer model, bucket by bucket."""

from __future__ import annotations

import html

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource

from . import bucket_text
from .base import Widget
from .bucket_drawing import (
    BAR_COLUMNS,
    KEY,
    SWEEP_KEY,
    bar_columns,
    markers,
    sweep_figure,
    tail_box,
    timeline_figure,
)
from .model.buckets import (
    PRESET_DESCRIPTIONS,
    PRESETS,
    BucketConfig,
    SweepResult,
    sweep_layers_per_bucket,
)
from .model.timeline import Clock
from .parts import layout, theme
from .parts.formatting import MILLISECONDS, VALUE_SLOT, new_id, readout_html

CUSTOM = "Custom"
#: Wall-clock seconds one played step takes, whatever its length in ms.
PLAY_SECONDS = 8.0
#: The readouts, in the order they are shown; the regime gets a row of its own.
READOUT_KEYS = (
    "elapsed",
    "backward_end",
    "comm_end",
    "tail",
    "step",
    "buckets",
    "overhead",
    "overlap",
    "regime",
)


class BucketTimeline(Widget):
    """One step of data-parallel training: backward, buckets, all-reduces and the tail."""

    settings_class = BucketConfig
    widget_name = "bucket-timeline"

    preset = param.Selector(
        default="Overlap works",
        objects=[CUSTOM, *PRESETS],
        label="Preset",
        doc="A configuration that shows one regime.",
    )

    def make_settings(self, **settings) -> BucketConfig:
        base = PRESETS.get(self.preset, {})
        self._base_preset: str | None = self.preset if base else None
        if base and any(not _same(base.get(k), v) for k, v in settings.items()):
            self.preset = CUSTOM
        self._applying_preset = False
        return BucketConfig(**{**base, **settings})

    def make_clock(self) -> Clock:
        return Clock(horizon=1.0, step_size=1.0)

    def build(self) -> None:
        self.preset_select = pn.widgets.Select.from_param(
            self.param.preset, sizing_mode="stretch_width"
        )
        self.preset_note = pn.pane.HTML("", margin=(0, 10, 4, 10), stylesheets=[theme.PAGE_CSS])
        self.best_button = pn.widgets.Button(label="Use the best setting", width=200)
        self.best_button.on_click(lambda _: self._use_best())

        self.intervals = ColumnDataSource({k: [] for k in BAR_COLUMNS})
        self.tail_box = tail_box()
        self.markers = markers()
        self.figure = timeline_figure(
            self.intervals, self.playhead, self.tail_box, list(self.markers.values())
        )
        self.sweep_source = ColumnDataSource({"x": [], "step": [], "tail": [], "buckets": []})
        self.current_source = ColumnDataSource({"x": [], "y": []})
        self.best_source = ColumnDataSource({"x": [], "y": []})
        self.sweep_figure = sweep_figure(self.sweep_source, self.current_source, self.best_source)

        self.readouts = {key: self.readout() for key in READOUT_KEYS}
        self._ids = {key: new_id(key) for key in READOUT_KEYS}
        self.playhead.live_readout(
            self.readouts["elapsed"],
            readout_html(
                "Elapsed time", VALUE_SLOT, self._ids["elapsed"], note="from the start of backward"
            ),
            MILLISECONDS,
        )
        self.explanation = pn.pane.Markdown(
            "", sizing_mode="stretch_width", css_classes=["ol-explanation"]
        )
        self.bridge = pn.pane.HTML("", sizing_mode="stretch_width", margin=(4, 10))
        self.param.watch(self._preset_chosen, "preset")

    # -- reacting to the learner ---------------------------------------------------

    def settings_changed(self, *events: param.parameterized.Event) -> None:
        if not self._applying_preset:
            # A typed uniform value means "every layer": drop a preset's per-layer
            # profile that would otherwise silently override it.
            changed = {e.name for e in events}
            profiles = {"backward_ms": "layer_backward_ms", "grad_mb": "layer_grad_mb"}
            for uniform, profile in profiles.items():
                if uniform in changed and getattr(self.settings, profile) is not None:
                    setattr(self.settings, profile, None)
            if self.preset != CUSTOM:
                self.preset = CUSTOM
        self.refresh()

    def _preset_chosen(self, event: param.parameterized.Event) -> None:
        if event.new == CUSTOM:
            # Nothing the model uses changed: an edit that made the preset Custom
            # redraws once, after this, and choosing Custom itself only changes the note.
            with pn.io.unlocked():
                self._show_preset_note()
            return
        self._applying_preset = True
        self._base_preset = event.new
        try:
            with param.parameterized.batch_call_watchers(self.settings):
                self.settings.param.update(PRESETS[event.new])
        finally:
            self._applying_preset = False
        self.refresh()

    def settings_values(self) -> dict[str, object]:
        """The current settings by parameter name, with the preset they started from.

        The preset comes first so that a profile it sets (such as a large
        embedding layer, which has no URL key) is reproduced too.
        """
        values: dict[str, object] = {}
        if self._base_preset is not None:
            values["preset"] = self._base_preset
        return values | super().settings_values()

    def apply(self, preset: str | None = None, **settings) -> None:
        """Load a preset (if given), then these settings, as a new experiment (see the base)."""
        if preset is not None:
            self.preset = preset
        super().apply(**settings)

    def _use_best(self) -> None:
        best = sweep_layers_per_bucket(self.settings).best_setting
        self.settings.param.update(layers_per_bucket=int(best), bucket_cap_mb=None)

    # -- drawing -------------------------------------------------------------------

    def update(self) -> None:
        sweep = sweep_layers_per_bucket(self.settings)
        s = self.schedule = self.settings.schedule(layer_sweep=sweep)
        self.fit_clock(s.optimizer_start + s.optimizer_ms, PLAY_SECONDS)
        self.intervals.data = bar_columns(s)
        self.tail_box.left, self.tail_box.right = s.backward_end, s.comm_end
        self.tail_box.visible = s.exposed_tail > 0
        for key, span in self.markers.items():
            span.location = getattr(s, key)
        self.figure.x_range.start = 0
        self.figure.x_range.end = self.clock.horizon * 1.02
        for key, (label, value, note) in bucket_text.readout_values(s).items():
            self.readouts[key].text = readout_html(label, value, self._ids[key], note=note)
        self._sweep(sweep)
        self.explanation.object = bucket_text.explanation(s)
        self._show_preset_note()
        self.bridge.object = bucket_text.bridge_html(self.settings)

    def _show_preset_note(self) -> None:
        desc = PRESET_DESCRIPTIONS.get(self.preset, "Your own settings.")
        self.preset_note.object = f'<div class="ol-hint">{html.escape(desc)}</div>'

    def _sweep(self, sw: SweepResult) -> None:
        self.sweep_source.data = {
            "x": sw.setting,
            "step": sw.step_time,
            "tail": sw.exposed_tail,
            "buckets": sw.n_buckets,
        }
        by_count = self.settings.bucket_cap_mb is None
        current = (
            ([self.settings.layers_per_bucket], [self.schedule.step_time]) if by_count else ([], [])
        )
        self.current_source.data = dict(zip(("x", "y"), current, strict=True))
        self.best_source.data = {"x": [sw.best_setting], "y": [sw.step_time[sw.best_index]]}
        self.sweep_figure.x_range.end = self.settings.n_layers + 0.5
        best_step = MILLISECONDS(sw.step_time[sw.best_index])
        self.sweep_figure.title.text = f"Best: {sw.best_setting} layers per bucket ({best_step})"
        self.best_button.disabled = by_count and self.settings.layers_per_bucket == sw.best_setting

    def describe(self) -> str:
        return bucket_text.description(self.schedule)

    def export_readouts(self) -> list[tuple[str, str]]:
        values = bucket_text.readout_values(self.schedule)
        return [(label, value) for label, value, _ in values.values()]

    def export_columns(self) -> dict[str, list]:
        bars = self.intervals.data
        return {
            "start_ms": list(bars["left"]),
            "end_ms": list(bars["right"]),
            "lane": list(bars["lane"]),
            "kind": list(bars["kind"]),
            "label": list(bars["label"]),
        }

    # -- layout --------------------------------------------------------------------

    def controls(self) -> list[pn.viewable.Viewable]:
        f = self.fields
        return [
            theme.heading("Preset"),
            self.preset_select,
            self.preset_note,
            theme.heading("Buckets"),
            f["layers_per_bucket"],
            f["bucket_cap_mb"],
            theme.heading("DDP"),
            f["ddp_bucketing"],
            f["iteration"],
            f["find_unused_parameters"],
            f["enqueue_ms"],
            theme.heading("Hardware"),
            *(f[k] for k in ("backward_ms", "grad_mb", "bandwidth", "latency_ms", "ranks")),
            f["straggler_pct"],
            theme.heading("Rest of the step"),
            f["forward_ms"],
            f["optimizer_ms"],
        ]

    def main(self) -> list[pn.viewable.Viewable]:
        return [
            pn.Row(self.time_control, sizing_mode="stretch_width"),
            layout.readout_row([self.readouts[k] for k in READOUT_KEYS[:-1]], basis=160),
            pn.Column(self.readouts["regime"], sizing_mode="stretch_width", margin=0),
            self.chart_panel(pn.pane.HTML(KEY, sizing_mode="stretch_width", margin=(0, 10))),
            self.explanation,
            pn.pane.Bokeh(self.sweep_figure, sizing_mode="stretch_width"),
            pn.pane.HTML(SWEEP_KEY, sizing_mode="stretch_width", margin=(0, 10)),
            self.best_button,
            self.bridge,
        ]


def _same(a, b) -> bool:
    try:
        return bool(np.all(np.asarray(a) == np.asarray(b)))
    except (TypeError, ValueError):
        return False
