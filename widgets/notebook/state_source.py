"""Where a notebook widget's state comes from: a widget's settings and clock in, the
properties its page draws out.

This is the notebook's one seam to the widgets' state. It holds one widget by its
registry name, preset from URL-style settings (validated, with the page's notices),
answers the page's messages (edits, Reset, Play, Pause, Step), and gives the
properties the bundle draws (``PROPERTIES``). The end of a played run is part of the
state read here: once the clock has passed its horizon, ``properties()`` is the
state at the end, whoever asks and whether or not a timer ran.

What the page draws is computed by the widget's Panel-free state function
(``widgets/<widget>/state.py``, the one the served component, the static export and
the class rounds call). The page's messages are still answered by the widget's
component (``widgets/<widget>/component.py``), held off-screen and never displayed,
with no server session: the rules of a message (an edit's refusal, Reset, Play at
the end replaying, the table on demand, each widget's own buttons) live there once.
This class is the one place to change when they move to a Panel-free session.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..common.component import PAGE_PROPERTIES
from ..common.fields import field_names, value_text
from ..registry import WIDGETS

#: The synced properties a widget's page reads; kept equal to ``PROPERTIES`` in notebook.js.
PROPERTIES = PAGE_PROPERTIES

#: A Jupyter server closes a kernel's websocket on a message over 10 MiB (Tornado's
#: default ``websocket_max_message_size``), so a trace uploaded in a notebook is held to
#: what fits in one: 6 MiB of files, 8 MiB as base64, with room for the message's frame.
NOTEBOOK_UPLOAD_BYTES = 6 * 1024 * 1024
NOTEBOOK_UPLOAD_MESSAGE_BYTES = NOTEBOOK_UPLOAD_BYTES * 4 // 3 + 64 * 1024


def query_of(settings: Mapping[str, object]) -> dict[str, list[str]]:
    """Keyword settings as a page's URL query: each value as the text a link carries."""
    return {key: [value_text(value)] for key, value in settings.items()}


class NotebookState:
    """One widget's settings, clock and drawn state, as a notebook shows it.

    ``settings`` are URL keys and values (``arrival=2`` or ``preset="Latency-bound"``);
    an unknown key or a refused value is left out with the page's notice.
    """

    def __init__(self, name: str, settings: Mapping[str, object]):
        self.spec = WIDGETS[name]
        kwargs, notices = self.spec.parse(query_of(settings))
        self._view = self.spec.create(**kwargs)
        self._view.show_notices(notices)

    @property
    def field_names(self) -> list[str]:
        """The settings and entries a learner edits, by name."""
        return field_names(self._view.settings)

    def setting(self, name: str) -> object:
        """The current value of setting (or entry) ``name``."""
        return getattr(self._view.settings, name)

    def properties(self) -> dict[str, Any]:
        """What the page draws now; a played run that has reached its end is shown ended."""
        self._end_if_over()
        view = self._view
        props = {name: getattr(view, name) for name in PROPERTIES if name in view.param}
        if props.get("upload"):
            props["upload"] = notebook_upload(props["upload"])
        return props

    def request(self, message: object) -> None:
        """One message from the page (``{"action": …}``, ``{"edit": …, "text": …}``, data)."""
        self._end_if_over()
        self._view.receive(message)

    def edit(self, name: str, text: str) -> str | None:
        """Type ``text`` into the control of ``name``; the refusal's message, or None."""
        self._end_if_over()
        self._view.edit(name, text)
        return self._view.errors.get(name)

    def load(self, note: str = "", **settings: object) -> None:
        """Load settings as an experiment does: set them, then Reset; ``note`` is shown."""
        self._view.apply(note, **settings)

    def seconds_to_end(self) -> float | None:
        """Wall-clock seconds until a playing run ends, or None when it is not playing."""
        clock = self._view.clock
        return clock.wall_seconds_to_end() if clock.playing else None

    def _end_if_over(self) -> None:
        clock = self._view.clock
        if clock.playing and clock.at_end:
            clock.reanchor()
            self._view.refresh_time()


def notebook_upload(upload: dict[str, Any]) -> dict[str, Any]:
    """The trace upload's limits as a notebook's kernel connection can carry them."""
    return {
        **upload,
        "max_bytes": min(upload["max_bytes"], NOTEBOOK_UPLOAD_BYTES),
        "max_message_bytes": min(upload["max_message_bytes"], NOTEBOOK_UPLOAD_MESSAGE_BYTES),
    }
