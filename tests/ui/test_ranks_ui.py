"""The many-ranks view in headless Chromium: what only a browser shows, by accessible names.

Expected readouts come from the model (``RanksConfig(...).result()``) formatted
by the view's own text module. The chart is the page's own SVG: its marks and
its key are compared as drawn.
"""

from __future__ import annotations

import re

import pytest
from pagekit import (
    FIND_WIDGET_JS,
    TIMEOUT,
    assert_readouts,
    button,
    enter,
    readout,
    starts,
    value_of,
)
from playwright.sync_api import Page, expect

from widgets.many_ranks import text as ranks_text
from widgets.many_ranks.model import DISAGREE, SCENARIOS, TWO_PARTIAL, RanksConfig

ROUTE = "/ranks"


def expected(**settings) -> dict[str, str]:
    scenario = settings.get("scenario", "One slow rank")
    r = RanksConfig(**{**SCENARIOS[scenario], **settings}).result()
    values = (
        ranks_text.readout_values(r)
        if r.schedule is not None
        else ranks_text.disagreement_values(r.disagreement)
    )
    return {label: value for label, value, _ in values.values()}


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
    expect(readout(ranks, "Latest rank per bucket")).to_have_text(starts("0, 0, 0, 0, 1, 1"))


def test_ranks_disagree_shows_the_sequences_instead_of_a_timeline(ranks: Page, ui):
    scenario_select(ranks).select_option(label=DISAGREE)
    region = ranks.get_by_role("region", name="Ranks disagree: no timeline to draw")
    expect(region).to_be_visible(timeout=TIMEOUT)
    expect(region.get_by_role("rowheader", name=re.compile("stops matching here"))).to_have_text(
        re.compile(r"^Collective 1")
    )
    expect(region.get_by_text("(waits for layer 7)")).to_be_visible()
    assert_readouts(ranks, expected(scenario=DISAGREE), "when ranks disagree")
    expect(readout(ranks, "Latest rank per bucket")).to_have_count(0)
    ui.assert_no_serious_axe_violations(ranks)
    # Back to a timeline.
    scenario_select(ranks).select_option(label="Jitter")
    expect(region).to_be_hidden(timeout=TIMEOUT)
    assert_readouts(ranks, expected(scenario="Jitter"), "back on a timeline")


#: How many event markers the chart draws now (they are drawn once the playhead reaches them).
EVENT_MARKS = "[data-event]"


def test_play_reveals_the_markers_in_the_browser(page: Page, server: str, ui):
    # Messages while playing are counted for every widget in test_every_widget_ui;
    # here: the playhead moves and the drawn markers grow, in the page alone.
    ui.open_widget(page, server + ROUTE)
    marks = page.locator(EVENT_MARKS)
    expect(marks).to_have_count(0)  # at 0 ms nothing has happened yet
    button(page, "Play").click()
    expect(button(page, "Pause")).to_be_visible(timeout=TIMEOUT)
    first = ui.wait_until(lambda: value_of(page, "Elapsed time"), timeout=10)
    shown = ui.wait_until(lambda: marks.count(), timeout=10)
    second = ui.wait_until(
        lambda: value_of(page, "Elapsed time") > first and value_of(page, "Elapsed time"),
        timeout=10,
    )
    more = ui.wait_until(lambda: marks.count() > shown and marks.count(), timeout=10)
    assert 0 < first < second and 0 < shown < more
    button(page, "Pause").click()
    expect(button(page, "Play")).to_be_visible(timeout=TIMEOUT)


#: Each mark of the chart and of its key, as drawn: tag, paint and (markers) geometry.
MARKS_JS = (
    "() => {"
    + FIND_WIDGET_JS
    + r"""
  const root = widget.getRootNode();
  const round = (v) => Math.round(v * 10) / 10;
  const sig = (el) => {
    const a = (n) => el.getAttribute(n);
    const out = { tag: el.tagName, fill: a("fill"), stroke: a("stroke"),
      width: a("stroke-width"), fillOpacity: a("fill-opacity"),
      strokeOpacity: a("stroke-opacity"), dash: a("stroke-dasharray") };
    if (out.fill && out.fill.startsWith("url(")) {
      const pattern = root.getElementById(out.fill.slice(5, -1));
      out.fill = "hatch " + pattern.querySelector("line").getAttribute("stroke")
        + " on " + pattern.querySelector("rect").getAttribute("fill");
    }
    if (el.tagName === "circle") out.geometry = [round(+a("r"))];
    if (el.tagName === "polygon") {
      const pts = a("points").trim().split(/\s+/).map((p) => p.split(",").map(Number));
      const cx = pts.reduce((s, p) => s + p[0], 0) / pts.length;
      const cy = pts.reduce((s, p) => s + p[1], 0) / pts.length;
      out.geometry = pts.map(([x, y]) => [round(x - cx), round(y - cy)]);
    }
    return out;
  };
  const chart = root.querySelector(".ol-figure .ol-chart svg");
  const key = [...root.querySelectorAll('.ol-figure ul.ol-key > li')].map((li) => ({
    label: li.querySelector("span").textContent,
    marks: [...li.querySelector("svg").children].filter((c) => c.tagName !== "defs").map(sig),
  }));
  const drawn = (selector) => [...chart.querySelectorAll(selector)].map(sig);
  return {
    key,
    events: drawn("[data-event]").map((m, i) => ({ ...m,
      event: chart.querySelectorAll("[data-event]")[i].getAttribute("data-event") })),
    faint: drawn('g[data-layer="not-reached"] rect'),
    reached: drawn('g[data-layer="reached"] rect'),
    lines: drawn('[data-mark="backward-end"]'),
  };
}
"""
)

