"""A served page's widget made live: its component on this server, behind one websocket.

A page that was sent as a file (:mod:`app.pages.first_page`) opens
``/live/<widget>`` at the learner's first edit (or earlier, when a control is
focused). The connection holds one widget component, built with the page's
current settings and placed at the moment the page shows, for that page alone;
it is dropped when the page closes. Every message from the page takes the
component's one path (``WidgetComponent.receive``), so an edit is checked and
answered exactly as on a Bokeh session, and only what changed is sent back.

Frames are JSON text. From the page, each with an ``id``:

- ``{"open": {"query", "at", "playing"}}``: build the component (once);
- ``{"clock": {"at", "playing"}}``: place its clock where the page's is;
- ``{"msg": {...}}``: a page message (an action, an edit, an upload);
- ``{"experiment": n}``: a lesson's experiment ``n`` (``?lesson=<name>&slot=<i>``).

From the server: ``{"re": id, "props": {...}, "query": "…"}`` for each, or
``{"re": id, "error": "…"}``; ``{"props": …}`` alone when something finished
later (a trace read off the event loop).

Each connection's frames are paced as Bokeh's are (:mod:`app.server.websocket_pace`),
a process holds at most ``MAX_LIVE_PAGES`` of them, and a page from another origin
is refused unless the server was told to allow it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tornado.ioloop import IOLoop
from tornado.websocket import WebSocketClosedError, WebSocketHandler

from lessons import Experiment, Lesson
from widgets.common.component import PAGE_PROPERTIES
from widgets.common.page_host import serving_page
from widgets.registry import WIDGETS

from .websocket_pace import MessagePace

log = logging.getLogger("overlap-lab")

#: Live widgets one process holds at once (each some megabytes at most).
MAX_LIVE_PAGES = 1000
#: What the page says at the control when the process holds that many.
FULL = "The server is busy with many live pages; try your change again in a minute."


class LiveWidget:
    """One page's widget on the server: its component, and what changed since last sent."""

    def __init__(self, name: str, query: str, origin: str, own_page: bool):
        from widgets.page_settings import page_settings_from_query

        spec = WIDGETS[name]
        _, notices, rest = page_settings_from_query(parse_qs(query, keep_blank_values=True))
        kwargs, more = spec.parse(rest)
        self.view = spec.create(**kwargs)
        self.view.show_notices(notices + more)
        self.view.enable_share(origin, own_page=own_page)
        self.names = [n for n in PAGE_PROPERTIES if n in self.view.param]
        self._changed: set[str] = set()
        self._watcher = self.view.param.watch(self._note, self.names)

    def _note(self, *events: Any) -> None:
        self._changed.update(e.name for e in events)

    def everything(self) -> dict[str, Any]:
        """Every property the page draws."""
        self._changed.clear()
        return {n: getattr(self.view, n) for n in self.names}

    def changes(self) -> dict[str, Any]:
        """The properties changed since last asked."""
        names, self._changed = self._changed, set()
        return {n: getattr(self.view, n) for n in self.names if n in names}

    def place(self, at: Any, playing: Any) -> None:
        """Put the clock where the page's is: model time ``at``, playing or not."""
        clock = self.view.clock
        t = float(at) if isinstance(at, (int, float)) and math.isfinite(at) else 0.0
        t = min(max(t, 0.0), clock.horizon)
        clock.param.update(
            elapsed=t, playing=playing is True and t < clock.horizon, anchor_wall=time.monotonic()
        )
        self.view.refresh_time()

    def close(self) -> None:
        """Drop the watcher (the component goes with the connection)."""
        self.view.param.unwatch(self._watcher)


def lesson_experiments(lesson: Lesson, slot: int) -> dict[int, Experiment]:
    """The experiments of ``lesson`` that load its ``slot``-th widget, by button number."""
    widgets = lesson.widgets
    if not 0 <= slot < len(widgets):
        return {}
    target = widgets[slot]
    numbered = [b for b in lesson.blocks if isinstance(b, Experiment)]
    return {n: e for n, e in enumerate(numbered) if lesson.blocks[e.target] is target}


