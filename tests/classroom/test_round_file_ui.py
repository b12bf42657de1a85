"""A hidden round of four learners in Chromium: the widget is a file, not a session each.

No learner's frame holds the answer before Reveal; Reveal shows it on every page
and plays; after Unlock one learner's edit opens a live session for that learner
alone (counted by the test hook), with the round's settings and the edit.
"""

from __future__ import annotations

import json
import re
import urllib.request

import pytest
from class_pages import open_round, start_class
from class_support import ui_support

pytestmark = pytest.mark.ui

LEARNERS = 4
#: Everything a frame's document holds: its HTML and every shadow root's, every input's value.
DEEP_HTML = """() => {
  const doc = document.getElementById('widget').contentDocument;
  const walk = (root) => [...root.querySelectorAll('*')].map((e) =>
    (e.value !== undefined ? ' value=' + e.value : '') +
    (e.shadowRoot ? e.shadowRoot.innerHTML + walk(e.shadowRoot) : '')).join('');
  return doc.documentElement.outerHTML + walk(doc);
}"""

FRAME_ADDRESS = "document.getElementById('widget').contentWindow.location.href"


@pytest.fixture(scope="module")
def hooked():
    with ui_support.running_server(env={"OVERLAP_LAB_TEST_HOOKS": "1"}) as server:
        yield server


def sessions_built(server) -> int:
    with urllib.request.urlopen(f"{server.url}/_test/sessions", timeout=60) as response:
        return json.load(response)["created"]


def test_a_hidden_round_of_four_learners_is_one_file_until_a_learner_edits(browser, hooked):
    base = hooked.url
    t = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    code, _ = start_class(t, base)
    learners = []
    for _ in range(LEARNERS):
        page = browser.new_context(viewport={"width": 1000, "height": 900}).new_page()
        page.goto(f"{base}/class/{code}")
        page.get_by_text("Waiting for the instructor").wait_for()
        learners.append(page)
    built = sessions_built(hooked)

    open_round(t, "Bucket timeline", "", "How long is the exposed tail?")
    seen_while_voting = []
    for page in learners:
        frame = page.frame_locator("#widget")
        frame.get_by_label("Layers per bucket").wait_for(timeout=30_000)
        assert frame.get_by_label("Layers per bucket").input_value() == "3"
        frame.get_by_text("Settings locked by your instructor").wait_for()
        assert not frame.get_by_role("button", name="Play", exact=True).count()
        seen_while_voting.append(page.evaluate(DEEP_HTML))
    assert sessions_built(hooked) == built  # loading the round's file built no session

    t.get_by_role("button", name="Reveal").click()
    answer_text = t.locator("#answer").text_content()  # e.g. "5.95 ms"
    answer = re.match(r"[\d.]+", answer_text).group(0)
    for page, seen in zip(learners, seen_while_voting, strict=True):
        assert answer not in seen  # no learner's frame held the answer before Reveal
        frame = page.frame_locator("#widget")
        # Reveal plays the widget from the start, on every page.
        frame.get_by_role("button", name="Pause").wait_for(timeout=10_000)
        page.wait_for_function(f"() => ({DEEP_HTML})().includes({json.dumps(answer)})")
    assert sessions_built(hooked) == built

    t.get_by_role("button", name="Unlock controls").click()
    first = learners[0]
    first.get_by_text("The controls are unlocked").wait_for()
    field = first.frame_locator("#widget").get_by_role("textbox", name="Layers per bucket")
    field.fill("4")
    field.press("Enter")
    first.wait_for_function(f"() => ({FRAME_ADDRESS}).includes('/class/bucket-timeline?')")
    live = first.frame_locator("#widget").get_by_role("textbox", name="Layers per bucket")
    live.wait_for(timeout=30_000)
    assert live.input_value() == "4"
    assert sessions_built(hooked) == built + 1  # a live session for that learner alone
    for page in learners[1:]:
        assert "/round/" in page.evaluate(FRAME_ADDRESS)
    t.get_by_role("button", name="Next round").click()
