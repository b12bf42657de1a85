"""How ``overlap-lab serve`` runs many sessions: server options and process settings.

Everything here is the same for every learner, so it is done once per process.
Bokeh's server takes its session options under their full names
(``unused_session_lifetime_milliseconds``); :func:`server_options` is the one
place that spells them.
"""

from __future__ import annotations

import gc
import logging
import os
from collections.abc import Callable, Mapping

import panel as pn

from .serve_options import ServeOptions

log = logging.getLogger("overlap-lab")

#: Collector thresholds while serving (Python's default is 700, 10, 10).
GC_THRESHOLDS = (50_000, 20, 20)
#: Set to 1 only in tests: serves the ``/_test/`` endpoints (see :mod:`app.server.testhooks`).
TEST_HOOKS_ENV = "OVERLAP_LAB_TEST_HOOKS"


def configure_process() -> None:
    """Settings that make every session cheaper; call once, before serving.

    - Bokeh validates each new document (warnings only, about 10 % of a build);
      the test suite validates every route's document instead
      (``tests/test_serving.py``).
    - Panel adds a BrowserInfo model to every page, which the browser then
      patches seven times; nothing here reads it.
    - The garbage collector runs less often (see ``GC_THRESHOLDS``).
    - Sessions are built one at a time in arrival order, after the work
      already under way for the pages sent before (:mod:`app.server.admission`).
    - Each websocket's messages are paced, so a flood waits its turn
      (:mod:`app.server.websocket_pace`).
    """
    from bokeh.settings import settings

    from .admission import install_page_gate
    from .websocket_pace import install_websocket_pace

    settings.perform_document_validation.set_value(False)
    pn.config.browser_info = False
    # An open bucket timeline session holds some 21 000 objects the collector
    # tracks; with Python's default thresholds (700, 10, 10) it traverses the
    # sessions already open again and again while a class arrives (about 9 %
    # of a build with 40 open). Cyclic garbage of closed sessions is still
    # collected: Panel collects after destroying them.
    gc.set_threshold(*GC_THRESHOLDS)
    install_page_gate()
    install_websocket_pace()


def built_for_websocket(doc) -> bool:
    """True when Bokeh built this session for a connecting websocket, not for a page's GET."""
    request = getattr(doc.session_context, "request", None)
    return str(getattr(request, "path", "")).endswith("/ws")


def serve_styles_locally(doc) -> None:
    """Point a session's stylesheets at this server when its websocket built it.

    Bokeh builds a session again from its token when the page's websocket
    reaches a process that does not hold it (another backend, or the session
    was reaped before the websocket came). Only the page render points Panel's
    stylesheets at this server; without it they would load from a CDN, which
    a classroom behind a firewall cannot reach. Call after the page is attached.
    """
    if not built_for_websocket(doc):
        return  # built for the page's GET: the page render does this
    from panel.io.state import state

    from .panel_internals import local_stylesheets_url, point_stylesheets_at

    point_stylesheets_at(doc, local_stylesheets_url(state.rel_path))


#: The options this process serves with (``use_options``); the defaults until then.
_OPTIONS = ServeOptions()


def use_options(options: ServeOptions) -> None:
    """Record the options this process serves with (its prefix, its connect grace, the
    proxies whose forwarded headers it believes)."""
    from .trusted_proxy import use_trusted_proxies

    global _OPTIONS
    _OPTIONS = options
    use_trusted_proxies(options.trusted_proxy)


def hold_until_connected(doc) -> None:
    """Keep a page's new session from being reaped before the page's websocket connects.

    Bokeh counts a session's unused time from its creation. When a class
    arrives at once, the server builds every page before it reads the first
    websocket, so with a lifetime shorter than the burst it would reap most of
    them unconnected and build each again for its websocket. The session is
    held until its websocket comes, or for the connect grace at most (a page
    fetched by something that never opens the websocket); after that the
    lifetime applies as usual.
    """
    import time

    from .panel_internals import last_unsubscribe_time, server_session

    def hold() -> None:
        session = server_session(doc)
        if session is None or session.destroyed or session.connection_count:
            return
        session.block_expiration()
        deadline = time.monotonic() + _OPTIONS.connect_grace / 1000
        # Bokeh stamps this when a connection leaves: a page may come and go between checks.
        created = last_unsubscribe_time(session)

        def check() -> None:
            came = session.connection_count or last_unsubscribe_time(session) != created
            if came or session.destroyed or time.monotonic() > deadline:
                if session.expiration_blocked:
                    session.unblock_expiration()
                doc.remove_periodic_callback(callback)

        callback = doc.add_periodic_callback(check, 1000)

    doc.add_next_tick_callback(hold)


def url_prefix() -> str:
    """``/widgets`` when serving under ``--prefix /widgets``, else the empty string."""
    return _OPTIONS.url_prefix


