"""Headless Chromium for the benchmarks: launch it, open a live page, find things by name.

A benchmark gets a browser context from ``chromium()`` and opens a fresh page
per sample with ``open_page``, which returns the page and its websocket
``Traffic`` once the Bokeh document is live and idle.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from bench.traffic import Traffic

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Locator, Page

PAGE_TIMEOUT = 30_000  # ms, for a page to load and its document to go live
ACTION_TIMEOUT = 10_000  # ms, for one round trip to show in the page
SETTLE_MS = 500  # quiet time before a measurement starts
VIEWPORT = {"width": 1280, "height": 900}

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    """``$OVERLAP_LAB_CHROMIUM``, else Debian's Chromium, else None (Playwright's own)."""
    env = os.environ.get("OVERLAP_LAB_CHROMIUM")
    if env:
        return env
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


@contextmanager
def chromium() -> Iterator[BrowserContext]:
    """A context of a headless Chromium launched with CHROMIUM_ARGS; closed on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport=VIEWPORT)
            yield context
            context.close()
        finally:
            browser.close()


def open_page(
    context: BrowserContext, url: str, ready: Callable[[Page], Locator]
) -> tuple[Page, Traffic]:
    """A new page with its traffic recorded, loaded and live; ``ready(page)`` is a locator."""
    page = context.new_page()
    traffic = Traffic(page)
    page.goto(url, timeout=PAGE_TIMEOUT)
    if page.evaluate("() => document.getElementById('ol-live') !== null"):
        # A page the server sent as a file: drawn once its widgets are mounted.
        page.wait_for_function("() => document.documentElement.dataset.olServed === 'ready'")
        ready(page).wait_for(state="visible", timeout=PAGE_TIMEOUT)
        page.wait_for_timeout(SETTLE_MS)
        return page, traffic
    page.wait_for_function(
        "() => window.Bokeh !== undefined && Bokeh.documents.length > 0"
        " && Bokeh.index !== undefined && Object.keys(Bokeh.index).length > 0",
        timeout=PAGE_TIMEOUT,
    )
    ready(page).wait_for(state="visible", timeout=PAGE_TIMEOUT)
    page.wait_for_function(
        "() => Bokeh.documents.every(d => d.is_idle === undefined || d.is_idle)",
        timeout=PAGE_TIMEOUT,
    )
    page.wait_for_timeout(SETTLE_MS)
    return page, traffic


def flush(page: Page) -> None:
    """A round trip to the browser, so that events it already raised are dispatched."""
    page.evaluate("1")


def button(page: Page, name: str) -> Locator:
    """The button with exactly this accessible name."""
    return page.get_by_role("button", name=name, exact=True)


def readout(page: Page, name: str) -> Locator:
    """The live readout (role ``status``) with exactly this accessible name."""
    return page.get_by_role("status", name=name, exact=True)


def text_field(page: Page, label: str) -> Locator:
    """The text box labelled exactly ``label``."""
    return page.get_by_label(label, exact=True).and_(page.get_by_role("textbox"))
