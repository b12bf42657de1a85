"""The coverage table (docs/source-coverage.md): every paragraph of the two source texts
has rows, and every place a row names exists (a lesson section's anchor, a widget, a
preset or scenario, an experiment button)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lessons import Experiment, load_lessons
from lessons.anchors import lesson_anchors
from widgets.registry import WIDGETS

TABLE = Path(__file__).parents[2] / "docs" / "source-coverage.md"
#: Paragraphs of the source texts, counted by hand: the notes have six, the course page
#: eight (its bucket-size table is the fourth).
PARAGRAPHS = [f"G{i}" for i in range(1, 7)] + [f"C{i}" for i in range(1, 9)]
ROW = re.compile(r"^\| ([GC]\d+)\.(\d+) \| (.+?) \| (.+?) \|$", re.MULTILINE)
PLACE = re.compile(r"`([a-z]+):([^`]+)`")
LESSONS = load_lessons()


def rows() -> list[tuple[str, int, str, str]]:
    return [(m[1], int(m[2]), m[3], m[4]) for m in ROW.finditer(TABLE.read_text("utf-8"))]


ROWS = rows()


def test_every_paragraph_has_rows_numbered_in_order() -> None:
    claims: dict[str, list[int]] = {}
    for paragraph, number, _, _ in ROWS:
        claims.setdefault(paragraph, []).append(number)
    assert list(claims) == PARAGRAPHS
    for paragraph, numbers in claims.items():
        assert numbers == list(range(1, len(numbers) + 1)), f"{paragraph}: {numbers}"


def test_the_table_is_read_whole() -> None:
    # Every table line of the file is a row the pattern reads (no row silently skipped).
    lines = [
        line
        for line in TABLE.read_text("utf-8").splitlines()
        if line.startswith("| ") and not line.startswith("| Claim")
    ]
    assert len(lines) == len(ROWS) >= 40


def place_exists(kind: str, target: str) -> str:
    """ "" if the place exists, else why not."""
    if kind == "lesson":
        name, _, anchor = target.partition("#")
        if name not in LESSONS:
            return f"no lesson {name}"
        anchors = lesson_anchors(LESSONS[name])
        return "" if anchor in anchors else f"{name} has no section #{anchor} ({anchors})"
    if kind == "widget":
        return "" if target in WIDGETS else f"no widget {target}"
    if kind in ("preset", "scenario"):
        widget, _, name = target.partition("/")
        spec = WIDGETS.get(widget)
        named = spec.named if spec is not None else None
        if named is None or named.key != kind:
            return f"{widget} has no {kind}s"
        return "" if name in named else f"{widget} has no {kind} {name!r} ({list(named)})"
    if kind == "experiment":
        name, _, label = target.partition("/")
        labels = [b.label for b in LESSONS[name].blocks if isinstance(b, Experiment)]
        return "" if label in labels else f"{name} has no experiment {label!r}"
    return f"unknown kind of place {kind!r}"


@pytest.mark.parametrize(("paragraph", "number", "said", "where"), ROWS, ids=lambda v: str(v)[:12])
def test_every_place_a_row_names_exists(paragraph: str, number: int, said: str, where: str) -> None:
    places = PLACE.findall(where)
    assert places, f"{paragraph}.{number} names no place"
    assert said.strip(), f"{paragraph}.{number} says nothing"
    problems = [p for p in (place_exists(k, t) for k, t in places) if p]
    assert not problems, f"{paragraph}.{number}: {problems}"


def test_a_missing_place_is_found() -> None:
    assert place_exists("lesson", "order-matters#no-such-section")
    assert place_exists("preset", "bucket-timeline/No such preset")
    assert place_exists("scenario", "bucket-timeline/Overlap works")  # a preset, not a scenario
    assert place_exists("experiment", "dependency-schedule/No such button")
    assert place_exists("widget", "no-such-widget")
    assert not place_exists("scenario", "ranks/Ranks disagree")
