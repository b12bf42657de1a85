"""A lesson as a page: prose, live widgets, experiment buttons and hidden answers."""

from __future__ import annotations

import html

import panel as pn
from markdown_it import MarkdownIt

from lessons import Experiment, Lesson, Prose, Question, WidgetBlock
from widgets.parts import theme
from widgets.registry import WIDGETS

_markdown = MarkdownIt("commonmark", {"html": False})

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


def lesson_body(lesson: Lesson, origin: str) -> pn.viewable.Viewable:
    """Every block of a lesson, with each experiment wired to its widget.

    ``origin`` is this server as the learner reached it, for the share links.
    """
    views: dict[int, object] = {}
    items: list[pn.viewable.Viewable] = []
    questions = 0
    for index, block in enumerate(lesson.blocks):
        if isinstance(block, Prose):
            items.append(
                pn.pane.Markdown(
                    block.text,
                    sizing_mode="stretch_width",
                    max_width=PROSE_WIDTH,
                    stylesheets=[theme.PROSE_CSS],
                    disable_math=True,
                )
            )
        elif isinstance(block, WidgetBlock):
            spec = WIDGETS[block.widget]
            view = spec.create(**block.settings)
            view.enable_share(origin)
            views[index] = view
            items.append(
                pn.Column(
                    view,
                    sizing_mode="stretch_width",
                    css_classes=["ol-card"],
                    stylesheets=[theme.PAGE_CSS],
                    margin=(8, 0, 16, 0),
                )
            )
        elif isinstance(block, Experiment):
            items.append(_experiment(block, views[block.target]))
        elif isinstance(block, Question):
            questions += 1
            items.append(
                pn.pane.HTML(
                    question_html(block, questions),
                    sizing_mode="stretch_width",
                    max_width=PROSE_WIDTH,
                    stylesheets=[theme.PROSE_CSS],
                    margin=(8, 10),
                )
            )
    return pn.Column(*items, sizing_mode="stretch_width", margin=(0, 0, 40, 0))


def _experiment(block: Experiment, view) -> pn.viewable.Viewable:
    button = pn.widgets.Button(
        label=block.label, color="primary", sizing_mode="stretch_width", max_width=PROSE_WIDTH
    )
    status = pn.pane.HTML("", margin=(0, 10), stylesheets=[theme.PAGE_CSS])
    settings = ", ".join(f"{k} {v}" for k, v in block.settings.items())

    def run(_event) -> None:
        view.apply(**block.settings)
        status.object = (
            f'<div class="ol-hint" role="status">Loaded into the widget above: '
            f"{html.escape(settings)}.</div>"
        )

    button.on_click(run)
    return pn.Column(button, status, sizing_mode="stretch_width", margin=(4, 0))
