"""The course a process serves, exports or checks: the product's lessons and a course's own.

A course keeps its Markdown lessons in its own repository and names their
folders (``overlap-lab serve --lessons DIR``, repeatable); the product's own
lessons (this package's folder) come too unless left out. Every lesson's name
is its file name, which is also its address (``/lessons/NAME``), so two lessons
of one name are refused, naming both files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .parser import LESSON_DIR, Lesson, LessonError, parse_lesson

#: A lesson's file name (without ``.md``) is its address: lower-case words and hyphens.
LESSON_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")


@dataclass(frozen=True)
class CourseSource:
    """Where a course's lessons are: its own folders, and whether the product's come too."""

    folders: tuple[Path, ...] = ()
    builtin: bool = True

    @classmethod
    def of(cls, folders: Iterable[str | Path] = (), builtin: bool = True) -> CourseSource:
        """The source for these folders, each checked to be a folder holding lessons.

        Raises ``LessonError`` naming a folder that is missing or holds no ``*.md``
        file, and when neither a folder nor the product's lessons are left.
        """
        paths = tuple(Path(f).expanduser().resolve() for f in folders)
        for path in paths:
            if not path.is_dir():
                raise LessonError(f"{path}: no such folder of lessons")
            if not any(path.glob("*.md")):
                raise LessonError(f"{path}: holds no lesson (no *.md file)")
        if not paths and not builtin:
            raise LessonError("no lessons: give --lessons DIR or keep the product's lessons")
        return cls(paths, builtin)

    def files(self) -> list[Path]:
        """Every lesson file of the course, the product's first, each folder's by name."""
        folders: list[Path] = [LESSON_DIR] if self.builtin else []
        folders += [f for f in self.folders if f != LESSON_DIR]
        return [file for folder in folders for file in sorted(folder.glob("*.md"))]

    def lessons(self) -> dict[str, Lesson]:
        """Every lesson by name, in course order (``order:``, then name).

        Raises ``LessonError`` (``path:line: message``) on the first lesson that cannot
        be used, on a file name that cannot be an address, and on two lessons of one name.
        """
        return course_of(self.files())


def course_of(files: Sequence[Path]) -> dict[str, Lesson]:
    """The lessons in ``files`` by name, in course order; refuses duplicate names."""
    found: dict[str, Lesson] = {}
    for file in files:
        if not LESSON_NAME.fullmatch(file.stem):
            raise LessonError(
                f"{file}:1: the file name “{file.stem}” is the lesson's address: use "
                "lower-case letters, digits and hyphens (e.g. my-lesson.md)"
            )
        lesson = parse_lesson(file.read_text(encoding="utf-8"), file.stem, file)
        if lesson.name in found:
            raise LessonError(
                f"{file}:1: a lesson named “{lesson.name}” is already in the course "
                f"({found[lesson.name].path}): rename one of them"
            )
        found[lesson.name] = lesson
    ordered = sorted(found.values(), key=lambda x: (x.order, x.name))
    return {lesson.name: lesson for lesson in ordered}


#: The course this process serves or exports (``use_course``); the product's lessons until then.
_SOURCE = CourseSource()
_LESSONS: dict[str, Lesson] | None = None


def use_course(source: CourseSource) -> dict[str, Lesson]:
    """Serve or export ``source`` from now on in this process; its lessons, read once.

    Raises ``LessonError`` (and keeps the course in use) when a lesson cannot be used.
    """
    global _SOURCE, _LESSONS
    lessons = source.lessons()
    _SOURCE, _LESSONS = source, lessons
    return lessons


def course_lessons() -> dict[str, Lesson]:
    """The lessons of the course in use, by name, in course order (read once per process)."""
    global _LESSONS
    if _LESSONS is None:
        _LESSONS = _SOURCE.lessons()
    return _LESSONS
