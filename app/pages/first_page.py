"""Every widget and lesson page as a file first: the chart at once, no session while reading.

A widget's route (``/bucket-timeline?preset=…``) and a lesson's
(``/lessons/<name>``) answer with one HTML page that holds the states for its
address's settings, computed by the widgets' Panel-free state functions
(:func:`app.export.states.widget_states`, as a static export does) and drawn
by the widget's own bundle over the static state source. Reading, Play, Pause,
Step, Reset, the data table and the downloads run in the page. The first edit,
or any other action the states cannot answer, opens a live session for that
widget alone (``widgets/common/js/live_source.js`` and
:mod:`app.server.live_socket`), and the widget carries on in place.

A page's states depend only on its address's settings, so they are computed
once per distinct address and kept (``CACHED_PAGES`` of them); the page itself
adds where the server was reached (for its share links) and its URL prefix.
"""

from __future__ import annotations

import base64
import functools
import html
import json
import re
from collections.abc import Callable, Mapping, Sequence
from urllib.parse import parse_qs

from tornado.web import RequestHandler

from app.export.course import lesson_page_states, packed, widget_entry
from app.export.pages import PAGE_CSS, STATIC_SOURCE, bundle_path
from app.export.states import widget_states
from lessons import Lesson
from widgets.common.bundles import COMMON_JS
from widgets.page_settings import page_settings_from_query
from widgets.registry import WIDGETS

from . import theme
from .lesson_page import lesson_html, lesson_nav

#: The script that makes a page's widgets live in place (it imports the static source).
LIVE_SOURCE = COMMON_JS / "live_source.js"
#: Distinct widget addresses whose states this process keeps (a class shares one link).
CACHED_PAGES = 256
#: The longest query a widget page reads: a longer one is not an address a page wrote.
MAX_QUERY = 2000


