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

import sys
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page

from bench.processes import free_port
from tests.ui.conftest import assert_only_local
from tests.ui.notebook_hosts import (
    check_edits,
    check_played_to_the_end,
    check_queue_lab_drawn,
    host_server,
    offline,
)

pytest.importorskip("voila", reason="the Voilà test needs the test extra")
from tests.ui.test_notebook_ui import isolated_env, readme_cells, write_notebook

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
    command = [
        sys.executable,
        "-m",
        "voila",
        str(served),
        "--no-browser",
        "--Voila.ip=127.0.0.1",
        f"--port={port}",
    ]
    base = f"http://127.0.0.1:{port}"
    # The folder's listing: answered without starting a kernel.
    with host_server("voila", command, served, isolated_env(root), root / "voila.log", f"{base}/"):
        yield base


def test_the_readme_cell_in_voila_offline(voila: str, page: Page) -> None:
    urls = offline(page)
    page.goto(f"{voila}/voila/render/queue.ipynb")

    lab = page.locator(".ol-notebook-widget").first
    check_queue_lab_drawn(lab)
    check_played_to_the_end(page, lab)
    check_edits(lab)

    foreign = {u for u in urls if urlsplit(u).hostname not in (None, "127.0.0.1")}
    assert foreign <= VOILA_CDN_STYLESHEETS, foreign
    assert_only_local([u for u in urls if u not in VOILA_CDN_STYLESHEETS], voila)
