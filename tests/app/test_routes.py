"""The app's request handling without a server: query filtering, origin, embed anchoring, CLI."""

from __future__ import annotations

from types import SimpleNamespace

import panel as pn
import pytest
from bokeh.document import Document

from app import cli
from app.server import routes
from app.server.serve_options import ServeOptions

State = type(pn.state)


@pytest.fixture
def session_args(monkeypatch):
    """Set what the page's query holds for this test."""
    holder: dict = {}
    monkeypatch.setattr(State, "session_args", property(lambda self: holder))
    return holder


@pytest.fixture
def headers(monkeypatch):
    """Set the request headers the session sees for this test (from a proxy at 10.0.0.2)."""
    holder: dict = {}
    request = SimpleNamespace(headers=holder, remote_ip="10.0.0.2", protocol="http")
    doc = SimpleNamespace(session_context=SimpleNamespace(request=request))
    monkeypatch.setattr(State, "curdoc", property(lambda self: doc))
    return holder


def test_query_drops_only_bokehs_own_keys(session_args):
    session_args.update(
        {
            "arrival": [b"4"],
            "bokeh-absolute-url": [b"http://x:1/queue-lab"],
            "bokeh-autoload-element": [b"p1"],
            "notbokeh-x": [b"1"],
        }
    )
    assert routes._query() == {"arrival": [b"4"], "notbokeh-x": [b"1"]}


def test_script_embed_url_is_the_last_absolute_url(session_args):
    assert routes._script_embed_url() is None
    session_args["bokeh-absolute-url"] = [b"http://a:1/x", b"http://b:2/y"]
    assert routes._script_embed_url() == b"http://b:2/y"


def test_server_origin_follows_host_and_a_trusted_proxys_forwarded_proto(headers):
    from app.server.trusted_proxy import use_trusted_proxies

    assert routes.server_origin() == "http://localhost:5006"
    headers["Host"] = "course.example.org:8443"
    assert routes.server_origin() == "http://course.example.org:8443"
    headers["X-Forwarded-Proto"] = "https"
    assert routes.server_origin() == "http://course.example.org:8443"  # no proxy trusted
    try:
        use_trusted_proxies(["10.0.0.0/24"])
        assert routes.server_origin() == "https://course.example.org:8443"
    finally:
        use_trusted_proxies([])


def test_server_origin_without_a_session_is_the_default_port(monkeypatch):
    monkeypatch.setattr(State, "curdoc", property(lambda self: None))
    assert routes.server_origin() == "http://localhost:5006"


def test_script_tag_embed_anchors_resources_at_the_widget_server(monkeypatch):
    doc = Document()
    monkeypatch.setattr(State, "curdoc", property(lambda self: doc))
    monkeypatch.setattr(State, "location", property(lambda self: None))
    monkeypatch.setattr(pn.state, "rel_path", None, raising=False)
    routes._serve_resources_from(b"http://127.0.0.1:7001/queue-lab/autoload.js?x=1")
    assert pn.state.rel_path == "http://127.0.0.1:7001"
    assert doc.template_variables["dist_url"] == "http://127.0.0.1:7001/static/extensions/panel/"


def test_a_relative_embed_url_changes_nothing(monkeypatch):
    doc = Document()
    monkeypatch.setattr(State, "curdoc", property(lambda self: doc))
    monkeypatch.setattr(pn.state, "rel_path", "unchanged", raising=False)
    routes._serve_resources_from("/queue-lab/autoload.js")
    assert pn.state.rel_path == "unchanged"
    assert "dist_url" not in doc.template_variables


def test_cli_parses_every_serve_option(monkeypatch):
    calls = []
    monkeypatch.setattr(cli, "serve", lambda *a, **kw: calls.append((a, kw)))
    cli.main(
        [
            "serve",
            "--port",
            "7000",
            "--address",
            "127.0.0.1",
            "--allow-websocket-origin",
            "course.example.org",
            "--allow-websocket-origin",
            "localhost:9000",
            "--num-procs",
            "0",
            "--prefix",
            "/widgets",
            "--trusted-proxy",
            "127.0.0.1",
            "--trusted-proxy",
            "10.0.0.0/24",
            "--unused-session-lifetime",
            "5000",
            "--check-unused-sessions",
            "1000",
            "--connect-grace",
            "7000",
            "--show",
        ]
    )
    (options,) = [a[0] for a, _ in calls]
    assert options.param.values() == {
        **options.param.values(),
        "port": 7000,
        "address": "127.0.0.1",
        "allow_websocket_origin": ["course.example.org", "localhost:9000"],
        "num_procs": 0,
        "prefix": "/widgets",
        "trusted_proxy": ["127.0.0.1", "10.0.0.0/24"],
        "unused_session_lifetime": 5000,
        "check_unused_sessions": 1000,
        "connect_grace": 7000,
        "show": True,
    }


def test_cli_defaults(monkeypatch):
    calls = []
    monkeypatch.setattr(cli, "serve", lambda *a, **kw: calls.append((a, kw)))
    cli.main(["serve"])
    (options,) = [a[0] for a, _ in calls]
    defaults = ServeOptions()
    assert {k: v for k, v in options.param.values().items() if k != "name"} == {
        k: v for k, v in defaults.param.values().items() if k != "name"
    }
    assert (options.port, options.address, options.num_procs) == (5006, "localhost", 1)
    assert options.unused_session_lifetime == 15_000 and options.connect_grace == 300_000
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args([])
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["serve", "--port", "x"])
    with pytest.raises(SystemExit, match="port"):
        cli.main(["serve", "--port", "70000"])  # out of bounds: said, not a traceback
