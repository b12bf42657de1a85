"""The exported course in Chromium: served by a plain static file server, and from file://.

The course is exported once (``overlap-lab export DIR --single-file``, with one
author's state) and served by Python's ``http.server`` on a free loopback port:
no overlap-lab server runs. Expected numbers come from the model
(``BucketConfig``, the fluid queue's formula worked by hand), never from the
export; the notices a live page gives come from the registry's own parser.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import http.server
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, expect

from lessons import load_lessons
from tests.ui.pagekit import TIMEOUT, button, description, enter, field, readout, value_of
from widgets.bucket_timeline.model import PRESETS
from widgets.common.formatting import MILLISECONDS
from widgets.model.buckets import BucketConfig, step_schedule
from widgets.registry import WIDGETS

REPO = Path(__file__).resolve().parents[2]
LIVE = "http://lab.example.org:5006"
NO_SERVER = "This copy has no server"
#: A course author's own state, exported with ``--state``.
AUTHOR_STATE = "bucket-timeline?ranks=16"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "course"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "export",
            str(out),
            "--live",
            LIVE,
            "--single-file",
            "--state",
            AUTHOR_STATE,
        ],
        cwd=REPO,
        check=True,
        capture_output=True,
        timeout=600,
    )
    return out


class _GzipEncoded(_Quiet):
    """A host that sends ``.gz`` files as JSON with ``Content-Encoding: gzip``."""

    def guess_type(self, path):
        return "application/json" if str(path).endswith(".gz") else super().guess_type(path)

    def end_headers(self) -> None:
        if self.path.split("?")[0].endswith(".gz"):
            self.send_header("Content-Encoding", "gzip")
        super().end_headers()


@contextlib.contextmanager
def file_server(folder: Path, handler=_Quiet) -> Iterator[str]:
    """A plain static file server of ``folder`` on a free loopback port, while in use."""
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(handler, directory=str(folder))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def site(export_dir: Path) -> Iterator[str]:
    with file_server(export_dir) as origin:
        yield origin


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
    return MILLISECONDS(step_schedule(config).exposed_tail)


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
    latency = PRESETS.load("Latency-bound")
    expect(readout(page, "Exposed tail")).to_have_text(re.compile("^" + _tail(latency)))
    enter(page, "Layers per bucket", "6")
    six = PRESETS.load("Latency-bound", layers_per_bucket=6)
    expect(readout(page, "Exposed tail")).to_have_text(re.compile("^" + _tail(six)))
    # Played to the end: the run's last moment, at the optimizer's end.
    s = step_schedule(six)
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


def test_a_single_file_lesson_has_its_questions_table_and_downloads(page: Page, export_dir: Path):
    page.goto((export_dir / "single" / "overlapping-communication.html").as_uri())
    expect(button(page, "Play").first).to_be_visible(timeout=TIMEOUT)
    question = page.get_by_role("region", name="Check yourself 1", exact=True)
    question.get_by_text("Show answer").click()
    expect(question.locator(".ol-answer")).to_be_visible()
    page.get_by_text("The chart's data as a table").first.click()
    expect(page.get_by_role("table").first.get_by_role("row").nth(1)).to_be_visible()
    with page.expect_download(timeout=TIMEOUT) as info:
        button(page, "Download data (CSV)").first.click()
    text = Path(info.value.path()).read_text(encoding="utf-8")
    assert text.startswith("# ") and "Exposed tail" in text
    with page.expect_download(timeout=TIMEOUT) as info:
        button(page, "Download chart (PNG)").first.click()
    assert Path(info.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- settings in the page's address -------------------------------------------------


def test_a_widget_page_shows_the_state_its_address_names(page: Page, site: str):
    page.goto(f"{site}/bucket-timeline/index.html?preset=Latency-bound&layers_per_bucket=2")
    two = PRESETS.load("Latency-bound", layers_per_bucket=2)
    expect(readout(page, "Exposed tail")).to_have_text(
        re.compile("^" + _tail(two)), timeout=TIMEOUT
    )
    expect(page.get_by_role("combobox", name="Preset", exact=True)).to_have_value("Latency-bound")
    expect(field(page, "Layers per bucket")).to_have_value("2")
    expect(page.get_by_role("alert")).to_have_count(0)
    # The author's own state (export --state), in another order of keys than exported.
    page.goto(f"{site}/bucket-timeline/index.html?ranks=16.0")
    expect(readout(page, "Exposed tail")).to_have_text(
        re.compile("^" + _tail(BucketConfig(ranks=16))), timeout=TIMEOUT
    )
    expect(field(page, "Ranks")).to_have_value("16")
    expect(page.get_by_role("alert")).to_have_count(0)
    # An axis of the author's state is held too: layers per bucket from 16 ranks.
    enter(page, "Layers per bucket", "6")
    six = BucketConfig(ranks=16, layers_per_bucket=6)
    expect(readout(page, "Exposed tail")).to_have_text(re.compile("^" + _tail(six)))
    # The address follows, as on a live page: a link to what is shown, kept on reload.
    expect(page).to_have_url(re.compile(r"\?preset=Overlap\+works&layers_per_bucket=6&ranks=16$"))
    page.reload()
    expect(readout(page, "Exposed tail")).to_have_text(
        re.compile("^" + _tail(six)), timeout=TIMEOUT
    )
    expect(field(page, "Ranks")).to_have_value("16")


def test_a_value_the_copy_lacks_in_the_address_is_named_at_its_control(page: Page, site: str):
    query = "preset=Latency-bound&ranks=12&layers_per_bucket=4"
    page.goto(f"{site}/bucket-timeline/index.html?{query}")
    # What it holds is shown (the preset, 4 layers per bucket); 12 ranks it says it lacks.
    held = PRESETS.load("Latency-bound", layers_per_bucket=4)
    expect(readout(page, "Exposed tail")).to_have_text(
        re.compile("^" + _tail(held)), timeout=TIMEOUT
    )
    alert = page.get_by_role("alert")
    expect(alert).to_have_count(1)
    expect(alert).to_contain_text(f"{NO_SERVER}: open the live lab for ranks=12")
    expect(page.get_by_role("status", name="Notices")).to_have_text(
        "This copy does not hold ranks=12 from this page's address: see the setting “Ranks”."
    )
    expect(alert).to_contain_text(f"this copy shows ranks={held.ranks}")
    ranks = field(page, "Ranks")
    expect(ranks).to_have_attribute("aria-invalid", "true")
    assert alert.get_attribute("id") == ranks.get_attribute("aria-describedby")
    link = alert.get_by_role("link", name="Open the live lab")
    expect(link).to_have_attribute("href", f"{LIVE}/bucket-timeline?{query}")
    # A preset the copy does not know: named at the preset's control, the default shown.
    page.goto(f"{site}/bucket-timeline/index.html?preset=Nope")
    expect(page.get_by_role("alert")).to_contain_text("preset=Nope", timeout=TIMEOUT)
    expect(readout(page, "Exposed tail")).to_have_text(re.compile("^" + _tail(BucketConfig())))


def test_an_unknown_key_in_the_address_gets_the_live_pages_notice(page: Page, site: str):
    page.goto(f"{site}/queue-lab/index.html?arrival=4&speed=9")
    _, notices = WIDGETS["queue-lab"].parse(parse_qs("arrival=4&speed=9"))
    assert len(notices) == 1 and "speed" in notices[0]
    expect(page.get_by_role("status", name="Notices")).to_have_text(notices[0], timeout=TIMEOUT)
    # arrival 4, service 3, 4 items: the queue grows 1 item/s, 4.50 items at 0.5 s.
    button(page, "Step").click()
    expect(readout(page, "Queue length")).to_have_text(re.compile(r"^4\.50 items"))


def test_a_single_file_reads_its_address_too(page: Page, export_dir: Path):
    page.goto((export_dir / "single" / "queue-lab.html").as_uri() + "?arrival=4&initial=7")
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("open the live lab for initial=7", timeout=TIMEOUT)
    expect(alert).to_contain_text("this copy shows initial=4")
    # The fields show the state in use: 4 items arriving at 4/s (held), not 7 items.
    expect(field(page, "Initial items")).to_have_value("4")
    expect(field(page, "Arrival rate")).to_have_value("4")
    button(page, "Step").click()
    expect(readout(page, "Queue length")).to_have_text(re.compile(r"^4\.50 items"))


@pytest.mark.parametrize("width", [1280, 390])
def test_an_address_notice_fits_beside_its_control(page: Page, site: str, width: int):
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{site}/bucket-timeline/index.html?preset=Latency-bound&ranks=12")
    alert = page.get_by_role("alert")
    expect(alert).to_be_visible(timeout=TIMEOUT)
    alert.scroll_into_view_if_needed()
    box, control = alert.bounding_box(), field(page, "Ranks").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width, box
    # Right under the field it is about.
    assert 0 <= box["y"] - (control["y"] + control["height"]) <= 40, (box, control)


# --- the trace upload in a copy -------------------------------------------------------


def test_the_upload_control_says_at_once_that_it_needs_the_live_lab(
    page: Page, site: str, tmp_path: Path
):
    page.goto(f"{site}/trace/index.html")
    upload = page.get_by_label("Upload a trace or profiler files", exact=True)
    expect(upload).to_be_visible(timeout=TIMEOUT)
    needs = f"{NO_SERVER}: uploading a trace needs the live lab ({LIVE}/trace)."
    expect(page.get_by_text(needs)).to_be_visible()
    mine = tmp_path / "mine.json"
    mine.write_text('{"ranks": []}', encoding="utf-8")
    for _ in range(2):  # said again on every try, never "Checking …"
        upload.set_input_files(str(mine))
        expect(page.get_by_role("alert")).to_have_text(needs, timeout=TIMEOUT)
        expect(page.get_by_text("Checking")).to_have_count(0)


# --- failures shown -------------------------------------------------------------------


def test_a_host_that_unpacks_the_states_itself_still_works(page: Page, export_dir: Path):
    with file_server(export_dir, _GzipEncoded) as origin:
        traffic = Traffic(page)
        with page.expect_response(re.compile(r"states\.json\.gz$")) as info:
            page.goto(f"{origin}/bucket-timeline/index.html?preset=Latency-bound")
        assert info.value.headers.get("content-encoding") == "gzip"
        latency = PRESETS.load("Latency-bound")
        expect(readout(page, "Exposed tail")).to_have_text(
            re.compile("^" + _tail(latency)), timeout=TIMEOUT
        )
        page.goto(f"{origin}/lessons/{next(iter(load_lessons()))}/index.html")
        expect(button(page, "Play").first).to_be_visible(timeout=TIMEOUT)
        traffic.assert_clean(origin)


def test_states_that_fail_to_load_are_a_message_in_the_widget(
    page: Page, export_dir: Path, tmp_path: Path
):
    broken = tmp_path / "copy"
    shutil.copytree(export_dir, broken)
    (broken / "bucket-timeline" / "states.json.gz").unlink()
    (broken / "queue-lab" / "states.json.gz").write_bytes(b"<html>not the states</html>")
    (broken / "ranks" / "states.json.gz").write_bytes(gzip.compress(b'{"widgets": 3}'))
    with file_server(broken) as origin:
        page.goto(f"{origin}/bucket-timeline/index.html")
        alert = page.get_by_role("alert")
        expect(alert).to_contain_text("This widget could not be shown", timeout=TIMEOUT)
        expect(alert).to_contain_text("states.json.gz: 404")
        page.goto(f"{origin}/queue-lab/index.html")
        expect(page.get_by_role("alert")).to_contain_text(
            "states.json.gz holds neither gzip nor JSON", timeout=TIMEOUT
        )
        page.goto(f"{origin}/ranks/index.html")
        expect(page.get_by_role("alert")).to_contain_text(
            "This widget could not be shown", timeout=TIMEOUT
        )


def test_the_folder_opened_as_files_links_its_single_files(page: Page, export_dir: Path):
    page.goto((export_dir / "index.html").as_uri())
    note = page.locator(".ol-file-note")
    expect(note).to_be_visible(timeout=TIMEOUT)
    expect(note).to_contain_text("Opened as a file")
    singles = note.get_by_role("link").filter(has_text=re.compile("^(?!http)"))
    names = sorted(_single_names())
    hrefs = sorted(singles.evaluate_all("ls => ls.map(l => l.getAttribute('href'))"))
    assert hrefs == sorted(f"./single/{n}.html" for n in names), hrefs
    singles.filter(has_text="Bucket timeline").click()
    expect(button(page, "Play")).to_be_visible(timeout=TIMEOUT)
    # A widget's page opened as a file says so, and links its own single file.
    page.goto((export_dir / "queue-lab" / "index.html").as_uri())
    note = page.locator(".ol-file-note")
    expect(note).to_be_visible()
    note.get_by_role("link", name=re.compile("single file")).click()
    expect(button(page, "Play")).to_be_visible(timeout=TIMEOUT)


def test_a_folder_without_single_files_says_how_to_serve_it(page: Page, tmp_path: Path):
    from app.export.pages import index_page

    index = tmp_path / "index.html"
    index.write_text(index_page("", single_file=False), encoding="utf-8")
    page.goto(index.as_uri())
    note = page.locator(".ol-file-note")
    expect(note).to_be_visible(timeout=TIMEOUT)
    expect(note).to_contain_text("python3 -m http.server 8000")
    expect(note.get_by_role("link")).to_have_count(1)  # localhost, no single file


def test_the_file_note_is_hidden_when_served(page: Page, site: str):
    for path in ("index.html", "bucket-timeline/index.html"):
        page.goto(f"{site}/{path}")
        expect(page.get_by_role("heading", level=1)).to_be_visible()
        expect(page.locator(".ol-file-note")).to_be_hidden()


# --- self-sizing embeds ---------------------------------------------------------------

#: A page of another site that claims a height for its own frame.
THIRD_PARTY = (
    '<!doctype html><html lang="en"><title>Another site</title><p>Another site.</p><script>'
    'parent.postMessage({type: "overlap-lab:height", height: 1234}, "*");</script></html>'
)


def _course_page(sizer: str, copy: str, third: str) -> str:
    """A course page on its own origin: ``sizer`` once, a widget of the copy, another site."""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>A course page</title>{sizer}</head><body><h1>Week 3</h1><p>Read on.</p>"
        f'<iframe src="{copy}/bucket-timeline/index.html?preset=Latency-bound" '
        'title="Bucket timeline" style="width:100%;height:300px;border:0"></iframe>'
        f'<iframe src="{third}/third.html" title="Another site" '
        'style="width:100%;height:200px;border:0"></iframe></body></html>'
    )


#: The bottom of a framed page's content: its last box and the body's margin below it.
CONTENT_BOTTOM = """() => {
  let bottom = 0;
  for (const el of document.body.children) {
    bottom = Math.max(bottom, el.getBoundingClientRect().bottom + window.scrollY);
  }
  const style = getComputedStyle(document.body);
  return bottom + parseFloat(style.marginBottom) + parseFloat(style.paddingBottom);
}"""


def _assert_sized(page: Page, copy: str) -> None:
    """The copy's frame comes to be its content's height (±2 px), with nothing to scroll."""
    frame = next(f for f in page.frames if f.url.startswith(f"{copy}/bucket-timeline/"))
    expect(frame.get_by_role("button", name="Play", exact=True)).to_be_visible(timeout=TIMEOUT)
    element = page.locator(f'iframe[src^="{copy}/"]')
    seen = None
    for _ in range(50):
        outer = element.bounding_box()["height"]
        content = frame.evaluate(CONTENT_BOTTOM)
        scroll = frame.evaluate("document.documentElement.scrollHeight - innerHeight")
        seen = (outer, content, scroll)
        if abs(outer - content) <= 2 and scroll <= 2:
            return
        page.wait_for_timeout(200)
    raise AssertionError(f"frame {seen[0]} px, content {seen[1]} px, inner scroll {seen[2]} px")


@pytest.mark.parametrize("how", ["embed.js", "inlined"])
def test_a_course_page_on_another_origin_sizes_each_frame_to_its_content(
    page: Page, site: str, export_dir: Path, tmp_path: Path, how: str
):
    from widgets.common.embed import EMBED_SCRIPT

    course, third = tmp_path / "course", tmp_path / "third"
    course.mkdir()
    third.mkdir()
    (third / "third.html").write_text(THIRD_PARTY, encoding="utf-8")
    with file_server(course) as course_origin, file_server(third) as third_origin:
        # The copy's embed.js by its address, or the live snippet's script inlined.
        sizer = (
            f'<script src="{site}/embed.js"></script>'
            if how == "embed.js"
            else f"<script>{EMBED_SCRIPT}</script>"
        )
        (course / "index.html").write_text(
            _course_page(sizer, site, third_origin), encoding="utf-8"
        )
        traffic = Traffic(page)
        for width in (1280, 390):
            page.set_viewport_size({"width": width, "height": 844})
            page.goto(f"{course_origin}/index.html")
            _assert_sized(page, site)
        if how == "embed.js":  # believed only from the copy's own origin
            other = page.get_by_title("Another site")
            expect(other.content_frame.get_by_text("Another site.")).to_be_visible()
            page.wait_for_timeout(300)
            assert other.bounding_box()["height"] == 200
        assert not traffic.failed and not traffic.errors, (traffic.failed, traffic.errors)
        hosts = {urlsplit(u).hostname for u in traffic.urls if urlsplit(u).scheme == "http"}
        assert hosts == {"127.0.0.1"}, hosts


# --- a learner's way around a copy -----------------------------------------------------------


def test_a_lesson_copy_leaves_a_way_back_to_the_experiments_paragraph(page: Page, site: str):
    page.set_viewport_size({"width": 390, "height": 844})
    lesson = next(iter(load_lessons().values()))
    page.goto(f"{site}/lessons/{lesson.name}/index.html")
    experiment = page.locator("button[data-experiment]").last
    expect(experiment).to_be_visible(timeout=TIMEOUT)
    experiment.click()
    back = button(page, "Back to the text")
    expect(back).to_be_in_viewport(timeout=TIMEOUT)
    expect(experiment).not_to_be_in_viewport()
    back.click()
    expect(experiment).to_be_in_viewport(timeout=TIMEOUT)
    assert page.evaluate("document.activeElement.dataset.experiment") == experiment.get_attribute(
        "data-experiment"
    )


def test_links_out_of_a_framed_copy_open_in_a_new_tab(page: Page, site: str, tmp_path: Path):
    (tmp_path / "index.html").write_text(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Course</title></head>'
        f'<body><iframe src="{site}/bucket-timeline/index.html" title="Bucket timeline" '
        'style="width:100%;height:900px;border:0"></iframe></body></html>',
        encoding="utf-8",
    )
    with file_server(tmp_path) as course:
        page.goto(f"{course}/index.html")
        frame = page.frame_locator('iframe[title="Bucket timeline"]')
        expect(button(frame, "Play")).to_be_visible(timeout=TIMEOUT)
        live = frame.locator(".ol-copy-note a")
        expect(live).to_have_text("Open the live lab")
        expect(live).to_have_attribute("target", "_blank")
        expect(live).to_have_attribute("rel", "noopener")
        # A link the widget adds later (a value the copy lacks) opens in a new tab too.
        enter(frame, "Ranks", "13")
        notice = frame.get_by_role("alert").get_by_role("link", name="Open the live lab")
        expect(notice).to_have_attribute("target", "_blank", timeout=TIMEOUT)
        # The downloads stay downloads.
        assert frame.locator("a[download][target]").count() == 0
    # Not framed, the copy's links open where they are.
    page.goto(f"{site}/bucket-timeline/index.html")
    expect(button(page, "Play")).to_be_visible(timeout=TIMEOUT)
    expect(page.locator(".ol-copy-note a")).not_to_have_attribute("target", "_blank")


def test_a_copy_takes_the_pages_theme_from_its_address(page: Page, site: str):
    page.goto(f"{site}/bucket-timeline/index.html?theme=dark&preset=Latency-bound")
    expect(button(page, "Play")).to_be_visible(timeout=TIMEOUT)
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(13, 17, 23)"
    theme = page.evaluate(
        "() => document.querySelector('[data-widget]').shadowRoot"
        ".querySelector('.ol-widget').dataset.theme"
    )
    assert theme == "dark"
    expect(page.get_by_text("Ignored unknown setting")).to_have_count(0)
    # The preset in the same address still applies: Latency-bound has one layer per bucket.
    expect(field(page, "Layers per bucket")).to_have_value("1", timeout=TIMEOUT)
    # The address follows what is shown and keeps the page's theme.
    assert "theme=dark" in page.evaluate("location.search")
