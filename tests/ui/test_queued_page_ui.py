"""A page that waits for its turn shows "Loading…" at once, then works like any other.

While a class arrives, a page's session waits for the sessions asked for
before it (``app/admission.py``). Its first bytes, the document's head and the
loading notice, are sent before it waits; the rest of the page follows once it
is built. These tests make a page wait behind three lesson pages fetched over
plain HTTP, then check in Chromium that nothing of the split shows.
"""

from __future__ import annotations

import threading
import urllib.request

from pagekit import TIMEOUT, button
from playwright.sync_api import expect

#: A lesson page: the costliest session to build, so the queue lasts a while.
AHEAD = "/lessons/dependency-schedule"
PAGES_AHEAD = 3


def _fetch_ahead(base: str) -> list[threading.Thread]:
    def fetch() -> None:
        with urllib.request.urlopen(base + AHEAD, timeout=120) as response:
            response.read()

    threads = [threading.Thread(target=fetch, daemon=True) for _ in range(PAGES_AHEAD)]
    for thread in threads:
        thread.start()
    return threads


def test_a_queued_page_shows_the_notice_first_then_the_widget(server, page, ui):
    threads = _fetch_ahead(server)
    with ui.no_console_errors(page) as errors:
        response = page.goto(server + "/bucket-timeline")
        body = response.text()
        # It waited: its notice came in a head of its own, ahead of the page's.
        assert body.startswith("<!DOCTYPE html>")
        assert body.count("<!DOCTYPE html>") == 2
        assert body.count('id="ol-loading"') == 1
        assert body.index('id="ol-loading"') < body.index("<title>")
        ui.wait_rendered(page)
        expect(button(page, "Reset")).to_be_visible(timeout=TIMEOUT)
        assert page.locator("#ol-loading").count() == 0
        assert page.title() == "Bucket timeline · overlap-lab"
        assert page.evaluate("document.documentElement.lang") == "en"
        assert page.evaluate("document.querySelectorAll('main').length") == 1
        assert page.evaluate("document.compatMode") == "CSS1Compat"
    assert errors == []
    ui.assert_no_serious_axe_violations(page)
    for thread in threads:
        thread.join(timeout=120)


def test_a_page_that_does_not_wait_comes_in_one_piece(server, page, ui):
    response = page.goto(server + "/queue-lab")
    body = response.text()
    assert body.count("<!DOCTYPE html>") == 1
    assert body.count('id="ol-loading"') == 1
    ui.wait_rendered(page)
    assert page.locator("#ol-loading").count() == 0