def _canonical(query: Mapping[str, Sequence[str]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """A query as a cache key: keys sorted, each key's values in the order given."""
    return tuple(sorted((k, tuple(v)) for k, v in query.items()))


@functools.lru_cache(maxsize=CACHED_PAGES)
def widget_states_text(
    name: str, query: tuple[tuple[str, tuple[str, ...]], ...], origin: str
) -> str:
    """The states of widget ``name`` for an address's query, gzipped JSON as base64
    (their links to other widgets at ``origin``).

    The page starts from the address's settings; every value it ignored is said in
    the notices above the widget, in the words of a live page (unknown keys, refused
    values, an unknown preset, a bad theme).
    """
    spec = WIDGETS[name]
    _, notices, rest = page_settings_from_query(dict(query))
    kwargs, more = spec.parse({k: list(v) for k, v in rest.items()})
    _settings, made = spec.rules().make(**kwargs)
    states, shared = widget_states(spec, kwargs, axes=False, origin=origin)
    entry = widget_entry(states, shared, {})
    said = [*notices, *more, *made]
    for record in entry["records"]:
        record["notices"] = said
    page = {"widgets": [entry], "experiments": {}, "live": "", "address": False}
    return base64.b64encode(packed(page)).decode("ascii")


_LESSON_STATES: dict[tuple[str, str, str], str] = {}


def lesson_states_text(lesson: Lesson, origin: str) -> str:
    """A lesson's states (each widget's, each experiment's), gzipped JSON as base64.

    Computed once per process and server address: a lesson has no settings in its address.
    """
    key = (lesson.name, str(lesson.path), origin)
    if key not in _LESSON_STATES:
        if len(_LESSON_STATES) >= CACHED_PAGES:
            _LESSON_STATES.clear()  # addresses by the hundred: not a class, keep memory flat
        states = packed(lesson_page_states(lesson, "", origin))
        _LESSON_STATES[key] = base64.b64encode(states).decode("ascii")
    return _LESSON_STATES[key]


def _json_safe(data: object) -> str:
    # "</" inside a script element would end it early.
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")


def _render_imports(prefix: str, names: Sequence[str]) -> tuple[str, str]:
    unique = list(dict.fromkeys(names))
    imports = "".join(
        f'import {{ render as r{i} }} from "{prefix}/assets/{bundle_path(n).name}";\n'
        for i, n in enumerate(unique)
    )
    renders = "{" + ", ".join(f'"{n}": r{i}' for i, n in enumerate(unique)) + "}"
    return imports, renders


def first_html(
    title: str,
    subtitle: str,
    body: str,
    states: str,
    names: Sequence[str],
    live: dict,
    prefix: str,
) -> str:
    """A served page: its header and body, its states inlined, its widgets mounted live-ready.

    ``live`` tells the page where its live sessions open (``socket``), where the
    share links point (``origin``), whether the address follows the settings
    (``own_page``) and, on a lesson, which lesson it is (``lesson``).
    """
    imports, renders = _render_imports(prefix, names)
    # The widgets' bundles, asked for at once; the state sources are inlined (a few kB):
    # a page is then two requests, not four in two rounds.
    scripts = [bundle_path(n).name for n in dict.fromkeys(names)]
    preload = "".join(f'<link rel="modulepreload" href="{prefix}/assets/{s}">' for s in scripts)
    script = f"{imports}{inline_sources()}\nmountServed({renders});"
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<link rel="icon" href="data:,"><title>{html.escape(title)} · overlap-lab</title>'
        f"{preload}<style>{PAGE_CSS}</style>{theme.theme_script()}</head>"
        f'<body><main class="ol-page"><header class="ol-header"><h1>{html.escape(title)}'
        f"</h1><p>{subtitle}</p></header>{body}</main>"
        f'<script type="text/plain" id="ol-states">{states}</script>'
        f'<script type="application/json" id="ol-live">{_json_safe(live)}</script>'
        f'<script type="module">{script}</script></body></html>'
    )


def widget_first_html(
    name: str, query: Mapping[str, Sequence[str]], origin: str, prefix: str
) -> str:
    """Widget ``name``'s page for an address's ``query``, its links at ``origin``."""
    spec = WIDGETS[name]
    states = widget_states_text(name, _canonical(query), origin)
    live = {"socket": f"{prefix}/live", "origin": origin, "own_page": True}
    body = '<div class="ol-widget-slot" data-widget="0"></div>'
    return first_html(spec.title, html.escape(spec.summary), body, states, [name], live, prefix)


def lesson_first_html(lesson: Lesson, lessons: Sequence[Lesson], origin: str, prefix: str) -> str:
    """A lesson's page: its prose, its widgets in their slots, its experiment buttons."""
    nav = lesson_nav(lesson, lessons, prefix) if lesson in lessons else ""
    text, blocks, _ = lesson_html(lesson, nav, prefix)
    body = f'<div class="ol-lesson ol-prose">{text}</div>'
    live = {
        "socket": f"{prefix}/live",
        "origin": origin,
        "own_page": False,
        "lesson": lesson.name,
    }
    names = [block.widget for block in blocks]
    states = lesson_states_text(lesson, origin)
    return first_html(lesson.title, html.escape(lesson.summary), body, states, names, live, prefix)


@functools.lru_cache(maxsize=1)
def inline_sources() -> str:
    """The static and live state sources as one piece of a module script (no imports)."""
    static = re.sub(r"^export ", "", STATIC_SOURCE.read_text(encoding="utf-8"), flags=re.M)
    live = LIVE_SOURCE.read_text(encoding="utf-8")
    live = re.sub(r'^import [^;]*from "\./static_source\.js";\n', "", live, flags=re.M)
    live = re.sub(r"^export ", "", live, flags=re.M)
    # A literal "</script" inside the code would end the element early.
    return f"{static}\n{live}".replace("</script", "<\\/script")


@functools.lru_cache(maxsize=16)
def asset(name: str) -> bytes | None:
    """A script the served pages import (the state sources, a widget's bundle), or None."""
    paths = [STATIC_SOURCE, LIVE_SOURCE, *(bundle_path(widget) for widget in WIDGETS)]
    found = [p for p in paths if p.name == name]
    return found[0].read_bytes() if found else None


def _origin(handler: RequestHandler, prefix: str) -> str:
    """This server as the browser reached it, with its prefix (for share links)."""
    from app.server.trusted_proxy import request_scheme

    host = handler.request.headers.get("Host") or "localhost:5006"
    return f"{request_scheme(handler.request)}://{host}{prefix}"


def widget_page_for(handler: RequestHandler, name: str, prefix: str) -> str:
    """Widget ``name``'s page for the address ``handler`` was asked for."""
    raw = handler.request.query
    if len(raw) > MAX_QUERY:
        raw = ""  # not an address any page wrote: the defaults
    query = parse_qs(raw, keep_blank_values=True)
    # Script-tag embedding's own keys are not settings.
    query = {k: v for k, v in query.items() if not k.startswith("bokeh-")}
    return widget_first_html(name, query, _origin(handler, prefix), prefix)


def first_pages(
    prefix: str, lessons: Sequence[Lesson]
) -> dict[str, Callable[[RequestHandler], str]]:
    """Each served page's path (with the prefix) and what writes it for a request."""
    pages: dict[str, Callable[[RequestHandler], str]] = {}
    for name in WIDGETS:
        pages[f"{prefix}/{name}"] = functools.partial(widget_page_for, name=name, prefix=prefix)
    course = list(lessons)
    for lesson in course:

        def lesson_page_for(handler: RequestHandler, lesson: Lesson = lesson) -> str:
            return lesson_first_html(lesson, course, _origin(handler, prefix), prefix)

        pages[f"{prefix}/lessons/{lesson.name}"] = lesson_page_for
    return pages


class PageAsset(RequestHandler):
    """``/assets/<file>``: the state sources and the widgets' bundles the served pages import."""

    def get(self, name: str) -> None:
        script = asset(name)
        if script is None:
            self.send_error(404)
            return
        self.set_header("Content-Type", "text/javascript; charset=utf-8")
        self.set_header("Cache-Control", "public, max-age=3600")
        self.finish(script)


def asset_pattern() -> tuple:
    """The route of the scripts the served pages import, for ``extra_patterns``."""
    return (r"/assets/([\w.-]{1,80}\.js)", PageAsset)
