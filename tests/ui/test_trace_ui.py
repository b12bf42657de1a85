"""The trace viewer in headless Chromium: uploading a trace file (good, bad, empty, the largest
allowed), the bad iteration in a URL, and what the chart marks and labels.

Expected readouts come from the component's state for the same trace (its model's
numbers, formatted as every readout is: two decimals and the unit), so these
tests check the wiring from file to server to page; tests/widgets/test_trace_view.py
works the numbers out by hand.
"""

from __future__ import annotations

import json
import re

from pagekit import TIMEOUT, button, field, readout
from playwright.sync_api import Page, expect

from widgets.common.formatting import MILLISECONDS
from widgets.trace_viewer.component import TraceView
from widgets.traces import MAX_TRACE_BYTES, parse_trace
from widgets.traces.shipped import shipped

ROUTE = "/trace"


def starts(text: str) -> re.Pattern:
    return re.compile("^" + re.escape(text) + r"(\s|$)")


def expected(uploaded=None) -> dict[str, str]:
    """Every step readout's text for the default settings, by its accessible name."""
    view = TraceView()
    if uploaded is not None:
        view.uploaded = uploaded
        view.refresh()
    s = view.state
    return {
        f"{s['names'][q]}, {source}": MILLISECONDS(s["quantities"][q][source])
        for q in s["order"]
        for source in ("measured", "model")
    }


def assert_readouts(page: Page, values: dict[str, str], context: str) -> None:
    for name in (
        "Step, measured",
        "Exposed tail, model",
        "Backward return, measured",
        "Last gradient ready, measured",
    ):
        expect(readout(page, name), f"{name} {context}").to_have_text(
            starts(values[name]), timeout=TIMEOUT
        )


def file_input(page: Page):
    """The upload control, found by its visible label."""
    return page.get_by_label("Upload a trace", exact=True)


def assert_alert_at_the_control(page: Page, *words: str) -> None:
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("Not loaded", timeout=TIMEOUT)
    for word in words:
        expect(alert).to_contain_text(word)
    expect(alert).to_contain_text("The trace shown is unchanged.")
    # The alert sits right under the upload control.
    box, msg = file_input(page).bounding_box(), alert.bounding_box()
    assert 0 <= msg["y"] - (box["y"] + box["height"]) < 80, (box, msg)


def test_upload_good_then_bad_keeps_the_good_one(page: Page, server: str, ui, tmp_path) -> None:
    ui.open_widget(page, f"{server}{ROUTE}")
    expect(file_input(page)).to_have_attribute("type", "file")
    expect(file_input(page)).to_have_attribute("accept", ".json,application/json")
    assert_readouts(page, expected(), "for the default shipped trace")
    back = button(page, "Show the shipped trace again")
    expect(back).to_be_hidden()

    good = tmp_path / "mine.json"
    good.write_bytes(shipped()["one-bucket.json"].read_bytes())
    file_input(page).set_input_files(str(good))
    expect(
        page.get_by_role("status").filter(has_text="Showing your upload, mine.json")
    ).to_be_visible(timeout=TIMEOUT)
    expect(back).to_be_visible()
    uploaded = parse_trace(good.read_bytes(), name="mine.json")
    after_good = expected(uploaded)
    assert_readouts(page, after_good, "after a good upload")

    bad = tmp_path / "broken.json"
    doc = json.loads(good.read_text())
    del doc["iterations"][0]["ranks"][0]["backward_return"]
    bad.write_text(json.dumps(doc))
    file_input(page).set_input_files(str(bad))
    assert_alert_at_the_control(page, "backward_return")
    assert_readouts(page, after_good, "after a bad upload (unchanged)")

    back.click()
    expect(back).to_be_hidden(timeout=TIMEOUT)
    expect(page.get_by_role("alert")).to_have_count(0)
    assert_readouts(page, expected(), "back on the shipped trace")


def test_not_json_is_refused_with_a_message(page: Page, server: str, ui, tmp_path) -> None:
    ui.open_widget(page, f"{server}{ROUTE}")
    bad = tmp_path / "notes.json"
    bad.write_text("print('hello')")
    file_input(page).set_input_files(str(bad))
    assert_alert_at_the_control(page, "not valid JSON")
    assert_readouts(page, expected(), "after a refused upload")


def test_an_empty_file_gets_a_message_at_the_control(
    page: Page, server: str, ui, tmp_path, ws_frames
) -> None:
    ui.open_widget(page, f"{server}{ROUTE}")
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    ws_frames.reset()
    file_input(page).set_input_files(str(empty))
    assert_alert_at_the_control(page, "empty.json is empty")
    assert ws_frames.sent == 0, "an empty file is refused in the page, before sending"
    assert_readouts(page, expected(), "after an empty file")


