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
