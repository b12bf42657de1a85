"""Each Panel or Bokeh internal the product relies on still does what it is used for.

Every function of :mod:`app.server.panel_internals` (and of the benchmarks'
:mod:`bench.panel_internals`) has a test here against the installed Panel and
Bokeh, so an upgrade that moves one fails by name; and no module outside them
reaches a private name of either library.
"""

from __future__ import annotations

import ast
import asyncio
import concurrent.futures
import time
from pathlib import Path

import panel as pn
import pytest
from bokeh.document import Document
from panel.io.state import set_curdoc

from app.server import panel_internals as internals
from bench import panel_internals as bench_internals

ROOT = Path(__file__).resolve().parents[2]
OWN_CODE = ("app", "widgets", "lessons", "traces", "bench", "tools")
FENCES = (ROOT / "app" / "server" / "panel_internals.py", ROOT / "bench" / "panel_internals.py")
#: Our own private names that code outside a class may reach (not Panel's or Bokeh's).
OWN_PRIVATE_OK = {"_SubParsersAction", "_exit"}


def private_uses(source: str) -> list[str]:
    """Private names reached in ``source``: imported from Panel/Bokeh, or read off an object.

    ``self._x``, ``cls._x`` and ``super()._x`` are a class's own; everything else
    that starts with one underscore (not a dunder) is someone else's private.
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in (
            "panel",
            "bokeh",
        ):
            found += [f"import {a.name}" for a in node.names if a.name.startswith("_")]
            if node.module == "bokeh.server.urls":
                found += [f"import {a.name}" for a in node.names]
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            if node.attr.startswith("__") or node.attr in OWN_PRIVATE_OK:
                continue
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue
            if isinstance(owner, ast.Call) and getattr(owner.func, "id", None) == "super":
                continue
            found.append(ast.unparse(node))
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", None) == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and str(node.args[1].value).startswith("_")
        ):
            found.append(ast.unparse(node))
    return found


def test_no_module_outside_the_fences_reaches_a_private_name() -> None:
    offenders = {}
    for package in OWN_CODE:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path in FENCES:
                continue
            uses = private_uses(path.read_text(encoding="utf-8"))
            if uses:
                offenders[str(path.relative_to(ROOT))] = uses
    assert not offenders, offenders


def test_the_private_name_scan_can_fail() -> None:
    sample = (
        "from panel.io.resources import _env\n"
        "from bokeh.server.urls import per_app_patterns\n"
        "x = session._last_unsubscribe_time\n"
        "y = getattr(ctx, '_session', None)\n"
        "z = self._mine + super()._handle_msg(1)\n"
    )
    assert private_uses(sample) == [
        "import _env",
        "import per_app_patterns",
        "session._last_unsubscribe_time",
        "getattr(ctx, '_session', None)",
    ]


def _render(doc: Document, obj) -> None:
    with set_curdoc(doc):
        pn.panel(obj).server_doc(doc)


def test_views_of_lists_a_documents_panel_objects_and_destroy_document_releases_them() -> None:
    doc = Document()
    column = pn.Column(pn.pane.Markdown("one"))
    _render(doc, column)
    assert column in bench_internals.views_of(doc)
    internals.destroy_document(doc)
    assert bench_internals.views_of(doc) == []
    assert column._models == {}  # Panel's own record of its Bokeh models, released


@pytest.fixture(scope="module")
def unstarted_server():
    server = pn.serve(
        {"one": lambda: pn.pane.Markdown("one")},
        port=0,
        address="127.0.0.1",
        show=False,
        start=False,
        verbose=False,
    )
    yield server
    server.stop()


@pytest.fixture
def served_session(unstarted_server):
    """A real Bokeh ``ServerSession`` of route ``/one``, made as a page's GET makes it."""
    from bokeh.util.token import generate_jwt_token, generate_session_id
    from tornado.httputil import HTTPHeaders, HTTPServerRequest, RequestStartLine

    context = bench_internals.tornado_application(unstarted_server).applications["/one"]
    session_id = generate_session_id()
    request = HTTPServerRequest(
        start_line=RequestStartLine("GET", "/one", "HTTP/1.1"),
        headers=HTTPHeaders({"Host": "localhost"}),
    )
    make = context.create_session_if_needed(session_id, request, generate_jwt_token(session_id))
    # On a thread of its own: a browser test earlier in the run may hold this thread's loop.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        session = pool.submit(asyncio.run, make).result()
    yield session
    internals.destroy_document(session.document)


