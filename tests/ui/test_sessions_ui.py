"""No session outlives its learner: pages opened, used and closed in Chromium are collected.

Widget and lesson pages are files; a learner's edit opens a live session for that
widget (``app/server/live_socket.py``), and a class round's live page
(``/class/<widget>``) is a Bokeh session. Both must be gone once the page closes.

The server runs with the test-only ``/_test/sessions`` endpoint
(``OVERLAP_LAB_TEST_HOOKS=1``, see ``app/server/testhooks.py``), which counts the
sessions built and destroyed (``on_session_created`` / ``on_session_destroyed``)
and, after ``gc.collect()``, the live instances of every class of ours and of
Bokeh documents, Panel objects and Bokeh models. Sessions are reaped a second
three seconds after their page closes (``--unused-session-lifetime 3000``).
"""

from __future__ import annotations

import json
import re
import time
import urllib.request

import pytest
from pagekit import TIMEOUT, button, enter
from playwright.sync_api import expect

#: Each route and the field the learner edits there (None: a page without widgets).
PAGES = [
    ("/queue-lab", "Arrival rate", "3"),
    ("/bucket-timeline", "Layers per bucket", "2"),
    ("/lessons/overlapping-communication", "Layers per bucket", "4"),
    ("/lessons/dependency-schedule", "Arrival rate", "4"),
    ("/", None, None),
]
LIFETIME = ("--unused-session-lifetime", "3000", "--check-unused-sessions", "500")
HOOKS = {"OVERLAP_LAB_TEST_HOOKS": "1"}
REAP_TIMEOUT = 60.0
#: Objects that may outlive a session without being kept per session: Bokeh's module-level
#: "current document" and the context of a pending server timer hold the latest documents
#: (destroyed, their models gone), whatever the number of sessions.
BOUNDED = {"Document": 4, "Viewable": 10, "Model": 10}


@pytest.fixture(scope="module")
def hooked(ui):
    with ui.running_server(*LIFETIME, env=HOOKS, probe="/liveness") as server:
        yield server


def counts(server) -> dict:
    with urllib.request.urlopen(f"{server.url}/_test/sessions", timeout=60) as response:
        return json.load(response)


def use(context, server, ui, route: str, label: str | None, value: str | None) -> None:
    """Open ``route`` in its own tab, play, pause, step and edit, then close the tab."""
    page = context.new_page()
    if label is None:
        ui.open_widget(page, server.url + route, ready=None)
        expect(page.get_by_role("link").first).to_be_visible(timeout=TIMEOUT)
    else:
        ui.open_widget(page, server.url + route, ready=None)
        expect(button(page, "Reset").first).to_be_visible(timeout=TIMEOUT)
        button(page, "Play").first.click()
        expect(button(page, "Pause").first).to_be_visible(timeout=TIMEOUT)
        button(page, "Pause").first.click()
        expect(button(page, "Play").first).to_be_visible(timeout=TIMEOUT)
        button(page, "Step").first.click()
        enter(page, label, value)
        if ui.is_served_page(page):
            page.wait_for_function(
                "() => window.__olSessions.some(s => s.phase === 'live')", timeout=TIMEOUT
            )
        else:
            page.wait_for_function("() => Bokeh.documents.every(d => d.is_idle !== false)")
        # Close once the server has sent everything: Bokeh 3.9 on Tornado 6.6 logs an
        # unhandled AssertionError when a tab closes while a message is being written.
        time.sleep(1.0)
    page.close()


def reaped(server, ui, opened: int) -> dict:
    """Counts once every session built so far has been destroyed."""

    def done():
        now = counts(server)
        return now if now["live"] == 0 and now["destroyed"] == now["created"] >= opened else None

    return ui.wait_until(done, timeout=REAP_TIMEOUT, interval=0.5)


