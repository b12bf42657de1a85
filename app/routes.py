"""What the server serves: one function per route, each building a fresh page per session."""

from __future__ import annotations

import panel as pn

from widgets.model.fluid_queue import FluidQueue
from widgets.queue_lab import QueueLab
from widgets.url_state import settings_from_query

from .page import page

QUEUE_LAB_KEYS = {"arrival": "items/s", "service": "items/s", "initial": "items"}

WIDGETS = {
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


ROUTES = {"/": index_page, "queue-lab": queue_lab_page}
