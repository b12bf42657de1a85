"""The fluid queue lab in headless Chromium, driven only by accessible names."""

from __future__ import annotations

import itertools
import re

import pytest
from pagekit import (
    TIMEOUT,
    button,
    description,
    enter,
    field,
    holds_still,
    readout,
    starts,
    value_of,
)
from playwright.sync_api import Page, expect

MINUS = "−"

SAMPLE_JS = """
el => {
  const root = el.getRootNode();
  window.__samples = [];
  window.__sampling = true;
  const tick = () => {
    if (!window.__sampling) return;
    const out = root.querySelector("output");
    window.__samples.push(out ? out.textContent : "");
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}
"""  # the readouts print U+2212, never a hyphen


# --- helpers -----------------------------------------------------------------


def step(page: Page, times: int, expect_elapsed: float) -> None:
    """Press Step ``times`` times, then wait until the elapsed time shows the result."""
    for _ in range(times):
        button(page, "Step").click()
    expect(readout(page, "Elapsed time")).to_have_text(
        starts(f"{expect_elapsed:.2f} s"), timeout=TIMEOUT
    )


@pytest.fixture
def lab(page: Page, server: str, ui) -> Page:
    ui.open_widget(page, f"{server}/queue-lab")
    return page


def assert_defaults(page: Page) -> None:
    expect(readout(page, "Elapsed time")).to_have_text(starts("0.00 s"), timeout=TIMEOUT)
    expect(readout(page, "Queue length")).to_have_text(starts("4.00 items"), timeout=TIMEOUT)
    expect(readout(page, "Net rate")).to_have_text(starts(f"{MINUS}1.00 items/s"))


# --- 1, 2: the canonical experiments by Step ----------------------------------


def test_drain_by_step_checks_the_prediction(lab: Page):
    assert_defaults(lab)
    enter(lab, "Predicted drain time", "4")
    expect(readout(lab, "Actual drain time")).to_have_count(0)
    step(lab, 8, 4.0)
    expect(readout(lab, "Queue length")).to_have_text(starts("0.00 items"), timeout=TIMEOUT)
    actual = readout(lab, "Actual drain time")
    expect(actual).to_be_visible(timeout=TIMEOUT)
    expect(actual).to_have_text(starts("4.00 s"))
    expect(lab.get_by_text(re.compile(r"Your prediction: 4\.00 s \(spot on\)"))).to_be_visible()


def test_growth_by_step(lab: Page):
    button(lab, "Reset").click()
    enter(lab, "Arrival rate", "4")
    expect(field(lab, "Service rate")).to_have_value("3")
    expect(readout(lab, "Net rate")).to_have_text(starts("+1.00 items/s"), timeout=TIMEOUT)
    step(lab, 4, 2.0)
    expect(readout(lab, "Queue length")).to_have_text(starts("6.00 items"), timeout=TIMEOUT)


# --- 3: the same by Play / Pause ------------------------------------------------


def test_play_pause_animates_then_freezes_on_the_server_value(lab: Page, ui):
    assert_defaults(lab)
    button(lab, "Play").click()
    expect(button(lab, "Pause")).to_be_visible(timeout=TIMEOUT)
    first = ui.wait_until(lambda: value_of(lab, "Elapsed time"), timeout=10)
    second = ui.wait_until(
        lambda: value_of(lab, "Elapsed time") > first and value_of(lab, "Elapsed time"), timeout=10
    )
    assert 0 < first < second

    button(lab, "Pause").click()
    expect(button(lab, "Play")).to_be_visible(timeout=TIMEOUT)
    # The server's paused state replaces the browser's animation; then nothing moves
    # over the page's own animation frames.
    frozen = ui.wait_until(
        lambda: holds_still(lab, lambda: value_of(lab, "Elapsed time")), timeout=10
    )
    assert frozen >= second
    queue = value_of(lab, "Queue length")
    assert queue == pytest.approx(max(0.0, 4.0 - frozen), abs=0.0101), (frozen, queue)


