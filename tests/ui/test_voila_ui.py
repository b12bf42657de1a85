"""The README's Voilà cell, served by real Voilà and driven in Chromium, offline.

Voilà serves a folder holding a notebook of the cell on a loopback port, with
Jupyter's own folders in a temporary directory. Chromium, with every request to
another host refused, opens the notebook's page and checks: the widget drawn, an
edit redraws it, Play to the end of the run gives the served app's readouts, and
the only requests to another host are the two Font Awesome stylesheets Voilà's
page template links (its own icons; the widget needs neither). Expected readouts
are worked by hand from the queue's formula.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, Route, expect

from bench.processes import free_port, stop_process, wait_until_ok
from tests.ui.conftest import assert_only_local
from tests.ui.pagekit import TIMEOUT, button, description, enter, readout, starts

pytest.importorskip("voila", reason="the Voilà test needs the test extra")
from tests.ui.test_notebook_ui import isolated_env, readme_cells, write_notebook

STARTUP_TIMEOUT = 120.0  # s: Voilà starts in a few seconds on 2 shared cores
KERNEL_TIMEOUT = 90_000  # ms: the page's kernel starts and runs the cell
#: What Voilà's page template (voila/templates/lab/index.html.j2) links from a CDN.
VOILA_CDN_STYLESHEETS = {
    "https://cdn.jsdelivr.net/npm/@fortawesome/fontawesome-free@%5E5/css/all.min.css",
    "https://cdn.jsdelivr.net/npm/@fortawesome/fontawesome-free@%5E5/css/v4-shims.min.css",
}


@pytest.fixture(scope="module")
def voila(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Voilà serving a folder with ``queue.ipynb`` on a loopback port: its address."""
    root = tmp_path_factory.mktemp("voila")
    served = root / "notebooks"
    served.mkdir()
    cells = readme_cells("Voilà")
    assert len(cells) == 1, cells
    write_notebook(served / "queue.ipynb", cells)
    port = free_port()
    log_path = root / "voila.log"
    log = log_path.open("w")
    command = [
        sys.executable,
        "-m",
        "voila",
        str(served),
        "--no-browser",
        "--Voila.ip=127.0.0.1",
        f"--port={port}",
    ]
    proc = subprocess.Popen(
        command, cwd=served, env=isolated_env(root), stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"

    def log_text() -> str:
        return log_path.read_text(encoding="utf-8", errors="replace")[-4000:]

    try:
        # The folder's listing: answered without starting a kernel.
        up = wait_until_ok(
            f"{base}/",
            proc,
            STARTUP_TIMEOUT,
            lambda code: RuntimeError(f"voila exited with {code}:\n{log_text()}"),
        )
        assert up, f"voila did not answer in {STARTUP_TIMEOUT} s:\n{log_text()}"
        yield base
    finally:
        stop_process(proc)
        log.close()


def test_the_readme_cell_in_voila_offline(voila: str, page: Page) -> None:
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))

    def local_only(route: Route) -> None:
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            route.abort()

    page.route(re.compile(r"^https?://"), local_only)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{voila}/voila/render/queue.ipynb")

    # Drawn: a queue lab, arrival 2, service 3, 4 items: −1.00 items/s from 4.00 items.
    lab = page.locator(".ol-notebook-widget").first
    expect(readout(lab, "Elapsed time")).to_have_text(starts("0.00 s"), timeout=KERNEL_TIMEOUT)
    expect(readout(lab, "Net rate")).to_have_text(starts("−1.00 items/s"))
    expect(lab.locator(".ol-chart svg").first).to_be_visible()
    expect(description(lab)).to_contain_text("At 0.00 s the queue holds 4.00 items")

    # Play to the end: the queue drains at 4 s (4 items at −1 item/s); the run lasts 5 s.
    button(lab, "Play").click()
    expect(button(lab, "Pause")).to_be_visible(timeout=TIMEOUT)
    expect(readout(lab, "Elapsed time")).to_have_text(starts("5.00 s"), timeout=15_000)
    expect(readout(lab, "Queue length")).to_have_text(starts("0.00 items"))
    expect(button(lab, "Play")).to_be_visible()
    expect(description(lab)).to_contain_text("At 5.00 s the queue holds 0.00 items")
    # Live, not a saved copy: the kernel answered the page.
    expect(page.get_by_text("This is a snapshot")).to_have_count(0)

    # An edit redraws: arrival 5 − service 3 = +2.00 items/s; a refused one keeps it.
    enter(lab, "Arrival rate", "5")
    expect(readout(lab, "Net rate")).to_have_text(starts("+2.00 items/s"), timeout=TIMEOUT)
    enter(lab, "Arrival rate", "-1")
    expect(lab.get_by_text("Arrival rate must be 0 to 1000 items/s.")).to_be_visible()
    expect(readout(lab, "Net rate")).to_have_text(starts("+2.00 items/s"))

    foreign = {u for u in urls if urlsplit(u).hostname not in (None, "127.0.0.1")}
    assert foreign <= VOILA_CDN_STYLESHEETS, foreign
    assert_only_local([u for u in urls if u not in VOILA_CDN_STYLESHEETS], voila)
