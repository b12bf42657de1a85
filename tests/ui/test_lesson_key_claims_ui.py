"""A glyph a lesson names in its prose ("the gradient is ready (●)") is in its widget's key.

Each lesson's prose is read for glyphs in parentheses; the lesson's own widgets
are opened on their routes and their keys read as drawn (each marker names its
shape). Every glyph the lesson names must be the shape of a key entry of one of
its widgets, filled or hollow as the glyph is.
"""

from __future__ import annotations

import re

import pytest
from pagekit import FIND_WIDGET_JS
from playwright.sync_api import Page

from lessons import Prose, WidgetBlock, load_lessons

#: Each glyph a lesson may name, as the shape the key draws and whether it is filled.
GLYPHS = {
    "●": ("circle", True),
    "◯": ("circle", False),
    "○": ("circle", False),
    "▲": ("triangle", True),
    "▼": ("inverted-triangle", True),
    "◆": ("diamond", True),
    "■": ("square", True),
    "★": ("star", True),
    "⬢": ("hexagon", True),
    "⬣": ("hexagon", True),
}
CLAIM = re.compile("\\((" + "|".join(GLYPHS) + ")\\)")
LESSONS = load_lessons()

KEY_SHAPES_JS = (
    "() => {"
    + FIND_WIDGET_JS
    + r"""
  return [...widget.querySelectorAll(".ol-figure ul.ol-key [data-shape]")].map((m) => ({
    shape: m.getAttribute("data-shape"),
    filled: m.getAttribute("fill") !== "none",
    label: m.closest("li").querySelector("span").textContent,
  }));
}
"""
)


def claims() -> list[tuple[str, list[str], set[str]]]:
    """(lesson, its widgets, the glyphs its prose names) for every lesson that names one."""
    found = []
    for name, lesson in LESSONS.items():
        widgets = sorted({b.widget for b in lesson.blocks if isinstance(b, WidgetBlock)})
        glyphs = {g for b in lesson.blocks if isinstance(b, Prose) for g in CLAIM.findall(b.text)}
        if glyphs:
            found.append((name, widgets, glyphs))
    return found


CLAIMS = claims()


def test_some_lesson_names_glyphs() -> None:
    assert CLAIMS, "no lesson names a key glyph: the test below checks nothing"


def test_a_hexagon_claim_is_read() -> None:
    # The pattern reads the glyphs a lesson might name, including ones no key draws.
    assert CLAIM.findall("ends (⬢) and starts (★), not [●]") == ["⬢", "★"]


@pytest.mark.parametrize(("lesson", "widgets", "glyphs"), CLAIMS, ids=[c[0] for c in CLAIMS])
def test_every_glyph_a_lesson_names_is_in_its_widgets_key(
    page: Page, server: str, ui, lesson: str, widgets: list[str], glyphs: set[str]
) -> None:
    drawn = []
    for widget in widgets:
        ui.open_widget(page, f"{server}/{widget}")
        drawn += page.evaluate(KEY_SHAPES_JS)
    shapes = {(d["shape"], d["filled"]) for d in drawn}
    missing = sorted(g for g in glyphs if GLYPHS[g] not in shapes)
    assert not missing, f"{lesson} names {missing}; its widgets' keys draw {sorted(shapes)}"


#: Every text the widget's charts draw (titles, lane names, bar labels).
CHART_TEXTS_JS = (
    "() => {"
    + FIND_WIDGET_JS
    + """
  return [...widget.querySelectorAll(".ol-figure svg text, .ol-chart svg text")]
    .map((t) => t.textContent);
}
"""
)
QUOTED = re.compile(r"\"([^\"]+)\"")


def quotes(lesson: str, starting: str) -> list[str]:
    """The quotations in a lesson's prose that start with ``starting``."""
    return [
        q
        for b in LESSONS[lesson].blocks
        if isinstance(b, Prose)
        for q in QUOTED.findall(b.text)
        if q.startswith(starting)
    ]


def test_the_sweep_chart_lesson_1_names_is_titled_as_drawn(page: Page, server: str, ui) -> None:
    named = quotes("overlapping-communication", "Best: ")
    assert named, "lesson 1 names the sweep chart by no title"
    ui.open_widget(page, f"{server}/bucket-timeline?preset=Overlap%20works")
    drawn = page.evaluate(CHART_TEXTS_JS)
    assert set(named) <= set(drawn), f"lesson 1 names {named}; the charts draw {drawn}"


def test_the_order_wait_lane_and_bar_lesson_3_names_are_drawn(page: Page, server: str, ui) -> None:
    lesson = "\n".join(b.text for b in LESSONS["order-matters"].blocks if isinstance(b, Prose))
    assert "**Order wait**" in lesson
    labels = quotes("order-matters", "waiting for bucket 0") + quotes("order-matters", "for 0")
    assert labels, "lesson 3 quotes no label of the order-wait bar"
    ui.open_widget(page, f"{server}/bucket-timeline?preset=Reordered%20module")
    page.get_by_role("button", name="Play").click()
    # Bar labels are drawn once the playhead has passed the bar (bucket 1 waits 10-14 ms).
    page.wait_for_function(
        "(labels) => {"
        + FIND_WIDGET_JS
        + """
  return [...widget.querySelectorAll(".ol-chart svg text")]
    .some((t) => labels.includes(t.textContent));
}""",
        arg=labels,
        timeout=30_000,
    )
    drawn = page.evaluate(CHART_TEXTS_JS)
    assert "Order wait" in drawn, f"no Order wait lane among {drawn}"
