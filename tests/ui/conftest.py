"""Browser-test infrastructure shared by every widget.

The real ``overlap-lab serve`` runs once per session on a free port, and
headless Chromium (pytest-playwright's ``page`` / ``context`` / ``browser``
fixtures, launched with a fresh temporary profile) drives it. Helpers here
open a widget route and wait for its live connection, record every request
a page makes, count the websocket frames the browser sends, poll for a
condition, find the focused element through shadow roots and Tab to one, and run an axe
accessibility scan with the axe script bundled in ``axe_playwright_python``.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from bench.browser import CHROMIUM_ARGS, chromium_path
from bench.processes import STOP_GRACE, free_port, stop_process, wait_until_ok

UI_DIR = Path(__file__).resolve().parent
REPO = UI_DIR.parents[1]
STARTUP_TIMEOUT = 60.0


# --- marking -----------------------------------------------------------------


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test under tests/ui with ``ui`` (hooks here see the whole session)."""
    for item in items:
        path = Path(str(item.path)).resolve()
        if path == UI_DIR or UI_DIR in path.parents:
            item.add_marker(pytest.mark.ui)


# --- the served app ----------------------------------------------------------


def serve_command(port: int) -> list[str]:
    """The real CLI: ``python -m app.cli`` when it runs as a module, else the console script."""
    cli = REPO / "app" / "cli.py"
    if 'if __name__ == "__main__"' in cli.read_text(encoding="utf-8"):
        return [sys.executable, "-m", "app.cli", "serve", "--port", str(port)]
    script = Path(sys.executable).with_name("overlap-lab")
    if not script.exists():
        found = shutil.which("overlap-lab")
        if found is None:
            pytest.fail("the overlap-lab command is not installed (pip install -e '.[test]')")
        script = Path(found)
    return [str(script), "serve", "--port", str(port)]


@dataclass
class ServerLog:
    """What the server printed (stdout and stderr together)."""

    path: Path

    def text(self) -> str:
        return self.path.read_text(encoding="utf-8", errors="replace")

    def size(self) -> int:
        return self.path.stat().st_size

    def since(self, offset: int) -> str:
        with self.path.open("rb") as fh:
            fh.seek(offset)
            return fh.read().decode("utf-8", "replace")

    def assert_no_traceback(self, since: int = 0) -> None:
        """Unhandled errors must never reach the log."""
        text = self.since(since)
        assert "Traceback" not in text, f"the server logged an unhandled error:\n{text[-6000:]}"


@dataclass
class Server:
    url: str
    port: int
    process: subprocess.Popen
    log: ServerLog


def _wait_until_up(proc: subprocess.Popen, url: str, log: ServerLog) -> None:
    def exited(code: int) -> Exception:
        return pytest.fail.Exception(f"the server exited with {code} on startup:\n{log.text()}")

    if not wait_until_ok(url, proc, STARTUP_TIMEOUT, exited):
        pytest.fail(
            f"the server did not answer {url} within {STARTUP_TIMEOUT:.0f} s:\n{log.text()}"
        )


@contextlib.contextmanager
def running_server(
    *extra_args: str, env: dict[str, str] | None = None, probe: str = "/"
) -> Iterator[Server]:
    """The real app on a free port (with extra ``serve`` options and environment), stopped on exit.

    It is up once ``probe`` answers 200. Fails if the server logged an unhandled error while
    it ran.
    """
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="overlap-lab-ui-") as tmp:
        log = ServerLog(Path(tmp) / "server.log")
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        with log.path.open("wb") as out:
            proc = subprocess.Popen(
                [*serve_command(port), *extra_args],
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
            )
        base = f"http://localhost:{port}"
        try:
            _wait_until_up(proc, base + probe, log)
            yield Server(base, port, proc, log)
        finally:
            stop_process(proc, STOP_GRACE)
            final = log.text()
        assert "Traceback" not in final, (
            f"the server logged an unhandled error during the session:\n{final[-6000:]}"
        )


@pytest.fixture(scope="session")
def _server() -> Iterator[Server]:
    with running_server() as server:
        yield server


@pytest.fixture(scope="session")
def server(_server: Server) -> str:
    """Base URL of the real app, served once per session (``http://localhost:PORT``)."""
    return _server.url


@pytest.fixture(scope="session")
def server_log(_server: Server) -> ServerLog:
    """The server's captured output: ``.text()``, ``.since(offset)``, ``.assert_no_traceback()``."""
    return _server.log


