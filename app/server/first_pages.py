"""Bokeh's page route for a widget or a lesson answers with the page as a file.

Each widget and lesson is still a Bokeh application (a script-tag embed's
``autoload.js`` builds a session from it, and the class round's live page is
one), but a GET of its page is answered by :mod:`app.pages.first_page` with no
session built: the widget goes live in place at the first edit
(:mod:`app.server.live_socket`). Bokeh lists each application's routes before
any extra route, so the page route's own handler is the one place to answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tornado.web import RequestHandler

from lessons import Lesson

#: Each served page's path (with the prefix) and what writes it; filled by :func:`install`.
PAGES: dict[str, Callable[[RequestHandler], str]] = {}


def page_for(path: str) -> Callable[[RequestHandler], str] | None:
    """What writes the page at ``path`` (a trailing slash allowed), or None for a session's."""
    return PAGES.get(path.rstrip("/") or "/")


def _first(handler: type) -> type:
    """``handler`` (the application's page route) answering served pages as files."""

    class FirstPage(handler):
        async def get(self, *args, **kwargs) -> None:
            write = page_for(self.request.path)
            if write is None:
                await super().get(*args, **kwargs)
                return
            self.set_header("Content-Type", "text/html; charset=utf-8")
            # Not kept by a shared cache: its links hold the host it was reached at.
            self.set_header("Cache-Control", "private, max-age=60")
            self.finish(write(self))

    FirstPage.__name__ = FirstPage.__qualname__ = f"First{handler.__name__}"
    FirstPage.__doc__ = f"{handler.__name__} that answers served pages as files first."
    return FirstPage


def install(prefix: str, lessons: Sequence[Lesson]) -> None:
    """Serve every widget's and lesson's page as a file; call before the server starts."""
    from app.pages.first_page import first_pages

    from .panel_internals import per_app_route_patterns

    PAGES.clear()
    PAGES.update(first_pages(prefix, lessons))
    patterns = per_app_route_patterns()
    for i, (pattern, handler) in enumerate(patterns):
        if pattern == "/?" and not handler.__name__.startswith("First"):
            patterns[i] = (pattern, _first(handler))
