"""The bucket timeline: one training step of a twelve-layer model, bucket by bucket."""

from __future__ import annotations

import html
from urllib.parse import urlencode

import numpy as np
import panel as pn
import param
from bokeh.models import (
    BoxAnnotation,
    ColumnDataSource,
    Div,
    FactorRange,
    HoverTool,
    Range1d,
    Span,
)
from bokeh.plotting import figure

from . import layout, theme
from .formatting import COUNT, MILLISECONDS, PERCENT, VALUE_SLOT, Quantity, new_id, readout_html
from .model.buckets import (
    PRESET_DESCRIPTIONS,
    PRESETS,
    BucketConfig,
    RegimeKind,
    Schedule,
    Suggestion,
    average_rates,
    sweep_layers_per_bucket,
)
from .model.buckets.intervals import IntervalKind
from .model.fluid_queue import FluidQueue
from .model.timeline import Clock
from .number_field import NumberField
from .playhead import Playhead
from .time_control import TimeControl

CUSTOM = "Custom"
LANES = ["All-reduce", "Link wait", "Bucket fill", "Backward"]
LANE_OF_KIND = {
    "backward": LANES[3],
    "optimizer": LANES[3],
    "filling": LANES[2],
    "waiting": LANES[1],
    "transfer": LANES[0],
}
#: Wall-clock seconds one played step takes, whatever its length in ms.
PLAY_SECONDS = 8.0
#: The settings a learner edits, in the order the controls show them, with units.
FIELDS = {
    "layers_per_bucket": "layers",
    "backward_ms": "ms",
    "grad_mb": "MB",
    "bandwidth": "GB/s",
    "latency_ms": "ms",
    "ranks": "ranks",
    "straggler_pct": "%",
    "bucket_cap_mb": "MiB",
    "forward_ms": "ms",
    "optimizer_ms": "ms",
}
MB = Quantity("MB", digits=1)
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
#: Help lines that say more than a parameter's bounds.
HINTS = {"bucket_cap_mb": BucketConfig.param.bucket_cap_mb.metadata["hint"]}

EXPLANATIONS = {
    RegimeKind.OVERLAP_LIMITED: (
        "**Overlap is doing its job.** Each bucket's all-reduce starts as soon as its last "
        "layer's gradient is ready and runs while earlier layers are still in backward. What "
        "is left exposed is the last bucket: it can go only once every gradient is ready, when "
        "backward ends, so its whole transfer ({last} here) comes after. The tail can never "
        "be shorter than that last transfer; smaller buckets shrink it, until per-transfer "
        "overhead takes over."
    ),
    RegimeKind.NO_OVERLAP: (
        "**Nothing overlaps.** No all-reduce runs while backward does: the first transfer "
        "starts only when backward ends, so all {link} of link work is exposed. With one "
        "bucket this is unavoidable; split the gradients into more buckets so the first can "
        "go while earlier layers are still in backward."
    ),
    RegimeKind.LATENCY_BOUND: (
        "**Per-transfer overhead dominates.** Every bucket pays 2(p−1) ring steps of latency "
        "whatever its size: {overhead} of overhead against {traffic} of actual traffic. More, "
        "smaller buckets make the step slower, not faster. Try larger buckets: the sweep below "
        "marks the best setting."
    ),
    RegimeKind.LINK_SATURATED: (
        "**Transfers queue behind each other.** The link serves buckets one at a time in "
        "bucket order, and gradients become ready faster than the link drains them: the "
        "last bucket waited {wait} for the link before its own {last} transfer, and that "
        "backlog is part of the tail. Only a faster link or less traffic removes the queue; "
        "re-cutting the buckets moves it around."
    ),
    RegimeKind.COMMUNICATION_BOUND: (
        "**Traffic exceeds compute.** The link needs {traffic} just to move the gradients, "
        "but backward lasts only {backward}. No bucketing can hide more communication than "
        "there is computation to hide it behind: overlap hides traffic, it does not reduce "
        "it. Compress, shard, or accumulate gradients over more steps instead."
    ),
}
SUGGESTIONS = {
    Suggestion.LARGER_BUCKETS: " Larger buckets are faster here: the best setting saves {gain}.",
    Suggestion.SMALLER_BUCKETS: " Smaller buckets are faster here: the best setting saves {gain}.",
    Suggestion.NONE: " No other bucket size is faster.",
}


