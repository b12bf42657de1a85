"""The frame every route shares: a heading and the body."""

from __future__ import annotations

import html

import panel as pn

from . import theme


def page(title: str, subtitle: str, body: pn.viewable.Viewable) -> pn.viewable.Viewable:
    """A titled page around ``body``; sets the browser tab title.

    The served page's template (``app.server.loading_page.show_loading``) puts it
    in a ``main`` landmark.
    """
    doc = pn.state.curdoc
    if doc is not None:
        doc.title = f"{title} · overlap-lab"
    header = pn.pane.HTML(
        f'<header class="ol-header"><h1>{html.escape(title)}</h1><p>{subtitle}</p></header>',
        sizing_mode="stretch_width",
        stylesheets=[theme.HEADER_CSS],
        margin=(12, 0, 4, 0),  # aligned with the body below it
    )
    return pn.Column(
        header,
        body,
        sizing_mode="stretch_width",
        css_classes=["ol-page"],
        stylesheets=[theme.FRAME_CSS],
        # Page margins: nothing runs to the screen's edge, on a phone either.
        styles={
            "max-width": "1280px",
            "margin": "0 auto",
            "padding": "0 clamp(12px, 3vw, 24px) 32px",
        },
    )
