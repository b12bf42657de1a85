"""Every widget by name: its settings, its named configurations and where its view lives.

Routes, lesson directives, share links, embed snippets, the index's pictures,
class rounds and the parametrised tests all read this one table. A setting's
URL key is its parameter name.
Views, pictures and round questions are imported only when first used, so
reading the registry (the lesson checker does) needs neither Panel nor Bokeh.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlencode

import param

from .bucket_timeline.model import PRESETS, TimelineSettings
from .common.formatting import plain_number
from .common.picture import Picture
from .common.round_questions import RoundQuestions
from .common.widget_state import WidgetState
from .many_ranks.model import SCENARIOS, RanksConfig
from .model.fluid_queue import FluidQueue
from .model.named import NamedConfigurations
from .model.settings import setting_names
from .trace_viewer.model import TraceViewConfig
from .url_state import settings_from_query


@dataclass(frozen=True)
class WidgetSpec:
    """One embeddable widget: a name (its route), its settings class, its view and its
    named configurations (presets or scenarios), if any."""

    name: str
    title: str
    summary: str
    settings: type[param.Parameterized]
    view: str
    """``"module:Class"`` of the view, under ``widgets``."""
    named: NamedConfigurations | None = None
    thumbnail: str = ""
    """``"module:function"`` under ``widgets``: the index's picture of the default settings."""
    class_round: str = ""
    """``"module:NAME"`` under ``widgets``: what a class round may ask (empty: no rounds)."""
    export_axes: Mapping[str, Callable[[param.Parameterized], Sequence[object]]] = field(
        default_factory=dict
    )
    """For a static copy (``app.export``): settings whose values are precomputed from each
    named configuration, each as a function of the settings to the values it takes."""
    state: str = ""
    """``"module:Class"`` under ``widgets``: the widget's ``WidgetState`` (no Panel), which
    computes what its page draws from its settings and the clock."""

    @property
    def presets(self) -> Mapping[str, Mapping]:
        """The named configurations a ``preset`` key loads (none for a widget without)."""
        return self.named if self.named is not None and self.named.key == "preset" else {}

    @property
    def keys(self) -> list[str]:
        """The URL keys: the name's key where it is not a setting (``preset``), then every
        setting."""
        settings = setting_names(self.settings)
        named = [] if self.named is None or self.named.key in settings else [self.named.key]
        return named + settings

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
                # Quoted: a preset's name may hold a comma ("8×A100, NVLink").
                known = ", ".join(f"“{known}”" for known in self.presets)
                notices.append(f"Ignored unknown preset “{name[:40]}” (known: {known}).")
        settings, more = settings_from_query(self.settings, query)
        return {**kwargs, **settings}, notices + more

    def view_class(self) -> type:
        """The view class (imported on first use)."""
        return _imported(self.view)

    def create(self, **kwargs):
        """A new view with these keyword arguments."""
        return self.view_class()(**kwargs)

    def rules(self) -> WidgetState:
        """The widget's settings rules and its run, without Panel (imported on first use)."""
        return _imported(self.state)()

    def picture(self) -> Picture | None:
        """What the index's picture of this widget shows, or None for a widget without one."""
        return _imported(self.thumbnail)() if self.thumbnail else None

    def round_questions(self) -> RoundQuestions | None:
        """What a class round may ask about this widget, or None if it has no rounds."""
        return _imported(self.class_round) if self.class_round else None

    def query_values(self, values: Mapping[str, object]) -> dict[str, str]:
        """The settings as URL query values (None left out, numbers as typed)."""
        keys = self.keys
        return {k: _query_text(v) for k, v in values.items() if k in keys and v is not None}

    def query_string(self, values: Mapping[str, object]) -> str:
        """``arrival=4&service=3`` for the given settings."""
        return urlencode(self.query_values(values))


def _imported(ref: str):
    """The object ``"module:name"`` names under ``widgets`` (its module imported on first use)."""
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(f"widgets.{module}"), name)


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
            TimelineSettings,
            "bucket_timeline.component:BucketTimeline",
            PRESETS,
            thumbnail="bucket_timeline.thumbnail:picture",
            class_round="bucket_timeline.questions:ROUND",
            export_axes={"layers_per_bucket": lambda settings: range(1, settings.n_layers + 1)},
            state="bucket_timeline.state:TimelineState",
        ),
        WidgetSpec(
            "queue-lab",
            "Fluid queue lab",
            "Traffic arrives at one rate and leaves at another: predict when the queue "
            "drains, then run it.",
            FluidQueue,
            "queue_lab.component:QueueLab",
            thumbnail="queue_lab.thumbnail:picture",
            class_round="queue_lab.questions:ROUND",
            export_axes={
                "arrival": lambda settings: range(0, 7),
                "service": lambda settings: range(1, 7),
                "initial": lambda settings: range(0, 9),
                "predicted_drain_time": lambda settings: range(1, 11),
            },
            state="queue_lab.state:QueueState",
        ),
        WidgetSpec(
            "ranks",
            "Many ranks",
            "Every rank's backward, the link and each bucket's events: which rank defines "
            "readiness, what a timer sees, when overlap slows compute, and when ranks disagree.",
            RanksConfig,
            "many_ranks.component:RanksView",
            SCENARIOS,
            thumbnail="many_ranks.thumbnail:picture",
            class_round="many_ranks.questions:ROUND",
            export_axes={"layers_per_bucket": lambda settings: (1, 2, 3, 4, 6, 12)},
            state="many_ranks.state:RanksState",
        ),
        WidgetSpec(
            "trace",
            "Real trace",
            "A recorded DDP run on every rank (or your own torch.profiler files), the model "
            "fitted on other runs drawn over it, which rank defined readiness, and a what-if "
            "bucket size.",
            TraceViewConfig,
            "trace_viewer.component:TraceView",
            thumbnail="trace_viewer.thumbnail:picture",
            export_axes={
                "iteration": lambda settings: range(settings.param.iteration.bounds[1] + 1)
            },
            state="trace_viewer.state:TraceState",
        ),
    )
}