class BucketTimeline(pn.viewable.Viewer):
    """One step of data-parallel training: backward, buckets, all-reduces and the tail."""

    preset = param.Selector(
        default="Overlap works",
        objects=[CUSTOM, *PRESETS],
        label="Preset",
        doc="A configuration that shows one regime.",
    )

    def __init__(self, preset: str | None = None, **settings):
        super().__init__(preset=preset if preset is not None else "Overlap works")
        base = PRESETS.get(self.preset, {})
        self._base_preset: str | None = self.preset if self.preset in PRESETS else None
        self.config = BucketConfig(**{**base, **settings})
        if settings:
            self.preset = (
                CUSTOM
                if base and any(not _same(base.get(k), v) for k, v in settings.items())
                else self.preset
            )
        self.clock = Clock(horizon=1.0, step_size=1.0)
        self.playhead = Playhead(self.clock)
        self._sheet = theme.readout_stylesheet()
        self._applying_preset = False

        self.fields = {
            name: NumberField(self.config, name, unit, hint=HINTS.get(name))
            for name, unit in FIELDS.items()
        }
        self.preset_select = pn.widgets.Select.from_param(
            self.param.preset, sizing_mode="stretch_width"
        )
        self.preset_note = pn.pane.HTML("", margin=(0, 10, 4, 10), stylesheets=[theme.PAGE_CSS])
        self.time_control = TimeControl(self.clock, on_change=self.refresh)
        self.best_button = pn.widgets.Button(label="Use the best setting", width=200)
        self.best_button.on_click(lambda _: self._use_best())

        self.intervals = ColumnDataSource(
            {k: [] for k in ("left", "right", "lane", "label", "kind", "color", "hatch", "detail")}
        )
        self.tail_box = BoxAnnotation(
            fill_color=theme.VERMILLION,
            fill_alpha=0.12,
            line_color=theme.VERMILLION,
            line_alpha=0.6,
            line_dash="dashed",
            hatch_pattern="/",
            hatch_color=theme.VERMILLION,
            hatch_alpha=0.35,
            hatch_scale=10,
            level="underlay",
        )
        self.markers = {
            "backward_end": Span(
                dimension="height", line_color=theme.BLUE, line_width=2, line_dash="dashed"
            ),
            "comm_end": Span(
                dimension="height", line_color=theme.VERMILLION, line_width=2, line_dash="dotted"
            ),
            "optimizer_start": Span(
                dimension="height", line_color=theme.GREEN, line_width=2, line_dash="dashdot"
            ),
        }
        self.figure = self._make_timeline()
        self.sweep_source = ColumnDataSource({"x": [], "step": [], "tail": [], "buckets": []})
        self.current_source = ColumnDataSource({"x": [], "y": []})
        self.best_source = ColumnDataSource({"x": [], "y": []})
        self.sweep_figure = self._make_sweep()

        self.readouts: dict[str, Div] = {}
        for key in READOUT_KEYS:
            self.readouts[key] = Div(
                text="", stylesheets=[self._sheet], sizing_mode="stretch_width", margin=0
            )
        self._ids = {key: new_id(key) for key in self.readouts}
        self.playhead.live_readout(
            self.readouts["elapsed"],
            readout_html(
                "Elapsed time", VALUE_SLOT, self._ids["elapsed"], note="from the start of backward"
            ),
            MILLISECONDS,
        )
        self.playhead.attach()
        self.explanation = pn.pane.Markdown(
            "", sizing_mode="stretch_width", css_classes=["ol-explanation"]
        )
        self.bridge = pn.pane.HTML("", sizing_mode="stretch_width", margin=(4, 10))
        self.schedule: Schedule = self.config.schedule()

        self.config.param.watch(self._config_changed, list(FIELDS))
        self.param.watch(self._preset_chosen, "preset")
        self.refresh()

    # -- reacting to the learner ---------------------------------------------------

    def _config_changed(self, *events) -> None:
        if not self._applying_preset:
            # A typed uniform value means "every layer": drop a preset's per-layer
            # profile that would otherwise silently override it.
            changed = {e.name for e in events}
            profiles = {"backward_ms": "layer_backward_ms", "grad_mb": "layer_grad_mb"}
            for uniform, profile in profiles.items():
                if uniform in changed and getattr(self.config, profile) is not None:
                    setattr(self.config, profile, None)
            if self.preset != CUSTOM:
                self.preset = CUSTOM
        self.refresh()

    def _preset_chosen(self, event: param.parameterized.Event) -> None:
        if event.new == CUSTOM:
            self.refresh()
            return
        self._applying_preset = True
        self._base_preset = event.new if event.new in PRESETS else None
        try:
            with param.parameterized.batch_call_watchers(self.config):
                self.config.param.update(PRESETS[event.new])
        finally:
            self._applying_preset = False
        self.refresh()

    @property
    def settings(self) -> param.Parameterized:
        """The object holding this widget's URL-addressable settings."""
        return self.config

    def settings_values(self) -> dict[str, object]:
        """The current settings by parameter name, with the preset they started from.

        The preset comes first so that a profile it sets (such as a large
        embedding layer, which has no URL key) is reproduced too.
        """
        values: dict[str, object] = {}
        if self._base_preset is not None:
            values["preset"] = self._base_preset
        values.update({name: getattr(self.config, name) for name in FIELDS})
        return values

    def apply(self, preset: str | None = None, **settings) -> None:
        """Load a preset (if given), then these settings, keeping elapsed time."""
        if preset is not None:
            self.preset = preset
        if settings:
            self.config.param.update(settings)

    def _use_best(self) -> None:
        best = sweep_layers_per_bucket(self.config).best_setting
        self.config.param.update(layers_per_bucket=int(best), bucket_cap_mb=None)

    # -- drawing -------------------------------------------------------------------

    def _make_timeline(self):
        fig = figure(
            height=300,
            sizing_mode="stretch_width",
            min_width=280,
            y_range=FactorRange(*LANES),
            x_range=Range1d(0, 1),
            x_axis_label="Time from the start of backward (ms)",
            title="One training step",
        )
        theme.style_figure(fig)
        fig.yaxis.major_label_text_font_size = "12px"
        fig.ygrid.grid_line_color = None
        fig.add_layout(self.tail_box)
        # The whole step stays visible as a faint ghost; Play fills it in.
        fig.hbar(
            y="lane",
            left="left",
            right="right",
            height=0.7,
            source=self.intervals,
            fill_color="color",
            fill_alpha=0.22,
            line_color="color",
            line_alpha=0.5,
            hatch_pattern="hatch",
            hatch_color=theme.INK,
            hatch_alpha=0.2,
            hatch_scale=8,
        )
        shown = self.playhead.reveal("intervals", self.intervals)
        bars = fig.hbar(
            y="lane",
            left="left",
            right="right",
            height=0.7,
            source=shown,
            fill_color="color",
            line_color="white",
            line_width=1,
            hatch_pattern="hatch",
            hatch_color=theme.INK,
            hatch_alpha=0.55,
            hatch_scale=8,
        )
        for span in self.markers.values():
            fig.add_layout(span)
        self.playhead.add_to(fig, line_color=theme.INK, line_width=2, line_alpha=0.85)
        fig.add_tools(HoverTool(renderers=[bars], tooltips="@detail"))
        return fig

    def _make_sweep(self):
        fig = figure(
            height=260,
            sizing_mode="stretch_width",
            min_width=280,
            x_range=Range1d(0.5, 12.5),
            x_axis_label="Layers per bucket",
            y_axis_label="Time (ms)",
            title="Step time by bucket size",
        )
        theme.style_figure(fig)
        fig.xaxis.ticker = list(range(1, 13))
        step = fig.line("x", "step", source=self.sweep_source, line_color=theme.BLUE, line_width=3)
        fig.scatter(
            "x", "step", source=self.sweep_source, size=7, fill_color=theme.BLUE, line_color="white"
        )
        tail = fig.line(
            "x",
            "tail",
            source=self.sweep_source,
            line_color=theme.VERMILLION,
            line_width=2.5,
            line_dash="dashed",
        )
        fig.scatter(
            "x",
            "tail",
            source=self.sweep_source,
            marker="square",
            size=7,
            fill_color=theme.VERMILLION,
            line_color="white",
        )
        fig.scatter(
            "x",
            "y",
            source=self.current_source,
            size=18,
            fill_color=None,
            line_color=theme.INK,
            line_width=2.5,
        )
        fig.scatter(
            "x",
            "y",
            source=self.best_source,
            marker="star",
            size=20,
            fill_color=theme.ORANGE,
            line_color=theme.INK,
        )
        fig.add_tools(
            HoverTool(
                renderers=[step, tail],
                tooltips=[
                    ("layers per bucket", "@x"),
                    ("buckets", "@buckets"),
                    ("step time", "@step{0.00} ms"),
                    ("exposed tail", "@tail{0.00} ms"),
                ],
                mode="vline",
            )
        )
        return fig

    def refresh(self) -> None:
        """Recompute the schedule and the sweep, redraw, and re-anchor the browser."""
        with pn.io.unlocked():
            self._redraw()

    def _redraw(self) -> None:
        s = self.schedule = self.config.schedule()
        self._set_clock(s)
        self.intervals.data = _interval_columns(s)
        self.tail_box.left, self.tail_box.right = s.backward_end, s.comm_end
        self.tail_box.visible = s.exposed_tail > 0
        self.markers["backward_end"].location = s.backward_end
        self.markers["comm_end"].location = s.comm_end
        self.markers["optimizer_start"].location = s.optimizer_start
        self.figure.x_range.start = 0
        self.figure.x_range.end = self.clock.horizon * 1.02
        self._readouts(s)
        self._sweep()
        self._explain(s)
        self.time_control.sync()
        self.playhead.push()

    def _set_clock(self, s: Schedule) -> None:
        horizon = s.optimizer_start + s.optimizer_ms
        self.clock.reanchor()
        with param.parameterized.batch_call_watchers(self.clock):
            self.clock.param.update(
                horizon=horizon,
                speed=horizon / PLAY_SECONDS,
                step_size=_nice_step(horizon / 16),
                elapsed=min(self.clock.elapsed, horizon),
            )

    def _readouts(self, s: Schedule) -> None:
        ms = MILLISECONDS
        r = s.regime
        sizes = ", ".join(
            f"{layers.max()}–{layers.min()}" if len(layers) > 1 else f"{layers[0]}"
            for layers in (np.asarray(b) for b in s.bucket_layers)
        )
        per_transfer = s.overhead_ms / s.n_buckets
        regime_value = {
            RegimeKind.COMMUNICATION_BOUND: f"{ms(r.traffic_ms)} traffic ≥ "
            f"{ms(r.backward_end_ms)} backward: communication-bound",
            RegimeKind.NO_OVERLAP: f"{PERCENT(100 * r.overlap_share)} of transfer time during "
            "backward: no overlap",
            RegimeKind.LATENCY_BOUND: f"{ms(r.overhead_ms)} overhead ≥ {ms(r.traffic_ms)} "
            "traffic: latency-bound",
            RegimeKind.LINK_SATURATED: f"{ms(r.last_link_wait_ms)} queued before the last "
            "bucket: link-saturated",
            RegimeKind.OVERLAP_LIMITED: f"{ms(r.tail_ms)} tail = last transfer: overlap-limited",
        }[r.kind]
        values = {
            "backward_end": ("Backward end", ms(s.backward_end), "layer 1's gradient is ready"),
            "comm_end": ("Communication end", ms(s.comm_end), "the last all-reduce finishes"),
            "tail": (
                "Exposed tail",
                ms(s.exposed_tail),
                f"last transfer alone: {ms(s.bucket_transfer_ms[-1])}",
            ),
            "step": (
                "Step time",
                ms(s.step_time),
                f"forward {ms(s.forward_ms)} + {ms(s.optimizer_start)} + optimizer "
                f"{ms(s.optimizer_ms)}",
            ),
            "buckets": ("Buckets", COUNT(s.n_buckets), f"layers {sizes}"),
            "overhead": (
                "Per-transfer overhead",
                ms(per_transfer),
                f"× {s.n_buckets} transfers = {ms(s.overhead_ms)}",
            ),
            "overlap": (
                "Overlap",
                PERCENT(100 * s.overlap_fraction),
                "of transfer time runs during backward",
            ),
            "regime": ("Regime", regime_value, ""),
        }
        for key, (label, value, note) in values.items():
            self.readouts[key].text = readout_html(label, value, self._ids[key], note=note)

    def _sweep(self) -> None:
        sw = sweep_layers_per_bucket(self.config)
        self.sweep_source.data = {
            "x": sw.setting,
            "step": sw.step_time,
            "tail": sw.exposed_tail,
            "buckets": sw.n_buckets,
        }
        current = self.schedule
        if self.config.bucket_cap_mb is None:
            self.current_source.data = {
                "x": [self.config.layers_per_bucket],
                "y": [current.step_time],
            }
        else:
            self.current_source.data = {"x": [], "y": []}
        self.best_source.data = {"x": [sw.best_setting], "y": [sw.step_time[sw.best_index]]}
        self.sweep_figure.x_range.end = self.config.n_layers + 0.5
        best_step = MILLISECONDS(sw.step_time[sw.best_index])
        self.sweep_figure.title.text = f"Best: {sw.best_setting} layers per bucket ({best_step})"
        self.best_button.disabled = (
            self.config.bucket_cap_mb is None and self.config.layers_per_bucket == sw.best_setting
        )

    def _explain(self, s: Schedule) -> None:
        ms = MILLISECONDS
        r = s.regime
        text = EXPLANATIONS[r.kind].format(
            last=ms(r.last_transfer_ms),
            overhead=ms(r.overhead_ms),
            traffic=ms(r.traffic_ms),
            wait=ms(r.last_link_wait_ms),
            backward=ms(r.backward_end_ms),
            link=ms(r.link_work_ms),
        )
        if r.suggestion is not None:
            text += SUGGESTIONS[r.suggestion].format(gain=ms(r.gain_ms))
        waited = np.flatnonzero(s.bucket_waits_for >= 0)
        if waited.size:
            b = int(waited[np.argmax(s.bucket_order_wait[waited])])
            text += (
                f" Buckets launch in index order: bucket {b} was ready but waited "
                f"{ms(s.bucket_order_wait[b])} for bucket {int(s.bucket_waits_for[b])}."
            )
        self.explanation.object = text
        desc = PRESET_DESCRIPTIONS.get(self.preset, "Your own settings.")
        self.preset_note.object = f'<div class="ol-hint">{html.escape(desc)}</div>'
        self.bridge.object = self._bridge_html()

    def _bridge_html(self) -> str:
        arrival, service = average_rates(self.config)
        spec = FluidQueue.param
        notes = []
        values = {}
        for key, value in (("arrival", arrival), ("service", service)):
            hi = spec[key].bounds[1]
            if value > hi:
                notes.append(f"{key} capped at {hi:g}")
                value = hi
            values[key] = round(value, 2)
        query = urlencode({**values, "initial": 0})
        cap = f" ({'; '.join(notes)})" if notes else ""
        return (
            f'<p style="font:14px/1.5 system-ui,sans-serif;margin:0">Compare with the fluid '
            f'picture: <a href="/queue-lab?{query}">open the queue lab with these average '
            f"rates</a>: gradients arrive at {values['arrival']:g} MB/ms during backward and the "
            f"link reduces {values['service']:g} MB/ms{cap} (read items as MB and seconds as "
            "ms). The fluid queue ignores buckets and their order, so it shows pressure, "
            "not the tail.</p>"
        )

    # -- layout --------------------------------------------------------------------

    def __panel__(self) -> pn.viewable.Viewable:
        f = self.fields
        controls = layout.controls_card(
            theme.heading("Preset"),
            self.preset_select,
            self.preset_note,
            theme.heading("Buckets"),
            f["layers_per_bucket"],
            f["bucket_cap_mb"],
            theme.heading("Hardware"),
            f["backward_ms"],
            f["grad_mb"],
            f["bandwidth"],
            f["latency_ms"],
            f["ranks"],
            f["straggler_pct"],
            theme.heading("Rest of the step"),
            f["forward_ms"],
            f["optimizer_ms"],
        )
        main = layout.main_column(
            pn.Row(self.time_control, sizing_mode="stretch_width"),
            layout.readout_row([self.readouts[k] for k in READOUT_KEYS[:-1]], basis=160),
            pn.Column(self.readouts["regime"], sizing_mode="stretch_width", margin=0),
            pn.pane.Bokeh(self.figure, sizing_mode="stretch_width"),
            pn.pane.HTML(KEY, sizing_mode="stretch_width", margin=(0, 10)),
            self.explanation,
            pn.pane.Bokeh(self.sweep_figure, sizing_mode="stretch_width"),
            pn.pane.HTML(SWEEP_KEY, sizing_mode="stretch_width", margin=(0, 10)),
            self.best_button,
            self.bridge,
        )
        return layout.widget_layout(controls, main)


