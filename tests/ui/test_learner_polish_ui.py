"""What a learner sees on a phone and in a lesson, in headless Chromium.

Two all-reduces that overlap in time are both visible on /trace; the bucket timeline keeps
every layer's number at the end of Play on a 390 px phone.
"""

from __future__ import annotations

import pytest
from pagekit import FIND_WIDGET_JS, TIMEOUT, button
from playwright.sync_api import Page, expect

PHONE = {"width": 390, "height": 844}

#: Every drawn bar of an all-reduce on /trace: its rank and bucket, and its box on the chart.
ALLREDUCE_BARS_JS = (
    "() => {"
    + FIND_WIDGET_JS
    + """
  return [...widget.querySelectorAll('.ol-chart rect[data-allreduce]')].map(r => ({
    name: r.getAttribute('data-allreduce'), source: r.getAttribute('data-source'),
    x0: +r.getAttribute('x'), x1: +r.getAttribute('x') + +r.getAttribute('width'),
    y0: +r.getAttribute('y'), y1: +r.getAttribute('y') + +r.getAttribute('height')}));
}"""
)


def _overlap(a0: float, a1: float, b0: float, b1: float) -> bool:
    return min(a1, b1) - max(a0, b0) > 0.5  # more than half a pixel in common


@pytest.mark.parametrize("width", [1280, 390])
def test_trace_draws_overlapping_allreduces_apart(page: Page, server: str, ui, width: int):
    # mixed-5-5-2.json was recorded with gloo, which ran bucket 2's all-reduce while
    # bucket 1's was still going on rank 0: two bars that share time must not share rows.
    page.set_viewport_size({"width": width, "height": 900})
    ui.open_widget(page, f"{server}/trace?trace=mixed-5-5-2.json")
    bars = ui.wait_until(lambda: page.evaluate(ALLREDUCE_BARS_JS), timeout=TIMEOUT / 1000)
    by = {(b["name"], b["source"]): b for b in bars}
    one, two = by[("rank 0 bucket 1", "measured")], by[("rank 0 bucket 2", "measured")]
    assert _overlap(one["x0"], one["x1"], two["x0"], two["x1"]), (one, two)
    hidden = [
        (a["name"], b["name"], a["source"])
        for i, a in enumerate(bars)
        for b in bars[i + 1 :]
        if a["source"] == b["source"]
        and a["name"].split(" bucket")[0] == b["name"].split(" bucket")[0]
        and a["name"] != b["name"]
        and _overlap(a["x0"], a["x1"], b["x0"], b["x1"])
        and _overlap(a["y0"], a["y1"], b["y0"], b["y1"])
    ]
    assert not hidden, f"all-reduces drawn over each other: {hidden}"
    # The key says why a rank's all-reduces sit one above the other.
    key = page.get_by_role("list", name="Key")
    expect(key).to_contain_text("All-reduces that overlap in time: one above the other")


#: Each Backward-lane bar with the label drawn on it (after Play, every layer is reached).
BACKWARD_LABELS_JS = (
    "() => {"
    + FIND_WIDGET_JS
    + """
  const svg = widget.querySelector('.ol-chart svg');
  const lanes = [...svg.querySelectorAll('text')].filter(t => t.textContent === 'Backward');
  const lane = lanes[0].getBBox();
  const mid = lane.y + lane.height / 2;
  const out = [];
  for (const g of svg.querySelectorAll('g > g')) {
    const rect = g.querySelector('rect'), text = g.querySelector('text');
    if (!rect || !text) continue;
    const y0 = +rect.getAttribute('y'), y1 = y0 + +rect.getAttribute('height');
    if (mid < y0 || mid > y1) continue;
    out.push({label: text.textContent, size: +text.getAttribute('font-size'),
              text: text.getComputedTextLength(), bar: +rect.getAttribute('width')});
  }
  return out;
}"""
)


def test_phone_keeps_every_layer_label_at_the_end_of_play(page: Page, server: str, ui):
    page.set_viewport_size(PHONE)
    ui.open_widget(page, f"{server}/bucket-timeline")
    button(page, "Play").click()
    expect(button(page, "Pause")).to_be_visible(timeout=TIMEOUT)
    expect(button(page, "Play")).to_be_visible(timeout=30_000)  # the run ended
    expect(page.get_by_text("The run ended at")).to_be_visible(timeout=TIMEOUT)
    labels = page.evaluate(BACKWARD_LABELS_JS)
    # Twelve layers, backward from the last: each bar carries its layer's number.
    assert sorted(int(x["label"]) for x in labels) == list(range(1, 13)), labels
    for x in labels:
        assert x["size"] >= 9, x
        assert x["text"] <= x["bar"], f"layer {x['label']}'s number runs off its bar: {x}"


#: The boxes of a widget's chart figure, its settings and its data downloads, in page pixels.
BOXES_JS = (
    "() => {"
    + FIND_WIDGET_JS
    + """
  const box = (el) => { const r = el.getBoundingClientRect();
    return {top: r.top + scrollY, bottom: r.bottom + scrollY, left: r.left, right: r.right}; };
  return {figure: box(widget.querySelector('.ol-figure')),
          settings: box(widget.querySelector('[role=group][aria-label=Settings]')),
          description: box(widget.querySelector('.ol-description'))};
}"""
)


