"""A course's own lessons: folders named on the command line, beside or instead of the product's."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main
from lessons import LessonError
from lessons.check import check_course
from lessons.course import CourseSource, course_lessons, use_course
from lessons.parser import LESSON_DIR

OWN = """---
title: Our own lesson
summary: Kept in the course's repository.
order: {order}
---
Some prose.

```widget bucket-timeline
preset: Latency-bound
```

```experiment
label: Three layers per bucket
layers_per_bucket: 3
```
"""

BUILTIN = sorted(p.stem for p in LESSON_DIR.glob("*.md"))


@pytest.fixture(autouse=True)
def _product_course_after():
    yield
    use_course(CourseSource())


def own_folder(tmp_path: Path, name: str = "our-lesson", order: int = 9, text: str = OWN) -> Path:
    folder = tmp_path / "course"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.md").write_text(text.format(order=order), encoding="utf-8")
    return folder


def test_an_outside_lesson_joins_the_products_in_course_order(tmp_path):
    lessons = CourseSource.of([own_folder(tmp_path, order=0)]).lessons()
    # order 0 comes before the product's first lesson (order 1)
    assert next(iter(lessons)) == "our-lesson"
    assert sorted(lessons) == sorted([*BUILTIN, "our-lesson"])
    assert lessons["our-lesson"].title == "Our own lesson"


def test_without_the_builtin_lessons_only_the_courses_are_served(tmp_path):
    lessons = use_course(CourseSource.of([own_folder(tmp_path)], builtin=False))
    assert list(lessons) == ["our-lesson"]
    assert list(course_lessons()) == ["our-lesson"]


def test_a_missing_or_empty_folder_is_named(tmp_path):
    with pytest.raises(LessonError, match=r"nowhere: no such folder of lessons"):
        CourseSource.of([tmp_path / "nowhere"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(LessonError, match=r"empty: holds no lesson \(no \*\.md file\)"):
        CourseSource.of([tmp_path / "empty"])
    with pytest.raises(LessonError, match="no lessons: give --lessons DIR"):
        CourseSource.of([], builtin=False)


def test_two_lessons_of_one_name_are_refused_naming_both_files(tmp_path):
    taken = BUILTIN[0]
    folder = own_folder(tmp_path, name=taken)
    with pytest.raises(LessonError) as exc:
        CourseSource.of([folder]).lessons()
    message = str(exc.value)
    assert f"{folder / taken}.md:1:" in message
    assert str(LESSON_DIR / f"{taken}.md") in message


def test_a_file_name_that_cannot_be_an_address_is_refused(tmp_path):
    folder = own_folder(tmp_path, name="My Lesson")
    with pytest.raises(LessonError, match=r"My Lesson\.md:1: the file name “My Lesson”"):
        CourseSource.of([folder], builtin=False).lessons()


def test_a_failed_course_keeps_the_one_in_use(tmp_path):
    use_course(CourseSource.of([own_folder(tmp_path)], builtin=False))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "our-lesson.md").write_text("no front matter", encoding="utf-8")
    with pytest.raises(LessonError):
        use_course(CourseSource.of([own_folder(tmp_path), bad], builtin=False))
    assert list(course_lessons()) == ["our-lesson"]


def test_check_passes_a_good_course_and_names_file_and_line_of_a_fault(tmp_path, capsys):
    folder = own_folder(tmp_path)
    assert check_course([folder], builtin=False) == 0
    assert "1 lessons checked, 0 with faults" in capsys.readouterr().out
    bad = OWN.replace("preset: Latency-bound", "preset: Slow")
    (folder / "second.md").write_text(bad.format(order=2), encoding="utf-8")
    assert check_course([folder], builtin=False) == 1
    out = capsys.readouterr().out
    assert f"{folder / 'second.md'}:9: bucket-timeline: unknown preset “Slow”" in out
    assert "2 lessons checked, 1 with faults" in out


def test_check_finds_a_wrong_number_in_an_outside_lesson(tmp_path, capsys):
    # Latency-bound's last transfer alone takes longer than 1.00 ms (5 MB at its bandwidth
    # plus 0.2 ms a step), so the tail cannot be 1.00 ms: the checker names the line.
    stated = "\nThe exposed tail is 1.00 ms.\n\n```numbers\ntail is 1.00 ms | exposed_tail\n```\n"
    text = OWN + stated
    folder = own_folder(tmp_path, text=text)
    assert check_course([folder], builtin=False) == 1
    out = capsys.readouterr().out
    numbers_line = text.format(order=9).splitlines().index("tail is 1.00 ms | exposed_tail") + 1
    assert f"{folder / 'our-lesson.md'}:{numbers_line}: " in out


def test_the_cli_check_command_exits_with_the_checks_status(tmp_path, capsys):
    folder = own_folder(tmp_path)
    with pytest.raises(SystemExit) as ok:
        main(["check", "--lessons", str(folder), "--no-builtin-lessons"])
    assert ok.value.code == 0
    with pytest.raises(SystemExit) as missing:
        main(["check", "--lessons", str(tmp_path / "nowhere")])
    assert missing.value.code == 1
    assert "nowhere: no such folder of lessons" in capsys.readouterr().out


def test_serve_and_export_refuse_a_course_that_cannot_be_read(tmp_path):
    for command in (["serve"], ["export", str(tmp_path / "out")]):
        with pytest.raises(SystemExit) as exc:
            main([*command, "--lessons", str(tmp_path / "nowhere")])
        assert f"overlap-lab {command[0]}: " in str(exc.value)
        assert "no such folder of lessons" in str(exc.value)
    assert not (tmp_path / "out").exists()


def test_a_course_read_again_builds_its_lesson_pages() -> None:
    """Rendered lesson text is cached per process; a second reading's blocks still find it."""
    from app.pages.lesson_page import lesson_body
    from lessons.parser import load_lessons

    first = load_lessons()["overlapping-communication"]
    second = load_lessons()["overlapping-communication"]
    assert first.blocks is not second.blocks
    for lesson in (first, second):
        view = lesson_body(lesson, "http://localhost:5006")
        assert len(view.widgets) == len(lesson.widgets) > 0
