"""Every widget by name: its settings, its presets and where its view lives.

Routes, lesson directives, share links, embed snippets and the parametrised
tests all read this one table. A setting's URL key is its parameter name.
Views are imported only when a widget is created, so reading the registry
(the lesson checker does) needs neither Panel nor Bokeh.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlencode

import param

from .common.formatting import plain_number
from .model.buckets import PRESETS as BUCKET_PRESETS
from .model.buckets import BucketConfig
from .model.fluid_queue import FluidQueue
from .model.ranks_view import RanksConfig
from .model.settings import setting_names
from .trace_viewer.model import TraceViewConfig
from .url_state import settings_from_query


@dataclass(frozen=True)
class WidgetSpec:
    """One embeddable widget: a name (its route), its settings class and its view."""

    name: str
    title: str
    summary: str
    settings: type[param.Parameterized]
    view: str
    """``"module:Class"`` of the view, under ``widgets``."""
    presets: Mapping[str, Mapping] = field(default_factory=dict)
    export_axes: Mapping[str, Callable[[param.Parameterized], Sequence[object]]] = field(
        default_factory=dict
    )
    """For a static copy (``app.export``): settings whose values are precomputed from each
    named configuration, each as a function of the settings to the values it takes."""

    @property
    def keys(self) -> list[str]:
        """The URL keys: ``preset`` (where there are presets), then every setting."""
        return (["preset"] if self.presets else []) + setting_names(self.settings)

    def parse(
        self, query: Mapping[str, list[bytes] | list[str]]
    ) -> tuple[dict[str, object], list[str]]:
        """Keyword arguments for the view from query-style values, and notices for the rest.

        ``preset`` (for widgets with presets) is applied first; every other key is
        a parameter name.
        """
        query = dict(query)
        notices: list[str] = []
        kwargs: dict[str, object] = {}
        if self.presets and "preset" in query:
            raw = query.pop("preset")[-1]
            name = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
            if name in self.presets:
                kwargs["preset"] = name
            else:
                notices.append(
                    f"Ignored unknown preset “{name[:40]}” (known: {', '.join(self.presets)})."
                )
        settings, more = settings_from_query(self.settings, query)
        return {**kwargs, **settings}, notices + more

    def view_class(self) -> type:
        """The view class (imported on first use)."""
        module, _, name = self.view.partition(":")
        return getattr(importlib.import_module(f"widgets.{module}"), name)

    def create(self, **kwargs):
        """A new view with these keyword arguments."""
        return self.view_class()(**kwargs)

    def query_values(self, values: Mapping[str, object]) -> dict[str, str]:
        """The settings as URL query values (None left out, numbers as typed)."""
        keys = self.keys
        return {k: _query_text(v) for k, v in values.items() if k in keys and v is not None}

    def query_string(self, values: Mapping[str, object]) -> str:
        """``arrival=4&service=3`` for the given settings."""
        return urlencode(self.query_values(values))


def _query_text(value: object) -> str:
    """A setting as a URL value: text as is, yes/no as true/false, numbers as typed."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return plain_number(value)


WIDGETS: dict[str, WidgetSpec] = {
    spec.name: spec
    for spec in (
        WidgetSpec(
            "bucket-timeline",
            "Bucket timeline",
            "One training step of a twelve-layer model: backward, gradient buckets, each "
            "all-reduce on the link and the exposed tail, with a sweep over bucket sizes.",
            BucketConfig,
            "bucket_timeline.component:BucketTimeline",
            BUCKET_PRESETS,
            export_axes={"layers_per_bucket": lambda settings: range(1, settings.n_layers + 1)},
        ),
        WidgetSpec(
            "queue-lab",
            "Fluid queue lab",
            "Traffic arrives at one rate and leaves at another: predict when the queue "
            "drains, then run it.",
            FluidQueue,
            "queue_lab.component:QueueLab",
            export_axes={
                "arrival": lambda settings: range(0, 7),
                "service": lambda settings: range(1, 7),
                "initial": lambda settings: range(0, 9),
                "predicted_drain_time": lambda settings: range(1, 11),
            },
        ),
        WidgetSpec(
            "ranks",
            "Many ranks",
            "Every rank's backward, the link and each bucket's events: which rank defines "
            "readiness, what a timer sees, when overlap slows compute, and when ranks disagree.",
            RanksConfig,
            "many_ranks.component:RanksView",
            export_axes={"layers_per_bucket": lambda settings: (1, 2, 3, 4, 6, 12)},
        ),
        WidgetSpec(
            "trace",
            "Real trace",
            "A recorded DDP run on every rank (or your own torch.profiler files), the model "
            "fitted on other runs drawn over it, which rank defined readiness, and a what-if "
            "bucket size.",
            TraceViewConfig,
            "trace_viewer.component:TraceView",
            export_axes={
                "iteration": lambda settings: range(settings.param.iteration.bounds[1] + 1)
            },
        ),
    )
}
