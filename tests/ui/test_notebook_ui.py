"""The README's notebook cells, run in real JupyterLab and Notebook 7 and driven in Chromium.

One Jupyter server (JupyterLab with the Notebook 7 extension) runs on a loopback
port with a token, in a temporary folder holding a notebook of the README's
cells and its own settings, runtime and home folders. Chromium opens the notebook
in each interface, runs the cells that show widgets, and checks: every widget
drawn, Play to the end of the run gives the served app's readouts, an edit in the
widget reaches Python, Python's change redraws the widget, and no request left
the machine. Expected readouts are worked by hand from the queue's formula.

A notebook exported to HTML without widget state shows, in each widget's place,
the note that the widget needs a running kernel.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from bench.processes import free_port, stop_process, wait_until_ok
from tests.ui.conftest import assert_only_local
from tests.ui.notebook_hosts import check_played_to_the_end
from tests.ui.pagekit import TIMEOUT, button, description, enter, readout, starts

nbformat = pytest.importorskip("nbformat", reason="the notebook tests need the test extra")
pytest.importorskip("anywidget", reason="the notebook tests need the test extra")
pytest.importorskip("jupyterlab", reason="the notebook tests need the test extra")

REPO = Path(__file__).resolve().parents[2]
TOKEN = "overlap-lab-notebook-test"
#: A Jupyter server starts in about 15 s on 2 shared cores; a kernel in a few more.
STARTUP_TIMEOUT = 120.0
KERNEL_TIMEOUT = 90_000  # ms: the first cell's output (a kernel start and the import)
#: The interfaces: the address of a notebook in each, and how it names its Run menu's item.
INTERFACES = {"jupyterlab": "lab/tree/{name}", "notebook7": "notebooks/{name}"}
TRACE_CELL = "from widgets.notebook import RealTrace\n\ntrace = RealTrace()\ntrace"


def readme_cells(heading: str = "JupyterLab and Notebook 7") -> list[str]:
    """The code cells of the README's section ``heading`` (up to the next heading), in order."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split(f"### {heading}\n", 1)[1]
    section = re.split(r"\n#{2,4} ", section, maxsplit=1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def write_notebook(path: Path, cells: list[str]) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(c.strip()) for c in cells]
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nbformat.write(notebook, path)


def isolated_env(root: Path) -> dict[str, str]:
    """Jupyter's own folders in ``root``; the kernel imports the repository's widgets."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    for name in ("home", "config", "data", "runtime", "settings"):
        (root / name).mkdir(exist_ok=True)
    # No "Would you like to get notified about official Jupyter news?" over the cells.
    notifications = root / "settings" / "@jupyterlab" / "apputils-extension"
    notifications.mkdir(parents=True)
    (notifications / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    env.update(
        HOME=str(root / "home"),
        JUPYTER_CONFIG_DIR=str(root / "config"),
        JUPYTER_RUNTIME_DIR=str(root / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(root / "settings"),
        PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    )
    return env


@pytest.fixture(scope="module")
def jupyter(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A Jupyter server on a loopback port: its address, and the folder it serves."""
    root = tmp_path_factory.mktemp("jupyter")
    served = root / "notebooks"
    served.mkdir()
    cells = readme_cells()
    assert len(cells) == 3, cells
    for name in INTERFACES:
        write_notebook(served / f"{name}.ipynb", cells)
    write_notebook(served / "trace.ipynb", [TRACE_CELL])
    port = free_port()
    log = (root / "server.log").open("w")
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--IdentityProvider.token={TOKEN}",
        f"--ServerApp.root_dir={served}",
        # Nothing from another host: no news, no update check, no extension catalogue.
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]
    proc = subprocess.Popen(
        command, cwd=served, env=isolated_env(root), stdout=log, stderr=subprocess.STDOUT
    )
    base = f"http://127.0.0.1:{port}"
    try:
        up = wait_until_ok(
            f"{base}/api/status?token={TOKEN}",
            proc,
            STARTUP_TIMEOUT,
            lambda code: RuntimeError(f"jupyter lab exited with {code}:\n{log_text(root)}"),
        )
        assert up, f"jupyter lab did not answer in {STARTUP_TIMEOUT} s:\n{log_text(root)}"
        yield base, served
    finally:
        stop_process(proc)
        log.close()


