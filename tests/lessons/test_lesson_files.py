"""Lesson files: every one parses, names real widgets and valid settings; bad ones say where."""

from __future__ import annotations

from pathlib import Path

import pytest

from lessons import (
    Experiment,
    LessonError,
    Prose,
    Question,
    WidgetBlock,
    load_lessons,
    parse_lesson,
)
from lessons.check import main as check_main
from widgets.registry import WIDGETS

LESSONS = load_lessons()

GOOD = """---
title: A lesson
summary: One sentence.
---
Some prose.

```widget bucket-timeline
preset: Latency-bound
```

```experiment
label: Three layers per bucket
layers_per_bucket: 3
```

```question
Why?
---
Because.
```
"""


def test_the_two_course_lessons_exist() -> None:
    assert {"overlapping-communication", "dependency-schedule"} <= set(LESSONS)


@pytest.mark.parametrize("name", sorted(LESSONS))
def test_every_lesson_has_widgets_experiments_and_questions(name: str) -> None:
    lesson = LESSONS[name]
    assert lesson.title and lesson.summary
    assert lesson.widgets, "a lesson embeds at least one live widget"
    assert all(b.widget in WIDGETS for b in lesson.widgets)
    assert any(isinstance(b, Experiment) for b in lesson.blocks)
    assert sum(isinstance(b, Question) for b in lesson.blocks) >= 3


def test_every_ranks_experiment_asks_for_a_prediction() -> None:
    """In "Which rank, which event" each experiment is followed, before the next one,
    by a "Predict" in the prose or by a question."""
    blocks = LESSONS["which-rank-which-event"].blocks
    for i, block in enumerate(blocks):
        if isinstance(block, Experiment):
            rest = blocks[i + 1 :]
            upto = next((j for j, b in enumerate(rest) if isinstance(b, Experiment)), len(rest))
            prose = " ".join(b.text for b in rest[:upto] if isinstance(b, Prose))
            asks = "Predict" in prose or any(isinstance(b, Question) for b in rest[:upto])
            assert asks, f"{block.label} asks for no prediction"


@pytest.mark.parametrize("name", sorted(LESSONS))
def test_every_directive_builds_its_widget_and_applies_its_experiments(name: str) -> None:
    import panel as pn

    pn.extension()
    lesson = LESSONS[name]
    views = {}
    for i, block in enumerate(lesson.blocks):
        if isinstance(block, WidgetBlock):
            views[i] = WIDGETS[block.widget].create(**block.settings)
        elif isinstance(block, Experiment):
            view = views[block.target]
            view.apply(**block.settings)
            # What the widget holds: its settings, and what a link names (a preset); a
            # link may leave out a setting equal to its scenario's (many ranks).
            values = {**view.settings.param.values(), **view.settings_values()}
            for key, value in block.settings.items():
                assert values[key] == value


def test_a_good_lesson_parses_into_blocks() -> None:
    lesson = parse_lesson(GOOD, "demo")
    kinds = [type(b).__name__ for b in lesson.blocks]
    assert kinds == ["Prose", "WidgetBlock", "Experiment", "Question"]
    assert lesson.blocks[1].settings == {"preset": "Latency-bound"}
    assert lesson.blocks[2].target == 1
    assert lesson.blocks[2].settings == {"layers_per_bucket": 3}


@pytest.mark.parametrize(
    ("broken", "line", "words"),
    [
        (
            GOOD.replace("```widget bucket-timeline", "```widget bucket-timelime"),
            7,
            "unknown widget “bucket-timelime”",
        ),
        (GOOD.replace("preset: Latency-bound", "preset: Slow"), 8, "unknown preset “Slow”"),
        (
            GOOD.replace("layers_per_bucket: 3", "layers_per_bucket: 30"),
            13,
            "Layers per bucket must be 1 to 12",
        ),
        (GOOD.replace("layers_per_bucket: 3", "arrival: 3"), 13, "unknown setting “arrival”"),
        (GOOD.replace("label: Three layers per bucket\n", ""), 11, "needs “label: …”"),
        (GOOD.replace("Why?\n---\n", "Why?\n"), 16, "needs a “---” line"),
        (GOOD.replace("title: A lesson\n", ""), 1, "needs “title: …”"),
        (GOOD.rsplit("```", 1)[0], 16, "never closed"),
        (GOOD.replace("preset: Latency-bound", "preset Latency-bound"), 8, "key: value"),
    ],
)
def test_a_bad_directive_names_the_file_and_line(broken: str, line: int, words: str) -> None:
    with pytest.raises(LessonError) as err:
        parse_lesson(broken, "broken", Path("lessons/broken.md"))
    assert str(err.value).startswith(f"lessons/broken.md:{line}: ")
    assert words in str(err.value)


def test_an_experiment_needs_a_widget_above_it() -> None:
    text = GOOD.replace("```widget bucket-timeline\npreset: Latency-bound\n```\n", "")
    with pytest.raises(LessonError, match=r"demo\.md:\d+: an experiment needs a widget"):
        parse_lesson(text, "demo")


def test_the_checker_reports_errors_and_exits_nonzero(tmp_path: Path, capsys) -> None:
    good, bad = tmp_path / "good.md", tmp_path / "bad.md"
    good.write_text(GOOD)
    bad.write_text(GOOD.replace("preset: Latency-bound", "preset: Slow"))
    assert check_main([str(good)]) == 0
    assert check_main([str(good), str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:8: bucket-timeline: unknown preset “Slow”" in out


def test_a_dropped_in_lesson_is_served_without_python(tmp_path: Path) -> None:
    (tmp_path / "my-lesson.md").write_text(GOOD)
    lessons = load_lessons(tmp_path)
    assert list(lessons) == ["my-lesson"]
    assert lessons["my-lesson"].title == "A lesson"


def test_lessons_come_in_course_order() -> None:
    assert list(LESSONS)[:2] == ["overlapping-communication", "dependency-schedule"]


def test_order_must_be_a_whole_number() -> None:
    with pytest.raises(LessonError, match=r"demo\.md:1: “order: soon” must be a whole number"):
        parse_lesson(GOOD.replace("---\n", "---\norder: soon\n", 1), "demo")