#: The key's event entries, by the event each stands for.
KEY_EVENTS = {
    "Gradient ready": "gradient",
    "Bucket ready on a rank": "ready",
    "Ring: launched last, so defines readiness": "defines",
    "Launch (the host enqueues it)": "launch",
    "Start: all launched, link free": "start",
    "Completion": "end",
    "Optimizer starts": "optimizer",
}
PAINT = ("tag", "fill", "fillOpacity", "strokeOpacity")


def key_entry(drawn: dict, label: str) -> dict:
    entries = [e for e in drawn["key"] if e["label"] == label]
    assert len(entries) == 1, (label, [e["label"] for e in drawn["key"]])
    return entries[0]["marks"][0]


def outline(mark: dict) -> tuple:
    """A marker's shape whatever its size: its corners scaled to the farthest one."""
    points = mark.get("geometry", [])
    if mark["tag"] != "polygon":
        return ()
    far = max(abs(v) for p in points for v in p)
    return tuple((round(x / far, 1), round(y / far, 1)) for x, y in points)


def test_every_mark_is_drawn_as_its_key_shows_it(ranks: Page, ui):
    # Issue 18 #6: the key showed filled glyphs while the chart showed faint hollow ones.
    page = ranks
    drawn = page.evaluate(MARKS_JS)
    assert drawn["events"] == []  # at 0 ms: no event marker at all, hollow or filled
    faint = key_entry(drawn, "Not reached yet (faint)")
    assert drawn["faint"] and not drawn["reached"]
    for bar in drawn["faint"]:
        assert (bar["fillOpacity"], bar["strokeOpacity"]) == (faint["fillOpacity"],) * 2, bar
    assert any(all(bar[k] == faint[k] for k in PAINT) for bar in drawn["faint"])
    # Step to the end of the run: every event has happened and is drawn.
    step = button(page, "Step")
    for _ in range(40):
        if step.is_disabled():
            break
        before = value_of(page, "Elapsed time")
        step.click()
        ui.wait_until(lambda b=before: value_of(page, "Elapsed time") > b or step.is_disabled())
    expect(step).to_be_disabled(timeout=TIMEOUT)
    drawn = page.evaluate(MARKS_JS)
    shapes = {}
    for label, event in KEY_EVENTS.items():
        entry = key_entry(drawn, label)
        marks = [m for m in drawn["events"] if m["event"] == event]
        assert marks, f"no {event} marker drawn"
        same = [m for m in marks if {k: m[k] for k in entry} == entry]
        assert same, f"{label}: the key draws {entry}, the chart {marks[0]}"
        shapes[event] = (entry["tag"], entry["fill"] == "none", outline(entry))
    assert len(set(shapes.values())) == len(shapes), shapes  # every event its own shape
    for label in ("Idle until the optimizer", "Optimizer", "Bucket 0: layers 12–\u206010"):
        entry = key_entry(drawn, label)
        assert any(all(bar[k] == entry[k] for k in PAINT) for bar in drawn["reached"]), label
    line = key_entry(drawn, "Slowest rank's backward ends")
    assert [{k: m[k] for k in ("tag", "stroke", "width", "dash")} for m in drawn["lines"]] == [
        {k: line[k] for k in ("tag", "stroke", "width", "dash")}
    ]


def test_an_edited_scenario_keeps_its_name_and_its_link(ranks: Page):
    scenario_select(ranks).select_option(label=TWO_PARTIAL)
    expect(ranks.get_by_label("Layers per bucket", exact=True)).to_have_value("2", timeout=TIMEOUT)
    enter(ranks, "Slowdown", "80")
    name = ranks.get_by_text("Two partial stragglers, changed: slowdown", exact=True)
    expect(name.first).to_be_visible(timeout=TIMEOUT)
    expect(scenario_select(ranks)).to_have_value(TWO_PARTIAL)
    link = ranks.get_by_label("Link to these settings", exact=True)
    expect(link).to_have_value(
        re.compile(r"\?scenario=Two\+partial\+stragglers&slowdown_pct=80$"), timeout=TIMEOUT
    )
    assert_readouts(ranks, expected(scenario=TWO_PARTIAL, slowdown_pct=80), "after an edit")


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


def test_readiness_order_differs_shows_rank_0s_buckets(ranks: Page, ui):
    from widgets.many_ranks.model import READINESS

    scenario_select(ranks).select_option(label=READINESS)
    expect(ranks.get_by_label("Drawn ranks", exact=True)).to_have_value("2", timeout=TIMEOUT)
    assert_readouts(ranks, expected(scenario=READINESS), "when readiness order differs")
    expect(readout(ranks, "Latest rank per bucket")).to_have_text(starts("1, 0, 1, 0"))
    expect(readout(ranks, "Buckets every rank launches")).to_have_text("4")
    expect(
        ranks.get_by_text(re.compile("Rank 1's own order would have cut 12, 11, 9"))
    ).to_be_visible()
    expect(readout(ranks, "A timer around backward() with NCCL")).to_have_text(starts("24.05 ms"))
    expect(readout(ranks, "A timer around backward() with gloo")).to_have_text(starts("31.95 ms"))
    enter(ranks, "Iteration", "0")
    expect(readout(ranks, "Buckets every rank launches")).to_have_text(starts("1"))
    ranks.get_by_role("combobox", name="All-reduce algorithm", exact=True).select_option("tree")
    assert_readouts(
        ranks,
        expected(scenario=READINESS, iteration=0, algorithm="tree"),
        "in iteration 0 with the tree",
    )
    ui.assert_no_serious_axe_violations(ranks)
