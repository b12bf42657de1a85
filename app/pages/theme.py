"""Colours and styles of the pages around the widgets (frame, header, lesson prose).

Colours come from the Okabe–Ito palette, which stays distinguishable under the
common forms of colour blindness; the widgets' own styles and palette are in
``widgets/common/js`` (``theme.js``, ``styles.css``).
"""

from __future__ import annotations

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
.ol-lesson > :not(.ol-widget-slot) {{ max-width: 820px; }}
.ol-lesson > * + * {{ margin-top: 12px; }}
.ol-experiment-row {{ margin: 8px 0 16px 0; }}
.ol-experiment {{ font: 600 15px/1.3 {FONT}; min-height: 44px; padding: 8px 16px;
  border-radius: 6px; border: 1px solid {LINK}; background: #ffffff; color: {LINK};
  cursor: pointer; text-align: left; max-width: 100%; }}
.ol-experiment:hover {{ background: #ddf4ff; }}
.ol-experiment:focus-visible {{ outline: 3px solid {BLUE}; outline-offset: 2px; }}
h2 {{ font-size: 21px; margin: 22px 0 6px 0; }}
h3 {{ font-size: 17px; margin: 16px 0 4px 0; }}
code {{ background: {CODE_BACKGROUND}; color: {INK} !important; padding: 1px 4px;
  border-radius: 4px; font-size: 14px; overflow-wrap: anywhere; }}
a {{ color: {LINK}; }}
.ol-question {{ border: 1px solid {BORDER}; border-left: 4px solid {PURPLE}; border-radius: 6px;
  padding: 8px 12px; background: #fff; }}
.ol-question p {{ margin: 4px 0; }}
.ol-question summary {{ cursor: pointer; color: {LINK}; font-weight: 600; padding: 4px 0; }}
.ol-question summary:focus-visible {{ outline: 3px solid {BLUE}; outline-offset: 2px; }}
.ol-answer {{ border-top: 1px solid {GRID}; margin-top: 4px; padding-top: 4px; }}
.ol-lesson-nav {{ display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 20px;
  font-size: 15px; border-top: 1px solid {GRID}; border-bottom: 1px solid {GRID};
  padding: 6px 0; margin: 8px 0; }}
.ol-lesson-nav p {{ margin: 0; font-weight: 600; color: {MUTED}; }}
.ol-lesson-nav ul {{ display: flex; flex-wrap: wrap; gap: 4px 20px; list-style: none;
  margin: 0; padding: 0; }}
.ol-lesson-nav a {{ display: inline-block; padding: 10px 0; }}
"""
