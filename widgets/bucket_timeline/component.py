"""The bucket timeline: one training step of a twelve-layer model, bucket by bucket.

Python runs the schedule and the sweep over bucket sizes on each edit and sends
them as numbers (bars, markers, the sweep) with the readouts' texts; the page
(``bucket_timeline.js``) draws the timeline, the sweep and the key.

A preset is a named configuration. Choosing one loads it as a new experiment;
an edit afterwards keeps its name, and what differs from it is worked out by
comparing the settings with the preset's own values ("Latency-bound, changed:
ranks"). A link carries the preset and only the settings that differ.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from ..common.component import WidgetComponent
from ..model.buckets import Schedule, SweepResult
from .model import PRESETS, TimelineSettings
from .state import TimelineState

HERE = Path(__file__).resolve().parent


class BucketTimeline(WidgetComponent):
    """One step of data-parallel training: backward, buckets, all-reduces and the tail."""

    widget_name = "bucket-timeline"
    settings_class = TimelineSettings
    entry = HERE / "bucket_timeline.js"
    rules = TimelineState()
    STEADY_KEYS = TimelineState.STEADY_KEYS
    #: The sweep's button: layers per bucket at the sweep's best.
    own_actions: ClassVar[Mapping[str, str]] = {"best": "use_best"}

    # -- the learner's edits and actions -------------------------------------------

    def edit(self, name: str, text: str) -> None:
        """An edit; choosing a preset loads it as a new experiment (``TimelineState.choose``).

        A typed backward time or gradient size applies to every layer: it drops a
        preset's per-layer profile in the same update.
        """
        if name == "preset" and text.strip() in PRESETS:
            self.apply(preset=text.strip())
            return
        super().edit(name, text)

    def use_best(self) -> None:
        """Set layers per bucket to the sweep's best (clearing a byte cap)."""
        best = int(self.run.sweep.best_setting)
        self._errors.pop("layers_per_bucket", None)
        self._errors.pop("bucket_cap_mb", None)
        self.settings.param.update(layers_per_bucket=best, bucket_cap_mb=None, ddp_bucketing=False)

    # -- sharing -------------------------------------------------------------------

    def enable_share(self, origin: str, own_page: bool = False) -> None:
        super().enable_share(origin, own_page)
        # The link to the queue lab is on this server.
        self.fit_to_model()
        self.param.update(self._sendable(self.model_state()))

    @property
    def schedule(self) -> Schedule:
        """The step's schedule for the current settings."""
        return self.run.schedule

    @property
    def sweep(self) -> SweepResult:
        """The sweep over layers per bucket for the current settings."""
        return self.run.sweep
