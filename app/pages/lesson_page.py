"""A lesson as a page: its prose as static HTML, one component per widget, experiment buttons.

The prose, headings, self-check questions and experiment buttons are rendered
from the Markdown into one piece of HTML once per process, with a slot for
each widget; a page adds only the live parts (:mod:`app.pages.lesson_view`).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import panel as pn
from markdown_it import MarkdownIt

from lessons import Experiment, Lesson, Numbers, Prose, Question, WidgetBlock
from lessons.anchors import ANCHORED, heading_anchor
from widgets.common.component import WidgetComponent
from widgets.registry import WIDGETS

from .lesson_view import LessonView
from .page import page

# Tables as lessons write them (GitHub style); raw HTML stays off.
_markdown = MarkdownIt("commonmark", {"html": False}).enable("table")


def _heading_open(self, tokens, idx, options, env) -> str:
    # A section's heading carries its anchor (lessons.anchors), for links to it.
    token = tokens[idx]
    if token.tag in ANCHORED:
        token.attrSet("id", heading_anchor(tokens[idx + 1].content))
    return self.renderToken(tokens, idx, options, env)


_markdown.add_render_rule("heading_open", _heading_open)

PROSE_WIDTH = 820


def question_html(question: Question, number: int) -> str:
    """A self-check question whose answer stays folded until the learner opens it."""
    return (
        f'<section class="ol-question" aria-label="Check yourself {number}">'
        f"<p><strong>Check yourself {number}.</strong></p>"
        f"{_markdown.render(question.question)}"
        "<details><summary>Show answer</summary>"
        f'<div class="ol-answer">{_markdown.render(question.answer)}</div></details></section>'
    )


_SEGMENTS: dict[tuple[str, str], tuple[tuple[str, object], ...]] = {}


def _segments(lesson: Lesson) -> tuple[tuple[str, object], ...]:
    """The lesson as ``("html", text)``, ``("widget", i)`` and ``("experiment", i)``.

    ``i`` is the block's index in ``lesson.blocks``.

    Consecutive prose and questions become one piece of HTML, rendered once per process.
    """
    key = (lesson.name, lesson.path)
    if key not in _SEGMENTS:
        _SEGMENTS[key] = _render_segments(lesson)
    return _SEGMENTS[key]


def _render_segments(lesson: Lesson) -> tuple[tuple[str, object], ...]:
    segments: list[tuple[str, object]] = []
    run: list[str] = []
    questions = 0

    def flush() -> None:
        if run:
            segments.append(("html", "".join(run)))
            run.clear()

    for i, block in enumerate(lesson.blocks):
        if isinstance(block, Prose):
            run.append(_markdown.render(block.text))
        elif isinstance(block, Question):
            questions += 1
            run.append(question_html(block, questions))
        elif isinstance(block, Numbers):
            continue
        else:
            flush()
            # The block's position, not the block: a course read again has new block
            # objects with the same positions, and the cache outlives the first reading.
            segments.append(("widget" if isinstance(block, WidgetBlock) else "experiment", i))
    flush()
    return tuple(segments)


def lesson_nav(lesson: Lesson, lessons: Sequence[Lesson], prefix: str) -> str:
    """Where a lesson sits in the course: its number, the index, the lessons before and after."""
    names = [item.name for item in lessons]
    i = names.index(lesson.name)
    links = [f'<a href="{prefix}/">All lessons and widgets</a>']
    if i > 0:
        before = lessons[i - 1]
        links.append(
            f'<a href="{prefix}/lessons/{html.escape(before.name)}" rel="prev">'
            f"← Previous: {html.escape(before.title)}</a>"
        )
    if i + 1 < len(lessons):
        after = lessons[i + 1]
        links.append(
            f'<a href="{prefix}/lessons/{html.escape(after.name)}" rel="next">'
            f"Next: {html.escape(after.title)} →</a>"
        )
    items = "".join(f"<li>{link}</li>" for link in links)
    return (
        f'<nav class="ol-lesson-nav" aria-label="Course"><p>Lesson {i + 1} of {len(lessons)}</p>'
        f"<ul>{items}</ul></nav>"
    )


def experiment_note(block: Experiment) -> str:
    """What an experiment loads, as the widget says it (``Experiment.note``)."""
    return block.note


def experiment_html(block: Experiment, number: int) -> str:
    """An experiment's button (the page sends its number when it is pressed)."""
    return (
        f'<p class="ol-experiment-row"><button type="button" class="ol-experiment" '
        f'data-experiment="{number}"><span aria-hidden="true">▶ </span>'
        f"{html.escape(block.label)}</button></p>"
    )


def lesson_html(
    lesson: Lesson, nav: str = "", prefix: str = ""
) -> tuple[str, list[WidgetBlock], list[Experiment]]:
    """The lesson as one piece of HTML with a slot per widget, its widgets and experiments.

    A lesson links another by its route (``/lessons/NAME#anchor``); ``prefix`` is put
    before it (the server's URL prefix, or the way up to a static copy's root).
    """
    widgets: list[WidgetBlock] = []
    experiments: list[Experiment] = []
    parts = [nav]
    for kind, item in _segments(lesson):
        if kind == "html":
            parts.append(item.replace('href="/lessons/', f'href="{prefix}/lessons/'))
            continue
        item = lesson.blocks[item]
        if kind == "widget":
            parts.append(f'<div class="ol-widget-slot" data-widget="{len(widgets)}"></div>')
            widgets.append(item)
        else:
            parts.append(experiment_html(item, len(experiments)))
            experiments.append(item)
    parts.append(nav)
    return "".join(parts), widgets, experiments


def lesson_body(
    lesson: Lesson, origin: str, lessons: Sequence[Lesson] = (), prefix: str = ""
) -> LessonView:
    """A lesson with live widgets, each experiment wired to the widget above it.

    ``origin`` is this server as the learner reached it, for the share links;
    ``lessons`` is the course in order, for the navigation.
    """
    nav = lesson_nav(lesson, lessons, prefix) if lesson in lessons else ""
    text, blocks, experiments = lesson_html(lesson, nav, prefix)
    views: list[WidgetComponent] = []
    by_block: dict[int, WidgetComponent] = {}
    index = {id(b): i for i, b in enumerate(lesson.blocks)}
    for block in blocks:
        view = WIDGETS[block.widget].create(**block.settings)
        view.enable_share(origin)
        views.append(view)
        by_block[index[id(block)]] = view

    def run(number: int) -> None:
        if 0 <= number < len(experiments):
            block = experiments[number]
            by_block[block.target].apply(note=experiment_note(block), **block.settings)

    return LessonView(run, html=text, widgets=views, sizing_mode="stretch_width")


def lesson_page(
    lesson: Lesson, lessons: Sequence[Lesson], origin: str, prefix: str = ""
) -> pn.viewable.Viewable:
    """A lesson's page: its prose with live widgets, experiments and self-check questions."""
    body = lesson_body(lesson, origin, lessons, prefix)
    return page(lesson.title, html.escape(lesson.summary), body)
