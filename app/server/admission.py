"""Pages of a class arriving at once are finished in the order they were asked for.

A server process runs everything on one event loop. When a class opens a page
at once, the page GETs are all waiting, and the loop used to build one session
in every turn of the loop, while each page's websocket moved one step per turn
(the handshake, the ACK, the document pull and the browser's patches take some
ten turns). Every learner's page became usable only when the last session of
the burst was built: p50 and p95 time to page were equal in every burst
measured.

The gate builds one session at a time and, before each build, lets the loop
turn ``yields`` times, so that the websockets, scripts and patches of the
pages already sent go ahead of the next build. Pages then become usable one
after another: the first learners start at once and the median wait of a burst
is about half of what it was. The work per session and the time of the last
page of a burst do not change.

A page that has to wait for its turn is sent in two parts: at once, the
document's head and the loading notice, so the learner sees that the page is
coming; then, once its session is built, the page itself.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from .loading_page import LOADING_HTML, early_notice_html

log = logging.getLogger("overlap-lab")

#: Turns of the event loop given to work already under way before each session build.
ADMISSION_YIELDS = 200


class PageGate:
    """One session build at a time, in arrival order, each after ``yields`` turns of the loop."""

    def __init__(self, yields: int = ADMISSION_YIELDS) -> None:
        if yields < 0:
            raise ValueError(f"the number of turns cannot be negative: {yields}")
        self.yields = yields
        self._lock: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        #: Pages waiting for their turn, and the one being built.
        self.waiting = 0
        self.building = 0

    @property
    def pages(self) -> int:
        """Pages in the gate: those waiting for their turn and the one whose turn it is."""
        return self.waiting + int(self._lock is not None and self._lock.locked())

    @property
    def busy(self) -> bool:
        """A page arriving now would wait: a session is being built or another page is waiting."""
        return self.pages > 0

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Wait for this page's turn; the session is built inside the ``async with``."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            # A lock belongs to one event loop. A server process runs one; a
            # process that serves again on a new loop (tests do) gets a new lock.
            self._lock, self._loop = asyncio.Lock(), loop
        lock = self._lock
        self.waiting += 1
        try:
            await lock.acquire()
        finally:
            self.waiting -= 1
        try:
            # asyncio.sleep(0) gives exactly one turn of the loop: the callbacks
            # that are ready run, and sockets with data are polled, before the build.
            for _ in range(self.yields):
                await asyncio.sleep(0)
            self.building += 1
            try:
                yield
            finally:
                self.building -= 1
        finally:
            lock.release()


#: The one gate of this process (each ``--num-procs`` process and each backend has its own).
GATE = PageGate()


#: What a learner sees, after the notice, when a page that was already started fails.
PAGE_FAILED_HTML = (
    '<p role="alert" style="font: 16px/1.5 system-ui, sans-serif; margin: 16px">'
    "This page could not be built. Reload it to try again.</p>"
)


def _gated(handler: type, notice: bool) -> type:
    """``handler`` (a Bokeh session handler) with its session builds taken in turn through
    :data:`GATE`. ``notice``: the handler serves HTML pages, so a page that has to
    wait for its turn sends the loading notice first (a script-tag embed has no page
    of its own to show it in)."""

    class Gated(handler):
        _started = False

        async def get_session(self):
            if notice and GATE.busy:
                # Its turn may be a minute away: show the notice now, not a blank page.
                self.set_header("Content-Type", "text/html")
                # Behind nginx: pass each part on as it comes. Buffered, and
                # compressed as browsers ask, the notice would wait for the page.
                self.set_header("X-Accel-Buffering", "no")
                self.write(early_notice_html())
                self._started = True
                await self.flush()
            async with GATE.turn():
                return await super().get_session()

        def write(self, chunk) -> None:
            if self._started and isinstance(chunk, str):
                chunk = chunk.replace(LOADING_HTML, "", 1)  # the notice is already shown
            super().write(chunk)

        async def get(self, *args, **kwargs) -> None:
            try:
                await super().get(*args, **kwargs)
            except Exception:
                if not self._started:
                    raise
                # The status line is gone: say it in the page, under the notice.
                log.exception("building the page %s failed", self.request.path)
                super().write(PAGE_FAILED_HTML)

    Gated.__name__ = Gated.__qualname__ = f"Gated{handler.__name__}"
    Gated.__doc__ = f"{handler.__name__} whose session builds take turns at the page gate."
    return Gated


def install_page_gate() -> None:
    """Route page GETs and script-tag embeds of every app through :data:`GATE`.

    Call before the server starts. Bokeh builds each application's routes from
    a module-level list (:func:`app.server.panel_internals.per_app_route_patterns`),
    which Panel itself fills with its handlers at import; the gated handlers
    replace Panel's there. Websockets are not gated: a websocket that builds its own
    session (its page's session was reaped, or it reached another process)
    must not wait behind new pages.
    """
    from .panel_internals import per_app_route_patterns

    per_app_patterns = per_app_route_patterns()
    for i, (pattern, handler) in enumerate(per_app_patterns):
        if pattern in ("/?", "/autoload.js") and not handler.__name__.startswith("Gated"):
            per_app_patterns[i] = (pattern, _gated(handler, notice=pattern == "/?"))
