"""``python -m lessons.check [FILE ...]``: parse lessons, then check every number they state.

Reports the first parse error in each file, or every stated number the model
does not give (see ``lessons.numbers``). Needs neither Panel nor Bokeh.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .numbers import check_lesson, count_checked
from .parser import LESSON_DIR, LessonError, parse_lesson


def main(argv: list[str] | None = None) -> int:
    """Check the given lesson files (default: every lesson); exit 1 on any error."""
    files = [Path(a) for a in (argv if argv is not None else sys.argv[1:])]
    files = files or sorted(LESSON_DIR.glob("*.md"))
    failed = 0
    for file in files:
        try:
            lesson = parse_lesson(file.read_text(encoding="utf-8"), file.stem, file)
        except LessonError as exc:
            print(exc)
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
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
