"""Widget and lesson pages served as a file first, made live in place at the first edit.

Every widget route and lesson page is one HTML file holding the states for its
address (``app/pages/first_page.py``): reading, Play, Step, Reset and the data
table run in the page with no websocket and no Bokeh session. The first edit,
or an action the states cannot answer (Embed, an experiment not recorded),
opens ``/live/<widget>`` (``app/server/live_socket.py``, driven by
``widgets/common/js/live_source.js``) and the same widget answers from the
server: no navigation, the same DOM, the same scroll position, the moment shown
kept. A server that cannot be reached leaves the page as it was and says so
under the field that was edited.

Expected readouts are worked out by hand (in the comments) or from the models
(``widgets.model``, ``widgets.many_ranks.model``, ``widgets.trace_viewer.model``),
never read back from the page under test.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from pagekit import (
    TIMEOUT,
    bucket_readouts,
    button,
    field,
    readout,
    starts,
)
from playwright.sync_api import Page, expect

from lessons import Experiment, load_lessons
from widgets.bucket_timeline.model import PRESETS
from widgets.common.formatting import MILLISECONDS, SECONDS, plain_number
from widgets.many_ranks.model import SCENARIOS
from widgets.model.buckets import BucketConfig, step_schedule
from widgets.registry import WIDGETS
from widgets.trace_viewer.model import TraceViewConfig

LOAD_TIMEOUT = 30_000  # ms, for a served page to mount its widgets
LESSON = "overlapping-communication"
HOOKS = {"OVERLAP_LAB_TEST_HOOKS": "1"}
#: What the page says under a field when its session cannot be opened (live_source.js).
UNREACHABLE = (
    "The server could not be reached, so this was not done; the page shows what it showed."
    " Try again in a moment."
)

#: True once every widget slot of a served page is mounted.
SERVED_JS = "() => document.documentElement.dataset.olServed === 'ready'"

#: The drawn charts (``.ol-chart svg`` with a size), found through shadow roots.
CHARTS_JS = """
() => {
  const roots = [document];
  let drawn = 0;
  while (roots.length) {
    const r = roots.pop();
    for (const svg of r.querySelectorAll(".ol-chart svg")) {
      const box = svg.getBoundingClientRect();
      if (box.width > 0 && box.height > 0) drawn += 1;
    }
    for (const el of r.querySelectorAll("*")) if (el.shadowRoot) roots.push(el.shadowRoot);
  }
  return drawn;
}
"""

#: Mark the window, the first widget slot (the shadow host) and the widget inside it.
MARK_JS = """
token => {
  window.__olMark = token;
  const host = document.querySelector('[data-widget="0"]');
  host.__olMark = token;
  host.shadowRoot.querySelector(".ol-widget").__olMark = token;
}
"""

#: The marks set by MARK_JS, read back from the elements the page holds now.
MARKS_JS = """
() => {
  const host = document.querySelector('[data-widget="0"]');
  const inner = host && host.shadowRoot && host.shadowRoot.querySelector(".ol-widget");
  return [window.__olMark ?? null, host ? host.__olMark ?? null : null,
          inner ? inner.__olMark ?? null : null];
}
"""

PHASE_JS = "i => window.__olSessions[i].phase"
NAVIGATIONS_JS = "() => performance.getEntriesByType('navigation').length"


# --- helpers -----------------------------------------------------------------


@pytest.fixture(scope="module")
def hooked(ui):
    """The app with the test-only ``/_test/sessions`` endpoint (the session server has none)."""
    with ui.running_server(env=HOOKS, probe="/liveness") as server:
        yield server


def sessions_created(base: str) -> int:
    with urllib.request.urlopen(f"{base}/_test/sessions", timeout=60) as response:
        return json.load(response)["created"]


def sockets(page) -> list[str]:
    """Every websocket the page opens from now on (attach before navigating)."""
    opened: list[str] = []
    page.on("websocket", lambda ws: opened.append(ws.url))
    return opened


def open_served(target, url: str | None = None) -> None:
    """Go to ``url`` (if given) and wait until the served page's widgets are mounted."""
    if url is not None:
        target.goto(url)
    target.wait_for_function(SERVED_JS, timeout=LOAD_TIMEOUT)
    expect(button(target, "Reset").first).to_be_visible(timeout=LOAD_TIMEOUT)


