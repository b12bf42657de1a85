"""What ``overlap-lab serve`` hands Bokeh's server, checked without a browser."""

from __future__ import annotations

import panel as pn
import pytest
from bokeh.core.validation.check import check_integrity
from bokeh.document import Document
from panel.io.state import set_curdoc

from app.cli import build_parser
from app.server.loading_page import LOADING_HTML
from app.server.panel_internals import destroy_document
from app.server.routes import build_routes
from app.server.serve_options import (
    CHECK_UNUSED_SESSIONS_MS,
    UNUSED_SESSION_LIFETIME_MS,
    ServeOptions,
)
from app.server.serving import TEST_HOOKS_ENV, server_options
from bench.panel_internals import build_session_page, tornado_application


@pytest.fixture(scope="module")
def routes():
    pn.extension(inline=False)
    return build_routes()


def _tornado(routes, **options):
    """The Tornado application of an unstarted server of ``routes`` with these options."""
    base = {"port": 0, "address": "127.0.0.1"}
    server = pn.serve(
        routes, show=False, start=False, verbose=False, **server_options(**base, **options)
    )
    return tornado_application(server)


def test_session_lifetimes_reach_the_server(routes):
    tornado = _tornado(routes, unused_session_lifetime=1234, check_unused_sessions=567)
    assert tornado._unused_session_lifetime_milliseconds == 1234
    assert tornado._check_unused_sessions_milliseconds == 567


def test_default_lifetimes_are_ours_not_bokehs(routes):
    tornado = _tornado(routes)
    assert tornado._unused_session_lifetime_milliseconds == UNUSED_SESSION_LIFETIME_MS
    assert tornado._check_unused_sessions_milliseconds == CHECK_UNUSED_SESSIONS_MS
    # Bokeh's own default check interval is 17 s; ours must really arrive.
    assert CHECK_UNUSED_SESSIONS_MS != 17_000


def test_cli_options_map_to_server_options():
    args = build_parser().parse_args(
        [
            "serve",
            "--prefix",
            "/widgets/",
            "--trusted-proxy",
            "127.0.0.1",
            "--unused-session-lifetime",
            "3000",
            "--check-unused-sessions",
            "1000",
            "--connect-grace",
            "2000",
        ]
    )
    assert args.connect_grace == 2000
    options = server_options(ServeOptions.from_args(args))
    assert options["prefix"] == "/widgets"
    assert options["use_xheaders"] is False  # believed from the trusted proxy only
    assert options["unused_session_lifetime_milliseconds"] == 3000
    assert options["check_unused_sessions_milliseconds"] == 1000
    assert options["liveness"] is True


def test_prefix_and_liveness_are_routed(routes):
    tornado = _tornado(routes, prefix="widgets")
    patterns = {rule.matcher.regex.pattern for rule in tornado.wildcard_router.rules}
    assert any(p.startswith("/widgets/liveness") for p in patterns), patterns
    assert any(p.startswith("/widgets/queue-lab") for p in patterns), patterns


def _unclassed(options: dict) -> list[str]:
    """The extra patterns besides the class's own (``/class/...``, tested in tests/classroom)."""
    return [p[0] for p in options["extra_patterns"] if not p[0].startswith("/class")]


def test_test_hooks_are_off_unless_asked(monkeypatch):
    monkeypatch.delenv(TEST_HOOKS_ENV, raising=False)
    options = server_options(port=5006, address="localhost")
    # The index, the widgets' bundles (readable from other origins: script-tag embeds), the
    # scripts served pages import and their live sockets.
    served = [r"/assets/([\w.-]{1,80}\.js)", r"/live/([\w-]{1,40})"]
    assert _unclassed(options) == ["/?", "/components/(.*)", *served]
    monkeypatch.setenv(TEST_HOOKS_ENV, "1")
    options = server_options(port=5006, address="localhost")
    assert _unclassed(options) == [
        "/?",
        "/components/(.*)",
        *served,
        "/_test/sessions",
        "/_test/gate",
    ]


def test_every_route_builds_a_valid_document(routes):
    """Serving skips Bokeh's per-session validation, so every route is validated here."""
    for path, route in routes.items():
        doc = Document()
        with set_curdoc(doc):
            pn.panel(route()).server_doc(doc)
        issues = check_integrity(list(doc.models))
        destroy_document(doc)
        assert not issues.error, f"{path}: {issues.error}"


def test_the_page_says_it_is_loading_until_the_document_renders(routes):
    """The HTML a route serves shows the notice before any script runs; the page removes it."""
    from panel.io.resources import Resources
    from panel.io.session import generate_session

    tornado = _tornado(routes)
    session = generate_session(tornado.applications["/queue-lab"].application)
    doc = session.document
    with set_curdoc(doc):
        page = build_session_page(session, Resources.from_bokeh(tornado.resources()))
    body = page[page.index("<body") :]
    assert body.index(LOADING_HTML) < body.index("data-root-id")
    assert 'role="status"' in LOADING_HTML and "Loading…" in LOADING_HTML
    removers = [cb.code for cb in doc.callbacks._js_event_callbacks.get("document_ready", [])]
    assert any("ol-loading" in code and "remove()" in code for code in removers)
    destroy_document(doc)