def log_text(root: Path) -> str:
    return (root / "server.log").read_text(encoding="utf-8", errors="replace")[-4000:]


def wait_for_kernel(base: str, name: str, timeout: float = KERNEL_TIMEOUT / 1000) -> None:
    """Wait until the notebook ``name``'s kernel has started and is idle (a cell run
    before then may be dropped while the page is still choosing its kernel)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{base}/api/sessions?token={TOKEN}", timeout=10) as answer:
            sessions = json.load(answer)
        states = [s["kernel"]["execution_state"] for s in sessions if s["path"] == name]
        if "idle" in states:
            return
        time.sleep(0.5)
    raise AssertionError(f"the kernel of {name} did not start in {timeout} s")


def run_cell(page: Page, index: int) -> None:
    """Select code cell ``index`` and run it (Shift+Enter), as a person does."""
    cell = page.locator(".jp-Notebook .jp-CodeCell").nth(index)
    cell.locator(".jp-InputPrompt").click()
    page.keyboard.press("Shift+Enter")


def widget(page: Page, n: int):
    """The ``n``-th overlap-lab widget on the page (found through its shadow root)."""
    return page.locator(".ol-notebook-widget").nth(n)


@pytest.mark.parametrize("interface", list(INTERFACES))
def test_the_readme_cells_in_a_notebook_server(
    jupyter: tuple[str, Path], page: Page, interface: str
) -> None:
    base, _served = jupyter
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    page.set_viewport_size({"width": 1280, "height": 900})
    path = INTERFACES[interface].format(name=f"{interface}.ipynb")
    # A fresh workspace: no tab restored over the notebook from an earlier visit.
    page.goto(f"{base}/{path}?reset&token={TOKEN}")

    # The first cell: one queue lab, arrival 2 (service 3, 4 items).
    expect(page.locator(".jp-Notebook .jp-CodeCell").first).to_be_visible(timeout=KERNEL_TIMEOUT)
    wait_for_kernel(base, f"{interface}.ipynb")
    run_cell(page, 0)
    lab = widget(page, 0)
    expect(readout(lab, "Elapsed time")).to_have_text(starts("0.00 s"), timeout=KERNEL_TIMEOUT)
    expect(readout(lab, "Net rate")).to_have_text(starts("−1.00 items/s"))
    expect(lab.locator("svg").first).to_be_visible()
    expect(description(lab)).to_contain_text("At 0.00 s the queue holds 4.00 items")

    # The second: two widgets in one cell.
    run_cell(page, 1)
    expect(page.locator(".ol-notebook-widget")).to_have_count(3, timeout=KERNEL_TIMEOUT)
    timeline, ranks = widget(page, 1), widget(page, 2)
    expect(readout(timeline, "Buckets")).to_have_text(starts("12"), timeout=TIMEOUT)
    choice = lambda scope, name: scope.get_by_role("combobox", name=name, exact=True)  # noqa: E731
    expect(choice(timeline, "Preset")).to_have_value("Latency-bound")
    expect(choice(ranks, "Scenario")).to_have_value("Jitter")
    for n in range(3):
        expect(widget(page, n).locator(".ol-chart svg").first).to_be_visible()

    # Play to the end: the queue drains at 4 s (4 items at −1 item/s) and the run lasts
    # 5 s, so the end reads 5.00 s and 0.00 items, as the served app does.
    check_played_to_the_end(page, lab)
    # The notebook drew the widget, not the note a saved copy shows in its place.
    expect(page.get_by_text("An overlap-lab widget was shown here")).to_have_count(0)

    # Reset and Step: 4 items draining at 1 item/s, half a second later 3.50 items.
    button(lab, "Reset").click()
    expect(readout(lab, "Elapsed time")).to_have_text(starts("0.00 s"), timeout=TIMEOUT)
    button(lab, "Step").click()
    expect(readout(lab, "Elapsed time")).to_have_text(starts("0.50 s"), timeout=TIMEOUT)
    expect(readout(lab, "Queue length")).to_have_text(starts("3.50 items"))
    # The data table comes from the kernel when it is opened: one segment from 0 s.
    lab.get_by_text("The chart's data as a table", exact=True).click()
    expect(lab.get_by_role("columnheader", name="Segment start (s)")).to_be_visible(timeout=TIMEOUT)

    # An edit in the widget: arrival 5 − service 3 = +2.00 items/s.
    enter(lab, "Arrival rate", "5")
    expect(readout(lab, "Net rate")).to_have_text(starts("+2.00 items/s"), timeout=TIMEOUT)
    # A refused edit: its message under the field, the last valid state kept.
    enter(lab, "Arrival rate", "-1")
    expect(lab.get_by_text("Arrival rate must be 0 to 1000 items/s.")).to_be_visible()
    expect(readout(lab, "Net rate")).to_have_text(starts("+2.00 items/s"))

    # The third cell: Python reads the edit and sets service 4: 5 − 4 = +1.00 items/s.
    run_cell(page, 2)
    output = page.locator(".jp-Notebook .jp-CodeCell").nth(2).locator(".jp-OutputArea-output")
    expect(output).to_have_text("5.0", timeout=KERNEL_TIMEOUT)
    expect(readout(lab, "Net rate")).to_have_text(starts("+1.00 items/s"), timeout=TIMEOUT)
    expect(lab.get_by_label("Service rate", exact=True)).to_have_value("4")

    assert_only_local(urls, base)


def test_a_notebook_saved_as_html_says_the_widget_needs_a_kernel(
    tmp_path: Path, page: Page
) -> None:
    notebook = tmp_path / "saved.ipynb"
    write_notebook(notebook, readme_cells()[:2])
    env = isolated_env(tmp_path)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "nbconvert",
            "--to",
            "html",
            "--execute",
            "--ExecutePreprocessor.store_widget_state=False",
            str(notebook),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    saved = tmp_path / "saved.html"
    # Offline, as a classroom may be: anything from another host is refused.
    page.route(re.compile(r"^https?://"), lambda route: route.abort())
    page.goto(saved.as_uri())
    notes = page.get_by_role("note")
    expect(notes).to_have_count(2)  # one per cell that shows widgets
    expect(notes.first).to_have_text(
        "An overlap-lab widget was shown here. It needs a running Python kernel: open this "
        "notebook in Jupyter and run it. For pages that work without a kernel or a server, "
        "use overlap-lab export."
    )
    # Nothing that looks live: no control, no button.
    expect(page.get_by_role("button", name="Play")).to_have_count(0)


def test_a_trace_uploaded_in_a_notebook_reaches_the_kernel(
    jupyter: tuple[str, Path], page: Page, tmp_path: Path
) -> None:
    base, _served = jupyter
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    page.goto(f"{base}/lab/tree/trace.ipynb?reset&token={TOKEN}")
    expect(page.locator(".jp-Notebook .jp-CodeCell").first).to_be_visible(timeout=KERNEL_TIMEOUT)
    wait_for_kernel(base, "trace.ipynb")
    run_cell(page, 0)
    trace = widget(page, 0)
    upload = trace.get_by_label("Upload a trace or profiler files", exact=True)
    expect(upload).to_have_attribute("type", "file", timeout=KERNEL_TIMEOUT)
    mine = tmp_path / "mine.json"
    mine.write_bytes((REPO / "traces" / "shipped" / "one-bucket.json").read_bytes())
    upload.set_input_files(str(mine))
    expect(
        trace.get_by_role("status").filter(has_text="Showing your upload, mine.json")
    ).to_be_visible(timeout=TIMEOUT)
    assert_only_local(urls, base)