def test_play_until_the_queue_drains(lab: Page):
    enter(lab, "Predicted drain time", "4")
    # Shown only once the prediction is registered (the field's own hint words it differently).
    pending = "Checked when the run reaches the moment the queue empties."
    expect(lab.get_by_text(pending, exact=True)).to_be_visible(timeout=TIMEOUT)
    button(lab, "Play").click()
    expect(button(lab, "Pause")).to_be_visible(timeout=TIMEOUT)
    actual = readout(lab, "Actual drain time")
    expect(actual).to_be_visible(timeout=15_000)
    elapsed = value_of(lab, "Elapsed time")
    assert elapsed >= 4.0 - 0.02, elapsed
    button(lab, "Pause").click()
    expect(button(lab, "Play")).to_be_visible(timeout=TIMEOUT)
    expect(actual).to_have_text(starts("4.00 s"), timeout=TIMEOUT)
    expect(readout(lab, "Queue length")).to_have_text(starts("0.00 items"), timeout=TIMEOUT)
    expect(lab.get_by_text(re.compile(r"Your prediction: 4\.00 s \(spot on\)"))).to_be_visible()


def test_played_to_its_end_the_page_shows_the_end_with_no_message_from_the_server(
    page: Page, server: str, ui, ws_frames
):
    # Arrival 2, service 3, 4 items: empty at 4 s, the run ends at 5 s. Nothing reaches
    # the page when the run ends (a notebook has no server session to send anything):
    # the end's readouts and words came with Play.
    ui.open_widget(page, f"{server}/queue-lab")
    button(page, "Play").click()
    expect(button(page, "Pause")).to_be_visible(timeout=TIMEOUT)
    # Wait for the page's connection to fall quiet after Play (no frame either way for
    # 0.5 s), well before the run's end at 5 s; from then on nothing may pass.

    def quiet() -> bool:
        ws_frames.reset()
        page.wait_for_timeout(500)
        return (ws_frames.sent, ws_frames.received) == (0, 0)

    ui.wait_until(quiet, timeout=3)
    ws_frames.reset()
    expect(page.get_by_text(re.compile(r"The run ended at 5\.00 s"))).to_be_visible(timeout=15_000)
    expect(readout(page, "Elapsed time")).to_have_text(starts("5.00 s"))
    expect(readout(page, "Queue length")).to_have_text(starts("0.00 items"))
    expect(description(page)).to_contain_text("At 5.00 s the queue holds 0.00 items.")
    expect(description(page)).to_contain_text("It was first empty at 4.00 s.")
    page.wait_for_timeout(300)
    assert (ws_frames.sent, ws_frames.received) == (0, 0), ws_frames.payloads[:5]


# --- 4: an edit mid-run keeps time ----------------------------------------------


def test_mid_run_edit_keeps_elapsed_and_restarts_the_formula(lab: Page):
    step(lab, 4, 2.0)
    expect(readout(lab, "Queue length")).to_have_text(starts("2.00 items"), timeout=TIMEOUT)
    enter(lab, "Arrival rate", "4")
    formula = readout(lab, "Formula")
    expect(formula).to_contain_text("2.00 + 1.00 × (t − 2.00)", timeout=TIMEOUT)
    expect(readout(lab, "Elapsed time")).to_have_text(starts("2.00 s"))
    expect(readout(lab, "Net rate")).to_have_text(starts("+1.00 items/s"))
    step(lab, 2, 3.0)
    expect(readout(lab, "Queue length")).to_have_text(starts("3.00 items"), timeout=TIMEOUT)


# --- 5: URL presets ----------------------------------------------------------------


# --- 6: bad input is refused where it is typed --------------------------------------

BAD_INPUTS = {  # what is typed -> what the message under the field says
    "-1": "must be 0 to",
    "abc": "“abc” is not a number",
    "nan": "Enter a finite number",
    "": "needs a number",
    "1e99": "must be 0 to",
}
VALID = {"Arrival rate": "2", "Service rate": "3", "Initial items": "4"}


@pytest.mark.parametrize("label", list(VALID))
def test_bad_input_is_refused_with_a_message_by_the_field(lab: Page, label: str, ui, server_log):
    start = server_log.size()
    formula_before = readout(lab, "Formula").inner_text()
    box = field(lab, label)
    for text, message in BAD_INPUTS.items():
        enter(lab, label, text)
        alert = lab.get_by_role("alert")
        expect(alert, f"no alert for {label} = {text!r}").to_have_count(1, timeout=TIMEOUT)
        expect(alert).to_contain_text(message, timeout=TIMEOUT)
        expect(alert).to_be_visible()
        field_box = box.bounding_box()
        alert_box = ui.wait_until(alert.bounding_box)
        gap = alert_box["y"] - (field_box["y"] + field_box["height"])
        assert -2 <= gap <= 60, f"the alert for {label} is not right under it (gap {gap} px)"
        expect(readout(lab, "Net rate")).to_have_text(starts(f"{MINUS}1.00 items/s"))
        expect(readout(lab, "Queue length")).to_have_text(starts("4.00 items"))
        expect(readout(lab, "Formula")).to_have_text(formula_before)
    enter(lab, label, VALID[label])
    expect(lab.get_by_role("alert")).to_have_count(0, timeout=TIMEOUT)
    expect(readout(lab, "Formula")).to_have_text(formula_before)
    step(lab, 1, 0.5)  # the lab still runs
    expect(readout(lab, "Queue length")).to_have_text(starts("3.50 items"), timeout=TIMEOUT)
    server_log.assert_no_traceback(since=start)