def phase(target, slot: int = 0) -> str:
    return target.evaluate(PHASE_JS, slot)


def wait_phase(target, want: str, slot: int = 0, timeout: float = TIMEOUT) -> None:
    target.wait_for_function(
        f"i => window.__olSessions[i].phase === {json.dumps(want)}", arg=slot, timeout=timeout
    )


def one_two_five_below(x: float) -> float:
    """The largest of 1, 2, 5 times a power of ten at or below ``x`` (a widget's Step)."""
    exp = 10 ** int(f"{x:e}".split("e")[1])
    base = x / exp
    return (5 if base >= 5 else 2 if base >= 2 else 1) * exp


def query_of(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


# --- 1: reading and playing with no session -------------------------------------------------


def _bucket_run() -> tuple[str, str]:
    # Overlap works: communication ends at 29.95 ms, then 2.00 ms of optimizer (the lesson's
    # worked numbers); Step is the 1-2-5 number below a sixteenth of that, 1 ms.
    s = step_schedule(BucketConfig())
    end = s.optimizer_start + s.optimizer_ms
    return MILLISECONDS(end), MILLISECONDS(one_two_five_below(end / 16))


def _ranks_run() -> tuple[str, str]:
    # One slow rank: rank 0's backward ends at 12 × 1.8 × 1.5 = 32.40 ms, its last bucket is
    # enqueued 0.05 ms later and takes 5.95 ms (38.40 ms), then 2.00 ms of optimizer.
    r = SCENARIOS.load().result()
    end = r.schedule.optimizer_start + r.optimizer_ms
    assert round(end, 2) == 40.40
    return MILLISECONDS(end), MILLISECONDS(one_two_five_below(end / 16))


def _trace_run() -> tuple[str, str]:
    end = TraceViewConfig().result().end_ms
    return MILLISECONDS(end), MILLISECONDS(one_two_five_below(end / 16))


#: Each route: what Elapsed time reads at the end of a run, and after one Step.
RUNS = {
    # 4 items draining at 3 − 2 = 1 item/s empty at 4 s; the run ends a quarter of that
    # (at least 1 s) later, in whole seconds: 5 s. Step is 0.5 s.
    "/queue-lab": lambda: (SECONDS(5.0), SECONDS(0.5)),
    "/bucket-timeline": _bucket_run,
    "/ranks": _ranks_run,
    "/trace": _trace_run,
    # The lesson's widget starts at the bucket timeline's Overlap works preset.
    f"/lessons/{LESSON}": _bucket_run,
}


def test_every_widget_route_and_a_lesson_are_covered():
    assert {f"/{name}" for name in WIDGETS} <= set(RUNS)


@pytest.mark.parametrize("route", list(RUNS))
def test_reading_and_playing_need_no_session(page: Page, hooked, route: str):
    end, one_step = RUNS[route]()
    opened = sockets(page)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    before = sessions_created(hooked.url)
    page.clock.install()  # the run's clock is the page's: fast-forwarded, not waited for
    open_served(page, hooked.url + route)

    assert page.evaluate(CHARTS_JS) >= 1, "no chart was drawn"
    elapsed = readout(page, "Elapsed time").first
    zero = SECONDS(0.0) if route == "/queue-lab" else MILLISECONDS(0.0)
    expect(elapsed).to_have_text(starts(zero))

    button(page, "Play").first.click()
    expect(button(page, "Pause").first).to_be_visible(timeout=TIMEOUT)
    page.clock.fast_forward(15_000)  # every run here lasts at most 10 s
    expect(button(page, "Play").first).to_be_visible(timeout=TIMEOUT)
    expect(elapsed).to_have_text(starts(end), timeout=TIMEOUT)
    expect(button(page, "Step").first).to_be_disabled()  # nothing left to step through

    button(page, "Reset").first.click()
    expect(elapsed).to_have_text(starts(zero), timeout=TIMEOUT)
    button(page, "Step").first.click()
    expect(elapsed).to_have_text(starts(one_step), timeout=TIMEOUT)
    button(page, "Reset").first.click()
    expect(elapsed).to_have_text(starts(zero), timeout=TIMEOUT)

    data = page.locator("details", has_text="The chart's data as a table").first
    grid = data.get_by_role("table")
    expect(grid).to_be_hidden()
    data.get_by_text("The chart's data as a table").click()
    expect(grid).to_be_visible(timeout=TIMEOUT)
    expect(grid.get_by_role("row").nth(1)).to_be_visible()
    with page.expect_download(timeout=TIMEOUT) as info:
        button(page, "Download data (CSV)").first.click()
    assert Path(info.value.path()).read_text(encoding="utf-8").strip(), "an empty CSV"

    phases = page.evaluate("() => window.__olSessions.map(s => s.phase)")
    assert phases and set(phases) == {"static"}, phases
    assert opened == [], f"reading opened websockets: {opened}"
    assert sessions_created(hooked.url) == before, "reading built a Bokeh session"
    assert errors == []
    hooked.log.assert_no_traceback()


# --- 2: the first edit upgrades in place ------------------------------------------------------


def _queue_edit() -> tuple[str, str, str, dict[str, str]]:
    # Net rate = arrival − service = 5 − 3.
    return "Arrival rate", "5", "arrival", {"Net rate": "+2.00 items/s"}


def _bucket_edit() -> tuple[str, str, str, dict[str, str]]:
    return (
        "Layers per bucket",
        "2",
        "layers_per_bucket",
        bucket_readouts(BucketConfig(layers_per_bucket=2)),
    )


def _ranks_edit() -> tuple[str, str, str, dict[str, str]]:
    # Step time = forward 12.00 + optimizer start 38.40 + optimizer 5.00 = 55.40 ms.
    step = SCENARIOS.load(optimizer_ms=5.0).result().step_time
    assert round(step, 2) == 55.40
    return "Optimizer time", "5", "optimizer_ms", {"Step time": MILLISECONDS(step)}


def _trace_edit() -> tuple[str, str, str, dict[str, str]]:
    tail = TraceViewConfig(iteration=3).result().measured["exposed_tail_ms"]
    return "Iteration", "3", "iteration", {"Exposed tail, measured": MILLISECONDS(tail)}


EDITS = {
    "queue-lab": _queue_edit,
    "bucket-timeline": _bucket_edit,
    "ranks": _ranks_edit,
    "trace": _trace_edit,
}


def test_every_widget_has_an_edit():
    assert set(EDITS) == set(WIDGETS)


@pytest.mark.parametrize("name", list(EDITS))
def test_first_edit_goes_live_in_place(page: Page, server: str, name: str):
    label, text, key, expected = EDITS[name]()
    page.set_viewport_size({"width": 800, "height": 600})  # one column: fields below
    opened = sockets(page)
    open_served(page, f"{server}/{name}")
    assert phase(page) == "static"
    page.evaluate(MARK_JS, f"mark-{name}")

    box = field(page, label)
    box.evaluate("el => el.scrollIntoView({block: 'center'})")
    box.fill(text)  # focusing the field opens the session early
    y = page.evaluate("() => window.scrollY")
    assert y > 0, "the page did not scroll: the test would not see a jump"
    box.press("Enter")

    for readout_name, value in expected.items():
        expect(readout(page, readout_name), f"{readout_name} after {label}={text}").to_have_text(
            starts(value), timeout=TIMEOUT
        )
    wait_phase(page, "live")
    expect(box).to_have_value(text)
    expect(page.get_by_role("alert")).to_have_count(0)
    assert page.evaluate(MARKS_JS) == [f"mark-{name}"] * 3, "the widget was drawn anew"
    assert urlsplit(page.url).path == f"/{name}"
    assert page.evaluate(NAVIGATIONS_JS) == 1
    assert abs(page.evaluate("() => window.scrollY") - y) <= 3, "the page jumped"
    assert query_of(page.url).get(key) == [text], page.url
    assert len(opened) == 1 and f"/live/{name}" in opened[0], opened


def test_keyboard_focus_on_a_field_opens_the_session_early(page: Page, server: str, ui):
    # The widget's Step, then Tab to a field: focus moves inside the widget's shadow root.
    open_served(page, f"{server}/queue-lab")
    button(page, "Step").click()
    ui.tab_to(page, "Arrival rate", "input")
    wait_phase(page, "ready", timeout=3_000)


# --- 3: the moment shown is kept ------------------------------------------------------------


def test_an_edit_keeps_the_moment_shown(page: Page, server: str):
    open_served(page, f"{server}/bucket-timeline")
    elapsed = readout(page, "Elapsed time")
    button(page, "Step").click()
    button(page, "Step").click()
    # Two Steps of 1 ms (the 1-2-5 number below (29.95 + 2.00) / 16).
    two_steps = MILLISECONDS(2 * one_two_five_below(31.95 / 16))
    expect(elapsed).to_have_text(starts(two_steps), timeout=TIMEOUT)

    field(page, "Forward time").click()  # a pointer on a setting opens the session early
    wait_phase(page, "ready")
    expect(elapsed).to_have_text(starts(two_steps))
    # Forward time does not move the timeline's end (communication end + optimizer).
    field(page, "Forward time").fill("20")
    field(page, "Forward time").press("Enter")
    wait_phase(page, "live")
    changed = BucketConfig(forward_ms=20.0)
    expect(readout(page, "Step time")).to_have_text(
        starts(MILLISECONDS(step_schedule(changed).step_time)), timeout=TIMEOUT
    )
    expect(elapsed).to_have_text(starts(two_steps))
    # The server's clock took over where the page's was: the next Step goes on from there.
    button(page, "Step").click()
    expect(elapsed).to_have_text(starts(MILLISECONDS(3.0)), timeout=TIMEOUT)


def test_embed_goes_to_the_server_and_keeps_the_moment_shown(page: Page, server: str):
    open_served(page, f"{server}/bucket-timeline")
    elapsed = readout(page, "Elapsed time")
    button(page, "Step").click()
    button(page, "Step").click()
    expect(elapsed).to_have_text(starts(MILLISECONDS(2.0)), timeout=TIMEOUT)
    snippet = page.get_by_label("Iframe snippet", exact=True)
    expect(snippet).to_be_hidden()

    button(page, "Embed").click()
    expect(snippet).to_be_visible(timeout=TIMEOUT)
    wait_phase(page, "live")
    src = snippet.input_value()
    assert src.lstrip().startswith("<iframe"), src
    assert f'src="{server}/bucket-timeline?' in src, src
    expect(elapsed).to_have_text(starts(MILLISECONDS(2.0)))


# --- 4: a lesson ----------------------------------------------------------------------------


def test_a_lesson_runs_experiments_then_goes_live(page: Page, server: str):
    lesson = load_lessons()[LESSON]
    experiments = [b for b in lesson.blocks if isinstance(b, Experiment)]
    latency = next(e for e in experiments if e.settings == {"preset": "Latency-bound"})
    saturated = next(e for e in experiments if e.settings == {"preset": "Link saturated"})
    sent: list[str] = []
    opened: list[str] = []

    def watch(ws) -> None:
        opened.append(ws.url)
        ws.on("framesent", lambda payload: sent.append(str(payload)))

    page.on("websocket", watch)
    open_served(page, f"{server}/lessons/{LESSON}")

    page.get_by_role("button", name=latency.label).click()
    expect(page.get_by_text(f"Loaded “{latency.label}”")).to_be_visible(timeout=TIMEOUT)
    loaded = PRESETS.load("Latency-bound")
    for name, value in bucket_readouts(loaded).items():
        expect(readout(page, name), f"{name} after {latency.label}").to_have_text(starts(value))
    assert opened == [], f"a recorded experiment opened a websocket: {opened}"
    assert phase(page) == "static"

    box = field(page, "Ranks")
    box.fill("4")
    box.press("Enter")
    wait_phase(page, "live")
    four = PRESETS.load("Latency-bound", ranks=4)
    for name, value in bucket_readouts(four).items():
        expect(readout(page, name), f"{name} with 4 ranks").to_have_text(
            starts(value), timeout=TIMEOUT
        )
    assert len(opened) == 1 and f"/live/bucket-timeline?lesson={LESSON}" in opened[0], opened

    number = experiments.index(saturated)
    page.get_by_role("button", name=saturated.label).click()
    expect(page.get_by_text(f"Loaded “{saturated.label}”")).to_be_visible(timeout=TIMEOUT)
    for name, value in bucket_readouts(PRESETS.load("Link saturated")).items():
        expect(readout(page, name), f"{name} after {saturated.label}").to_have_text(
            starts(value), timeout=TIMEOUT
        )
    expect(field(page, "Ranks")).to_have_value(plain_number(PRESETS.load("Link saturated").ranks))
    assert any(json.loads(f).get("experiment") == number for f in sent), sent
    assert phase(page) == "live"


# --- 5: embedded in a course page on another origin ------------------------------------------


def test_an_embedded_widget_draws_and_goes_live(page: Page, embedding):
    route = "/queue-lab?arrival=4"
    url = embedding.write(
        "first-page.html",
        f'<p>Try the queue:</p><iframe src="{embedding.app}{route}" '
        'title="Fluid queue lab" style="width:100%;height:1300px;border:0"></iframe>',
    )
    opened = sockets(page)
    page.goto(url)
    frame = page.frame_locator("iframe")
    expect(button(frame, "Reset")).to_be_visible(timeout=LOAD_TIMEOUT)
    inner = next(f for f in page.frames if f.url.startswith(embedding.app))
    inner.wait_for_function(SERVED_JS, timeout=LOAD_TIMEOUT)
    assert inner.evaluate(CHARTS_JS) >= 1, "no chart in the frame"
    # Net rate = 4 − 3 = +1; then 4 − 5 = −1.
    expect(readout(frame, "Net rate")).to_have_text(starts("+1.00 items/s"), timeout=TIMEOUT)
    assert phase(inner) == "static" and opened == []

    field(frame, "Service rate").fill("5")
    field(frame, "Service rate").press("Enter")
    expect(readout(frame, "Net rate")).to_have_text(starts("−1.00 items/s"), timeout=TIMEOUT)
    wait_phase(inner, "live")
    assert len(opened) == 1 and opened[0].startswith(
        embedding.app.replace("http", "ws") + "/live/queue-lab"
    ), opened
    assert page.url == url, f"the course page's URL changed to {page.url}"


# --- 6: the server cannot be reached ---------------------------------------------------------


def test_an_edit_without_a_server_keeps_the_page(page: Page, ui):
    errors: list[str] = []
    console: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: console.append(msg.text) if msg.type == "error" else None)
    with ui.running_server(probe="/liveness") as gone:
        open_served(page, f"{gone.url}/queue-lab")
    # The server has stopped (the context manager waited for it to exit).
    net_rate = readout(page, "Net rate")
    queue = readout(page, "Queue length")
    expect(net_rate).to_have_text(starts("−1.00 items/s"))  # 2 − 3
    expect(queue).to_have_text(starts("4.00 items"))

    box = field(page, "Arrival rate")
    box.fill("5")
    box.press("Enter")
    said = page.locator(f"#{box.get_attribute('aria-describedby')}")
    expect(said).to_have_text(UNREACHABLE, timeout=TIMEOUT)
    expect(box).to_have_attribute("aria-invalid", "true")
    expect(net_rate).to_have_text(starts("−1.00 items/s"))
    expect(queue).to_have_text(starts("4.00 items"))
    assert phase(page) == "static"
    expect(page.get_by_text("Traceback")).to_have_count(0)
    assert errors == [], errors
    # Chromium reports each refused websocket in the console; nothing else is an error.
    assert all("WebSocket connection to" in text for text in console), console


