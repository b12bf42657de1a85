"""A lesson as a page: prose, live widgets, experiment buttons and hidden answers."""

from __future__ import annotations

import html

import panel as pn
from markdown_it import MarkdownIt

from lessons import Experiment, Lesson, Prose, Question, WidgetBlock
from widgets import theme
from widgets.registry import WIDGETS

from .page import share_bar

_markdown = MarkdownIt("commonmark", {"html": False})

PROSE_CSS = """
:host { font: 16px/1.6 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328; }
h2 { font-size: 21px; margin: 22px 0 6px 0; }
h3 { font-size: 17px; margin: 16px 0 4px 0; }
code { background: #eff1f3; color: #1f2328 !important; padding: 1px 4px; border-radius: 4px;
  font-size: 14px; }
a { color: #0b5cad; }
.ol-question { border: 1px solid #d0d7de; border-left: 4px solid #CC79A7; border-radius: 6px;
  padding: 8px 12px; background: #fff; }
.ol-question p { margin: 4px 0; }
.ol-question summary { cursor: pointer; color: #0b5cad; font-weight: 600; padding: 4px 0; }
.ol-question summary:focus-visible { outline: 3px solid #0072B2; outline-offset: 2px; }
.ol-answer { border-top: 1px solid #e6e8eb; margin-top: 4px; padding-top: 4px; }
"""
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


def lesson_body(lesson: Lesson) -> pn.viewable.Viewable:
    """Every block of a lesson, with each experiment wired to its widget."""
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
                    stylesheets=[PROSE_CSS],
                    disable_math=True,
                )
            )
        elif isinstance(block, WidgetBlock):
            spec = WIDGETS[block.widget]
            view = spec.create(**block.settings)
            views[index] = view
            items.append(
                pn.Column(
                    view,
                    share_bar(spec, view),
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
                    stylesheets=[PROSE_CSS],
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