# --- 7: keyboard only -----------------------------------------------------------------


def test_keyboard_only(lab: Page, ui):
    ui.wait_until(lambda: ui.focused(lab) is None or ui.focused(lab)["tag"] == "body")
    ui.tab_to(lab, "Arrival rate", "input")
    lab.keyboard.press("Control+A")
    lab.keyboard.type("4")
    lab.keyboard.press("Enter")
    expect(readout(lab, "Net rate")).to_have_text(starts("+1.00 items/s"), timeout=TIMEOUT)

    ui.tab_to(lab, "Step", "button")
    lab.keyboard.press("Space")
    expect(readout(lab, "Elapsed time")).to_have_text(starts("0.50 s"), timeout=TIMEOUT)
    expect(readout(lab, "Queue length")).to_have_text(starts("4.50 items"), timeout=TIMEOUT)

    ui.tab_to(lab, "Play", "button", backwards=True)
    lab.keyboard.press("Enter")
    expect(button(lab, "Pause")).to_be_visible(timeout=TIMEOUT)
    ui.wait_until(lambda: value_of(lab, "Elapsed time") > 0.8)
    # Focus stays on the button as it turns into Pause: press it again.
    ui.wait_until(lambda: (ui.focused(lab) or {}).get("name") == "Pause")
    lab.keyboard.press("Enter")
    expect(button(lab, "Play")).to_be_visible(timeout=TIMEOUT)
    paused_at = value_of(lab, "Elapsed time")
    assert paused_at > 0.8

    ui.tab_to(lab, "Reset", "button", backwards=True)
    lab.keyboard.press("Space")
    expect(readout(lab, "Elapsed time")).to_have_text(starts("0.00 s"), timeout=TIMEOUT)
    expect(readout(lab, "Queue length")).to_have_text(starts("4.00 items"), timeout=TIMEOUT)
    expect(readout(lab, "Net rate")).to_have_text(starts("+1.00 items/s"))


def test_play_pause_keeps_keyboard_focus(lab: Page, ui):
    button(lab, "Play").focus()
    lab.keyboard.press("Enter")
    expect(button(lab, "Pause")).to_be_visible(timeout=TIMEOUT)
    ui.wait_until(lambda: (ui.focused(lab) or {}).get("name") == "Pause", timeout=5)
    lab.keyboard.press("Enter")
    expect(button(lab, "Play")).to_be_visible(timeout=TIMEOUT)
    ui.wait_until(lambda: (ui.focused(lab) or {}).get("name") == "Play", timeout=5)


def test_an_edit_while_playing_keeps_time_moving_from_where_it_was(lab: Page, ui):
    button(lab, "Play").click()
    expect(button(lab, "Pause")).to_be_visible(timeout=TIMEOUT)
    ui.wait_until(lambda: value_of(lab, "Elapsed time") >= 1.0, timeout=10)
    before = value_of(lab, "Elapsed time")
    # Record the elapsed readout on every animation frame, in the page, across the edit.
    lab.evaluate(SAMPLE_JS, readout(lab, "Elapsed time").element_handle())
    enter(lab, "Arrival rate", "4")
    formula = readout(lab, "Formula")
    expect(formula).to_contain_text("+ 1.00 × (t −", timeout=TIMEOUT)
    # The new segment starts where the run was when the edit arrived: no jump back to zero
    # or to the old anchor, and the page's clock keeps going from there.
    start = float(re.search(r"\(t − (\d+\.\d+)\)", formula.inner_text()).group(1))
    assert start >= before, (before, start)
    after = value_of(lab, "Elapsed time")
    assert after >= start - 0.02, (start, after)
    ui.wait_until(lambda: value_of(lab, "Elapsed time") >= start + 1.0, timeout=10)
    samples = lab.evaluate("() => { window.__sampling = false; return window.__samples; }")
    values = [float(t.split()[0]) for t in samples if t.strip()]
    steps = [b - a for a, b in itertools.pairwise(values)]
    assert len(values) > 10 and min(steps) >= 0, values
    # About 1 s of model time per second at display rate: no frame jumps by half a second.
    assert max(steps) < 0.5, values
    # Queue length follows the new rate from the re-anchored start.
    button(lab, "Pause").click()
    expect(button(lab, "Play")).to_be_visible(timeout=TIMEOUT)
    frozen = ui.wait_until(lambda: holds_still(lab, lambda: value_of(lab, "Elapsed time")), 10)
    at_edit = max(0.0, 4.0 - start)
    expected = at_edit + 1.0 * (frozen - start)
    assert value_of(lab, "Queue length") == pytest.approx(expected, abs=0.0101)


