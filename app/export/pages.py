"""The static pages of an export: a widget's page, a lesson's, the index, as HTML text.

A page mounts each widget's own bundle over the static state source
(``widgets/common/js/static_source.js``) in a slot per widget. Served as files,
a page imports the bundles from ``assets/`` and fetches its states from
``states.json.gz`` beside it; as a single file everything is inlined (a module
script cannot import a neighbour from ``file://``).
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from app.pages import theme
from app.pages.lesson_page import lesson_html, lesson_nav
from app.pages.static_pages import index_html
from lessons import Lesson
from widgets.common.bundles import COMMON_JS, bundle_of
from widgets.registry import WIDGETS

STATIC_SOURCE = COMMON_JS / "static_source.js"

#: The note a page of the folder shows when opened as a file (where its scripts cannot run).
FILE_NOTE_CSS = f"""
.ol-file-note {{ font: 16px/1.5 {theme.FONT}; color: {theme.role("ink")};
  border: 2px solid {theme.role("link")}; border-radius: 8px; padding: 12px 16px;
  margin: 8px 0 16px 0; max-width: 820px; background: {theme.role("paper")}; }}
.ol-file-note[hidden] {{ display: none; }}
.ol-file-note a {{ color: {theme.role("link")}; }}
"""
#: Shows the file note, from a classic script: a module script never runs from file://.
SHOW_FILE_NOTE = (
    '<script>if (location.protocol === "file:") document.querySelectorAll(".ol-file-note")'
    ".forEach(function (e) { e.hidden = false; });</script>"
)
SERVE_HINT = (
    "serve the folder: in a terminal in the folder that holds this copy's "
    "<code>index.html</code>, run <code>python3 -m http.server 8000</code>, then open "
    '<a href="http://localhost:8000/">http://localhost:8000/</a>.'
)

PAGE_CSS = f"""{theme.THEME_CSS}
body {{ font: 16px/1.6 {theme.FONT}; color: {theme.role("ink")}; }}
main.ol-page {{ padding: 12px clamp(12px, 3vw, 24px) 32px; }}
.ol-copy-note {{ font: 14px/1.4 {theme.FONT}; color: {theme.role("muted")}; margin: 4px 0 12px 0; }}
.ol-copy-note a, .ol-prose a {{ color: {theme.role("link")}; }}
{FILE_NOTE_CSS}{theme.FRAME_CSS}{theme.HEADER_CSS}{theme.PROSE_CSS.replace(":host", ".ol-prose")}
"""

#: The viewport tag, and no icon to ask a static host for (a request that would fail).
NO_ICON = (
    '<meta name="viewport" content="width=device-width, initial-scale=1">'
    '<link rel="icon" href="data:,">'
)
_EXPORT_END = re.compile(r"export\s*\{\s*([\w$]+)\s+as\s+render\s*\}\s*;?\s*$")


def bundle_path(name: str) -> Path:
    """The built bundle of a registered widget."""
    return bundle_of(WIDGETS[name].view_class().entry)


@dataclass(frozen=True)
class Page:
    """A page to write: where (relative to the export), its title, subtitle and body."""

    path: str
    title: str
    subtitle: str
    body: str
    widgets: tuple[str, ...]

    @property
    def root(self) -> str:
        """The export's root relative to this page's folder (``..``, ``../..``)."""
        depth = self.path.count("/")
        return "/".join([".."] * depth) if depth else "."


def copy_note(live: str) -> str:
    """What a copy is, said once above its widgets."""
    more = (
        f' <a href="{html.escape(live)}">Open the live lab</a> to change anything else.'
        if live
        else ""
    )
    return (
        '<p class="ol-copy-note">A copy that runs without a server: Play, Step, Reset and '
        f"the settings this copy holds work here, from states the model computed.{more}</p>"
    )


def file_note(what: str, singles: list[tuple[str, str]]) -> str:
    """What a page opened from ``file://`` says instead of widgets that cannot load.

    ``what`` names the page's part that needs a server; ``singles`` are the
    ``(title, href)`` of the single files that work from a file, if written.
    """
    why = (
        f"<strong>Opened as a file, {what} cannot run here</strong>: browsers do not run "
        "this copy's scripts from <code>file://</code>. "
    )
    if singles:
        links = ", ".join(f'<a href="{html.escape(h)}">{html.escape(t)}</a>' for t, h in singles)
        how = f"Open the single files, which work from a file: {links}; or {SERVE_HINT}"
    else:
        how = f"To open it, {SERVE_HINT}"
    return f'<p class="ol-file-note" hidden>{why}{how}</p>{SHOW_FILE_NOTE}'


def widget_page(name: str, live: str) -> Page:
    """A widget on its own page, as ``/<name>`` serves it."""
    spec = WIDGETS[name]
    body = copy_note(live) + '<div class="ol-widget-slot" data-widget="0"></div>'
    return Page(f"{name}/index.html", spec.title, html.escape(spec.summary), body, (name,))


def lesson_page(lesson: Lesson, lessons: list[Lesson], live: str, nav: bool = True) -> Page:
    """A lesson with its widgets in their slots and its experiment buttons."""
    path = f"lessons/{lesson.name}/index.html"
    links = lesson_nav(lesson, lessons, "../..") if nav else ""
    text, blocks, _ = lesson_html(lesson, links, "../..")
    names = tuple(block.widget for block in blocks)
    body = copy_note(live) + f'<div class="ol-lesson ol-prose">{text}</div>'
    return Page(path, lesson.title, html.escape(lesson.summary), body, names)


def index_page(live: str, single_file: bool = False, lessons: Sequence[Lesson] = ()) -> str:
    """The index as the server writes it, its links to this copy's folders.

    Classes need the server: the index's link to them goes to the live lab, or
    the section is left out of a copy without one. Opened from ``file://`` it
    says so, linking the single files when ``single_file`` wrote them.
    """
    singles = (
        [(s.title, f"./single/{s.name}.html") for s in WIDGETS.values()]
        + [(x.title, f"./single/{x.name}.html") for x in lessons]
        if single_file
        else []
    )
    note = file_note("the widget and lesson pages of this copy", singles)
    text = index_html(".").replace("<head>", f"<head>{NO_ICON}", 1)
    text = text.replace("</style>", f"{FILE_NOTE_CSS}</style>", 1)
    text = text.replace("<main>", f"<main>{note}", 1)
    text = re.sub(r'href="\./([\w-]+(?:/[\w-]+)?)"', r'href="./\1/index.html"', text)
    if live:
        return text.replace('href="./class/index.html"', f'href="{html.escape(live)}/class"')
    return re.sub(r'<nav aria-label="Classroom">.*?</nav>', "", text, flags=re.S)


def _head(title: str, css: str) -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"{NO_ICON}<title>{html.escape(title)} · overlap-lab</title><style>{css}</style>"
        f"{theme.theme_script()}</head>"
    )


def _frame(page: Page, before: str = "") -> str:
    return (
        f'<body><main class="ol-page"><header class="ol-header"><h1>{html.escape(page.title)}'
        f"</h1><p>{page.subtitle}</p></header>{before}{page.body}</main>"
    )


def _render_map(names: tuple[str, ...]) -> str:
    return "{" + ", ".join(f'"{n}": r{i}' for i, n in enumerate(dict.fromkeys(names))) + "}"


def served_html(page: Page, single: str = "") -> str:
    """The page as files: bundles imported from ``assets/``, states fetched beside it.

    ``single`` is the page's single file (relative to the export), if written: the
    page opened from ``file://`` links to it.
    """
    here = [(f"{page.title} as a single file", f"{page.root}/{single}")] if single else []
    note = file_note("this page's widgets", here)
    names = tuple(dict.fromkeys(page.widgets))
    imports = "".join(
        f'import {{ render as r{i} }} from "{page.root}/assets/{bundle_path(n).name}";\n'
        for i, n in enumerate(names)
    )
    script = (
        f'<script type="module">\nimport {{ mountPage }} from "{page.root}/assets/'
        f'{STATIC_SOURCE.name}";\n{imports}mountPage({_render_map(names)});\n</script>'
    )
    return _head(page.title, PAGE_CSS) + _frame(page, note) + script + "</body></html>"


def _inline_bundle(name: str, index: int) -> str:
    """A bundle as an inline module script that leaves its ``render`` on ``window``."""
    code = bundle_path(name).read_text(encoding="utf-8")
    found = _EXPORT_END.search(code)
    if found is None:
        raise ValueError(f"{bundle_path(name).name} does not end by exporting render")
    code = code[: found.start()] + f"window.__olRender{index} = {found.group(1)};"
    return f'<script type="module">{_script_safe(code)}</script>'


def _script_safe(code: str) -> str:
    # A literal "</script" inside the code would end the element early.
    return code.replace("</script", "<\\/script")


def single_html(page: Page, states_gz: bytes) -> str:
    """The page as one self-contained file: bundles, styles and states inlined."""
    names = tuple(dict.fromkeys(page.widgets))
    bundles = "".join(_inline_bundle(n, i) for i, n in enumerate(names))
    source = re.sub(r"^export ", "", STATIC_SOURCE.read_text(encoding="utf-8"), flags=re.M)
    renders = ", ".join(f'"{n}": window.__olRender{i}' for i, n in enumerate(names))
    states = base64.b64encode(states_gz).decode("ascii")
    return (
        _head(page.title, PAGE_CSS)
        + _frame(page)
        + f'<script type="text/plain" id="ol-states">{states}</script>'
        + bundles
        + f'<script type="module">{_script_safe(source)}\nmountPage({{{renders}}});</script>'
        + "</body></html>"
    )
