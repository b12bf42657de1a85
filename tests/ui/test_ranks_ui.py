"""The ranks view in headless Chromium: what only a browser shows, by accessible names.

Expected readouts come from the model (``RanksConfig(...).result()``) formatted
by the view's own text module.
"""

from __future__ import annotations

import re

import pytest
from pagekit import TIMEOUT, button, enter, readout, value_of
from playwright.sync_api import Page, expect

from widgets import ranks_text
from widgets.model.ranks_view import DISAGREE, SCENARIO_SETTINGS, TWO_PARTIAL, RanksConfig

ROUTE = "/ranks"


def starts(text: str) -> re.Pattern:
    return re.compile("^" + re.escape(text) + r"(\s|$)")


def expected(**settings) -> dict[str, str]:
    scenario = settings.get("scenario", "One slow rank")
    r = RanksConfig(**{**SCENARIO_SETTINGS[scenario], **settings}).result()
    values = (
        ranks_text.readout_values(r)
        if r.schedule is not None
        else ranks_text.disagreement_values(r.disagreement)
    )
    return {label: value for label, value, _ in values.values()}


def assert_readouts(page: Page, values: dict[str, str], context: str) -> None:
    for name, value in values.items():
        expect(readout(page, name), f"{name} {context}").to_have_text(
            starts(value), timeout=TIMEOUT
        )


def scenario_select(page: Page):
    return page.get_by_role("combobox", name="Scenario", exact=True)


@pytest.fixture
def ranks(page: Page, server: str, ui) -> Page:
    page.set_viewport_size({"width": 1280, "height": 900})
    ui.open_widget(page, server + ROUTE)
    return page


def test_defaults_show_every_readout_with_its_label(ranks: Page):
    values = expected()
    assert values["Idle time of the fastest rank"] == "16.80 ms"
    assert values["What a timer around the all-reduce call measures"] == "0.05 ms"
    assert_readouts(ranks, values, "at the defaults")
    expect(readout(ranks, "Elapsed time")).to_have_text(starts("0.00 ms"))


def test_choosing_a_scenario_loads_its_settings(ranks: Page):
    scenario_select(ranks).select_option(label=TWO_PARTIAL)
    expect(ranks.get_by_label("Layers per bucket", exact=True)).to_have_value("2", timeout=TIMEOUT)
    assert_readouts(ranks, expected(scenario=TWO_PARTIAL), "for two partial stragglers")
    expect(readout(ranks, "Slowest rank per bucket")).to_have_text(starts("0, 0, 0, 0, 1, 1"))


def test_ranks_disagree_shows_the_sequences_instead_of_a_timeline(ranks: Page, ui):
    scenario_select(ranks).select_option(label=DISAGREE)
    region = ranks.get_by_role("region", name="Ranks disagree: no timeline to draw")
    expect(region).to_be_visible(timeout=TIMEOUT)
    expect(region.get_by_role("rowheader", name=re.compile("stops matching here"))).to_have_text(
        re.compile(r"^Collective 1")
    )
    expect(region.get_by_text("(waits for layer 7)")).to_be_visible()
    assert_readouts(ranks, expected(scenario=DISAGREE), "when ranks disagree")
    expect(readout(ranks, "Slowest rank per bucket")).to_have_count(0)
    ui.assert_no_serious_axe_violations(ranks)
    # Back to a timeline.
    scenario_select(ranks).select_option(label="Jitter")
    expect(region).to_be_hidden(timeout=TIMEOUT)
    assert_readouts(ranks, expected(scenario="Jitter"), "back on a timeline")


def test_play_reveals_the_markers_in_the_browser(page: Page, server: str, ui):
    # Messages while playing are counted for every widget in test_every_widget_ui;
    # here: the playhead moves and the revealed markers grow, in the page alone.
    ui.open_widget(page, server + ROUTE)
    # Two sources hold event markers: the whole run, and what the playhead has
    # revealed of it (the smaller one while playing).
    count = (
        "() => { const d = Bokeh.documents[0]; const n = [];"
        " for (const m of d._all_models.values())"
        "   if (m.data && m.data.marker && m.data.x) n.push(m.data.x.length);"
        " return n.length === 2 ? Math.min(...n) : -1; }"
    )
    before = page.evaluate(count)
    assert before >= 0, "expected one source of every marker and one of those revealed"
    button(page, "Play").click()
    expect(button(page, "Pause")).to_be_visible(timeout=TIMEOUT)
    first = ui.wait_until(lambda: value_of(page, "Elapsed time"), timeout=10)
    shown = ui.wait_until(
        lambda: page.evaluate(count) > before and page.evaluate(count), timeout=10
    )
    second = ui.wait_until(
        lambda: value_of(page, "Elapsed time") > first and value_of(page, "Elapsed time"),
        timeout=10,
    )
    assert 0 < first < second and shown > before
    button(page, "Pause").click()
    expect(button(page, "Play")).to_be_visible(timeout=TIMEOUT)


def test_keyboard_only_scenario_and_step(ranks: Page, ui):
    page = ranks
    seen = []
    for _ in range(40):
        page.keyboard.press("Tab")
        now = ui.focused(page)
        seen.append(now)
        if now and now["tag"] == "select":
            break
    else:
        pytest.fail(f"Tab never reached the scenario menu: {seen}")
    page.keyboard.press("ArrowDown")  # One slow rank -> Two partial stragglers
    assert_readouts(page, expected(scenario=TWO_PARTIAL), "after choosing by keyboard")
    for _ in range(80):
        page.keyboard.press("Tab")
        now = ui.focused(page)
        if now and now["tag"] == "button" and now["name"] == "Step":
            break
    else:
        pytest.fail("Tab never reached Step")
    page.keyboard.press("Space")
    expect(readout(page, "Elapsed time")).not_to_have_text(starts("0.00 ms"), timeout=TIMEOUT)


def test_bad_input_shows_an_alert_and_keeps_the_readouts(ranks: Page, server_log):
    start = server_log.size()
    enter(ranks, "Drawn ranks", "9")
    alert = ranks.get_by_role("alert")
    expect(alert).to_contain_text("Drawn ranks must be 1 to 8 ranks.", timeout=TIMEOUT)
    assert_readouts(ranks, expected(), "after a refused value")
    enter(ranks, "Drawn ranks", "8")
    expect(ranks.get_by_role("alert")).to_have_count(0, timeout=TIMEOUT)
    assert_readouts(ranks, expected(drawn_ranks=8), "with eight ranks")
    server_log.assert_no_traceback(since=start)


def test_url_scenario_and_bad_key(page: Page, server: str, ui):
    ui.open_widget(page, server + ROUTE + "?scenario=Ranks%20disagree&layers_per_bucket=1&bogus=2")
    assert_readouts(page, expected(scenario=DISAGREE, layers_per_bucket=1), "from the URL")
    notices = page.get_by_role("status", name="Notices", exact=True)
    expect(notices).to_contain_text("bogus", timeout=TIMEOUT)
