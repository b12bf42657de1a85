"""Every widget by name: its view, its settings and how text turns into settings.

Routes, lesson directives, share links and embed snippets all read this one
table, so a setting's URL key is always its parameter name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlencode

import param

from .formatting import plain_number
from .url_state import settings_from_query


@dataclass(frozen=True)
class WidgetSpec:
    """One embeddable widget."""

    name: str
    title: str
    summary: str
    settings: type[param.Parameterized]
    units: dict[str, str]
    presets: Mapping[str, Mapping] = field(default_factory=dict)
    factory: Callable[..., object] | None = None

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
        settings, more = settings_from_query(self.settings, self.units, query)
        return {**kwargs, **settings}, notices + more

    def create(self, **kwargs):
        """A new view with these keyword arguments."""
        if self.factory is None:
            raise RuntimeError(f"{self.name} has no view")
        return self.factory(**kwargs)

    def query_values(self, values: Mapping[str, object]) -> dict[str, str]:
        """The settings as URL query values (None left out, numbers as typed)."""
        return {
            k: v if isinstance(v, str) else plain_number(v)
            for k, v in values.items()
            if (k in self.units or (k == "preset" and self.presets)) and v is not None
        }

    def query_string(self, values: Mapping[str, object]) -> str:
        """``arrival=4&service=3`` for the given settings."""
        return urlencode(self.query_values(values))


def _queue_lab(**kwargs):
    from .queue_lab import QueueLab

    return QueueLab(**kwargs)


def _bucket_timeline(**kwargs):
    from .bucket_timeline import BucketTimeline

    return BucketTimeline(**kwargs)


def _specs() -> dict[str, WidgetSpec]:
    from .bucket_timeline import FIELDS as BUCKET_FIELDS
    from .model.buckets import PRESETS, BucketConfig
    from .model.fluid_queue import FluidQueue
    from .queue_lab import FIELDS as QUEUE_FIELDS

    specs = [
        WidgetSpec(
            "bucket-timeline",
            "Bucket timeline",
            "One training step of a twelve-layer model: backward, gradient buckets, each "
            "all-reduce on the link and the exposed tail, with a sweep over bucket sizes.",
            BucketConfig,
            BUCKET_FIELDS,
            PRESETS,
            _bucket_timeline,
        ),
        WidgetSpec(
            "queue-lab",
            "Fluid queue lab",
            "Traffic arrives at one rate and leaves at another: predict when the queue "
            "drains, then run it.",
            FluidQueue,
            QUEUE_FIELDS,
            {},
            _queue_lab,
        ),
    ]
    return {s.name: s for s in specs}


WIDGETS: dict[str, WidgetSpec] = _specs()
