"""Every lesson says where it sits in the course and links the index, the one before and after.

Issue 18, finding 4: lessons linked neither the index nor the next lesson.
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from app.pages.lesson_page import lesson_html, lesson_nav
from lessons import load_lessons
from lessons.anchors import lesson_anchors

COURSE = list(load_lessons().values())


class _Nav(HTMLParser):
    """The nav's text and its links as (href, rel, text)."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str | None, str]] = []
        self.text = ""
        self._link: dict | None = None

    def handle_starttag(self, tag, attrs) -> None:
        if tag == "a":
            self._link = {**dict(attrs), "text": ""}

    def handle_endtag(self, tag) -> None:
        if tag == "a" and self._link is not None:
            self.links.append((self._link["href"], self._link.get("rel"), self._link["text"]))
            self._link = None

    def handle_data(self, data) -> None:
        self.text += data
        if self._link is not None:
            self._link["text"] += data


def parsed(html: str) -> _Nav:
    nav = _Nav()
    nav.feed(html)
    return nav


def test_the_course_has_six_lessons_in_the_index_order() -> None:
    assert [lesson.name for lesson in COURSE] == [
        "overlapping-communication",
        "dependency-schedule",
        "order-matters",
        "which-rank-which-event",
        "check-against-a-real-run",
        "at-real-scale",
    ]


@pytest.mark.parametrize("prefix", ["", "/widgets"])
@pytest.mark.parametrize("number", range(1, len(COURSE) + 1))
def test_each_lesson_links_the_index_and_its_neighbours(number: int, prefix: str) -> None:
    lesson = COURSE[number - 1]
    nav = parsed(lesson_nav(lesson, COURSE, prefix))
    assert f"Lesson {number} of {len(COURSE)}" in nav.text
    expected = [(f"{prefix}/", None, "All lessons and widgets")]
    if number > 1:
        before = COURSE[number - 2]
        expected.append((f"{prefix}/lessons/{before.name}", "prev", f"← Previous: {before.title}"))
    if number < len(COURSE):
        after = COURSE[number]
        expected.append((f"{prefix}/lessons/{after.name}", "next", f"Next: {after.title} →"))
    assert nav.links == expected


def test_headings_carry_their_anchors_and_lesson_links_their_prefix() -> None:
    lessons = load_lessons()
    text, _, _ = lesson_html(lessons["order-matters"])
    for anchor in lesson_anchors(lessons["order-matters"]):
        assert f'id="{anchor}"' in text
    text, _, _ = lesson_html(lessons["overlapping-communication"], prefix="/lab")
    assert 'href="/lab/lessons/order-matters#the-first-iteration-and-the-bucket-rebuild"' in text
    assert 'href="/lessons/' not in text
