"""Reading lesson files into blocks, with errors that name the file and line."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from widgets.common.parsing import parse_setting
from widgets.registry import WIDGETS, WidgetSpec

LESSON_DIR = Path(__file__).parent
DIRECTIVES = ("widget", "experiment", "question", "numbers")


class LessonError(ValueError):
    """A lesson file that cannot be used, with ``path:line:`` leading the message."""


@dataclass(frozen=True)
class Prose:
    """Markdown text between directives; ``line`` is its first line in the file."""

    text: str
    line: int = 0


@dataclass(frozen=True)
class WidgetBlock:
    """A live widget with its starting settings."""

    widget: str
    settings: dict[str, object]
    line: int


@dataclass(frozen=True)
class Experiment:
    """A button that loads ``settings`` into the widget block at index ``target``."""

    label: str
    settings: dict[str, object]
    target: int
    line: int

    @property
    def note(self) -> str:
        """What the experiment loads, as the widget says it when it is pressed."""
        settings = ", ".join(f"{k} {v}" for k, v in self.settings.items())
        return f"Loaded “{self.label}”: {settings}."


@dataclass(frozen=True)
class Question:
    """A self-check question and its hidden answer (both Markdown)."""

    question: str
    answer: str
    line: int


@dataclass(frozen=True)
class NumberEntry:
    """One stated number: ``text`` as the lesson prints it, and the model ``expression``
    that gives its number(s); ``expression`` is None for text marked not from the model."""

    text: str
    expression: str | None
    line: int
    reason: str = ""


@dataclass(frozen=True)
class Numbers:
    """A ``numbers`` block: the numbers stated since the previous one, and where they come
    from. Not shown on the page; ``lessons.numbers`` checks it against the model.

    ``widget`` names the widget whose model gives the numbers and ``target`` the widget
    block they continue from (None: a fresh widget at its defaults); ``settings`` are
    applied on top, as an experiment's are.
    """

    widget: str
    target: int | None
    settings: dict[str, object]
    entries: list[NumberEntry]
    line: int


Block = Prose | WidgetBlock | Experiment | Question | Numbers


@dataclass(frozen=True)
class Lesson:
    """A parsed lesson."""

    name: str
    title: str
    summary: str
    blocks: list[Block] = field(default_factory=list)
    order: int = 1000
    path: str = ""

    @property
    def widgets(self) -> list[WidgetBlock]:
        """The widget blocks, in order."""
        return [b for b in self.blocks if isinstance(b, WidgetBlock)]


def _fail(path: Path | str, line: int, message: str) -> LessonError:
    return LessonError(f"{path}:{line}: {message}")


def _key_values(lines: list[str], first: int, path) -> list[tuple[str, str, int]]:
    out = []
    for i, raw in enumerate(lines):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        if ":" not in text:
            raise _fail(path, first + i, f"expected “key: value”, got “{text}”")
        key, value = (part.strip() for part in text.split(":", 1))
        out.append((key, value, first + i))
    return out


def _settings(
    spec: WidgetSpec, pairs, path, allowed_extra=(), any_parameter=False
) -> dict[str, object]:
    settings: dict[str, object] = {}
    for key, value, line in pairs:
        if key in allowed_extra:
            continue
        if any_parameter and key not in spec.keys and key in spec.settings.param:
            # A numbers block may set a parameter that is not a URL key (an input a
            # learner types, such as the queue lab's prediction time).
            try:
                settings[key] = parse_setting(value, spec.settings.param[key])
            except ValueError as exc:
                raise _fail(path, line, f"{spec.name}: {exc}") from None
            continue
        kwargs, notices = spec.parse({key: [value]})
        if notices:
            raise _fail(path, line, f"{spec.name}: {notices[0].removeprefix('Ignored ')}")
        settings.update(kwargs)
    return settings


def parse_lesson(text: str, name: str = "lesson", path: Path | str | None = None) -> Lesson:
    """Parse a lesson's text; raise :class:`LessonError` naming the file and line."""
    path = path or f"{name}.md"
    lines = text.splitlines()
    meta: dict[str, str] = {}
    i = 0
    if lines and lines[0].strip() == "---":
        end = next((j for j in range(1, len(lines)) if lines[j].strip() == "---"), None)
        if end is None:
            raise _fail(path, 1, "front matter opened with “---” is never closed")
        for key, value, _ in _key_values(lines[1:end], 2, path):
            meta[key] = value
        i = end + 1
    for key in ("title", "summary"):
        if not meta.get(key):
            raise _fail(path, 1, f"front matter needs “{key}: …”")
    order = 1000
    if "order" in meta:
        try:
            order = int(meta["order"])
        except ValueError:
            raise _fail(path, 1, f"“order: {meta['order']}” must be a whole number") from None

    blocks: list[Block] = []
    prose: list[str] = []
    prose_start = i + 1
    last_widget: int | None = None

    def flush() -> None:
        text = "\n".join(prose).strip()
        if text:
            leading = next(j for j, raw in enumerate(prose) if raw.strip())
            blocks.append(Prose(text, prose_start + leading))
        prose.clear()

    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        info = stripped[3:].strip().split() if stripped.startswith("```") else []
        if not info or info[0] not in DIRECTIVES:
            if not prose:
                prose_start = i + 1
            prose.append(line)
            i += 1
            continue
        start = i + 1  # 1-based line of the fence
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
        if end is None:
            raise _fail(path, start, f"“```{info[0]}” block is never closed")
        body = lines[i + 1 : end]
        flush()
        kind = info[0]
        if kind == "widget":
            if len(info) != 2:
                raise _fail(path, start, "write “```widget NAME” with one widget name")
            spec = WIDGETS.get(info[1])
            if spec is None:
                raise _fail(
                    path, start, f"unknown widget “{info[1]}” (known: {', '.join(WIDGETS)})"
                )
            settings = _settings(spec, _key_values(body, start + 1, path), path)
            blocks.append(WidgetBlock(spec.name, settings, start))
            last_widget = len(blocks) - 1
        elif kind == "experiment":
            if last_widget is None:
                raise _fail(path, start, "an experiment needs a widget above it")
            pairs = _key_values(body, start + 1, path)
            label = next((v for k, v, _ in pairs if k == "label"), "")
            if not label:
                raise _fail(path, start, "an experiment needs “label: …”")
            spec = WIDGETS[blocks[last_widget].widget]
            settings = _settings(spec, pairs, path, allowed_extra=("label",))
            if not settings:
                raise _fail(path, start, "an experiment needs at least one setting")
            blocks.append(Experiment(label, settings, last_widget, start))
        elif kind == "numbers":
            blocks.append(_numbers(body, start, path, blocks, last_widget))
        else:
            split = next((j for j, b in enumerate(body) if b.strip() == "---"), None)
            if split is None:
                raise _fail(path, start, "a question needs a “---” line before its answer")
            question = "\n".join(body[:split]).strip()
            answer = "\n".join(body[split + 1 :]).strip()
            if not question or not answer:
                raise _fail(path, start, "a question needs both a question and an answer")
            blocks.append(Question(question, answer, start))
        i = end + 1
    flush()
    return Lesson(name, meta["title"], meta["summary"], blocks, order, str(path))