def test_server_session_is_the_documents_bokeh_session(served_session) -> None:
    assert internals.server_session(served_session.document) is served_session
    assert internals.server_session(Document()) is None
    # What the hold relies on: a count of connections and a blockable expiry.
    assert served_session.connection_count == 0
    served_session.block_expiration()
    assert served_session.expiration_blocked
    served_session.unblock_expiration()
    assert not served_session.expiration_blocked


def test_last_unsubscribe_time_changes_when_a_connection_leaves(served_session) -> None:
    before = internals.last_unsubscribe_time(served_session)
    assert isinstance(before, float)

    class Connection:
        pass

    connection = Connection()
    served_session.subscribe(connection)
    assert served_session.connection_count == 1
    time.sleep(0.005)
    served_session.unsubscribe(connection)
    assert internals.last_unsubscribe_time(served_session) > before


def test_local_stylesheets_url() -> None:
    assert internals.local_stylesheets_url(None) == "static/extensions/panel/"
    assert internals.local_stylesheets_url("..") == "../static/extensions/panel/"


def test_point_stylesheets_at_moves_every_stylesheet_to_our_server() -> None:
    doc = Document()
    _render(doc, pn.Column(pn.pane.Markdown("text"), pn.widgets.Button(label="Go")))
    ours = "http://ours.test/static/extensions/panel/"
    internals.point_stylesheets_at(doc, ours)
    urls = [
        sheet.url
        for model in doc.models
        for sheet in getattr(model, "stylesheets", None) or ()
        if getattr(sheet, "url", None)
    ]
    assert urls, "a Markdown pane and a button have stylesheets to point"
    assert all(u.startswith(ours) for u in urls), [u for u in urls if not u.startswith(ours)]
    assert doc.template_variables["dist_url"] == ours
    internals.destroy_document(doc)


def test_anchor_resources_at_sets_the_sessions_path_and_stylesheets(served_session) -> None:
    doc = served_session.document
    with set_curdoc(doc):
        internals.anchor_resources_at(pn.state, "http://ours.test:5006")
        assert pn.state.rel_path == "http://ours.test:5006"
        assert pn.state.location is not None
    assert doc.template_variables["dist_url"] == "http://ours.test:5006/static/extensions/panel/"


def test_component_resources_handler_is_panels_route() -> None:
    import re

    from tornado.web import RequestHandler

    pattern, handler = internals.component_resources_handler()
    assert issubclass(handler, RequestHandler)
    match = re.fullmatch(pattern, "/components/widgets.queue_lab.component/QueueLab/x.js")
    assert match and match.group(1) == "widgets.queue_lab.component/QueueLab/x.js"


def test_tornado_application_lists_the_routes(unstarted_server) -> None:
    tornado = bench_internals.tornado_application(unstarted_server)
    assert "/one" in tornado.applications


def _page_of_one(server, template=None):
    """A new session of route ``/one`` (with ``template``) and the HTML page Panel serves for it."""
    from panel.io.resources import Resources
    from panel.io.session import generate_session

    tornado = bench_internals.tornado_application(server)
    session = generate_session(
        tornado.applications["/one"].application,
        payload={"arguments": {}, "headers": {"Host": "localhost"}, "cookies": {}},
    )
    if template is not None:
        session.document.template = template
    with set_curdoc(session.document):
        page = bench_internals.build_session_page(
            session, Resources.from_bokeh(tornado.resources())
        )
    return session, page


def test_build_session_page_renders_a_sessions_html(unstarted_server) -> None:
    session, page = _page_of_one(unstarted_server)
    assert page.lstrip().lower().startswith("<!doctype html>")
    assert session.token in page
    internals.destroy_document(session.document)


def test_page_template_environment_extends_panels_page(unstarted_server) -> None:
    """The served page template (made in that environment) renders Panel's page with ours."""
    from app.server.loading_page import LOADING_HTML, loading_template

    session, page = _page_of_one(unstarted_server, loading_template())
    assert 'name="viewport" content="width=device-width, initial-scale=1"' in page
    assert LOADING_HTML in page
    assert "<main>" in page and session.token in page
    internals.destroy_document(session.document)


def test_per_app_route_patterns_hold_the_page_and_autoload_handlers() -> None:
    import panel.io.server  # noqa: F401 - Panel puts its handlers in the list at import

    patterns = dict(internals.per_app_route_patterns())
    assert {"/?", "/autoload.js", "/ws"} <= set(patterns)
    # The gate wraps these handlers' session builds: the method it overrides is there.
    for route in ("/?", "/autoload.js"):
        assert hasattr(patterns[route], "get_session"), route
    assert internals.per_app_route_patterns() is internals.per_app_route_patterns()