class LiveSocket(WebSocketHandler):
    """``/live/<widget>``: one served page's widget, live (see the module's words)."""

    live_pages = 0

    def initialize(
        self,
        prefix: str = "",
        allowed_origins: tuple[str, ...] = (),
        lessons: Callable[[], dict[str, Lesson]] | None = None,
    ) -> None:
        self.prefix = prefix
        self.allowed_origins = allowed_origins
        self.lessons = lessons
        self.widget: LiveWidget | None = None
        self.pace = MessagePace()
        self.counted = False
        self.loop: IOLoop | None = None

    def check_origin(self, origin: str) -> bool:
        """A page of this server (any port's host it was reached at), or an allowed origin."""
        netloc = urlsplit(origin).netloc.lower()
        return netloc == (self.request.host or "").lower() or netloc in self.allowed_origins

    def open(self, name: str) -> None:
        if name not in WIDGETS:
            self.close(4404, "no such widget")
            return
        self.name = name
        self.loop = IOLoop.current()
        args = self.request.query_arguments
        self.own_page = args.get("own_page", [b""])[-1] == b"1"
        self.experiments: dict[int, Experiment] = {}
        lesson_name = args.get("lesson", [b""])[-1].decode("utf-8", "replace")
        if lesson_name and self.lessons is not None:
            lesson = self.lessons().get(lesson_name)
            try:
                slot = int(args.get("slot", [b"-1"])[-1])
            except ValueError:
                slot = -1
            if lesson is not None:
                self.experiments = lesson_experiments(lesson, slot)

    async def on_message(self, message: str | bytes) -> None:
        wait = self.pace.take()
        if wait:
            await asyncio.sleep(wait)
        try:
            frame = json.loads(message)
        except ValueError:
            return
        if not isinstance(frame, dict):
            return
        ident = frame.get("id")
        try:
            reply = self._answer(frame)
        except Exception:  # a widget's fault must not close other pages or print a traceback
            log.warning("live page %s: a message failed", self.name, exc_info=False)
            reply = {"error": "The server could not do that; the page shows what it showed."}
        if reply is not None:
            self._send({"re": ident, **reply})

    def _answer(self, frame: dict) -> dict | None:
        if "open" in frame:
            return self._open(frame["open"])
        if self.widget is None:
            return {"error": "Not open."}
        widget = self.widget
        with serving_page(self._page):
            if "clock" in frame and isinstance(frame["clock"], dict):
                widget.place(frame["clock"].get("at"), frame["clock"].get("playing"))
            elif "msg" in frame:
                widget.view.receive(frame["msg"])
            elif "experiment" in frame:
                found = self.experiments.get(frame["experiment"])
                if isinstance(frame["experiment"], int) and found is not None:
                    widget.view.apply(note=found.note, **found.settings)
        return {"props": widget.changes(), "query": widget.view.query()}

    def _open(self, opening: Any) -> dict:
        if self.widget is not None or not isinstance(opening, dict):
            return {"error": "Already open."}
        if LiveSocket.live_pages >= MAX_LIVE_PAGES:
            return {"error": FULL}
        query = opening.get("query")
        query = query if isinstance(query, str) and len(query) <= 2000 else ""
        from app.pages.first_page import _origin

        with serving_page(self._page):
            self.widget = LiveWidget(self.name, query, _origin(self, self.prefix), self.own_page)
            LiveSocket.live_pages += 1
            self.counted = True
            self.widget.place(opening.get("at"), opening.get("playing"))
        return {"props": self.widget.everything(), "query": self.widget.view.query()}

    @property
    def _page(self) -> _Page:
        return _Page(self)

    def _send(self, reply: dict) -> None:
        with contextlib.suppress(WebSocketClosedError):
            self.write_message(json.dumps(reply, separators=(",", ":"), default=_plain))

    def later(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` on this page's event loop (from any thread), then send what changed."""

        def run() -> None:
            if self.widget is None:
                return
            with serving_page(self._page):
                callback()
            self._send({"props": self.widget.changes()})

        if self.loop is not None:
            self.loop.add_callback(run)

    def on_close(self) -> None:
        if self.widget is not None:
            self.widget.close()
            self.widget = None
        if self.counted:
            LiveSocket.live_pages -= 1
            self.counted = False


class _Page:
    """What a widget asks of the page it serves (``widgets.common.page_host``)."""

    def __init__(self, socket: LiveSocket):
        self.socket = socket
        self.session_context = self
        self.id = f"live-{id(socket)}"

    def add_next_tick_callback(self, callback: Callable[[], None]) -> None:
        self.socket.later(callback)


def _plain(value: Any) -> Any:
    """numpy's numbers and arrays as JSON's."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"not JSON: {type(value).__name__}")


def live_socket_pattern(
    prefix: str, allowed_origins: list[str], lessons: Callable[[], dict[str, Lesson]]
) -> tuple:
    """The route of the live sockets, for ``extra_patterns``."""
    args = {
        "prefix": prefix,
        "allowed_origins": tuple(o.lower() for o in allowed_origins),
        "lessons": lessons,
    }
    return (r"/live/([\w-]{1,40})", LiveSocket, args)
