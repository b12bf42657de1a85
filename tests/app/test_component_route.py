"""``/components/...`` serves the widgets' bundles and nothing else, and imports nothing."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from app.server.serving import served_component_paths
from bench.servers import app_command, running_servers

#: Importing Python's ``this`` module prints the Zen of Python: a module imported by a
#: request would leave this line in the server's output.
ZEN = "Beautiful is better than ugly."


def get(url: str) -> tuple[int, dict, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), b""


def test_the_served_paths_are_each_widgets_bundle() -> None:
    paths = served_component_paths()
    assert "widgets.trace_viewer.component/TraceView/_bundle_path/trace_viewer.bundle.js" in paths
    assert "widgets.queue_lab.component/QueueLab/_bundle_path/queue_lab.bundle.js" in paths
    assert all("/_bundle_path/" in p and p.endswith(".bundle.js") for p in paths)


@pytest.fixture(scope="module")
def server():
    with running_servers() as servers:
        yield servers.start("app", app_command, "/")


def test_every_bundle_is_served_to_any_origin(server) -> None:
    for path in served_component_paths():
        status, headers, body = get(f"{server.url}/components/{path}")
        assert status == 200, path
        assert headers.get("Access-Control-Allow-Origin") == "*"
        assert body.startswith(b"//") or b"export" in body[:5000] or len(body) > 1000


@pytest.mark.parametrize(
    "path",
    [
        "this/Zen/_bundle_path/zen.js",  # any installed module, imported by name
        "antigravity/X/__javascript__/x.js",
        "widgets.trace_viewer.component/TraceView/_bundle_css/trace_viewer.css",
        "widgets.trace_viewer.component/TraceView/_bundle_path/../component.py",
        "widgets.trace_viewer.component/TraceView/_bundle_path/%2e%2e/component.py",
        "panel.models.esm/ReactiveESM/__css__/x.css",
    ],
)
def test_any_other_path_is_not_found_and_imports_nothing(server, path) -> None:
    status, _, body = get(f"{server.url}/components/{path}")
    assert status == 404 and b"def " not in body
    assert ZEN not in server.log_text()
