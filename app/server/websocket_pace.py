"""Each page's websocket messages are paced, so a hand-made flood waits its turn.

A page sends a message per action or edit (a few a second at most, and some
twenty patches as it loads), but anyone can write Bokeh messages by hand: 5,000
edits sent in 5 s took a process 107 s to work through, every other learner on
it waiting behind them. Tornado reads a websocket's next frame only once the
handler has finished with the last one, so a connection is paced by waiting
before its next frame is handled: the frames then stay in the sender's socket,
not in the server's memory, and the other connections are served meanwhile.

The pace is a bucket of frames per connection (:class:`MessagePace`): it holds
``BURST_FRAMES`` and refills at ``FRAMES_PER_SECOND``; a frame that finds it
empty waits for the next one. A Bokeh message is three frames or more, so a
page may send some 100 messages at once (it sends about 20 as it loads, then
one per edit or click) and 10 a second after that. Frames are counted, not
timed: a handler's time on the shared event loop also holds whatever other
work ran while it awaited, which would charge one page for another's.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

#: Frames a connection may send at once before it is paced (100 three-frame messages).
BURST_FRAMES = 300
#: Frames a second a connection may send, sustained (10 three-frame messages).
FRAMES_PER_SECOND = 30.0


class MessagePace:
    """One connection's bucket of frames: how long its next frame waits."""

    def __init__(
        self,
        rate: float = FRAMES_PER_SECOND,
        burst: float = BURST_FRAMES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self.tokens = float(burst)
        self.updated = clock()

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now

    def take(self) -> float:
        """Take one frame out of the bucket; return how long it waits (0 while not empty)."""
        self._refill()
        self.tokens -= 1
        return -self.tokens / self.rate if self.tokens < 0 else 0.0


def paced(handler: type) -> type:
    """``handler`` (Bokeh's websocket handler) with each connection's frames paced."""

    class Paced(handler):
        _pace: MessagePace | None = None

        async def on_message(self, fragment: str | bytes) -> None:
            if self._pace is None:
                self._pace = MessagePace()
            wait = self._pace.take()
            if wait:
                await asyncio.sleep(wait)
            await super().on_message(fragment)

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