SLOW_PAGE_CLOCK_JS = """
() => {
  const real = performance.now.bind(performance);
  const t0 = real();
  performance.now = () => t0 + (real() - t0) * 0.5;
}
"""


def test_an_edit_while_playing_takes_the_servers_anchor_over_the_pages_own_clock(lab: Page, ui):
    # The page's clock runs at half speed, so its own extrapolation falls behind the
    # server's. An edit while playing re-anchors the run at the server's time: a page
    # that kept extrapolating from the old anchor would stay behind, without any jump.
    # The page is made live first (an edit that keeps the value): until then the page
    # is a file and its own clock is the only one.
    enter(lab, "Service rate", "3")
    lab.wait_for_function("() => window.__olSessions[0].phase === 'live'", timeout=TIMEOUT)
    lab.evaluate(SLOW_PAGE_CLOCK_JS)
    button(lab, "Play").click()
    expect(button(lab, "Pause")).to_be_visible(timeout=TIMEOUT)
    ui.wait_until(lambda: value_of(lab, "Elapsed time") >= 0.6, timeout=10)
    before = value_of(lab, "Elapsed time")
    enter(lab, "Arrival rate", "4")
    formula = readout(lab, "Formula")
    expect(formula).to_contain_text("+ 1.00 × (t −", timeout=TIMEOUT)
    start = float(re.search(r"\(t − (\d+\.\d+)\)", formula.inner_text()).group(1))
    # The premise: the server's clock ran ahead of the slowed page (about twice as far).
    assert start >= 1.5 * before, (before, start)
    after = value_of(lab, "Elapsed time")
    assert after >= start - 0.02, (start, after)
    # From the new anchor the page keeps going at its own rate, half of real time.
    ui.wait_until(lambda: value_of(lab, "Elapsed time") >= start + 0.4, timeout=10)
    button(lab, "Pause").click()
    expect(button(lab, "Play")).to_be_visible(timeout=TIMEOUT)
    frozen = ui.wait_until(lambda: holds_still(lab, lambda: value_of(lab, "Elapsed time")), 10)
    assert frozen >= start + 0.4
    # Paused, the page shows the server's time; the queue follows the new rate from it.
    expected = max(0.0, 4.0 - start) + 1.0 * (frozen - start)
    assert value_of(lab, "Queue length") == pytest.approx(expected, abs=0.0101)


#: The playhead (the chart's last line outside the plot) and the queue now (its last dot).
NOW_JS = """svg => {
  const line = [...svg.querySelectorAll(':scope > line')].pop();
  const dot = [...svg.querySelectorAll(':scope > circle')].pop();
  if (!line || !dot) return null;
  return {x: +line.getAttribute('x1'), cx: +dot.getAttribute('cx'), r: +dot.getAttribute('r'),
          clipped: !!dot.closest('[clip-path]')};
}"""


def test_the_queue_now_is_drawn_whole_at_the_playhead_from_the_start(lab: Page):
    chart = lab.get_by_role("img", name=re.compile("^Queue length")).locator("svg")
    expect(chart).to_be_visible(timeout=TIMEOUT)
    start = chart.evaluate(NOW_JS)
    # At t = 0 the dot sits on the y axis: drawn above the plot's clip, not half hidden.
    assert start and start["cx"] == start["x"] and start["r"] >= 5 and not start["clipped"], start
    step(lab, 2, 1.0)
    later = chart.evaluate(NOW_JS)
    assert later["cx"] == later["x"] > start["x"], (start, later)
