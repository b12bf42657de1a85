"""The frame every route shares: heading, notices, and page-wide styles."""

from __future__ import annotations

import html

import panel as pn

from widgets.registry import WidgetSpec
from widgets.share import ShareBar

from .serving import url_prefix

PAGE_CSS = """
body { margin: 0; background: #f6f8fa; }
.ol-page { max-width: 1280px; margin: 0 auto; }
"""

HEADER_CSS = """
.ol-header h1 { font: 600 22px/1.25 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  margin: 0 0 2px 0; color: #1f2328; }
.ol-header p { margin: 0; color: #57606a; font: 14px/1.4 system-ui, sans-serif; }
.ol-header a { color: #0b5cad; }
.ol-notice { background: #fff8c5; border: 1px solid #d4a72c; border-radius: 6px;
  padding: 6px 10px; font: 14px/1.4 system-ui, sans-serif; color: #1f2328; margin: 2px 0; }
"""


def notices_pane(notices: list[str]) -> pn.pane.HTML:
    """A visible list of things the page ignored (for example bad query keys)."""
    items = "".join(f'<div class="ol-notice">{html.escape(n)}</div>' for n in notices)
    return pn.pane.HTML(
        f'<div role="status" aria-label="Notices">{items}</div>' if notices else "",
        sizing_mode="stretch_width",
        stylesheets=[HEADER_CSS],
        visible=bool(notices),
    )


def page(title: str, subtitle: str, body: pn.viewable.Viewable, notices: list[str] = ()):
    """A titled page around ``body``; sets the browser tab title."""
    if pn.state.curdoc is not None:
        pn.state.curdoc.title = f"{title} · overlap-lab"
    header = pn.pane.HTML(
        f'<header class="ol-header"><h1>{html.escape(title)}</h1><p>{subtitle}</p></header>',
        sizing_mode="stretch_width",
        stylesheets=[HEADER_CSS],
        margin=(12, 10, 4, 10),
    )
    return pn.Column(
        header,
        notices_pane(list(notices)),
        body,
        sizing_mode="stretch_width",
        css_classes=["ol-page"],
        stylesheets=[PAGE_CSS],
    )


def share_bar(spec: WidgetSpec, view, **options) -> ShareBar:
    """The widget's share bar, its links under the path this server is served at."""
    bar = ShareBar(spec, view, **options)
    if url_prefix():
        bar.origin += url_prefix()
        bar.update()
    return bar
