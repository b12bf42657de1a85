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

import subprocess
import sys
from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from bench.processes import free_port
from tests.ui.conftest import assert_only_local
from tests.ui.notebook_hosts import (
    KERNEL_TIMEOUT,
    check_edits,
    check_played_to_the_end,
    check_queue_lab_drawn,
    host_server,
    offline,
)
from tests.ui.pagekit import TIMEOUT

pytest.importorskip("marimo", reason="the marimo test needs the test extra")
from tests.ui.test_notebook_ui import isolated_env, readme_cells, write_notebook


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
    base = f"http://127.0.0.1:{port}"
    with host_server("marimo", command, served, env, root / "marimo.log", f"{base}/health"):
        yield base


def test_the_readme_cells_in_marimo_offline(marimo: str, page: Page) -> None:
    urls = offline(page)
    page.goto(f"{marimo}/")

    lab = page.locator(".ol-notebook-widget").first
    check_queue_lab_drawn(lab)
    # The fourth cell's output: Python's value of the setting.
    expect(page.get_by_text("2.0", exact=True)).to_be_visible(timeout=KERNEL_TIMEOUT)
    check_played_to_the_end(page, lab)
    # An edit reaches Python: the cell reading it through mo.state reruns.
    check_edits(
        lab,
        lambda: expect(page.get_by_text("5.0", exact=True)).to_be_visible(timeout=TIMEOUT),
    )
    assert_only_local(urls, marimo)
