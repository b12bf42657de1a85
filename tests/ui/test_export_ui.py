"""The exported course in Chromium: served by a plain static file server, and from file://.

The course is exported once (``overlap-lab export DIR --single-file``) and served
by Python's ``http.server`` on a free loopback port: no overlap-lab server runs.
Expected numbers come from the model (``BucketConfig``, the fluid queue's formula
worked by hand), never from the export.
"""

from __future__ import annotations

import functools
import http.server
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

from lessons import load_lessons
from tests.ui.pagekit import TIMEOUT, button, description, enter, field, readout, value_of
from widgets.common.formatting import MILLISECONDS
from widgets.model.buckets import BucketConfig
from widgets.registry import WIDGETS

REPO = Path(__file__).resolve().parents[2]
LIVE = "http://lab.example.org:5006"
NO_SERVER = "This copy has no server"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "course"
    subprocess.run(
        [sys.executable, "-m", "app.cli", "export", str(out), "--live", LIVE, "--single-file"],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=600,
    )
    return out


@pytest.fixture(scope="module")
def site(export_dir: Path) -> Iterator[str]:
    handler = functools.partial(_Quiet, directory=str(export_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class Traffic:
    """Every request a page makes, the ones that failed, and the page's script errors."""

    def __init__(self, page: Page):
        self.urls: list[str] = []
        self.failed: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda r: self.urls.append(r.url))
        page.on("requestfailed", lambda r: self.failed.append(r.url))
        page.on("response", lambda r: r.status >= 400 and self.failed.append(f"{r.status} {r.url}"))
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def assert_clean(self, origin: str | None) -> None:
        """No failed request, no script error, and nothing but ``origin`` (or file://) asked."""
        assert not self.failed, self.failed
        assert not self.errors, self.errors
        for url in self.urls:
            parts = urlsplit(url)
            if parts.scheme in ("data", "blob", "about"):
                continue
            if origin is None:
                assert parts.scheme == "file", url
            else:
                assert f"{parts.scheme}://{parts.netloc}" == origin, url


def _page_paths() -> list[str]:
    lessons = [f"lessons/{name}/index.html" for name in load_lessons()]
    return ["index.html", *(f"{name}/index.html" for name in WIDGETS), *lessons]


def _single_names() -> list[str]:
    return [*WIDGETS, *load_lessons()]


def _slots(export_dir: Path, path: str) -> int:
    return (export_dir / path).read_text(encoding="utf-8").count('class="ol-widget-slot"')


@pytest.mark.parametrize("path", _page_paths())
def test_every_served_page_works_from_its_own_host_alone(
    page: Page, site: str, export_dir: Path, path: str
):
    traffic = Traffic(page)
    page.goto(f"{site}/{path}")
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    slots = _slots(export_dir, path)
    expect(button(page, "Play")).to_have_count(slots, timeout=TIMEOUT)
    if path == "index.html":
        for link in page.get_by_role("link").all():  # every link of this copy leads somewhere
            href = link.get_attribute("href")
            if href.startswith("./"):
                assert (export_dir / href[2:]).is_file(), href
    page.wait_for_load_state("networkidle")
    traffic.assert_clean(site)


@pytest.mark.parametrize("name", _single_names())
def test_every_single_file_works_from_file_urls(page: Page, export_dir: Path, name: str):
    traffic = Traffic(page)
    path = export_dir / "single" / f"{name}.html"
    assert path.stat().st_size <= 1_500_000
    page.goto(path.as_uri())
    expect(button(page, "Play").first).to_be_visible(timeout=TIMEOUT)
    lesson = f"lessons/{name}/index.html"
    slots = _slots(export_dir, lesson if name not in WIDGETS else f"{name}/index.html")
    expect(button(page, "Play")).to_have_count(slots)
    page.wait_for_load_state("networkidle")
    traffic.assert_clean(None)


def _tail(config: BucketConfig) -> str:
    return MILLISECONDS(config.schedule().exposed_tail)


def test_bucket_timeline_copy_plays_steps_resets_and_switches(page: Page, site: str):
    page.goto(f"{site}/bucket-timeline/index.html")
    expect(readout(page, "Exposed tail")).to_have_text(
        re.compile("^" + _tail(BucketConfig())), timeout=TIMEOUT
    )
    # The default run lasts 31.95 ms and Step moves 1 ms (a 1-2-5 sixteenth of it).
    button(page, "Step").click()
    expect(readout(page, "Elapsed time")).to_have_text(re.compile(r"^1\.00 ms"))
    expect(description(page)).to_contain_text("At 1.00 ms of 31.95 ms")
    button(page, "Play").click()
    expect(button(page, "Pause")).to_be_visible()
    page.wait_for_timeout(1500)
    button(page, "Pause").click()
    paused = value_of(page, "Elapsed time")
    assert 1.0 < paused < 31.95 and paused == int(paused), paused  # a Step's moment
    expect(description(page)).to_contain_text(f"At {paused:.2f} ms of 31.95 ms")
    button(page, "Reset").click()
    expect(readout(page, "Elapsed time")).to_have_text(re.compile(r"^0\.00 ms"))
    # A declared axis: layers per bucket, from the default preset.
    enter(page, "Layers per bucket", "1")
    expect(readout(page, "Exposed tail")).to_have_text(
        re.compile("^" + _tail(BucketConfig(layers_per_bucket=1)))
    )
    # A preset, then the axis from it.
    page.get_by_role("combobox", name="Preset", exact=True).select_option(label="Latency-bound")
    latency = BucketConfig.from_preset("Latency-bound")
    expect(readout(page, "Exposed tail")).to_have_text(re.compile("^" + _tail(latency)))
    enter(page, "Layers per bucket", "6")
    six = BucketConfig.from_preset("Latency-bound", layers_per_bucket=6)
    expect(readout(page, "Exposed tail")).to_have_text(re.compile("^" + _tail(six)))
    # Played to the end: the run's last moment, at the optimizer's end.
    s = six.schedule()
    end = MILLISECONDS(s.optimizer_start + s.optimizer_ms)
    button(page, "Play").click()
    expect(readout(page, "Elapsed time")).to_have_text(re.compile(f"^{end}"), timeout=20_000)
    expect(button(page, "Play")).to_be_visible()
    expect(description(page)).to_contain_text(f"At {end}, the end: the step is over.")


def test_a_value_the_copy_does_not_hold_is_refused_at_its_control(page: Page, site: str):
    page.goto(f"{site}/bucket-timeline/index.html")
    tail = _tail(BucketConfig())
    expect(readout(page, "Exposed tail")).to_have_text(re.compile("^" + tail), timeout=TIMEOUT)
    enter(page, "Backward time per layer", "1.7")
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text(f"{NO_SERVER}: open the live lab to change backward time")
    link = alert.get_by_role("link", name="Open the live lab")
    expect(link).to_have_attribute("href", re.compile(f"^{re.escape(LIVE)}/bucket-timeline"))
    expect(field(page, "Backward time per layer")).to_have_value("1.7")
    expect(readout(page, "Exposed tail")).to_have_text(re.compile("^" + tail))


def test_queue_lab_single_file_runs_from_the_anchor(page: Page, export_dir: Path):
    # Initial 4 items, arrival 2, service 3: the queue shrinks by 1 item/s and drains at 4 s.
    page.goto((export_dir / "single" / "queue-lab.html").as_uri())
    button(page, "Step").click()
    expect(readout(page, "Elapsed time")).to_have_text(re.compile(r"^0\.50 s"), timeout=TIMEOUT)
    expect(readout(page, "Queue length")).to_have_text(re.compile(r"^3\.50 items"))
    button(page, "Play").click()
    expect(button(page, "Play")).to_be_visible(timeout=20_000)
    expect(readout(page, "Queue length")).to_have_text(re.compile(r"^0\.00 items"))
    expect(description(page)).to_contain_text("It was first empty at 4.00 s.")
    # A declared axis: with arrival 4 the queue grows by 1 item/s from 4 items.
    button(page, "Reset").click()
    enter(page, "Arrival rate", "4")
    button(page, "Step").click()
    expect(readout(page, "Queue length")).to_have_text(re.compile(r"^4\.50 items"))


def test_lesson_copy_runs_an_experiment(page: Page, site: str):
    lesson = next(iter(load_lessons().values()))
    page.goto(f"{site}/lessons/{lesson.name}/index.html")
    experiment = page.locator("button[data-experiment]").first
    expect(experiment).to_be_visible(timeout=TIMEOUT)
    label = experiment.inner_text().lstrip("▶ ").strip()
    experiment.click()
    expect(page.get_by_text(f"Loaded “{label}”")).to_be_visible(timeout=TIMEOUT)
    button(page, "Step").first.click()
    expect(readout(page, "Elapsed time").first).not_to_have_text(re.compile(r"^0\.00"))
    button(page, "Reset").first.click()
    expect(readout(page, "Elapsed time").first).to_have_text(re.compile(r"^0\.00"))