def test_closed_sessions_leave_no_objects_behind(hooked, browser, ui):
    before = reaped(hooked, ui, 0)
    own_before = {k: v for k, v in before["objects"].items() if k not in BOUNDED}
    opened = 0
    for _ in range(2):
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        for route, label, value in PAGES:
            use(context, hooked, ui, route, label, value)
        # A round's live page: a Bokeh session, used and closed like the others.
        use(context, hooked, ui, "/class/queue-lab?mode=open", "Arrival rate", "3")
        opened += 1  # noqa: SIM113 - counts sessions, not loop turns
        context.close()
        after = reaped(hooked, ui, before["created"] + opened)
        # Every session built (one per round page, or two if a page's first was reaped
        # before its websocket connected) was destroyed; pages that are files built none.
        assert after["created"] - before["created"] >= opened, after
        assert after["destroyed"] == after["created"], after

        def released() -> dict | None:
            now = counts(hooked)
            own = {k: v for k, v in now["objects"].items() if k not in BOUNDED}
            return now if own == own_before else None

        try:
            after = ui.wait_until(released, timeout=REAP_TIMEOUT, interval=0.5)
        except AssertionError:
            own = {k: v for k, v in counts(hooked)["objects"].items() if k not in BOUNDED}
            raise AssertionError(f"objects of ours outlived their pages: {own}") from None
        for kind, bound in BOUNDED.items():
            assert after["objects"].get(kind, 0) <= bound, (kind, after["objects"])
    hooked.log.assert_no_traceback()


@pytest.mark.parametrize("path", ["/_test/sessions", "/_test/gate"])
def test_the_test_endpoints_are_not_served_normally(server, path):
    try:
        urllib.request.urlopen(f"{server}{path}", timeout=10)
    except urllib.error.HTTPError as exc:
        assert exc.code == 404
    else:
        pytest.fail(f"{path} answered without OVERLAP_LAB_TEST_HOOKS=1")


def test_liveness_answers(server):
    start = time.monotonic()
    with urllib.request.urlopen(f"{server}/liveness", timeout=10) as response:
        assert response.status == 200
        assert json.load(response) == {"/liveness": True}
    assert time.monotonic() - start < 10


def _late_page(browser, server, ui) -> list[str]:
    """Open the queue lab with its scripts held back 1.5 s, step it; the URLs it requested."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))

    def late(route):
        time.sleep(1.5)
        route.continue_()

    page.route("**/static/js/bokeh.min.js*", late)
    ui.open_widget(page, f"{server.url}/class/queue-lab?mode=open")
    button(page, "Step").click()
    expect(page.get_by_role("status", name="Elapsed time")).to_have_text(
        re.compile(r"^0\.50 s"), timeout=TIMEOUT
    )
    context.close()
    return requests


SHORT = ("--unused-session-lifetime", "300", "--check-unused-sessions", "100")


def test_a_page_waited_for_is_built_once(browser, ui):
    """A session whose websocket is slower than the lifetime is kept for it, not built twice.

    What a class arriving at once does: the server builds every page before it
    reads the first websocket.
    """
    with ui.running_server(*SHORT, env=HOOKS, probe="/liveness") as server:
        before = reaped(server, ui, 0)
        ui.assert_only_local(_late_page(browser, server, ui), server.url)
        after = reaped(server, ui, before["created"] + 1)
        assert after["created"] - before["created"] == 1, after
        server.log.assert_no_traceback()


def test_a_page_whose_session_was_reaped_before_its_websocket_still_works(browser, ui):
    """Bokeh rebuilds such a session from its token; it must load nothing from elsewhere.

    The page's scripts are held back longer than the server keeps an unconnected
    session (``--connect-grace 200``), so the websocket finds it gone (what a
    websocket reaching another backend does).
    """
    with ui.running_server(*SHORT, "--connect-grace", "200", env=HOOKS, probe="/liveness") as (
        server
    ):
        before = reaped(server, ui, 0)
        ui.assert_only_local(_late_page(browser, server, ui), server.url)
        after = reaped(server, ui, before["created"] + 2)
        # The page's GET built one session and its websocket a second one.
        assert after["created"] - before["created"] == 2, after
        server.log.assert_no_traceback()
