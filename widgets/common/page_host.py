"""The page a widget's component is serving while it handles a message, when not a Bokeh one.

A served page made live in place (``app.server.live_socket``) holds its component
behind a websocket of its own, with no Bokeh document. What a component asks of
the page it serves (run a callback on the page's event loop, from any thread; an
id that names the page) is then answered by that socket, set here while it hands
the component a message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol


class PageHost(Protocol):
    """What a component may ask of its page: ``session_context.id`` and a next-tick callback."""

    session_context: Any

    def add_next_tick_callback(self, callback: Callable[[], None]) -> None: ...


_SERVING: ContextVar[PageHost | None] = ContextVar("serving_page", default=None)


@contextmanager
def serving_page(page: PageHost) -> Iterator[None]:
    """Within this block, ``current_page()`` is ``page``."""
    token = _SERVING.set(page)
    try:
        yield
    finally:
        _SERVING.reset(token)


def current_page() -> PageHost | None:
    """The live page being served now, or None."""
    return _SERVING.get()