def warm(routes: Mapping[str, Callable[[], object]]) -> None:
    """Build every route once, then freeze what survives out of the garbage collector's sight.

    The first session of a route pays for imports and caches; paying it at
    start-up keeps it off the first learner. ``gc.freeze()`` then moves the
    long-lived start-up objects (modules, classes, caches) to a permanent
    generation, so the collections that session builds trigger do not
    traverse them again each time.
    """
    from bokeh.document import Document
    from panel.io.state import set_curdoc

    from .panel_internals import destroy_document

    for route in routes.values():
        doc = Document()
        with set_curdoc(doc):
            pn.panel(route()).server_doc(doc)
        destroy_document(doc)
    gc.collect()
    gc.freeze()


def served_component_paths() -> frozenset[str]:
    """What pages ask Panel's component route for: each widget's bundle, and nothing else.

    ``<module>/<class>/_bundle_path/<bundle file>`` for every widget's view class.
    """
    from widgets.common.bundles import bundle_of
    from widgets.registry import WIDGETS

    paths = set()
    for spec in WIDGETS.values():
        view = spec.view_class()
        paths.add(f"{view.__module__}/{view.__name__}/_bundle_path/{bundle_of(view.entry).name}")
    return frozenset(paths)


def component_resources_route() -> tuple:
    """Panel's route for component resources, serving only the widgets' bundles, to any origin.

    A course page that embeds a widget with a script tag imports the widget's
    bundle as a module, and browsers fetch modules with CORS: without the
    header the embed stays empty. The bundles are public code, the same for
    everyone, so any origin may read them. Any other path is a 404 before
    Panel's handler reads it: that handler imports the module a path names
    (any installed module, with whatever its import does) before checking
    that the file is one of the component's resources. Listed before Panel's
    own route for the same path, so it is the one that answers.
    """
    from tornado.web import HTTPError

    from .panel_internals import component_resources_handler

    pattern, ComponentResourceHandler = component_resources_handler()
    served = served_component_paths()

    class CrossOriginComponentResources(ComponentResourceHandler):
        def set_default_headers(self) -> None:
            self.set_header("Access-Control-Allow-Origin", "*")

        def parse_url_path(self, path: str) -> str:
            if path not in served:
                raise HTTPError(404)
            return super().parse_url_path(path)

    return (pattern, CrossOriginComponentResources, {})


def server_options(options: ServeOptions | None = None, **overrides) -> dict:
    """Keyword arguments for ``pn.serve``, with Bokeh's session options under their full names.

    ``overrides`` are options by name, for callers that set a few (tests).
    """
    base = options.param.values() if options is not None else {}
    o = ServeOptions(**{**base, **overrides, "name": "serve"})
    port, address = o.port, o.address
    local = [f"localhost:{port}", f"127.0.0.1:{port}", f"{address}:{port}"]
    kwargs = {
        "port": port,
        "address": address,
        "websocket_origin": sorted(set(local + o.allow_websocket_origin)),
        "num_procs": o.num_procs,
        "unused_session_lifetime_milliseconds": o.unused_session_lifetime,
        "check_unused_sessions_milliseconds": o.check_unused_sessions,
        # /liveness answers 200 while the process serves; a balancer or monitor polls it.
        "liveness": True,
        # Forwarded headers are believed from --trusted-proxy peers only (trusted_proxy),
        # never from every peer as Tornado's xheaders would.
        "use_xheaders": False,
        "extra_patterns": [component_resources_route()],
    }
    if o.url_prefix:
        kwargs["prefix"] = o.url_prefix
    from app.pages.static_pages import IndexPage, NotFoundPage

    prefix_path = kwargs.get("prefix", "")
    # The index is static: listed before Bokeh's own page at "/", so it is the one served.
    kwargs["extra_patterns"].insert(0, (r"/?", IndexPage, {"prefix": prefix_path}))
    from app.classroom.routes import class_patterns
    from app.classroom.service import configure

    kwargs["extra_patterns"] += class_patterns(configure(o.redis, prefix_path))
    # Every widget and lesson page is sent as a file first; its widget goes live in place
    # at the first edit (app.pages.first_page, app.server.live_socket).
    from app.pages.first_page import asset_pattern
    from lessons.course import course_lessons

    from . import first_pages
    from .live_socket import live_socket_pattern

    first_pages.install(prefix_path, list(course_lessons().values()))
    kwargs["extra_patterns"] += [
        asset_pattern(),
        live_socket_pattern(prefix_path, kwargs["websocket_origin"], course_lessons),
    ]
    # Tornado's own setting: the page for any address no route answers.
    kwargs["default_handler_class"] = NotFoundPage
    kwargs["default_handler_args"] = {"prefix": prefix_path}
    if os.environ.get(TEST_HOOKS_ENV) == "1":
        from .testhooks import install

        kwargs["extra_patterns"] += install()
        log.warning("%s=1: serving the test-only /_test/ endpoints", TEST_HOOKS_ENV)
    return kwargs
