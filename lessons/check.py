"""``overlap-lab check`` (or ``python -m lessons.check``): parse lessons, check their numbers.

Reports the first parse error in each file, or every stated number the model
does not give (see ``lessons.numbers``), each as ``path:line: message``; the
exit status is 1 on any fault. Needs neither Panel nor Bokeh.

    python -m lessons.check [FILE ...]            # default: the product's lessons
    overlap-lab check --lessons DIR [--no-builtin-lessons] [FILE ...]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from .course import CourseSource, course_of
from .numbers import check_lesson, count_checked
from .parser import LessonError, parse_lesson


def check_files(files: Sequence[Path]) -> int:
    """Check each lesson file and print what was found; the number of files that failed."""
    failed = 0
    for file in files:
        try:
            lesson = parse_lesson(file.read_text(encoding="utf-8"), file.stem, file)
        except (LessonError, OSError, UnicodeDecodeError) as exc:
            print(exc if isinstance(exc, LessonError) else f"{file}:1: cannot be read: {exc}")
            failed += 1
            continue
        problems = check_lesson(lesson)
        for problem in problems:
            print(problem)
        if problems:
            failed += 1
            continue
        checked, exempt = count_checked(lesson)
        print(
            f"{file}: ok ({len(lesson.blocks)} blocks, {len(lesson.widgets)} widgets, "
            f"{checked} numbers checked against the model, {exempt} marked not from it)"
        )
    return failed


def check_course(
    folders: Sequence[str | Path] = (), builtin: bool = True, files: Sequence[Path] = ()
) -> int:
    """Check a course: every lesson of its folders (or just ``files``); 1 on any fault.

    Besides each lesson's own faults, a course may not hold two lessons of one name.
    """
    try:
        source = CourseSource.of(folders, builtin)
    except LessonError as exc:
        print(exc)
        return 1
    chosen = [Path(f) for f in files] or source.files()
    failed = check_files(chosen)
    if not failed and not files:
        try:
            course_of(chosen)
        except LessonError as exc:
            print(exc)
            failed += 1
    print(f"{len(chosen)} lessons checked, {failed} with faults")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    """Check the given lesson files (default: the product's lessons); exit 1 on any error."""
    files = [Path(a) for a in (argv if argv is not None else sys.argv[1:])]
    return check_course(files=files)


if __name__ == "__main__":
    raise SystemExit(main())
