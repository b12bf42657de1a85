"""A test-only endpoint that says how many sessions and session objects a server holds.

Installed only when the server starts with ``OVERLAP_LAB_TEST_HOOKS=1`` (the
browser tests and benchmarks set it; normal serving never does). ``GET
/_test/gate`` answers how many pages are in this process's page gate
(``app.server.admission``), as JSON ``{"pages": n}``; with ``?hold=SECONDS`` (at
most ``MAX_HOLD_S``) it first takes a turn at the gate and holds it that
long, as a slow session build would, so that a test can make a page wait.
``GET /_test/sessions`` runs a full garbage collection, then answers JSON:

- ``created`` / ``destroyed``: sessions this process has built and destroyed
  (through ``on_session_created`` / ``on_session_destroyed``);
- ``live``: sessions Bokeh's server still holds;
- ``objects``: live instances, after the collection, of every class defined in
  ``widgets``, ``app`` or ``lessons``, plus ``Document`` (Bokeh documents),
  ``Viewable`` (Panel objects) and ``Model`` (Bokeh models);
- ``pid``: the process that answered.

Each built and destroyed session is also logged (``test hook: session built``),
so a run with several processes can be counted from the log.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
from collections import Counter

import panel as pn
from tornado.web import RequestHandler

log = logging.getLogger("overlap-lab")
_counts = {"created": 0, "destroyed": 0}
_OWN_PACKAGES = ("widgets", "app", "lessons")


def _created(_context) -> None:
    _counts["created"] += 1
    log.info("test hook: session built (pid %d)", os.getpid())


def _destroyed(_context) -> None:
    _counts["destroyed"] += 1
    log.info("test hook: session destroyed (pid %d)", os.getpid())


def live_objects() -> dict[str, int]:
    """Instances of our own classes and of Bokeh/Panel base classes, after a full collection."""
    from bokeh.document import Document
    from bokeh.model import Model
    from panel.viewable import Viewable

    gc.collect()
    counts: Counter = Counter()
    for obj in gc.get_objects():
        kind = type(obj)
        module = kind.__dict__.get("__module__")
        if isinstance(module, str) and module.split(".", 1)[0] in _OWN_PACKAGES:
            counts[kind.__name__] += 1
        if isinstance(obj, Document):
            counts["Document"] += 1
        elif isinstance(obj, Viewable):
            counts["Viewable"] += 1
        elif isinstance(obj, Model):
            counts["Model"] += 1
    return dict(counts)


class SessionCounts(RequestHandler):
    """``GET /_test/sessions``: session and object counts of this process (JSON)."""

    def get(self) -> None:
        contexts = self.application.applications.values()
        self.set_header("Cache-Control", "no-store")
        self.write(
            {
                **_counts,
                "live": sum(len(ctx.sessions) for ctx in contexts),
                "objects": live_objects(),
                "pid": os.getpid(),
            }
        )


MAX_HOLD_S = 30.0


class GatePages(RequestHandler):
    """``GET /_test/gate[?hold=SECONDS]``: pages in this process's page gate (JSON), after
    holding a turn at the gate for ``hold`` seconds."""

    async def get(self) -> None:
        from .admission import GATE

        hold = self.get_argument("hold", None)
        if hold is not None:
            try:
                seconds = float(hold)
            except ValueError:
                seconds = -1.0
            if not 0 <= seconds <= MAX_HOLD_S:
                self.set_status(400)
                self.write({"error": f"hold is a number of seconds from 0 to {MAX_HOLD_S:g}"})
                return
            async with GATE.turn():
                await asyncio.sleep(seconds)
        self.set_header("Cache-Control", "no-store")
        self.write({"pages": GATE.pages, "pid": os.getpid()})


def install() -> list[tuple]:
    """Register the session callbacks; the URL patterns to serve."""
    pn.state.on_session_created(_created)
    pn.state.on_session_destroyed(_destroyed)
    return [(r"/_test/sessions", SessionCounts), (r"/_test/gate", GatePages)]
