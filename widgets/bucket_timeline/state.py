"""The bucket timeline without Panel: settings and the clock to what its page draws.

``TimelineState`` holds the settings' rules (a preset loads as a new experiment;
a typed backward time or gradient size drops a preset's per-layer profile);
``TimelineRun`` runs the schedule and the sweep over bucket sizes once per
settings object and draws any moment of it. The settings object is passed
through to the model as it is, so a setting the model gains needs nothing here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

import param

from ..common.formatting import plain_number
from ..common.state_numbers import state_number, state_numbers
from ..common.widget_state import Run, WidgetState, drawn, nice_step
from ..model.buckets import (
    IntervalKind,
    Lane,
    Schedule,
    average_rates,
    schedule_intervals,
    step_schedule,
    sweep_layers_per_bucket,
)
from ..model.fluid_queue import FluidQueue
from ..model.named import same_value
from ..model.timeline import Clock
from . import text
from .hardware import source_of
from .model import PRESETS, PROFILE_OF, TimelineSettings

#: Wall-clock seconds one played step takes, whatever its length in ms.
PLAY_SECONDS = 8.0
#: The timeline's lanes, top to bottom, and the lane each of the model's lanes is drawn on
#: (the optimizer follows backward).
LANES = ["All-reduce", "Link wait", "Order wait", "Bucket fill", "Backward"]
LANE_ROW = {
    Lane.LINK: 0,
    Lane.LINK_WAIT: 1,
    Lane.ORDER_WAIT: 2,
    Lane.FILL: 3,
    Lane.COMPUTE: 4,
    Lane.OPTIMIZER: 4,
}
#: What a bar is, as the state names it: each bar sends its kind's index in this list.
BAR_KINDS = [str(k) for k in IntervalKind if k != IntervalKind.EXPOSED]


class TimelineState(WidgetState):
    """The bucket timeline's settings rules: presets, and profiles a typed value replaces."""

    settings_class = TimelineSettings
    STEADY_KEYS = ("lanes", "bar_kinds", "curve", "bridge")
    NAMED_KEY = "preset"

    def make(self, preset: str | None = None, **settings: Any) -> tuple[TimelineSettings, list]:
        return PRESETS.load(preset, **settings), []

    def loaded(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        return PRESETS.loaded({}, settings)

    def choose(self, settings: param.Parameterized, name: str, value: Any) -> dict | None:
        """A preset loads as a new experiment; a typed uniform value drops its profile."""
        if name == "preset":
            return {"preset": value}
        profile = PROFILE_OF.get(name)
        with param.parameterized.batch_call_watchers(settings):
            before = getattr(settings, name)
            settings.param.update({name: value})
            if profile is not None and not same_value(value, before):
                settings.param.update({profile: None})
        return None

    def link_values(self, settings: param.Parameterized) -> dict[str, object]:
        """What a link carries: the preset and only the settings changed from it."""
        return PRESETS.link_values(settings)

    def run(self, settings: param.Parameterized, origin: str | None = None) -> TimelineRun:
        return TimelineRun(settings, origin)


class TimelineRun(Run):
    """One step's schedule and the sweep over bucket sizes, drawn at any moment."""

    def __init__(self, settings: param.Parameterized, origin: str | None = None):
        self.settings, self.origin = settings, origin
        self.sweep = sweep_layers_per_bucket(settings)
        s = self.schedule = step_schedule(settings, layer_sweep=self.sweep)
        self.horizon = s.optimizer_start + s.optimizer_ms
        self.speed = self.horizon / PLAY_SECONDS
        self.step = nice_step(self.horizon / 16)

    def state(self, t: float = 0.0) -> dict:
        s, sw, settings = self.schedule, self.sweep, self.settings
        iv = schedule_intervals(s)
        bars = iv.kind != IntervalKind.EXPOSED
        by_count = not settings.uses_byte_cap()
        lead, explanation = text.explanation(s)
        waits_for = [int(k) for k in iv.waits_for[bars]]
        # Only a bucket waiting for an earlier one has one; most schedules have none.
        waits = {"waits_for": waits_for} if max(waits_for, default=-1) >= 0 else {}
        return {
            "horizon": self.horizon,
            "lanes": LANES,
            "bar_kinds": BAR_KINDS,
            "bars": {
                "start": state_numbers(iv.start[bars]),
                "end": state_numbers(iv.end[bars]),
                "kind": [BAR_KINDS.index(k) for k in iv.kind[bars]],
                "lane": [LANE_ROW[lane] for lane in iv.lane[bars]],
                "bucket": [int(b) for b in iv.bucket[bars]],
                "layer": [int(n) for n in iv.layer[bars]],
                **waits,
            },
            "marks": dict(
                zip(
                    ("backward_end", "comm_end", "optimizer_start", "tail"),
                    state_numbers([s.backward_end, s.comm_end, s.optimizer_start, s.exposed_tail]),
                    strict=True,
                )
            ),
            "n_buckets": s.n_buckets,
            "micro_batches": s.accumulation_steps,
            "readouts": {k: [v, note] for k, (_, v, note) in text.readout_values(s).items()},
            "regime": {"kind": str(s.regime.kind), "lead": lead, "text": explanation},
            "curve": {
                "x": [int(x) for x in sw.setting],
                "step": state_numbers(sw.step_time),
                "tail": state_numbers(sw.exposed_tail),
                "buckets": [int(n) for n in sw.n_buckets],
            },
            "sweep": {
                "current": int(settings.layers_per_bucket) if by_count else None,
                "current_step": s.step_time if by_count else None,
                "best": int(sw.best_setting),
                "best_step": sw.best_step,
                "best_in_use": by_count and settings.layers_per_bucket == sw.best_setting,
            },
            "preset": {
                "name": settings.preset,
                "description": PRESETS.description(settings.preset),
                "source": source_of(settings.preset),
                "changed": PRESETS.changed_labels(settings),
            },
            "bridge": self.bridge(),
            "table": self._table(s, iv),
        }

    def bridge(self) -> dict:
        """The link to the queue lab with this step's average rates (on this server).

        Rates above the queue lab's bounds are capped and said so. Without a
        server (a notebook, a static copy) there is no link, only the rates.
        """
        arrival, service = average_rates(self.settings)
        spec = FluidQueue.param
        capped, values = [], {}
        for key, value in (("arrival", arrival), ("service", service)):
            hi = spec[key].bounds[1]
            if value > hi:
                capped.append(f"{key} capped at {hi:g}")
                value = hi
            values[key] = round(value, 2)
        query = urlencode({k: plain_number(v) for k, v in {**values, "initial": 0}.items()})
        href = f"{self.origin}/queue-lab?{query}" if self.origin is not None else None
        return {**values, "href": href, "capped": capped}

    def _table(self, s: Schedule, iv) -> dict:
        rows = []
        for a, b, label, kind, lane, bucket, layer in zip(
            iv.start, iv.end, iv.label, iv.kind, iv.lane, iv.bucket, iv.layer, strict=True
        ):
            size = ready = link_wait = order_wait = None
            if kind == IntervalKind.BACKWARD:
                size = float(s.layer_grad_mb[layer - 1])
            elif kind == IntervalKind.TRANSFER:
                size = float(s.bucket_size_mb[bucket])
                ready = float(s.bucket_ready[bucket])
                link_wait = float(s.bucket_link_wait[bucket])
                order_wait = float(s.bucket_order_wait[bucket])
            row_lane = "Every lane" if kind == IntervalKind.EXPOSED else LANES[LANE_ROW[lane]]
            rows.append(
                [
                    str(label),
                    row_lane,
                    state_number(a),
                    state_number(b),
                    int(bucket) if bucket >= 0 else None,
                    None if size is None else state_number(size),
                    None if ready is None else state_number(ready),
                    None if link_wait is None else state_number(link_wait),
                    None if order_wait is None else state_number(order_wait),
                ]
            )
        return {
            "caption": "Every bar of the timeline; an all-reduce's row also gives its bucket's "
            "size, when it was ready and how long it waited.",
            "columns": [
                {"key": "bar", "label": "Bar"},
                {"key": "lane", "label": "Lane"},
                {"key": "start_ms", "label": "Start (ms)", "digits": 2},
                {"key": "end_ms", "label": "End (ms)", "digits": 2},
                {"key": "bucket", "label": "Bucket"},
                {"key": "size_mb", "label": "Size (MB)", "digits": 2},
                {"key": "ready_ms", "label": "Ready (ms)", "digits": 2},
                {"key": "link_wait_ms", "label": "Link wait (ms)", "digits": 2},
                {"key": "order_wait_ms", "label": "Order wait (ms)", "digits": 2},
            ],
            "rows": rows,
        }

    def description(self, t: float) -> str:
        return text.description(self.schedule, self.sweep, t, self.horizon)


def bucket_timeline_state(
    settings: param.Parameterized, clock: Clock, origin: str | None = None
) -> dict[str, Any]:
    """What the bucket timeline's page draws for ``settings`` at ``clock``'s time.

    ``{"state", "description", "anchor"}``; the clock is read as it is (a component
    fits its horizon, speed and Step to the run first).
    """
    return drawn(TimelineRun(settings, origin), clock)