# --- 7: a bad value and an unknown key in the address -----------------------------------------


def test_bad_address_values_are_said_as_on_a_live_page(page: Page, server: str):
    open_served(page, f"{server}/queue-lab?arrival=abc&foo=1")
    # As widgets/url_state.py words them: the value refused with the field's bounds
    # (arrival is 0 to 1000 items/s), and the unknown key with every known setting.
    expected = [
        "Ignored arrival=abc: “abc” is not a number. Enter 0 to 1000 items/s.",
        "Ignored unknown setting “foo” (known: arrival, duration, initial, service).",
    ]
    _, parsed = WIDGETS["queue-lab"].parse({"arrival": ["abc"], "foo": ["1"]})
    assert parsed == expected  # what a live page says for the same address
    notices = page.get_by_role("status", name="Notices", exact=True)
    expect(notices.locator(".ol-notice")).to_have_text(expected, timeout=TIMEOUT)
    expect(field(page, "Arrival rate")).to_have_value("2")  # the default stays
    # Going live keeps what the address asked for and could not have.
    box = field(page, "Service rate")
    box.fill("5")
    box.press("Enter")
    expect(readout(page, "Net rate")).to_have_text(starts("−3.00 items/s"), timeout=TIMEOUT)
    wait_phase(page, "live")
    expect(notices.locator(".ol-notice")).to_have_text(expected)
