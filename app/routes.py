"""What the server serves: one function per route, each building a fresh page per session."""

from __future__ import annotations

import panel as pn

from widgets.bucket_timeline import FIELDS as BUCKET_FIELDS
from widgets.bucket_timeline import BucketTimeline
from widgets.model.buckets import PRESETS, BucketConfig
from widgets.model.fluid_queue import FluidQueue
from widgets.queue_lab import QueueLab
from widgets.url_state import settings_from_query

from .page import page

QUEUE_LAB_KEYS = {"arrival": "items/s", "service": "items/s", "initial": "items"}

WIDGETS = {
    "bucket-timeline": (
        "Bucket timeline",
        "One training step of a twelve-layer model: backward, gradient buckets, each "
        "all-reduce on the link, and the exposed tail, with a sweep over bucket sizes.",
    ),
    "queue-lab": (
        "Fluid queue lab",
        "Traffic arrives at one rate and leaves at another: predict when the queue drains, "
        "then run it.",
    ),
}


def _query() -> dict:
    return dict(pn.state.session_args or {})


def index_page() -> pn.viewable.Viewable:
    """The index: every widget route with a line on what it is for."""
    items = "".join(
        f'<li><a href="./{route}">{title}</a> — {text}</li>'
        for route, (title, text) in WIDGETS.items()
    )
    body = pn.pane.HTML(
        f'<nav aria-label="Widgets"><h2>Widgets</h2><ul class="ol-list">{items}</ul></nav>',
        sizing_mode="stretch_width",
        stylesheets=[
            ".ol-list { font: 16px/1.6 system-ui, sans-serif; padding-left: 1.2em; }"
            " h2 { font: 600 18px system-ui, sans-serif; } a { color: #0b5cad; }"
        ],
        margin=(0, 10),
    )
    return page(
        "overlap-lab",
        "Live widgets on how data-parallel training hides gradient communication behind "
        "the backward pass.",
        body,
    )


def queue_lab_page() -> pn.viewable.Viewable:
    """The fluid queue lab, preset from ``?arrival=&service=&initial=``."""
    settings, notices = settings_from_query(FluidQueue, QUEUE_LAB_KEYS, _query())
    title, text = WIDGETS["queue-lab"]
    return page(title, text, QueueLab(**settings), notices)


def bucket_timeline_page() -> pn.viewable.Viewable:
    """The bucket timeline, preset from ``?preset=`` and the setting names."""
    query = _query()
    notices: list[str] = []
    preset = None
    if "preset" in query:
        raw = query.pop("preset")[-1]
        name = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        if name in PRESETS:
            preset = name
        else:
            notices.append(f"Ignored unknown preset “{name[:40]}” (known: {', '.join(PRESETS)}).")
    settings, more = settings_from_query(BucketConfig, BUCKET_FIELDS, query)
    title, text = WIDGETS["bucket-timeline"]
    return page(title, text, BucketTimeline(preset=preset, **settings), notices + more)


ROUTES = {"/": index_page, "queue-lab": queue_lab_page, "bucket-timeline": bucket_timeline_page}