KEY = theme.key_html(
    [
        ("■", theme.BLUE, "Layers and transfers, coloured by bucket (faint: not yet played)"),
        ("▨", theme.INK, "Waiting for the link (hatched)"),
        ("▧", theme.VERMILLION, "Exposed tail"),
        ("┆", theme.BLUE, "Backward end (dashed)"),
        ("┊", theme.VERMILLION, "Communication end (dotted)"),
        ("╎", theme.GREEN, "Optimizer start (dash-dot)"),
        ("│", theme.INK, "Playhead"),
    ]
)
SWEEP_KEY = theme.key_html(
    [
        ("line", theme.BLUE, "Step time"),
        ("line", theme.VERMILLION, "Exposed tail (dashed)"),
        ("○", theme.INK, "Current setting"),
        ("★", theme.ORANGE, "Best setting"),
    ]
)


def _same(a, b) -> bool:
    try:
        return bool(np.all(np.asarray(a) == np.asarray(b)))
    except (TypeError, ValueError):
        return False


def _nice_step(x: float) -> float:
    """The 1-2-5 number nearest below ``x`` (0.5 ms, 1 ms, 2 ms...)."""
    exp = np.floor(np.log10(x))
    base = x / 10**exp
    nice = 5 if base >= 5 else 2 if base >= 2 else 1
    return float(nice * 10**exp)


