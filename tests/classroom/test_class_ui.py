"""A full round in Chromium with one process: the instructor and two learners."""

from __future__ import annotations

import csv
import io
import os
import re
from pathlib import Path

import pytest
from class_pages import SHOTS_ENV, open_round, predict, shown, start_class
from class_support import ui_support

pytestmark = pytest.mark.ui


@pytest.fixture(scope="module")
def one_process():
    with ui_support.running_server() as server:
        yield server


#: Whether an element of the widget's frame, in any shadow root, has a class.
DEEP_CLASS = """(name) => {
  const walk = (root) => [...root.querySelectorAll('*')].some(
    (e) => e.classList.contains(name) || (e.shadowRoot && walk(e.shadowRoot)));
  const doc = document.getElementById('widget').contentDocument;
  return doc !== null && walk(doc);
}"""


#: True when the element sits in an inert subtree (no focus, no input, hidden from assistive tech).
INERT = "el => el.closest('[inert]') !== null"


def _frame_widget(page):
    return page.frame_locator("#widget")


def test_a_full_round_in_one_process(browser, one_process, tmp_path):
    base = one_process.url
    shots = Path(os.environ.get(SHOTS_ENV) or tmp_path)
    teacher = browser.new_context(viewport={"width": 1280, "height": 900})
    t = teacher.new_page()
    code, teach_url = start_class(t, base)
    key = re.search(r"key=([^&]+)", teach_url).group(1)
    assert re.fullmatch(r"[A-Z0-9]{6}", code) and len(key) >= 40
    assert t.get_by_role("link", name=f"{base}/class/{code}").is_visible()
    assert t.get_by_role("img", name="QR code of the join link").is_visible()

    # One learner by the link, one typing the code (lower case, with a space) at /class.
    learners = []
    requests: list[str] = []
    for width in (390, 1280):
        context = browser.new_context(viewport={"width": width, "height": 844})
        page = context.new_page()
        page.on("request", lambda r: requests.append(r.url + " " + (r.post_data or "")))
        learners.append(page)
    a, b = learners
    a.goto(f"{base}/class/{code}")
    b.goto(f"{base}/class")
    b.get_by_label("Join code").fill("nope99")
    b.get_by_role("button", name="Join").click()
    assert "No class has the join code" in b.get_by_role("alert").text_content()
    assert b.get_by_label("Join code").get_attribute("aria-invalid") == "true"
    ui_support.assert_no_serious_axe_violations(b)
    b.get_by_label("Join code").fill(f"{code[:3].lower()} {code[3:].lower()}")
    b.get_by_role("button", name="Join").click()
    for page in learners:
        page.get_by_text("Waiting for the instructor").wait_for()
    t.wait_for_function("() => document.getElementById('connected').textContent === '2'")
    for page, name in ((t, "teach-wait"), (a, "learn-wait")):
        ui_support.assert_no_serious_axe_violations(page)
        page.screenshot(path=str(shots / f"{name}.png"), full_page=True)

    # Arrival 2, service 3, initial 4: the queue drains at 4 s (by hand: 4 / (3 - 2)).
    open_round(t, "Fluid queue lab", "arrival=2&service=3&initial=4", "When does the queue drain?")
    for page in learners:
        page.get_by_label("Your prediction").wait_for()
    assert shown(a, "question-text") == "When does the queue drain?"
    assert "No predictions yet" in t.locator("#hist").text_content()
    # The widget is the round's, its controls locked and Play hidden.
    frame = _frame_widget(a)
    frame.get_by_label("Arrival rate").wait_for(timeout=30_000)
    assert frame.get_by_label("Arrival rate").input_value() == "2"
    assert not frame.get_by_role("button", name="Play", exact=True).is_visible()
    # Locked for the keyboard and screen readers too (inert), and the page says why.
    frame.get_by_text("Settings locked by your instructor", exact=True).wait_for()
    assert frame.get_by_label("Arrival rate").evaluate(INERT)

    assert predict(a, "soon").startswith("Your prediction: “soon” is not a number")
    assert a.get_by_label("Your prediction").get_attribute("aria-invalid") == "true"
    assert predict(a, "NaN").endswith("type a finite number.")
    assert predict(a, "3") == "Stored: your prediction is 3 s. Submitting again replaces it."
    assert predict(b, "5").startswith("Stored")
    assert predict(b, "6").startswith("Stored: your prediction is 6 s")
    t.wait_for_function("() => document.getElementById('votes').textContent === '2'")
    t.get_by_role("img", name="Histogram of 2 predictions; the table below lists it").wait_for()
    for page, name in ((t, "teach-vote"), (a, "learn-vote")):
        ui_support.assert_no_serious_axe_violations(page)
        page.screenshot(path=str(shots / f"{name}.png"), full_page=True)

    t.get_by_role("button", name="Reveal").click()
    for page, yours in ((a, "3 s"), (b, "6 s")):
        page.locator("#answer").wait_for()
        assert shown(page, "answer") == "4 s"
        assert shown(page, "median") == "4.5 s"  # the median of 3 and 6
        assert shown(page, "yours") == yours
    assert shown(t, "answer") == "4 s" and shown(t, "median") == "4.5 s"
    # Reveal ran the widget: it plays (Pause shows) and the run moves on.
    _frame_widget(a).get_by_role("button", name="Pause").wait_for(timeout=10_000)
    for page, name in ((t, "teach-reveal"), (a, "learn-reveal"), (b, "learn-reveal-1280")):
        ui_support.assert_no_serious_axe_violations(page)
        page.screenshot(path=str(shots / f"{name}.png"), full_page=True)

    with t.expect_download() as download:
        t.get_by_role("button", name="Download results (CSV)").click()
    text = Path(download.value.path()).read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    assert ["# answer", "4.0"] in rows and rows[-3:] == [["prediction"], ["3.0"], ["6.0"]]

    t.get_by_role("button", name="Unlock controls").click()
    a.get_by_text("The controls are unlocked").wait_for()
    a.wait_for_function(DEEP_CLASS, arg="cl-open")
    assert not _frame_widget(a).get_by_label("Arrival rate").evaluate(INERT)
    t.get_by_role("button", name="Next round").click()
    for page in learners:
        page.get_by_text("Waiting for the instructor").wait_for()

    # The key never reached a learner's page, a request of theirs or the server's log.
    for page in learners:
        assert key not in page.content()
    assert not [r for r in requests if key in r]
    log = one_process.log.text()
    assert key not in log and code not in log and "/class/…" in log
