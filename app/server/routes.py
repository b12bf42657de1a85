"""What the server serves: one function per route, each building a fresh page per session.

A route reads what the request says (its query, the address the browser
reached this server at, whether a script tag embeds it) and hands it to the
page it builds (:mod:`app.pages`).
"""

from __future__ import annotations

from urllib.parse import urlsplit

import panel as pn

from app.pages.lesson_page import lesson_page
from app.pages.widget_page import widget_page
from lessons import Lesson
from lessons.course import course_lessons
from widgets.registry import WIDGETS, WidgetSpec

from .loading_page import show_loading
from .panel_internals import anchor_resources_at
from .serving import (
    built_for_websocket,
    hold_until_connected,
    serve_styles_locally,
    url_prefix,
)
from .trusted_proxy import request_scheme


def _query() -> dict:
    """The page's query arguments, less the ones script-tag embedding adds itself."""
    return {k: v for k, v in (pn.state.session_args or {}).items() if not k.startswith("bokeh-")}


def server_origin() -> str:
    """``http://host:port`` of this server as the browser reached it, with its ``--prefix``.

    Behind a proxy that terminates TLS, its ``X-Forwarded-Proto`` says https (believed
    from a ``--trusted-proxy`` only, :mod:`app.server.trusted_proxy`).
    """
    ctx = getattr(pn.state.curdoc, "session_context", None)
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None) or {}
    host = headers.get("Host") or "localhost:5006"
    proto = request_scheme(request) if request is not None else "http"
    return f"{proto}://{host}{url_prefix()}"


def _script_embed_url() -> bytes | str | None:
    """The server URL a script-tag embed was loaded from, or None on our own pages."""
    values = (pn.state.session_args or {}).get("bokeh-absolute-url")
    return values[-1] if values else None


def _serve_resources_from(absolute_url: bytes | str) -> None:
    """Make a script-tag embed load every resource from this server.

    Panel (1.9) works out a relative path for some resources of a script-tag
    session, which the embedding page would resolve against its own host and
    fail to load; anchoring the session's resource path at this server's origin
    keeps every resource ours.
    """
    url = absolute_url.decode() if isinstance(absolute_url, bytes) else absolute_url
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and parts.netloc:
        anchor_resources_at(pn.state, f"{parts.scheme}://{parts.netloc}{url_prefix()}")


def widget_route(spec: WidgetSpec) -> pn.viewable.Viewable:
    """One widget on its own page, preset from the URL query."""
    # In a script-tag embed the page URL is the course's own: never rewrite it.
    return widget_page(spec, _query(), server_origin(), own_page=_script_embed_url() is None)


def lesson_route(lesson: Lesson, lessons: list[Lesson]) -> pn.viewable.Viewable:
    """A lesson's page, its share links and navigation at this server's address."""
    return lesson_page(lesson, lessons, server_origin(), url_prefix())


def _session(build):
    """A route: the page attached to its session's document, with a loading notice.

    A script-tag embed's resources are anchored at this server first. The page
    is attached here rather than by Panel so that its title stays the page's
    own and so that a session built for a websocket gets its stylesheets
    pointed at this server (see :func:`app.server.serving.serve_styles_locally`).
    Outside a served session (warming up, tests) the page is returned as is.
    """

    def serve() -> pn.viewable.Viewable | None:
        doc = pn.state.curdoc
        if doc is None or doc.session_context is None:
            return build()
        show_loading(doc)
        embed_url = _script_embed_url()
        if embed_url is not None:
            _serve_resources_from(embed_url)
        view = pn.panel(build())
        title = doc.title if doc.title != "Bokeh Application" else "overlap-lab"
        view.server_doc(doc, title=title, location=True)
        if built_for_websocket(doc):
            serve_styles_locally(doc)
        else:
            hold_until_connected(doc)
        return None  # attached above: nothing left for Panel to add

    return serve


def build_routes() -> dict[str, object]:
    """Every route with a session: each widget and each lesson of the course.

    The index needs no session: it is a static page (:mod:`app.pages.static_pages`).
    """
    lessons = course_lessons()
    # Panel calls plain functions once per session; it does not call partials.
    routes: dict[str, object] = {}
    for spec in WIDGETS.values():
        routes[spec.name] = _session(lambda spec=spec: widget_route(spec))
    course = list(lessons.values())
    for name, lesson in lessons.items():
        routes[f"lessons/{name}"] = _session(lambda lesson=lesson: lesson_route(lesson, course))
    from app.classroom.questions import CLASS_WIDGETS
    from app.classroom.widget_page import class_widget_page

    for name in CLASS_WIDGETS:  # a class round's widget, in a learner's page
        spec = WIDGETS[name]
        routes[f"class/{name}"] = _session(lambda spec=spec: class_widget_page(spec, _query()))
    return routes