def _interval_columns(s: Schedule) -> dict:
    """Every bar on the timeline, with its lane, colour, hatch and hover text."""
    iv = s.to_intervals()
    palette = theme.CATEGORY
    left, right, lane, label, kind, color, hatch, detail = ([] for _ in range(8))

    def add(a, b, k, text, c, h, d):
        left.append(float(a)), right.append(float(b)), lane.append(LANE_OF_KIND[k])
        label.append(text), kind.append(k), color.append(c), hatch.append(h), detail.append(d)

    ms = MILLISECONDS
    for a, b, lab, k, bucket, layer in zip(
        iv.start, iv.end, iv.label, iv.kind, iv.bucket, iv.layer, strict=True
    ):
        if k == IntervalKind.BACKWARD:
            add(
                a,
                b,
                k,
                lab,
                palette[bucket % len(palette)],
                " ",
                f"{lab} · bucket {bucket} · {ms(a)}–{ms(b)} · "
                f"{MB(s.layer_grad_mb[layer - 1])} of gradient",
            )
        elif k == IntervalKind.TRANSFER:
            layers = np.asarray(s.bucket_layers[bucket])
            add(
                a,
                b,
                k,
                lab,
                palette[bucket % len(palette)],
                " ",
                f"{lab} (layers {layers.max()}–{layers.min()}) · {MB(s.bucket_size_mb[bucket])}"
                f" · ready {ms(s.bucket_ready[bucket])} · all-reduce {ms(a)}–{ms(b)} "
                f"({ms(s.bucket_transfer_ms[bucket])}) · waited {ms(s.bucket_link_wait[bucket])}",
            )
        elif k == IntervalKind.LINK_WAIT:
            add(
                a,
                b,
                k,
                lab,
                "#ffffff",
                "/",
                f"Bucket {bucket} is ready but waits {ms(b - a)} for the link ({ms(a)}–{ms(b)})",
            )
        elif k == IntervalKind.FILLING:
            layers = np.asarray(s.bucket_layers[bucket])
            add(
                a,
                b,
                k,
                lab,
                palette[bucket % len(palette)],
                " ",
                f"Bucket {bucket} fills as layers {layers.max()}–{layers.min()} finish; "
                f"ready at {ms(b)}",
            )
        elif k == IntervalKind.OPTIMIZER:
            add(a, b, k, lab, "#bbbbbb", "x", f"Optimizer {ms(a)}–{ms(b)}")
    return {
        "left": left,
        "right": right,
        "lane": lane,
        "label": label,
        "kind": kind,
        "color": color,
        "hatch": hatch,
        "detail": detail,
    }
