"""Pages served without a session: the index and the page for an unknown address.

Neither changes while the server runs, so each is written once per process,
sent as plain HTML (no Bokeh document, no websocket, no "Loading…") and cached
by the browser for a minute.
"""

from __future__ import annotations

import html
from typing import ClassVar

from tornado.web import RequestHandler

from lessons.course import course_lessons
from widgets.registry import WIDGETS

from . import theme
from .thumbnails import thumbnail

CSS = f"""{theme.THEME_CSS}
html, body {{ margin: 0; background: {theme.role("page")}; color: {theme.role("ink")};
  font: 16px/1.6 {theme.FONT}; }}
main {{ max-width: 1120px; margin: 0 auto; padding: 20px clamp(12px, 3vw, 24px) 40px; }}
h1 {{ font-size: 26px; line-height: 1.25; margin: 0 0 4px 0; }}
h2 {{ font-size: 20px; margin: 28px 0 8px 0; }}
header p {{ margin: 0; color: {theme.role("muted")}; max-width: 760px; }}
a {{ color: {theme.role("link")}; }}
code {{ background: {theme.role("code")}; padding: 1px 4px; border-radius: 4px; }}
ol.ol-course {{ padding-left: 1.4em; margin: 0; max-width: 820px; }}
ol.ol-course li {{ margin: 0 0 10px 0; }}
ol.ol-course a {{ font-weight: 600; }}
.ol-cards {{ list-style: none; padding: 0; margin: 0; display: grid; gap: 16px;
  grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); }}
.ol-cards li {{ background: {theme.role("paper")}; border: 1px solid {theme.role("border")};
  border-radius: 8px; padding: 12px; display: flex; flex-direction: column; gap: 8px; }}
.ol-cards a {{ font-weight: 600; font-size: 17px; }}
.ol-cards p {{ margin: 0; font-size: 15px; }}
.ol-thumb {{ width: 100%; height: auto; border: 1px solid {theme.role("grid")};
  border-radius: 4px; }}
"""


def page_html(title: str, body: str) -> str:
    """A whole page: the viewport tag, our styles, and ``body`` in the main landmark."""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head>"
        f"<body><main>{body}</main></body></html>"
    )


def _course(prefix: str) -> str:
    items = "".join(
        f'<li><a href="{prefix}/lessons/{html.escape(name)}">{html.escape(lesson.title)}</a>'
        f" — {html.escape(lesson.summary)}</li>"
        for name, lesson in course_lessons().items()
    )
    return f'<ol class="ol-course">{items}</ol>'


def index_html(prefix: str = "") -> str:
    """The index: the lessons in the order to take them, and a picture of every widget."""
    cards = "".join(
        f'<li>{thumbnail(spec.name)}<a href="{prefix}/{spec.name}">{html.escape(spec.title)}'
        f"</a><p>{html.escape(spec.summary)}</p></li>"
        for spec in WIDGETS.values()
    )
    body = (
        "<header><h1>overlap-lab</h1><p>Live widgets on how data-parallel training hides "
        "gradient communication behind the backward pass, and why that depends on bucket "
        "size, per-transfer overhead, link speed and a dependency schedule.</p></header>"
        '<nav aria-label="Lessons"><h2>The lessons, in order</h2>'
        "<p>Each lesson builds on the one before; each has live widgets, experiments "
        f"to try and questions to check yourself.</p>{_course(prefix)}</nav>"
        '<nav aria-label="Widgets"><h2>The widgets</h2>'
        "<p>Each one on its own page, to explore or to embed in a course.</p>"
        f'<ul class="ol-cards">{cards}</ul></nav>'
        '<nav aria-label="Classroom"><h2>Teaching a class</h2>'
        "<p>Run live prediction rounds in a lecture: every learner predicts on their own "
        "page, the room sees the spread, then the widget shows the answer. "
        f'<a href="{prefix}/class">Start or join a class</a>.</p></nav>'
    )
    return page_html("overlap-lab", body)


def not_found_html(prefix: str, path: str) -> str:
    """The page for an address nothing is served at: what was asked for, and the way on."""
    body = (
        "<h1>There is no page here</h1>"
        f"<p>Nothing is served at <code>{html.escape(path[:200])}</code>. Perhaps the link is "
        f'old or was mistyped. <a href="{prefix}/">Go to the index</a>, or open one of '
        "these:</p>"
        f'<nav aria-label="Lessons"><h2>Lessons</h2>{_course(prefix)}</nav>'
        '<nav aria-label="Widgets"><h2>Widgets</h2><ul>'
        + "".join(
            f'<li><a href="{prefix}/{spec.name}">{html.escape(spec.title)}</a></li>'
            for spec in WIDGETS.values()
        )
        + "</ul></nav>"
    )
    return page_html("Page not found · overlap-lab", body)


class IndexPage(RequestHandler):
    """``/``: :func:`index_html`, written once per process."""

    _pages: ClassVar[dict[str, str]] = {}

    def initialize(self, prefix: str = "") -> None:
        self.prefix = prefix

    def get(self) -> None:
        if self.prefix not in self._pages:
            self._pages[self.prefix] = index_html(self.prefix)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Cache-Control", "public, max-age=60")
        self.finish(self._pages[self.prefix])


class NotFoundPage(RequestHandler):
    """Every address no route has: status 404 and :func:`not_found_html`."""

    def initialize(self, prefix: str = "") -> None:
        self.prefix = prefix

    def prepare(self) -> None:
        self.set_status(404)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(not_found_html(self.prefix, self.request.path))