@pytest.mark.parametrize("route", ["/bucket-timeline", "/queue-lab", "/ranks", "/trace"])
def test_settings_sit_by_the_chart_on_a_phone_and_beside_it_on_a_wide_screen(
    page: Page, server: str, ui, route: str
):
    page.set_viewport_size(PHONE)
    ui.open_widget(page, server + route)
    b = page.evaluate(BOXES_JS)
    # On a phone: the settings follow the chart's figure directly, before its description.
    assert 0 <= b["settings"]["top"] - b["figure"]["bottom"] <= 60, b
    assert b["settings"]["bottom"] <= b["description"]["top"], b

    page.set_viewport_size({"width": 1280, "height": 900})
    ui.wait_until(lambda: page.evaluate(BOXES_JS)["settings"]["left"] > 640)
    b = page.evaluate(BOXES_JS)
    # Wide: beside the chart, from its column's top, the description under the chart.
    assert b["settings"]["left"] >= b["figure"]["right"], b
    assert b["settings"]["top"] <= b["figure"]["top"], b
    assert b["description"]["top"] >= b["figure"]["bottom"], b
    assert b["description"]["right"] <= b["settings"]["left"], b


def test_tab_goes_from_the_chart_to_its_settings(page: Page, server: str, ui):
    ui.open_widget(page, f"{server}/bucket-timeline")
    button(page, "Step").focus()
    # Step, then the first setting: not the downloads, a screen away on a phone.
    ui.tab_to(page, "Preset", "select", limit=1)


def test_an_experiment_leaves_a_way_back_to_its_paragraph(page: Page, server: str, ui):
    page.set_viewport_size(PHONE)
    ui.open_widget(page, f"{server}/lessons/overlapping-communication")
    experiment = page.locator("button[data-experiment]").nth(1)
    label = experiment.inner_text().lstrip("▶ ").strip()
    experiment.click()
    expect(page.get_by_text(f"Loaded “{label}”")).to_be_visible(timeout=TIMEOUT)
    back = button(page, "Back to the text")
    expect(back).to_be_in_viewport(timeout=TIMEOUT)
    expect(experiment).not_to_be_in_viewport()
    back.click()
    expect(experiment).to_be_in_viewport(timeout=TIMEOUT)
    ui.wait_until(lambda: (ui.focused(page) or {}).get("name", "").endswith(label))
    expect(back).to_be_hidden()


# --- the dark theme ----------------------------------------------------------------------------

#: The colours a reader sees: the page's, the widget's text and the chart's background.
COLOURS_JS = (
    "() => {"
    + FIND_WIDGET_JS
    + """
  const paint = (el, prop) => getComputedStyle(el)[prop];
  return {page: paint(document.body, 'backgroundColor'),
          text: paint(widget.querySelector('.ol-value'), 'color'),
          chart: paint(widget.querySelector('.ol-chart svg > rect'), 'fill'),
          theme: widget.dataset.theme};
}"""
)
DARK_PAGE = "rgb(13, 17, 23)"  # #0d1117
DARK_CHART = "rgb(21, 27, 35)"  # #151b23
LIGHT_PAGE = "rgb(246, 248, 250)"  # #f6f8fa
LIGHT_CHART = "rgb(255, 255, 255)"


def _luminance(css: str) -> float:
    """WCAG relative luminance of an ``rgb(r, g, b)`` colour."""
    channels = [int(x) / 255 for x in css[css.index("(") + 1 : css.index(")")].split(",")[:3]]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a: str, b: str) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize(
    ("scheme", "query", "dark"),
    [
        ("light", "?theme=dark", True),
        ("dark", "", True),
        ("dark", "?theme=light", False),
        ("light", "", False),
    ],
)
def test_the_theme_follows_the_address_else_the_browser(
    browser, server: str, ui, scheme: str, query: str, dark: bool
):
    context = browser.new_context(color_scheme=scheme, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        ui.open_widget(page, f"{server}/bucket-timeline{query}")
        c = page.evaluate(COLOURS_JS)
        assert c["theme"] == ("dark" if dark else "light"), c
        assert c["page"] == (DARK_PAGE if dark else LIGHT_PAGE), c
        assert c["chart"] == (DARK_CHART if dark else LIGHT_CHART), c
        assert _contrast(c["text"], c["page"]) >= 4.5, c
        # The page's own key is never a widget's unknown setting.
        expect(page.get_by_text("Ignored unknown setting")).to_have_count(0)
    finally:
        context.close()


def test_a_dark_page_keeps_its_theme_through_edits_and_passes_axe(page: Page, server: str, ui):
    ui.open_widget(page, f"{server}/bucket-timeline?theme=dark")
    ui.assert_no_serious_axe_violations(page)
    # The address follows the settings and keeps the page's theme, so a reload is dark too.
    box = page.get_by_label("Layers per bucket", exact=True)
    box.fill("2")
    box.press("Enter")
    here = lambda: page.evaluate("location.href")  # noqa: E731
    ui.wait_until(lambda: "layers_per_bucket=2" in here() and "theme=dark" in here())
    page.reload()
    ui.wait_rendered(page)
    assert page.evaluate(COLOURS_JS)["chart"] == DARK_CHART


@pytest.mark.parametrize("route", ["/trace?trace=mixed-5-5-2.json&theme=dark", "/ranks?theme=dark"])
def test_other_dark_pages_pass_axe(page: Page, server: str, ui, route: str):
    ui.open_widget(page, server + route)
    assert page.evaluate(COLOURS_JS)["theme"] == "dark"
    ui.assert_no_serious_axe_violations(page)


def test_a_dark_lesson_passes_axe(page: Page, server: str, ui):
    ui.open_widget(page, f"{server}/lessons/overlapping-communication?theme=dark")
    ui.assert_no_serious_axe_violations(page)


def test_a_theme_the_page_does_not_know_is_said_and_ignored(page: Page, server: str, ui):
    ui.open_widget(page, f"{server}/bucket-timeline?theme=purple")
    expect(page.get_by_text("Ignored theme=purple")).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_text("Ignored unknown setting")).to_have_count(0)
