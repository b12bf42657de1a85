"""The few Panel and Bokeh internals overlap-lab relies on, each in one place, for a stated reason.

Nothing else in the product imports a private name of Panel or Bokeh or reads
a private attribute: it calls one of these functions (the benchmarks' own
are in ``bench/panel_internals.py``). Each is exercised by
``tests/app/test_panel_internals.py`` against the installed versions, so an
upgrade (``pyproject.toml`` pins Panel 1.9 and Bokeh 3.9) that moves one fails
a test that names it, not a page in a classroom.
"""

from __future__ import annotations

from typing import Any


def page_template_environment() -> Any:
    """Panel's Jinja environment, whose ``base.html`` a page template extends.

    Why: a template that extends Panel's page (its resources and the roots)
    with a viewport tag and a loading notice must be made in the environment
    that holds ``base.html``; Panel has no public accessor for it.
    """
    from panel.io.resources import _env

    return _env


def destroy_document(doc: Any) -> None:
    """Release everything Panel holds for a document built outside a served session.

    Why: warming up builds each route once into a bare ``Document``; Panel's
    own session teardown is the only complete release of its models, views
    and callbacks.
    """
    from panel.io.document import _cleanup_doc

    _cleanup_doc(doc, destroy=True)


def server_session(doc: Any) -> Any | None:
    """The Bokeh ``ServerSession`` serving ``doc``, or None outside a served session.

    Why: holding a new page's session until its websocket comes needs
    ``block_expiration`` and the connection count, which only the server
    session has; the document's session context keeps it privately.
    """
    return getattr(getattr(doc, "session_context", None), "_session", None)


def last_unsubscribe_time(session: Any) -> float:
    """When a connection last left ``session`` (Bokeh stamps it on every unsubscribe).

    Why: a page whose websocket came and went between two checks leaves no
    other trace; Bokeh has no public accessor.
    """
    return session._last_unsubscribe_time


def local_stylesheets_url(rel_path: str | None) -> str:
    """Where this server serves Panel's stylesheets, under the session's relative path."""
    from panel.io.resources import LOCAL_DIST

    return f"{rel_path}/{LOCAL_DIST}" if rel_path else LOCAL_DIST


def point_stylesheets_at(doc: Any, dist_url: str) -> None:
    """Make every stylesheet of ``doc``, now and of models made later, load from ``dist_url``.

    Why: only Panel's page render does this, and a session that Bokeh builds
    for a websocket (another backend, a reaped session) is never rendered as a
    page; without it the stylesheets point at a CDN that a classroom behind a
    firewall cannot reach. Models made later resolve the template variable.
    """
    from panel.io.resources import patch_model_css

    doc.template_variables["dist_url"] = dist_url
    for root in doc.roots:
        patch_model_css(root, dist_url=dist_url)


def anchor_resources_at(state: Any, origin: str) -> None:
    """Resolve the current session's resources against ``origin`` (a script-tag embed).

    Why: Panel derives a relative resource path for a script-tag session,
    which the embedding page would resolve against its own host. The session's
    location is created first, since creating it derives that path again.
    """
    _ = state.location
    state.rel_path = origin
    state.curdoc.template_variables["dist_url"] = f"{origin}/static/extensions/panel/"


def component_resources_handler() -> tuple[str, type]:
    """The URL pattern and Tornado handler with which Panel serves component bundles.

    Why: bundles must be readable from another origin (module scripts are
    fetched with CORS); the only way to add the header is to serve the same
    path with a subclass of Panel's handler.
    """
    from panel.io.resources import COMPONENT_PATH
    from panel.io.server import ComponentResourceHandler

    return f"/{COMPONENT_PATH}(.*)", ComponentResourceHandler


def per_app_route_patterns() -> list[tuple[str, type]]:
    """Bokeh's module-level list of each application's routes (page, autoload, websocket).

    Why: the page gate (:mod:`app.server.admission`) serves a page's GET through its
    own handler; Bokeh builds every application's routes from this list when
    the server starts, and offers no other way to change a route's handler.
    Replacing an entry here, before the server starts, is what does it.
    """
    from bokeh.server.urls import per_app_patterns

    return per_app_patterns