def test_a_file_over_the_limit_is_refused_before_sending(
    page: Page, server: str, ui, tmp_path, ws_frames
) -> None:
    ui.open_widget(page, f"{server}{ROUTE}")
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (MAX_TRACE_BYTES + 1))
    ws_frames.reset()
    file_input(page).set_input_files(str(big))
    assert_alert_at_the_control(page, "big.json", "limit")
    assert ws_frames.sent == 0, "a file over the limit is refused in the page, before sending"


def test_a_trace_of_the_largest_allowed_size_arrives_in_one_message(
    page: Page, server: str, ui, tmp_path
) -> None:
    # Padded with newlines to the limit: each is sent as two characters ("\n"), so the
    # message is twice the file, and still within the server's websocket limit.
    text = shipped()["one-bucket.json"].read_text()
    padded = text + "\n" * (MAX_TRACE_BYTES - len(text.encode()))
    assert len(padded.encode()) == MAX_TRACE_BYTES
    path = tmp_path / "largest.json"
    path.write_text(padded)
    ui.open_widget(page, f"{server}{ROUTE}")
    file_input(page).set_input_files(str(path))
    expect(
        page.get_by_role("status").filter(has_text="Showing your upload, largest.json")
    ).to_be_visible(timeout=30_000)
    assert_readouts(page, expected(parse_trace(padded, name="largest.json")), "after it")


def test_an_iteration_past_the_trace_gets_a_notice_and_the_value_in_use(
    page: Page, server: str, ui
) -> None:
    ui.open_widget(page, f"{server}{ROUTE}?iteration=999")
    notices = page.get_by_role("status", name="Notices", exact=True)
    expect(notices).to_contain_text("Ignored iteration=999: Iteration must be 0 to 10.")
    expect(field(page, "Iteration")).to_have_value("0")
    expect(page.get_by_text("0 to 10: 0 draws the median iteration")).to_be_visible()
    link = field(page, "Link to these settings")
    expect(link).to_have_value(re.compile(r"iteration=0(&|$)"), timeout=TIMEOUT)
    assert "999" not in page.url


def test_the_chart_labels_each_ranks_rows_and_marks_the_tail(page: Page, server: str, ui) -> None:
    ui.open_widget(page, f"{server}{ROUTE}")
    chart = page.get_by_role("img", name="Each rank's layers and all-reduces, measured and model")
    for name in ("Rank 0 layers", "Rank 0 all-reduces", "Rank 1 layers", "Rank 1 all-reduces"):
        expect(chart.locator("text", has_text=re.compile(f"^{name}$"))).to_have_count(1)
    key = page.get_by_role("list", name="Key")
    for entry in ("Last gradient ready: the exposed tail starts", "Model (hatched, lower half)"):
        expect(key).to_contain_text(entry)
    definition = page.get_by_text(re.compile(r"^The exposed tail is the communication left"))
    expect(definition).to_be_visible()
    # The largest error comes first, before the chart.
    worst = readout(page, "Largest model error")
    expect(worst).to_have_text(re.compile(r"^[+−]\d+\.\d %"))
    assert worst.bounding_box()["y"] < chart.bounding_box()["y"]


def test_on_a_phone_the_chart_is_within_the_first_screen(browser, server: str, ui) -> None:
    context = browser.new_context(
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        device_scale_factor=3,
        has_touch=True,
    )
    try:
        page = context.new_page()
        ui.open_widget(page, f"{server}{ROUTE}")
        chart = page.get_by_role(
            "img", name="Each rank's layers and all-reduces, measured and model"
        )
        expect(chart.locator("svg")).to_be_visible()
        box = chart.bounding_box()
        assert box["y"] + box["height"] <= 844, box
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        # The rows are still labelled, on two lines.
        expect(chart.locator("text", has_text=re.compile(r"^all-reduces$"))).to_have_count(2)
    finally:
        context.close()


def test_an_upload_with_fewer_iterations_changes_the_iterations_range(
    page: Page, server: str, ui, tmp_path
) -> None:
    ui.open_widget(page, f"{server}{ROUTE}?iteration=5")
    expect(field(page, "Iteration")).to_have_value("5")
    doc = json.loads(shipped()["one-bucket.json"].read_text())
    doc["iterations"] = doc["iterations"][:3]
    short = tmp_path / "short.json"
    short.write_text(json.dumps(doc))
    file_input(page).set_input_files(str(short))
    expect(page.get_by_role("status").filter(has_text="It has 3 iterations")).to_be_visible(
        timeout=TIMEOUT
    )
    expect(field(page, "Iteration")).to_have_value("0")
    expect(page.get_by_text("0 to 3: 0 draws the median iteration")).to_be_visible()
    field(page, "Iteration").fill("4")
    field(page, "Iteration").press("Enter")
    expect(page.get_by_role("alert")).to_have_text(re.compile("Iteration must be 0 to 3."))
