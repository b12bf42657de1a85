"""The class's live streams: server-sent events to a learner's and the instructor's page.

Each stream sends one ``data:`` line of JSON per change, and a comment line now
and then so that the connection (and every proxy on the way) stays open.
"""

from __future__ import annotations

import asyncio
import json
import logging

from tornado.iostream import StreamClosedError

from .codes import normalize_code
from .errors import ClassError
from .handlers import NOT_A_LEARNER, ClassHandler
from .hub import Listener
from .qr import qr_svg
from .round_file import revealed_states
from .views import instructor_view, learner_view

log = logging.getLogger("overlap-lab.classroom")
#: A comment line keeps each stream's connection (and every proxy on the way) alive (s).
KEEPALIVE = 15.0
#: How soon a learner's page asks for its events again while the store is away (ms).
RETRY_MS = 2000


class Stream(ClassHandler, Listener):
    """A stream of server-sent events: one JSON view per change, until the page goes."""

    code = ""
    _last = None

    def start_stream(self) -> None:
        self.set_header("Content-Type", "text/event-stream; charset=utf-8")
        # nginx passes each event on at once instead of buffering the response.
        self.set_header("X-Accel-Buffering", "no")
        self._gone = asyncio.Event()
        self.flush()

    def send(self, view: dict) -> None:
        if view == self._last or self._gone.is_set():
            return
        self._last = view
        self.write(f"data: {json.dumps(view, separators=(',', ':'))}\n\n")
        self._flush()

    def _flush(self) -> None:
        future = self.flush()

        def done(f) -> None:
            if f.exception() is not None:
                self._gone.set()

        future.add_done_callback(done)

    def on_connection_close(self) -> None:
        if hasattr(self, "_gone"):
            self._gone.set()

    async def hold(self) -> None:
        """Keep the stream open (with a keep-alive comment now and then) until it closes."""
        while not self._gone.is_set():
            try:
                await asyncio.wait_for(self._gone.wait(), timeout=KEEPALIVE)
            except TimeoutError:
                try:
                    self.write(": keep-alive\n\n")
                    await self.flush()
                except StreamClosedError:
                    self._gone.set()


class LearnerEvents(Stream):
    """``/class/<code>/events``: what a learner's page shows, as it changes."""

    role = "learner"

    async def get(self, typed: str) -> None:
        classroom, hub = await self.service.get()
        code = normalize_code(typed)
        learner = self.learner_id(classroom, code)
        if learner is None:
            # The same answer whether or not a class has this code (see Vote).
            self.reply({"ok": False, "message": NOT_A_LEARNER}, 403)
            return
        try:
            room = await classroom.join(code, learner)
        except ClassError as exc:
            if exc.status in (404, 503):
                # Ended; or the store is away, and the page tries again in a moment.
                self.start_stream()
                if exc.status == 404:
                    self.send({"phase": "ended"})
                else:
                    self.write(f"retry: {RETRY_MS}\n\n")
                self.finish()
                return
            self.refuse(exc)
            return
        self.code, self.learner = code, learner
        self.start_stream()
        hub.add(code, self)
        try:
            r = int(room.get("round", "0"))
            yours = await classroom.store.vote_of(code, r, learner) if r else None
            self.send(with_states(learner_view(code, room, yours, self.prefix), room))
            await classroom.store.publish(code, "seen")
            await self.hold()
        finally:
            hub.remove(code, self)
            if not hub.has_learner(code, learner):
                try:
                    await classroom.left(code, learner)
                    await classroom.store.publish(code, "seen")
                except Exception as exc:  # the store is away; the entry expires by itself
                    log.warning(
                        "classroom: could not record a page leaving (%s)", type(exc).__name__
                    )
        if not self._finished:
            self.finish()

    def changed(self, room, votes, connected) -> None:
        yours = votes.get(self.learner) if room is not None else None
        self.send(with_states(learner_view(self.code, room, yours, self.prefix), room))


def with_states(view: dict, room: dict | None) -> dict:
    """A learner's view, with the round's revealed states once the answer is out."""
    if view.get("phase") == "revealed" and room is not None and room.get("widget"):
        view["states"] = revealed_states(room["widget"], room.get("query", ""))
    return view


class TeachStream(Stream):
    """``POST /class/api/teach/stream``: the instructor's view, as it changes."""

    role = "instructor"

    async def post(self) -> None:
        classroom, hub = await self.service.get()
        try:
            data = self.json_body()
            code, room = await classroom.instructor_room(data.get("code"), data.get("key"))
        except ClassError as exc:
            self.refuse(exc)
            return
        self.code, self.store = code, classroom.store
        join = f"{self.origin()}/class/{code}"
        self.extra = {"join_url": join, "entry_url": f"{self.origin()}/class", "qr": qr_svg(join)}
        self.start_stream()
        hub.add(code, self)
        try:
            votes = await classroom.votes(code, room)
            connected = await classroom.connected(code)
            self.changed(room, votes, connected)
            await self.hold()
        finally:
            hub.remove(code, self)
        if not self._finished:
            self.finish()

    def changed(self, room, votes, connected) -> None:
        view = instructor_view(
            self.code, room, votes, connected, self.prefix, self.service.idle_seconds
        )
        if view.get("phase") != "ended":
            view.update(self.extra)
            view["notices"] = self.store.notices()
        self.send(view)

    def store_down(self) -> None:
        if self._last is not None and self._last.get("phase") != "ended":
            self.send({**self._last, "notices": self.store.notices()})
