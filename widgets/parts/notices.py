"""Things a page ignored or wants the learner to know, shown where they look first."""

from __future__ import annotations

import html

import panel as pn

from . import theme


def notices_html(notices: list[str]) -> str:
    """A visible, announced list of notices ("" when there are none)."""
    if not notices:
        return ""
    items = "".join(f'<div class="ol-notice">{html.escape(n)}</div>' for n in notices)
    return f'<div role="status" aria-label="Notices">{items}</div>'


def notices_pane() -> pn.pane.HTML:
    """An empty notices area; set ``object`` with ``notices_html`` and make it visible."""
    return pn.pane.HTML(
        "", sizing_mode="stretch_width", stylesheets=[theme.PAGE_CSS], visible=False
    )
