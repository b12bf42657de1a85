"""Colours and styles of the pages around the widgets (frame, header, lesson prose).

Colours come from the Okabe–Ito palette, which stays distinguishable under the
common forms of colour blindness; the widgets' own styles and palette are in
``widgets/common/js`` (``theme.js``, ``styles.css``).
"""

from __future__ import annotations

import json

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

#: The colours of the page's roles, light (the constants above) and dark (GitHub's dark
#: colours: text at least 4.5:1 on what it sits on). The widgets' own styles
#: (``widgets/common/js/styles.css``) give their parts the same roles.
LIGHT = {
    "ink": INK,
    "muted": MUTED,
    "link": LINK,
    "border": BORDER,
    "grid": GRID,
    "page": PAGE_BACKGROUND,
    "paper": "#ffffff",
    "code": CODE_BACKGROUND,
    "hover": "#ddf4ff",
}
DARK = {
    "ink": "#e6edf3",
    "muted": "#9198a1",
    "link": "#4493f8",
    "border": "#3d444d",
    "grid": "#30363d",
    "page": "#0d1117",
    "paper": "#151b23",
    "code": "#262c36",
    "hover": "#0c2d48",
}


def role(name: str) -> str:
    """A role's colour in CSS: the page's theme's, or the light one outside our pages."""
    return f"var(--ol-{name}, {LIGHT[name]})"


def _variables(colours: dict[str, str]) -> str:
    return " ".join(f"--ol-{k}: {v};" for k, v in colours.items())


#: The roles' colours for a page's ``<html>``: light, or dark once the page's theme script
#: (:func:`theme_script`) says so; a page without the script (the index) follows the
#: browser's preference. Styles in shadow roots inherit them.
THEME_CSS = (
    f":root {{ {_variables(LIGHT)} }}\n"
    f'html[data-ol-theme="dark"] {{ color-scheme: dark; {_variables(DARK)} }}\n'
    "@media (prefers-color-scheme: dark) {\n"
    f"  html:not([data-ol-theme]) {{ color-scheme: dark; {_variables(DARK)} }}\n}}\n"
)


def theme_script() -> str:
    """A classic script for a page's head: ``<html data-ol-theme>`` as the address's theme
    key says (``widgets.page_settings``), else as the browser prefers, and following it.
    """
    from widgets.page_settings import theme_choices

    held = json.dumps([c for c in theme_choices() if c != "auto"])
    return (
        "<script>(function () { var d = document.documentElement;"
        ' var asked = new URLSearchParams(location.search).get("theme");'
        ' var m = matchMedia("(prefers-color-scheme: dark)");'
        f" var held = {held}.indexOf(asked) >= 0;"
        ' function apply() { d.dataset.olTheme = held ? asked : (m.matches ? "dark" : "light"); }'
        ' apply(); m.addEventListener("change", apply);'
        ' if (held) d.dataset.olPageQuery = "theme=" + asked; })();</script>'
    )


#: The page around the widgets: body, title header.
FRAME_CSS = f"""
body {{ margin: 0; background: {role("page")}; }}
.ol-page {{ max-width: 1280px; margin: 0 auto; }}
"""
HEADER_CSS = f"""
.ol-header h1 {{ font: 600 22px/1.25 {FONT}; margin: 0 0 2px 0; color: {role("ink")}; }}
.ol-header p {{ margin: 0; color: {role("muted")}; font: 14px/1.4 {FONT}; }}
.ol-header a {{ color: {role("link")}; }}
"""
#: Lesson prose and self-check questions.
PROSE_CSS = f"""
:host {{ font: 16px/1.6 {FONT}; color: {role("ink")}; }}
.ol-lesson {{ color: {role("ink")}; }}
.ol-lesson > :not(.ol-widget-slot) {{ max-width: 820px; }}
.ol-lesson > * + * {{ margin-top: 12px; }}
.ol-experiment-row {{ margin: 8px 0 16px 0; }}
.ol-experiment {{ font: 600 15px/1.3 {FONT}; min-height: 44px; padding: 8px 16px;
  border-radius: 6px; border: 1px solid {role("link")}; background: {role("paper")};
  color: {role("link")}; cursor: pointer; text-align: left; max-width: 100%; }}
.ol-experiment:hover {{ background: {role("hover")}; }}
.ol-experiment:focus-visible {{ outline: 3px solid {BLUE}; outline-offset: 2px; }}
h2 {{ font-size: 21px; margin: 22px 0 6px 0; }}
h3 {{ font-size: 17px; margin: 16px 0 4px 0; }}
/* A heading naming a flag ("find_unused_parameters=True") wraps on a phone. */
h2, h3 {{ overflow-wrap: anywhere; }}
code {{ background: {role("code")}; color: {role("ink")} !important; padding: 1px 4px;
  border-radius: 4px; font-size: 14px; overflow-wrap: anywhere; }}
a {{ color: {role("link")}; }}
.ol-question {{ border: 1px solid {role("border")}; border-left: 4px solid {PURPLE};
  border-radius: 6px; padding: 8px 12px; background: {role("paper")}; }}
.ol-question p {{ margin: 4px 0; }}
.ol-question summary {{ cursor: pointer; color: {role("link")}; font-weight: 600; padding: 4px 0; }}
.ol-question summary:focus-visible {{ outline: 3px solid {BLUE}; outline-offset: 2px; }}
.ol-answer {{ border-top: 1px solid {role("grid")}; margin-top: 4px; padding-top: 4px; }}
.ol-lesson-nav {{ display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 20px;
  font-size: 15px; border-top: 1px solid {role("grid")}; border-bottom: 1px solid {role("grid")};
  padding: 6px 0; margin: 8px 0; }}
.ol-lesson-nav p {{ margin: 0; font-weight: 600; color: {role("muted")}; }}
.ol-lesson-nav ul {{ display: flex; flex-wrap: wrap; gap: 4px 20px; list-style: none;
  margin: 0; padding: 0; }}
.ol-lesson-nav a {{ display: inline-block; padding: 10px 0; }}
"""