NOT_FROM_MODEL = "not from the model"


def _numbers(body: list[str], start: int, path, blocks: list[Block], last_widget) -> Numbers:
    """A ``numbers`` block: optional ``widget:`` and settings lines, then ``TEXT | EXPRESSION``
    lines (see ``lessons.numbers``)."""
    pairs, entries = [], []
    for j, raw in enumerate(body):
        text, line = raw.strip(), start + 1 + j
        if not text or text.startswith("#"):
            continue
        if "|" in text:
            # The expression follows the last "|", so TEXT may be a table row.
            shown, expression = (part.strip() for part in text.rsplit("|", 1))
            if not shown or not expression:
                raise _fail(path, line, "write “TEXT | EXPRESSION”, both parts filled")
            if expression.startswith(NOT_FROM_MODEL):
                reason = expression.removeprefix(NOT_FROM_MODEL).strip(" :")
                if not reason:
                    raise _fail(path, line, f"say why after “{NOT_FROM_MODEL}:”")
                entries.append(NumberEntry(shown, None, line, reason))
            else:
                entries.append(NumberEntry(shown, expression, line))
        elif entries:
            raise _fail(path, line, "settings come before the first “TEXT | EXPRESSION” line")
        else:
            pairs.extend(_key_values([raw], line, path))
    if not entries:
        raise _fail(path, start, "a numbers block needs at least one “TEXT | EXPRESSION” line")
    widget = next((v for k, v, _ in pairs if k == "widget"), None)
    target = None
    if widget is None:
        if last_widget is None:
            raise _fail(path, start, "a numbers block before any widget needs “widget: NAME”")
        widget, target = blocks[last_widget].widget, last_widget
    spec = WIDGETS.get(widget)
    if spec is None:
        raise _fail(path, start, f"unknown widget “{widget}” (known: {', '.join(WIDGETS)})")
    settings = _settings(spec, pairs, path, allowed_extra=("widget",), any_parameter=True)
    return Numbers(spec.name, target, settings, entries, start)


def load_lessons(folder: Path = LESSON_DIR) -> dict[str, Lesson]:
    """Every ``*.md`` lesson in ``folder`` by file name (without ``.md``).

    Lessons come in the order their front matter's ``order:`` gives, then by name.
    """
    parsed = [
        parse_lesson(file.read_text(encoding="utf-8"), file.stem, file)
        for file in folder.glob("*.md")
    ]
    return {lesson.name: lesson for lesson in sorted(parsed, key=lambda x: (x.order, x.name))}
