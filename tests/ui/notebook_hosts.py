"""What the notebook hosts' browser tests share: a host server's life, an offline page,
and the queue lab's checks worked by hand (arrival 2, service 3, 4 items).

The queue drains at 1 item/s from 4 items, so it is empty at 4 s and the run lasts 5 s:
the end reads 5.00 s and 0.00 items, as the served app does. Arrival 5 makes the net
rate +2.00 items/s; arrival −1 is refused at its field.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import Locator, Page, Route, expect

from bench.processes import stop_process, wait_until_ok
from tests.ui.pagekit import TIMEOUT, button, description, enter, readout, starts

STARTUP_TIMEOUT = 120.0  # s: a host starts in a few seconds on 2 shared cores
KERNEL_TIMEOUT = 90_000  # ms: the page's kernel starts and runs the cells


@contextmanager
def host_server(
    name: str, command: list[str], cwd: Path, env: dict, log_path: Path, ready_url: str
) -> Iterator[None]:
    """Run a notebook host until the block ends; fail with its log if it never answers."""
    with log_path.open("w") as log:
        proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)

        def log_text() -> str:
            return log_path.read_text(encoding="utf-8", errors="replace")[-4000:]

        try:
            up = wait_until_ok(
                ready_url,
                proc,
                STARTUP_TIMEOUT,
                lambda code: RuntimeError(f"{name} exited with {code}:\n{log_text()}"),
            )
            assert up, f"{name} did not answer in {STARTUP_TIMEOUT} s:\n{log_text()}"
            yield
        finally:
            stop_process(proc)


def offline(page: Page) -> list[str]:
    """Refuse every request to another host; the list fills with every URL asked for."""
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))

    def local_only(route: Route) -> None:
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            route.abort()

    page.route(re.compile(r"^https?://"), local_only)
    page.set_viewport_size({"width": 1280, "height": 900})
    return urls


def check_queue_lab_drawn(lab: Locator) -> None:
    """Arrival 2, service 3, 4 items: −1.00 items/s from 4.00 items, at 0 s."""
    expect(readout(lab, "Elapsed time")).to_have_text(starts("0.00 s"), timeout=KERNEL_TIMEOUT)
    expect(readout(lab, "Net rate")).to_have_text(starts("−1.00 items/s"))
    expect(lab.locator(".ol-chart svg").first).to_be_visible()
    expect(description(lab)).to_contain_text("At 0.00 s the queue holds 4.00 items")


def check_played_to_the_end(page: Page, lab: Locator) -> None:
    """Play runs to the end of the run with the served app's readouts, the kernel live."""
    button(lab, "Play").click()
    expect(button(lab, "Pause")).to_be_visible(timeout=TIMEOUT)
    expect(readout(lab, "Elapsed time")).to_have_text(starts("5.00 s"), timeout=15_000)
    expect(readout(lab, "Queue length")).to_have_text(starts("0.00 items"))
    expect(button(lab, "Play")).to_be_visible()
    expect(description(lab)).to_contain_text("At 5.00 s the queue holds 0.00 items")
    # Live, not a saved copy: the kernel answered the page.
    expect(page.get_by_text("This is a snapshot")).to_have_count(0)


def check_edits(lab: Locator, after_good_edit=lambda: None) -> None:
    """An edit redraws (+2.00 items/s); a refused one says why and keeps the last state."""
    enter(lab, "Arrival rate", "5")
    expect(readout(lab, "Net rate")).to_have_text(starts("+2.00 items/s"), timeout=TIMEOUT)
    after_good_edit()
    enter(lab, "Arrival rate", "-1")
    expect(lab.get_by_text("Arrival rate must be 0 to 1000 items/s.")).to_be_visible()
    expect(readout(lab, "Net rate")).to_have_text(starts("+2.00 items/s"))
