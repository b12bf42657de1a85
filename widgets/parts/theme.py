"""Colours and styles shared by every widget.

Colours come from the Okabe–Ito palette, which stays distinguishable under the
common forms of colour blindness; meaning is never carried by colour alone
(lines also differ in dash, markers in shape).
"""

from __future__ import annotations

import panel as pn
from bokeh.models import InlineStyleSheet
from bokeh.plotting import figure as Figure

BLUE = "#0072B2"
ORANGE = "#E69F00"
VERMILLION = "#D55E00"
GREEN = "#009E73"
SKY = "#56B4E9"
PURPLE = "#CC79A7"
YELLOW = "#F0E442"
INK = "#1f2328"
MUTED = "#57606a"
GRID = "#e6e8eb"
LINK = "#0b5cad"
BORDER = "#d0d7de"
PAGE_BACKGROUND = "#f6f8fa"
CODE_BACKGROUND = "#eff1f3"
NOTICE_BACKGROUND = "#fff8c5"
NOTICE_BORDER = "#d4a72c"
ERROR = "#a40e26"
FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif'

#: Distinct fills for up to eight buckets, in a colour-blind-safe order.
CATEGORY = [BLUE, ORANGE, GREEN, PURPLE, SKY, VERMILLION, YELLOW, "#999999"]

READOUT_CSS = f"""
:host {{ width: 100%; }}
:host > div, .bk-clearfix {{ width: 100%; }}
.ol-readout {{ box-sizing: border-box; width: 100%; min-height: 100%; display: flex;
  flex-direction: column; gap: 2px; padding: 6px 10px;
  border-left: 4px solid {BLUE}; background: #f6f8fa; border-radius: 4px;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }}
.ol-label {{ font-size: 13px; color: {MUTED}; }}
.ol-value {{ font-size: 20px; font-weight: 600; color: {INK};
  font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }}
.ol-note {{ font-size: 13px; color: {INK}; }}
.ol-good {{ border-left-color: {GREEN}; }}
.ol-off {{ border-left-color: {VERMILLION}; }}
"""

PAGE_CSS = f"""
.ol-error {{ color: {ERROR}; font-size: 13px; font-weight: 600; }}
.ol-hint {{ color: {MUTED}; font-size: 12.5px; }}
.ol-card {{ border: 1px solid {BORDER}; border-radius: 8px; background: #ffffff; }}
h2.ol-title, h3.ol-title {{ margin: 0; font: 600 16px/1.3 {FONT}; color: {INK}; }}
.ol-notice {{ background: {NOTICE_BACKGROUND}; border: 1px solid {NOTICE_BORDER};
  border-radius: 6px; padding: 6px 10px; font: 14px/1.4 {FONT}; color: {INK}; margin: 2px 0; }}
.ol-description p {{ margin: 2px 0 0 0; font: 14px/1.5 {FONT}; color: {INK}; }}
"""

#: The page around the widgets: body, title header.
FRAME_CSS = f"""
body {{ margin: 0; background: {PAGE_BACKGROUND}; }}
.ol-page {{ max-width: 1280px; margin: 0 auto; }}
"""
HEADER_CSS = f"""
.ol-header h1 {{ font: 600 22px/1.25 {FONT}; margin: 0 0 2px 0; color: {INK}; }}
.ol-header p {{ margin: 0; color: {MUTED}; font: 14px/1.4 {FONT}; }}
.ol-header a {{ color: {LINK}; }}
"""
#: Lesson prose and self-check questions.
PROSE_CSS = f"""
:host {{ font: 16px/1.6 {FONT}; color: {INK}; }}
h2 {{ font-size: 21px; margin: 22px 0 6px 0; }}
h3 {{ font-size: 17px; margin: 16px 0 4px 0; }}
code {{ background: {CODE_BACKGROUND}; color: {INK} !important; padding: 1px 4px;
  border-radius: 4px; font-size: 14px; }}
a {{ color: {LINK}; }}
.ol-question {{ border: 1px solid {BORDER}; border-left: 4px solid {PURPLE}; border-radius: 6px;
  padding: 8px 12px; background: #fff; }}
.ol-question p {{ margin: 4px 0; }}
.ol-question summary {{ cursor: pointer; color: {LINK}; font-weight: 600; padding: 4px 0; }}
.ol-question summary:focus-visible {{ outline: 3px solid {BLUE}; outline-offset: 2px; }}
.ol-answer {{ border-top: 1px solid {GRID}; margin-top: 4px; padding-top: 4px; }}
"""
#: The index's lists of lessons and widgets.
INDEX_CSS = f"""
.ol-list {{ font: 16px/1.6 {FONT}; padding-left: 1.2em; margin: 0 0 12px 0; }}
h2 {{ font: 600 18px {FONT}; margin: 12px 0 4px 0; }}
a {{ color: {LINK}; }}
"""


def heading(text: str, level: int = 2):
    """A section heading inside a widget."""
    return pn.pane.HTML(
        f"<h{level} class='ol-title'>{text}</h{level}>",
        margin=(10, 10, 2, 10),
        stylesheets=[PAGE_CSS],
    )


def readout_stylesheet() -> InlineStyleSheet:
    """The stylesheet a readout's shadow root needs (one per document is enough)."""
    return InlineStyleSheet(css=READOUT_CSS)


def style_figure(fig: Figure) -> Figure:
    """Quiet axes and grid, readable fonts, no toolbar."""
    fig.toolbar_location = None
    fig.outline_line_color = None
    fig.background_fill_color = "#ffffff"
    fig.border_fill_color = "#ffffff"
    for axis in (fig.xaxis, fig.yaxis):
        axis.axis_label_text_font_style = "normal"
        axis.axis_label_text_font_size = "13px"
        axis.major_label_text_font_size = "12px"
        axis.axis_label_text_color = INK
        axis.major_label_text_color = MUTED
        axis.axis_line_color = "#8c959f"
    fig.xgrid.grid_line_color = GRID
    fig.ygrid.grid_line_color = GRID
    fig.title.text_font_size = "14px"
    fig.title.text_color = INK
    return fig


def key_html(entries: list[tuple[str, str, str]]) -> str:
    """A plot key as text: (symbol or ``"line"``, colour, meaning) per entry."""
    items = []
    for symbol, colour, meaning in entries:
        if symbol == "line":
            mark = (
                f'<span aria-hidden="true" style="display:inline-block;width:22px;height:0;'
                f'border-top:3px solid {colour};vertical-align:middle"></span>'
            )
        else:
            mark = f'<span aria-hidden="true" style="color:{colour};font-size:15px">{symbol}</span>'
        items.append(f"<li>{mark} {meaning}</li>")
    return (
        '<ul class="ol-key" aria-label="Plot key" style="display:flex;flex-wrap:wrap;gap:4px 16px;'
        f'list-style:none;margin:0;padding:0;font:13px system-ui,sans-serif;color:{INK}">'
        + "".join(items)
        + "</ul>"
    )
