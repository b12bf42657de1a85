"""Lessons link each other's sections by route and anchor, and say what DDP does as its
source does: the rebuild story is told in one section, which the others link; the
corrected statements stay corrected."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from lessons import Prose, Question, load_lessons, parse_lesson
from lessons.anchors import heading_anchor, lesson_anchors

LESSONS = load_lessons()
LINK = re.compile(r"\]\((/lessons/[^)\s]*|#[^)\s]*)\)")
REBUILD = "/lessons/order-matters#the-first-iteration-and-the-bucket-rebuild"


def texts(lesson) -> list[str]:
    out = []
    for block in lesson.blocks:
        if isinstance(block, Prose):
            out.append(block.text)
        elif isinstance(block, Question):
            out += [block.question, block.answer]
    return out


def links() -> list[tuple[str, str]]:
    return [
        (name, m)
        for name, lesson in LESSONS.items()
        for t in texts(lesson)
        for m in LINK.findall(t)
    ]


def test_a_heading_anchor_is_its_words() -> None:
    assert heading_anchor("The first iteration and the bucket rebuild") == (
        "the-first-iteration-and-the-bucket-rebuild"
    )
    assert heading_anchor("`find_unused_parameters=True`: no rebuild") == (
        "find-unused-parameters-true-no-rebuild"
    )
    lesson = parse_lesson("---\ntitle: T\nsummary: S\n---\n## One\n\n### Two, too\n\ntext", "x")
    assert lesson_anchors(lesson) == ["one", "two-too"]


@pytest.mark.parametrize("name", sorted(LESSONS))
def test_no_two_sections_of_a_lesson_share_an_anchor(name: str) -> None:
    counts = Counter(lesson_anchors(LESSONS[name]))
    assert not [a for a, n in counts.items() if n > 1]


def test_no_two_lessons_share_a_place_in_the_course() -> None:
    orders = Counter(lesson.order for lesson in LESSONS.values())
    assert not [o for o, n in orders.items() if n > 1], orders


@pytest.mark.parametrize(("name", "href"), links(), ids=[f"{n}{h}" for n, h in links()])
def test_every_link_between_lessons_reaches_a_section(name: str, href: str) -> None:
    target, _, anchor = href.partition("#")
    lesson = name if not target else target.removeprefix("/lessons/")
    assert lesson in LESSONS, f"{name} links {href}: no such lesson"
    if anchor:
        assert anchor in lesson_anchors(LESSONS[lesson]), f"{name} links {href}: no such section"


def test_the_rebuild_story_is_told_in_one_section_the_others_link() -> None:
    # The section that tells it names the functions it rests on; lessons 1 and 2 link it.
    story = next(t for t in texts(LESSONS["order-matters"]) if "sys.maxsize" in t)
    for needed in (
        "_ddp_init_helper",
        "rebuild_buckets",
        "sync_bucket_indices",
        "should_rebuild_buckets",
        "static_graph",
        "rank 0",
    ):
        assert needed in story, needed
    told = [n for n, lesson in LESSONS.items() for t in texts(lesson) if "sys.maxsize" in t]
    assert told == ["order-matters"]
    for name in ("overlapping-communication", "dependency-schedule"):
        assert any(REBUILD in t for t in texts(LESSONS[name])), f"{name} does not link the story"


#: (lesson, words that were wrong and must not come back, words that say it now).
CORRECTED = [
    ("dependency-schedule", "because the guess can be wrong", "does not guess"),
    ("dependency-schedule", "silently breaks", "mark_variable_ready_dense"),
    ("dependency-schedule", "", "finalize_backward"),
    ("check-against-a-real-run", "copy engines", "kernels on the GPU's streaming multiprocessors"),
    ("overlapping-communication", "alone in the last bucket, so the Exposed tail", "backlog"),
    ("overlapping-communication", '"Step time by bucket size"', '"Best: '),
    ("order-matters", 'labelled "waiting for bucket k"', "**Order wait**"),
]


@pytest.mark.parametrize(("name", "wrong", "right"), CORRECTED)
def test_a_corrected_statement_stays_corrected(name: str, wrong: str, right: str) -> None:
    text = "\n".join(texts(LESSONS[name]))
    assert not wrong or wrong not in text
    assert right in text