def _assert_alive(server: Server) -> None:
    code = server.process.poll()
    if code is not None:
        pytest.fail(
            f"the server (pid {server.process.pid}) exited with {code} during the session"
            f"{' (killed by a signal)' if code < 0 else ''}:\n{server.log.text()[-4000:]}"
        )


@pytest.fixture(autouse=True)
def _server_healthy_during_test(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that used the server fails if the server died or logged a traceback meanwhile."""
    if "server" not in request.fixturenames and "server_log" not in request.fixturenames:
        yield
        return
    server: Server = request.getfixturevalue("_server")
    _assert_alive(server)
    start = server.log.size()
    yield
    time.sleep(0.2)  # let the server flush what the last action caused
    _assert_alive(server)
    server.log.assert_no_traceback(since=start)


# --- the browser -------------------------------------------------------------


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    return {**browser_type_launch_args, "executable_path": chromium_path(), "args": CHROMIUM_ARGS}


@pytest.fixture
def requests_log(page) -> list[str]:
    """Every URL the page requests from now on (attach before navigating)."""
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    return urls


def assert_only_local(urls: list[str], base_url: str) -> None:
    """Every request went to the server's own host:port (or is data:, blob:, about:)."""
    own = urlsplit(base_url)
    allowed_hosts = {f"localhost:{own.port}", f"127.0.0.1:{own.port}", own.netloc}
    foreign = []
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme in ("data", "blob", "about"):
            continue
        if parts.scheme in ("http", "https", "ws", "wss") and parts.netloc in allowed_hosts:
            continue
        foreign.append(url)
    assert not foreign, "requests left the local server:\n" + "\n".join(sorted(set(foreign)))


@dataclass
class _Socket:
    """The page's messages on one websocket, and the server's answers to them."""

    asked: set[str] = field(default_factory=set)
    answered: set[str] = field(default_factory=set)
    closed: bool = False

    @property
    def settled(self) -> bool:
        return self.closed or not self.asked - self.answered


@dataclass
class FrameCounter:
    """Websocket messages between the browser and the server since the last ``reset()``.

    A Bokeh message is several frames (a header, its metadata and content, then
    two per buffer), each its own event; only its header says it is a new
    message, so messages are counted by their headers, and the frames of a
    message that began before ``reset()`` are not counted again. Every message
    the page sends is answered (``OK`` after a patch) once the server has
    handled it, and that answer may come after the changes it caused:
    ``settled`` is true once, on every open websocket, every message the page
    sent has been answered.
    """

    sent: int = 0
    received: int = 0
    payloads: list[str] = field(default_factory=list)
    _sockets: list[_Socket] = field(default_factory=list)

    def reset(self) -> None:
        self.sent = 0
        self.received = 0
        self.payloads.clear()

    @property
    def settled(self) -> bool:
        return all(s.settled for s in self._sockets)

    def pending(self) -> str:
        """What keeps it from being settled, for a failure message."""
        return "; ".join(
            f"socket {k}: {len(s.asked - s.answered)} messages unanswered"
            for k, s in enumerate(self._sockets)
            if not s.settled
        )

    def watch(self, ws) -> None:
        """Count the messages of ``ws`` (a Playwright ``WebSocket``)."""
        socket = _Socket()
        self._sockets.append(socket)
        ws.on("framesent", lambda payload: self._on_sent(socket, payload))
        ws.on("framereceived", lambda payload: self._on_received(socket, payload))
        ws.on("close", lambda _ws: setattr(socket, "closed", True))

    def _on_sent(self, socket: _Socket, payload) -> None:
        header = _header(payload)
        if not header:
            return
        self.sent += 1
        self.payloads.append(str(payload)[:300])
        if header.get("msgid"):
            socket.asked.add(header["msgid"])

    def _on_received(self, socket: _Socket, payload) -> None:
        header = _header(payload)
        if not header:
            return
        self.received += 1
        self.payloads.append(f"received: {str(payload)[:300]}")
        if header.get("reqid"):
            socket.answered.add(header["reqid"])


def _header(payload) -> dict:
    """A message's header as a dict (``{}`` for a frame that starts none).

    A Bokeh message's header frame as it is; a served page's live-socket frame
    (``app.server.live_socket``) as one: ``{"id": n}`` sent, ``{"re": n}`` its answer.
    """
    if isinstance(payload, str) and payload.startswith('{"id":'):
        try:
            return {"msgtype": "LIVE", "msgid": str(json.loads(payload)["id"])}
        except (ValueError, KeyError, TypeError):
            return {}
    if isinstance(payload, str) and payload.startswith(('{"re":', '{"props":')):
        try:
            found = json.loads(payload).get("re")
        except ValueError:
            return {}
        return {"msgtype": "LIVE", "reqid": "" if found is None else str(found)}
    if not isinstance(payload, str) or '"msgtype"' not in payload or '"msgid"' not in payload:
        return {}
    try:
        header = json.loads(payload)
    except ValueError:
        return {}
    return header if isinstance(header, dict) and "msgtype" in header else {}


@pytest.fixture
def ws_frames(page) -> FrameCounter:
    """Counts frames on every websocket the page opens (attach before navigating)."""
    counter = FrameCounter()
    page.on("websocket", counter.watch)
    return counter


def wait_until(fn: Callable[[], object], timeout: float = 5.0, interval: float = 0.05):
    """Poll ``fn`` until it returns a truthy value (or stops raising AssertionError)."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while True:
        try:
            result = fn()
        except AssertionError as exc:
            last, result = exc, None
        if result:
            return result
        if time.monotonic() > deadline:
            if last is not None:
                raise last
            raise AssertionError(f"condition not met within {timeout} s: {fn}")
        time.sleep(interval)


def open_widget(page, url: str, ready: str = "Reset", timeout: float = 30_000) -> None:
    """Go to ``url`` and wait until the Bokeh document is live and rendered.

    ``ready`` names a button that must be visible (pass ``None`` for pages
    without one, such as the index).
    """
    page.goto(url)
    if ready is None and page.evaluate(STATIC_PAGE_JS) and not is_served_page(page):
        return  # a static page (the index): nothing to connect to
    wait_rendered(page, ready, timeout)


#: True on a page served without a Bokeh document (it loads no Bokeh script).
STATIC_PAGE_JS = "() => document.querySelector('script[src*=\"bokeh\"]') === null"


#: True on a widget or lesson page the server sent as a file, once its widgets are drawn.
SERVED_PAGE_JS = "() => document.documentElement.dataset.olServed === 'ready'"


def is_served_page(page) -> bool:
    """The page is one the server sent as a file first (``app.pages.first_page``)."""
    return bool(page.evaluate("() => document.getElementById('ol-live') !== null"))


def wait_rendered(page, ready: str | None = "Reset", timeout: float = 30_000) -> None:
    """Wait until the page is drawn: a served page's widgets mounted, or a Bokeh session's
    document live and rendered (see :func:`open_widget`)."""
    if is_served_page(page):
        page.wait_for_function(SERVED_PAGE_JS, timeout=timeout)
        if ready:
            page.get_by_role("button", name=ready, exact=True).first.wait_for(
                state="visible", timeout=timeout
            )
        return
    page.wait_for_function(
        "() => window.Bokeh !== undefined && Bokeh.documents.length > 0"
        " && Bokeh.index !== undefined && Object.keys(Bokeh.index).length > 0",
        timeout=timeout,
    )
    if ready:
        page.get_by_role("button", name=ready, exact=True).wait_for(
            state="visible", timeout=timeout
        )
    # The session is live once the websocket has opened and the document has
    # settled; Bokeh records that on the document.
    page.wait_for_function(
        "() => Bokeh.documents.every(d => d.is_idle === undefined || d.is_idle)",
        timeout=timeout,
    )


FOCUSED_JS = """
() => {
  let el = document.activeElement;
  while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
  if (!el) return null;
  const tag = el.tagName.toLowerCase();
  if (tag === 'body' || tag === 'html') return {tag: tag, type: null, name: '', role: null};
  const label = () => {
    if (el.getAttribute('aria-label')) return el.getAttribute('aria-label');
    const root = el.getRootNode();
    if (el.id && root.querySelector) {
      const l = root.querySelector(`label[for="${CSS.escape(el.id)}"]`);
      if (l) return l.textContent.trim();
    }
    if (el.labels && el.labels.length) return el.labels[0].textContent.trim();
    return (el.textContent || '').trim();
  };
  return {tag: tag, type: el.getAttribute('type'), name: label(),
          role: el.getAttribute('role')};
}
"""


def focused(page) -> dict | None:
    """The focused element, found through shadow roots: tag, type, role and accessible name."""
    return page.evaluate(FOCUSED_JS)


def tab_to(page, name: str, tag: str, backwards: bool = False, limit: int = 60) -> None:
    """Press Tab (or Shift+Tab) until the focused element is ``tag`` named ``name``."""
    key = "Shift+Tab" if backwards else "Tab"
    seen = []
    for _ in range(limit):
        page.keyboard.press(key)
        now = focused(page)
        seen.append(now)
        if now and now["tag"] == tag and now["name"] == name:
            return
    pytest.fail(f"{key} never reached {tag} {name!r}; focus went through {seen}")


SERIOUS = ("serious", "critical")


def axe_violations(page, impacts: tuple[str, ...] = SERIOUS) -> list[dict]:
    """Axe violations of the given impacts, run with the locally bundled axe script."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [v for v in results.response["violations"] if v.get("impact") in impacts]


def describe_violations(violations: list[dict]) -> str:
    """Rule ids, help text and target selectors, one block per rule."""
    lines = []
    for v in violations:
        lines.append(f"[{v.get('impact')}] {v['id']}: {v.get('help')} ({v.get('helpUrl')})")
        for node in v.get("nodes", []):
            lines.append(f"    target {node.get('target')}: {node.get('failureSummary', '')}")
            html = node.get("html", "")
            if html:
                lines.append(f"      {html[:200]}")
    return "\n".join(lines)


def assert_no_serious_axe_violations(page) -> None:
    violations = axe_violations(page)
    assert not violations, "accessibility violations:\n" + describe_violations(violations)


@pytest.fixture(autouse=True)
def _only_local_requests(request: pytest.FixtureRequest) -> Iterator[None]:
    """Any test with a ``page`` on the app fails if the page asked another host for anything."""
    if "page" not in request.fixturenames or "server" not in request.fixturenames:
        yield
        return
    page = request.getfixturevalue("page")
    server: str = request.getfixturevalue("server")
    urls: list[str] = []
    page.on("request", lambda r: urls.append(r.url))
    yield
    assert_only_local(urls, server)


# --- a course page on another origin -------------------------------------------


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep the test output clean
        pass


@dataclass
class Embedding:
    app: str  # the second app server, allowing the course origin
    app_port: int
    course: str  # the course site
    course_port: int
    root: Path  # the course site's files

    def write(self, name: str, body: str, title: str = "Course page") -> str:
        (self.root / name).write_text(
            f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{title}</title></head><body><main><h1>{title}</h1>{body}</main></body></html>",
            encoding="utf-8",
        )
        return f"{self.course}/{name}"


@pytest.fixture(scope="session")
def embedding() -> Iterator[Embedding]:
    """A second app server that allows a course origin, and that course site, both local."""
    course_port = free_port()
    with tempfile.TemporaryDirectory(prefix="overlap-lab-course-") as tmp:
        root = Path(tmp) / "site"
        root.mkdir()
        handler = functools.partial(_QuietHandler, directory=str(root))
        course_server = http.server.ThreadingHTTPServer(("127.0.0.1", course_port), handler)
        thread = threading.Thread(target=course_server.serve_forever, daemon=True)
        thread.start()
        try:
            with running_server("--allow-websocket-origin", f"localhost:{course_port}") as app:
                yield Embedding(
                    app.url, app.port, f"http://localhost:{course_port}", course_port, root
                )
        finally:
            course_server.shutdown()
            course_server.server_close()


#: This module, taken while it is imported: another folder's ``conftest`` may take the name
#: ``conftest`` in ``sys.modules`` later in a run.
_THIS = sys.modules[__name__]


@pytest.fixture(scope="session")
def ui():
    """These helpers as a namespace (``ui.open_widget(page, url)``), so tests need not import
    a module called ``conftest``)."""
    return _THIS


@contextlib.contextmanager
def no_console_errors(page) -> Iterator[list[str]]:
    """Collect console errors and uncaught page errors while the block runs."""
    errors: list[str] = []

    def on_console(msg) -> None:
        if msg.type == "error":
            errors.append(msg.text)

    def on_error(exc) -> None:
        errors.append(str(exc))

    page.on("console", on_console)
    page.on("pageerror", on_error)
    try:
        yield errors
    finally:
        page.remove_listener("console", on_console)
        page.remove_listener("pageerror", on_error)
