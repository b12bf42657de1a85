"""A page that waits for its turn shows "Loading…" at once, then works like any other.

Widget and lesson pages are files with no session (``app/pages/first_page.py``);
the pages that still build a Bokeh session as they load are a class round's live
page (``/class/<widget>``) and a script-tag embed. While a class arrives, such a
page's session waits for the sessions asked for before it
(``app/server/admission.py``). Its first bytes, the document's head and the
loading notice, are sent before it waits; the rest of the page follows once it
is built. These tests hold the gate for a while (the test-only
``/_test/gate?hold=``, as a slow build would) and queue three round pages
fetched over plain HTTP behind it, so that a page asked for next must wait;
then they check in Chromium that nothing of the split shows.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest
from pagekit import TIMEOUT, button
from playwright.sync_api import expect

#: A class round's live page (a session per learner), queued ahead.
AHEAD = "/class/ranks?mode=open"
#: The round's live pages the tests open (an unlocked round: every control works).
BUCKETS = "/class/bucket-timeline?mode=open"
QUEUE = "/class/queue-lab?mode=open"
PAGES_AHEAD = 3
#: How long the gate is held before the pages ahead are built (seconds).
HOLD_S = 3.0


@pytest.fixture(scope="module")
def server(ui):
    """A server with the test-only endpoints, which say how many pages its gate holds."""
    with ui.running_server(env={"OVERLAP_LAB_TEST_HOOKS": "1"}, probe="/liveness") as running:
        yield running.url


def _fetch_ahead(base: str) -> list[threading.Thread]:
    def fetch() -> None:
        with urllib.request.urlopen(base + AHEAD, timeout=120) as response:
            response.read()

    threads = [threading.Thread(target=fetch, daemon=True) for _ in range(PAGES_AHEAD)]
    for thread in threads:
        thread.start()
    return threads


def _pages_in_gate(base: str) -> int:
    with urllib.request.urlopen(base + "/_test/gate", timeout=10) as response:
        return json.load(response)["pages"]


def _hold_gate(base: str, seconds: float) -> threading.Thread:
    def hold() -> None:
        with urllib.request.urlopen(f"{base}/_test/gate?hold={seconds}", timeout=60) as response:
            response.read()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    return thread


def test_a_queued_page_shows_the_notice_first_then_the_widget(server, page, ui):
    holder = _hold_gate(server, HOLD_S)
    # Session builds take some 50 ms: without the hold, the pages ahead could be built
    # before the page is asked for, and it would not wait at all.
    ui.wait_until(lambda: _pages_in_gate(server) >= 1, timeout=30)
    threads = [holder, *_fetch_ahead(server)]
    with ui.no_console_errors(page) as errors:
        response = page.goto(server + BUCKETS)
        body = response.text()
        # It waited: its notice came in a head of its own, ahead of the page's.
        assert body.startswith("<!DOCTYPE html>")
        assert body.count("<!DOCTYPE html>") == 2
        assert body.count('id="ol-loading"') == 1
        assert body.index('id="ol-loading"') < body.index("<title>")
        ui.wait_rendered(page)
        expect(button(page, "Reset")).to_be_visible(timeout=TIMEOUT)
        assert page.locator("#ol-loading").count() == 0
        assert page.title() == "Bucket timeline · class round"
        assert page.evaluate("document.documentElement.lang") == "en"
        assert page.evaluate("document.querySelectorAll('main').length") == 1
        assert page.evaluate("document.compatMode") == "CSS1Compat"
    assert errors == []
    ui.assert_no_serious_axe_violations(page)
    for thread in threads:
        thread.join(timeout=120)


def test_a_page_that_does_not_wait_comes_in_one_piece(server, page, ui):
    response = page.goto(server + QUEUE)
    body = response.text()
    assert body.count("<!DOCTYPE html>") == 1
    assert body.count('id="ol-loading"') == 1
    ui.wait_rendered(page)
    assert page.locator("#ol-loading").count() == 0


@pytest.mark.parametrize("hold", ["abc", "-1", "31", "nan"])
def test_the_gate_hook_refuses_a_hold_it_cannot_keep(server, hold):
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"{server}/_test/gate?hold={hold}", timeout=10)
    assert refused.value.code == 400
    assert _pages_in_gate(server) == 0


def test_a_widget_page_never_waits_for_the_gate(server, page, ui):
    """Widget and lesson pages are files: they come at once even while the gate is held."""
    holder = _hold_gate(server, HOLD_S)
    ui.wait_until(lambda: _pages_in_gate(server) >= 1, timeout=30)
    for route in ("/bucket-timeline", "/lessons/dependency-schedule"):
        body = page.goto(server + route).text()
        assert 'id="ol-loading"' not in body
        ui.wait_rendered(page)
        assert _pages_in_gate(server) >= 1, "the gate was released before the page came"
    holder.join(timeout=60)
