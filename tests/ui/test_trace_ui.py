"""The trace view in headless Chromium: uploading a trace file, good and bad.

Expected readouts come from the model (``TraceViewConfig().result(...)``)
formatted by the view's own readout text.
"""

from __future__ import annotations

import json
import re

from pagekit import TIMEOUT, readout
from playwright.sync_api import Page, expect

from widgets.model.trace import parse_trace
from widgets.model.trace_view import TraceViewConfig
from widgets.trace_view import TraceView
from widgets.traces import shipped

ROUTE = "/trace"


def starts(text: str) -> re.Pattern:
    return re.compile("^" + re.escape(text) + r"(\s|$)")


def expected(uploaded=None) -> dict[str, str]:
    r = TraceViewConfig().result(uploaded=uploaded)
    return {label: value for label, value, _ in TraceView.readout_values(r).values()}


def assert_readouts(page: Page, values: dict[str, str], context: str) -> None:
    for name in ("Step, measured", "Exposed tail, model", "Backward return, measured"):
        expect(readout(page, name), f"{name} {context}").to_have_text(
            starts(values[name]), timeout=TIMEOUT
        )


def file_input(page: Page):
    return page.locator('input[type="file"]')


def test_upload_good_then_bad_keeps_the_good_one(page: Page, server: str, ui, tmp_path) -> None:
    ui.open_widget(page, f"{server}{ROUTE}")
    assert_readouts(page, expected(), "for the default shipped trace")

    good = tmp_path / "mine.json"
    good.write_bytes(shipped()["one-bucket.json"].read_bytes())
    file_input(page).set_input_files(str(good))
    expect(
        page.get_by_role("status").filter(has_text="Showing your upload, mine.json")
    ).to_be_visible(timeout=TIMEOUT)
    uploaded = parse_trace(good.read_bytes(), name="mine.json")
    after_good = expected(uploaded)
    assert_readouts(page, after_good, "after a good upload")

    bad = tmp_path / "broken.json"
    doc = json.loads(good.read_text())
    del doc["iterations"][0]["ranks"][0]["backward_return"]
    bad.write_text(json.dumps(doc))
    file_input(page).set_input_files(str(bad))
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("Not loaded", timeout=TIMEOUT)
    expect(alert).to_contain_text("backward_return")
    # The alert sits right under the upload control.
    box, msg = file_input(page).bounding_box(), alert.bounding_box()
    assert 0 <= msg["y"] - (box["y"] + box["height"]) < 80, (box, msg)
    assert_readouts(page, after_good, "after a bad upload (unchanged)")


def test_not_json_is_refused_with_a_message(page: Page, server: str, ui, tmp_path) -> None:
    ui.open_widget(page, f"{server}{ROUTE}")
    bad = tmp_path / "notes.json"
    bad.write_text("print('hello')")
    file_input(page).set_input_files(str(bad))
    expect(page.get_by_role("alert")).to_contain_text("not valid JSON", timeout=TIMEOUT)
    assert_readouts(page, expected(), "after a refused upload")
