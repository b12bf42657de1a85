"""``python -m lessons.check [FILE ...]``: parse lessons and report the first error in each."""

from __future__ import annotations

import sys
from pathlib import Path

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
        else:
            print(f"{file}: ok ({len(lesson.blocks)} blocks, {len(lesson.widgets)} widgets)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
