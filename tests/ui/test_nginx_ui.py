"""Two ``overlap-lab serve`` backends behind nginx (``deploy/nginx.conf``), driven in Chromium.

The backends serve under ``--prefix /widgets`` with ``--trusted-proxy 127.0.0.1``, the way
deploy/README.md runs them behind a course site's path. Each learner is a
fresh browser context (its own cookies), so learners spread over both
backends while each one's page, scripts and websocket stay on one.
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
import urllib.request
from collections import defaultdict

import pytest
from balancer import running_nginx
from pagekit import TIMEOUT, button, enter, field, readout, value_of
from playwright.sync_api import expect

PREFIX = "/widgets"
LEARNERS = 3


def _counts(backend) -> dict:
    url = f"{backend.url}{PREFIX}/_test/sessions"
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.load(response)


@pytest.fixture(scope="module")
def cluster(ui):
    port = ui.free_port()
    options = (
        "--prefix",
        PREFIX,
        "--trusted-proxy",
        "127.0.0.1",
        "--allow-websocket-origin",
        f"localhost:{port}",
    )
    hooks = {"OVERLAP_LAB_TEST_HOOKS": "1"}
    probe = f"{PREFIX}/liveness"
    with (
        ui.running_server(*options, env=hooks, probe=probe) as one,
        ui.running_server(*options, env=hooks, probe=probe) as two,
        running_nginx([f"127.0.0.1:{one.port}", f"127.0.0.1:{two.port}"], port, PREFIX) as lb,
    ):
        yield lb, (one, two)


def test_learners_play_and_edit_through_nginx(cluster, browser, ui):
    lb, backends = cluster
    built_before = sum(_counts(b)["created"] for b in backends)
    url = f"{lb.url}{PREFIX}/queue-lab"
    for _ in range(LEARNERS):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        requests: list[str] = []
        page.on("request", lambda r, requests=requests: requests.append(r.url))
        ui.open_widget(page, url)

        button(page, "Play").click()
        expect(button(page, "Pause")).to_be_visible(timeout=TIMEOUT)
        ui.wait_until(lambda page=page: value_of(page, "Elapsed time") > 0.5, timeout=15)
        button(page, "Pause").click()
        expect(button(page, "Play")).to_be_visible(timeout=TIMEOUT)

        enter(page, "Arrival rate", "4")
        expect(readout(page, "Net rate")).to_have_text(
            re.compile(r"^\+1\.00 items/s"), timeout=TIMEOUT
        )
        # Links name the balancer's address and the prefix, not a backend's.
        expect(field(page, "Link to these settings")).to_have_value(
            f"{url}?arrival=4&service=3&initial=4", timeout=TIMEOUT
        )
        ui.assert_only_local(requests, lb.url)
        context.close()

    def sockets() -> list[dict]:  # nginx logs a websocket when it closes
        return [e for e in lb.access_log() if e["path"].startswith(f"{PREFIX}/live/queue-lab")]

    ui.wait_until(lambda: len(sockets()) == LEARNERS, timeout=15)
    assert {e["status"] for e in sockets()} == {"101"}
    by_route = defaultdict(set)
    for entry in lb.access_log():
        # "-": answered from nginx's own cache (the scripts every page imports).
        if entry["path"].startswith(f"{PREFIX}/") and entry["upstream"] != "-":
            by_route[entry["route"]].add(entry["upstream"])
    # The scripts every page imports came from nginx's cache after the first learner's.
    assets = [e for e in lb.access_log() if e["path"].startswith(f"{PREFIX}/assets/")]
    assert any(e["upstream"] == "-" for e in assets), assets
    # Every learner's page, scripts and live session went to one backend...
    assert all(len(upstreams) == 1 for upstreams in by_route.values()), by_route
    # ...and no Bokeh session was built: the page was a file, its session the live socket.
    built = sum(_counts(b)["created"] for b in backends) - built_before
    assert built == 0, built
    assert not lb.error_log().count("[error]"), lb.error_log()


def test_new_learners_spread_over_both_backends(cluster):
    lb, backends = cluster
    seen = set()
    for _ in range(16):  # no cookie: each request is a new learner
        with urllib.request.urlopen(f"{lb.url}{PREFIX}/liveness", timeout=10) as response:
            assert response.status == 200
            assert "ol_route=" in response.headers.get("Set-Cookie", "")
    for entry in lb.access_log():
        if entry["path"] == f"{PREFIX}/liveness":
            seen.add(entry["upstream"])
    assert seen == {f"127.0.0.1:{b.port}" for b in backends}, seen


def test_index_and_lesson_links_work_under_the_prefix(cluster, page, ui):
    lb, _ = cluster
    ui.open_widget(page, f"{lb.url}{PREFIX}", ready=None)  # redirected to the index
    assert page.url == f"{lb.url}{PREFIX}/"
    link = page.get_by_role("link", name="Fluid queue lab", exact=True)
    expect(link).to_be_visible(timeout=TIMEOUT)
    link.click()
    expect(button(page, "Reset")).to_be_visible(timeout=30_000)
    assert page.url.startswith(f"{lb.url}{PREFIX}/queue-lab")


def test_a_queued_page_shows_its_notice_through_nginx_at_once(cluster):
    """nginx passes a waiting page's first bytes on at once, compressed as browsers ask."""
    import zlib
    from urllib.parse import urlsplit

    from app.server.loading_page import early_notice_html

    lb, _ = cluster
    # One route cookie for every request below: they all reach the same backend.
    headers = {"Cookie": "ol_route=queue-test", "Accept-Encoding": "gzip"}
    finished: list[float] = []

    def fetch() -> None:
        request = urllib.request.Request(f"{lb.url}{PREFIX}/class/ranks?mode=open", headers=headers)
        with urllib.request.urlopen(request, timeout=120) as response:
            response.read()
        finished.append(time.monotonic())

    # Sessions are cheap (some 30 ms each): enough pages ahead that this one must wait.
    ahead = [threading.Thread(target=fetch) for _ in range(40)]
    for thread in ahead:
        thread.start()
    time.sleep(0.1)
    conn = http.client.HTTPConnection(urlsplit(lb.url).netloc, timeout=120)
    conn.request("GET", f"{PREFIX}/class/bucket-timeline?mode=open", headers=headers)
    response = conn.getresponse()
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    first = b""
    while not first:  # the first bytes that decompress to something
        chunk = response.read1(65536)
        assert chunk, "the page ended before any of it could be read"
        first = inflate.decompress(chunk)
    first_at = time.monotonic()
    rest = inflate.decompress(response.read()) + inflate.flush()
    conn.close()
    for thread in ahead:
        thread.join(timeout=120)
    assert response.getheader("Content-Encoding") == "gzip"
    assert first.decode().startswith(early_notice_html()[:60])
    assert (first + rest).decode().rstrip().endswith("</html>")
    # The notice came while the pages ahead of it were still being built.
    assert first_at < sorted(finished)[-1]


def test_a_rounds_scripts_come_from_nginx_after_the_first_learner(cluster):
    """The scripts a class round's frame imports are the same for everyone: nginx asks a
    backend once and answers every later learner itself."""
    lb, _backends = cluster
    host = lb.url.removeprefix("http://")
    statuses, bodies = [], []
    for _ in range(3):
        connection = http.client.HTTPConnection(host, timeout=60)
        connection.request("GET", f"{PREFIX}/class/assets/static_source.js")
        response = connection.getresponse()
        bodies.append(response.read())
        statuses.append((response.status, response.getheader("X-Cache-Status")))
        connection.close()
    assert statuses[0] == (200, "MISS"), statuses
    assert statuses[1:] == [(200, "HIT"), (200, "HIT")], statuses
    assert bodies[0] and bodies[1] == bodies[0] == bodies[2]
