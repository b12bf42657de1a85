"""A round's widget as a live session: the round's settings, locked as its phase says.

A learner's frame shows the round as a file (:mod:`app.classroom.round_file`);
this live page (``/class/<widget>?<settings>&room=..``) is what the frame opens
at a learner's first edit once the controls are unlocked. Its session follows
the room like the learner's page does: while voting it
refuses every edit and every run, with the run's controls hidden (and, for a
widget whose chart shows the result at once, the chart and readouts too); at
Reveal it plays the run; Unlock controls frees it. It shows no share bar, so
the locked round offers no link to an unlocked copy.
"""

from __future__ import annotations

import functools
import html
import logging

import panel as pn

from .codes import normalize_code
from .hub import Listener
from .service import service
from .views import widget_mode

log = logging.getLogger("overlap-lab.classroom")

#: Every mode's styles, given once when the widget is made (a stylesheet added later
#: would make Panel point its theme at a CDN); the mode is a class on the widget.
MODE_CSS = """
:host(.cl-hidden) .ol-main, :host(.cl-hidden) .ol-rest { display: none !important; }
:host(.cl-hidden) .ol-body::before { content: "The chart and readouts appear when your "
  "instructor reveals the answer."; display: block; font-weight: 600; padding: 8px 0; }
:host(.cl-locked) .ol-time { display: none !important; }
"""
#: What the page says above the settings while the round keeps them (they are inert).
LOCKED = "Settings locked by your instructor"
#: What a page may still ask for in each mode: an action's name, ``"edit"`` for any
#: control's edit, a data message's key (``"upload_files"``); the rest is refused.
#: Open: everything (the instructor unlocked the controls).
ALLOWED: dict[str, frozenset[str] | None] = {
    "hidden": frozenset({"table"}),
    "locked": frozenset({"table"}),
    "revealed": frozenset({"reset", "play", "pause", "step", "table"}),
    "open": None,
}
MODES = tuple(ALLOWED)


class RoundWidget(Listener):
    """One learner's copy of the round's widget, following the room."""

    role = "widget"

    def __init__(self, view, code: str, round_no: int, mode: str) -> None:
        self.view, self.code, self.round_no = view, code, round_no
        self.mode = mode if mode in MODES else "hidden"
        self._doc = pn.state.curdoc
        view.stylesheets = [*view.stylesheets, MODE_CSS]
        view.allowed_by_round = self.allows
        self._style()

    def allows(self, request: str) -> bool:
        """Whether the current mode still lets the page ask for ``request``."""
        allowed = ALLOWED[self.mode]
        return allowed is None or request in allowed

    def _style(self) -> None:
        self.view.css_classes = [f"cl-{self.mode}"]
        self.view.lock = "" if self.mode == "open" else LOCKED

    def changed(self, room, votes, connected) -> None:
        if room is None or room.get("round") != str(self.round_no) or not room.get("widget"):
            return
        mode = widget_mode(room)
        if mode != self.mode and self._doc is not None:
            self._doc.add_next_tick_callback(functools.partial(self.apply, mode))

    def apply(self, mode: str) -> None:
        """Move to ``mode``; at Reveal the run plays from the start."""
        was, self.mode = self.mode, mode
        self._style()
        if was in ("hidden", "locked") and mode in ("revealed", "open"):
            self.view.act("reset")
            self.view.act("play")

    async def follow(self) -> None:
        """Register with this process's hub and catch up with the room as it is now."""
        classroom, hub = await service().get()
        hub.add(self.code, self)
        doc = self._doc
        if doc is not None:
            doc.on_session_destroyed(lambda _ctx: hub.remove(self.code, self))
        self.changed(await classroom.store.get_room(self.code), {}, 0)


def class_widget_page(spec, query: dict) -> pn.viewable.Viewable:
    """The round's widget for one learner, from its frame's address."""
    query = dict(query)
    code = normalize_code(_last(query.pop("room", None)))
    mode = _last(query.pop("mode", None)) or "hidden"
    round_text = _last(query.pop("round", None)) or "0"
    kwargs, _notices = spec.parse(query)
    view = spec.create(**kwargs)
    doc = pn.state.curdoc
    if doc is not None:
        doc.title = f"{spec.title} · class round"
    body = pn.Column(
        view,
        sizing_mode="stretch_width",
        styles={"max-width": "1280px", "margin": "0 auto", "padding": "0 8px 16px"},
    )
    if code is None or not round_text.isdigit():
        return pn.Column(
            pn.pane.HTML(f"<p>{html.escape('This widget belongs to a class round.')}</p>"), body
        )
    follower = RoundWidget(view, code, int(round_text), mode)
    if doc is not None and doc.session_context is not None:
        doc.add_next_tick_callback(follower.follow)
    return body


def _last(values) -> str | None:
    if not values:
        return None
    raw = values[-1]
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
