"""The README's marimo cells, served by real marimo and driven in Chromium, offline.

The cells become a marimo notebook through ``marimo convert`` (as an author's
Jupyter notebook would), served with ``marimo run --headless`` on a loopback port
with marimo's own folders in a temporary directory. Chromium, with every request
to another host refused, opens the app and checks: the widget drawn, an edit
redraws it and reaches Python (the cell that reads it through ``mo.state``
reruns), Play to the end of the run gives the served app's readouts, and no
request left the machine. Expected readouts are worked by hand from the queue's
formula.
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

pytest.importorskip("marimo", reason="the marimo test needs the test extra")
from tests.ui.test_notebook_ui import isolated_env, readme_cells, write_notebook

STARTUP_TIMEOUT = 120.0  # s: marimo starts in a few seconds on 2 shared cores
KERNEL_TIMEOUT = 90_000  # ms: the app runs its cells when the page opens


@pytest.fixture(scope="module")
def marimo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``marimo run`` serving the README's cells on a loopback port: its address."""
    root = tmp_path_factory.mktemp("marimo")
    served = root / "notebooks"
    served.mkdir()
    cells = readme_cells("marimo")
    assert len(cells) == 4, cells
    write_notebook(served / "queue_lab.ipynb", cells)
    env = isolated_env(root)
    converted = subprocess.run(
        [sys.executable, "-m", "marimo", "-y", "convert", "queue_lab.ipynb", "-o", "queue_lab.py"],
        cwd=served,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert converted.returncode == 0, converted.stderr
    port = free_port()
    log_path = root / "marimo.log"
    log = log_path.open("w")
    command = [
        sys.executable,
        "-m",
        "marimo",
        "-y",
        "run",
        "queue_lab.py",
        "--headless",
        "--host=127.0.0.1",
        f"--port={port}",
    ]
    proc = subprocess.Popen(command, cwd=served, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"

    def log_text() -> str:
        return log_path.read_text(encoding="utf-8", errors="replace")[-4000:]

    try:
        up = wait_until_ok(
            f"{base}/health",
            proc,
            STARTUP_TIMEOUT,
            lambda code: RuntimeError(f"marimo exited with {code}:\n{log_text()}"),
        )
        assert up, f"marimo did not answer in {STARTUP_TIMEOUT} s:\n{log_text()}"
        yield base
    finally:
        stop_process(proc)
        log.close()


def test_the_readme_cells_in_marimo_offline(marimo: str, page: Page) -> None:
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))

    def local_only(route: Route) -> None:
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            route.abort()

    page.route(re.compile(r"^https?://"), local_only)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{marimo}/")

    # Drawn: a queue lab, arrival 2, service 3, 4 items: −1.00 items/s from 4.00 items.
    lab = page.locator(".ol-notebook-widget").first
    expect(readout(lab, "Elapsed time")).to_have_text(starts("0.00 s"), timeout=KERNEL_TIMEOUT)
    expect(readout(lab, "Net rate")).to_have_text(starts("−1.00 items/s"))
    expect(lab.locator(".ol-chart svg").first).to_be_visible()
    expect(description(lab)).to_contain_text("At 0.00 s the queue holds 4.00 items")
    # The fourth cell's output: Python's value of the setting.
    expect(page.get_by_text("2.0", exact=True)).to_be_visible(timeout=KERNEL_TIMEOUT)

    # Play to the end: the queue drains at 4 s (4 items at −1 item/s); the run lasts 5 s.
    button(lab, "Play").click()
    expect(button(lab, "Pause")).to_be_visible(timeout=TIMEOUT)
    expect(readout(lab, "Elapsed time")).to_have_text(starts("5.00 s"), timeout=15_000)
    expect(readout(lab, "Queue length")).to_have_text(starts("0.00 items"))
    expect(button(lab, "Play")).to_be_visible()
    expect(description(lab)).to_contain_text("At 5.00 s the queue holds 0.00 items")
    # Live, not a saved copy: the kernel answered the page.
    expect(page.get_by_text("This is a snapshot")).to_have_count(0)

    # An edit redraws (arrival 5 − service 3 = +2.00 items/s) and reaches Python.
    enter(lab, "Arrival rate", "5")
    expect(readout(lab, "Net rate")).to_have_text(starts("+2.00 items/s"), timeout=TIMEOUT)
    expect(page.get_by_text("5.0", exact=True)).to_be_visible(timeout=TIMEOUT)
    # A refused edit: its message under the field, the last valid state kept.
    enter(lab, "Arrival rate", "-1")
    expect(lab.get_by_text("Arrival rate must be 0 to 1000 items/s.")).to_be_visible()
    expect(readout(lab, "Net rate")).to_have_text(starts("+2.00 items/s"))

    assert_only_local(urls, marimo)
