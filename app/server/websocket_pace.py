"""Each page's websocket messages are paced to a share of its process, so a flood waits its turn.

A page sends a message per action or edit (a few a second at most, and some
twenty patches as it loads), but anyone can write Bokeh messages by hand: 5,000
edits sent in 5 s took a process 107 s to work through, every other learner on
it waiting behind them. Tornado reads a websocket's next frame only once the
handler has finished with the last one, so a connection is paced by waiting
before its next frame is handled: the frames then stay in the sender's socket,
not in the server's memory, and the other connections are served meanwhile.

The pace is a bucket of handling time per connection (:class:`MessagePace`):
each frame costs the time its handling took, at least ``MIN_FRAME_SECONDS``; the
bucket holds ``BURST_SECONDS`` and refills at ``SHARE`` seconds a second. A page
never meets it; a flood settles at a quarter of one core, or
``SHARE / (3 * MIN_FRAME_SECONDS)``, about 40 three-frame messages a second, for
cheap ones.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

#: The share of its process's time one connection's messages may take, sustained.
SHARE = 0.25
#: The handling time a connection may spend at once before it is paced (seconds).
BURST_SECONDS = 1.0
#: The least a websocket frame counts for, however fast it was handled (seconds).
MIN_FRAME_SECONDS = 0.002


class MessagePace:
    """One connection's bucket of handling time: how long its next frame waits."""

    def __init__(
        self,
        share: float = SHARE,
        burst: float = BURST_SECONDS,
        min_cost: float = MIN_FRAME_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.share = share
        self.burst = burst
        self.min_cost = min_cost
        self.clock = clock
        self.tokens = burst
        self.updated = clock()

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.share)
        self.updated = now

    def delay(self) -> float:
        """Seconds the next frame waits: 0 while the bucket is not empty."""
        self._refill()
        return -self.tokens / self.share if self.tokens < 0 else 0.0

    def spent(self, seconds: float) -> None:
        """Take what handling a frame took (at least ``min_cost``) out of the bucket."""
        self._refill()
        self.tokens -= max(seconds, self.min_cost)


def paced(handler: type) -> type:
    """``handler`` (Bokeh's websocket handler) with each connection's frames paced."""

    class Paced(handler):
        _pace: MessagePace | None = None

        async def on_message(self, fragment: str | bytes) -> None:
            if self._pace is None:
                self._pace = MessagePace()
            wait = self._pace.delay()
            if wait:
                await asyncio.sleep(wait)
            start = time.perf_counter()
            try:
                await super().on_message(fragment)
            finally:
                self._pace.spent(time.perf_counter() - start)

    Paced.__name__ = Paced.__qualname__ = f"Paced{handler.__name__}"
    Paced.__doc__ = f"{handler.__name__} whose messages are paced (MessagePace)."
    return Paced


def install_websocket_pace() -> None:
    """Serve every app's websocket with a paced handler; call before the server starts.

    Bokeh builds each application's routes from a module-level list
    (:func:`app.server.panel_internals.per_app_route_patterns`), which Panel fills
    with its websocket handler at import; the paced handler replaces it there.
    """
    import panel.io.server  # noqa: F401 - Panel puts its handlers in the list at import

    from .panel_internals import per_app_route_patterns

    patterns = per_app_route_patterns()
    for i, (pattern, handler) in enumerate(patterns):
        if pattern == "/ws" and not handler.__name__.startswith("Paced"):
            patterns[i] = (pattern, paced(handler))
