"""A round's widget as one file: built once per round, the same bytes for every learner.

The learner's frame loads ``/class/<code>/round/<n>/<tag>``: a static page that
mounts the widget's own bundle over the static state source (``app/export``),
not a Panel session. It holds only what voting lets a learner see, and it is the
same file for the whole round: in a ``hidden`` round the settings and no state
at all (the chart would give the answer away), in a ``locked`` round the state
at time zero with no run controls. At Reveal the class page's event stream
carries the revealed states (``revealed_states``) and passes them into the
frame. Since the file never holds more than voting shows, it can be kept by a
browser or a proxy for as long as the round lasts: a class opening a round asks
a backend for it once. Every backend builds the same file from the room's
stored settings, so a class behind nginx needs nothing more in Redis.
"""

from __future__ import annotations

import base64
import functools
import html
import json
from pathlib import Path
from urllib.parse import parse_qs

from app.export.course import packed, widget_entry
from app.export.pages import PAGE_CSS, STATIC_SOURCE, bundle_path
from app.export.states import Shown, synced, widget_states
from widgets.registry import WIDGETS

from .views import voting_mode
from .widget_page import LOCKED, MODE_CSS

HERE = Path(__file__).resolve().parent
#: What a hidden round's frame says where the chart will be.
WAITING = "The chart and readouts appear when your instructor reveals the answer."
#: Rounds whose files this process keeps (a class runs one round at a time).
CACHED_ROUNDS = 32

ROUND_CSS = """
.cl-settings { border: 0; margin: 0; padding: 0; display: grid; gap: 8px 16px;
  grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); align-items: start; }
.cl-settings label { display: block; font-weight: 600; }
.cl-value { display: flex; align-items: baseline; gap: 4px; }
/* Read-only: shown as text, not as a box that looks editable. */
.cl-settings input { font: inherit; color: inherit; background: transparent; border: 0;
  padding: 2px 0; width: auto; min-width: 0; box-sizing: content-box; field-sizing: content; }
.cl-unit { color: #555; white-space: nowrap; }
.cl-waiting { font-weight: 600; padding: 8px 0; }
"""


def _settings(widget: str, query: str) -> dict:
    kwargs, _notices = WIDGETS[widget].parse(parse_qs(query, keep_blank_values=True))
    return kwargs


@functools.lru_cache(maxsize=CACHED_ROUNDS)
def _revealed(widget: str, query: str) -> dict:
    states, shared = widget_states(WIDGETS[widget], _settings(widget, query), axes=False)
    return widget_entry(states, shared, {})


def locked_states(widget: str, query: str) -> dict:
    """The round's widget at time zero: its settings and chart, no recorded run."""
    entry = dict(_revealed(widget, query))
    start = dict(entry["records"][entry["start"]])
    start.update(moments=[], reset=0, experiments={})
    return {**entry, "records": [start], "start": 0}


@functools.lru_cache(maxsize=CACHED_ROUNDS)
def revealed_states(widget: str, query: str) -> str:
    """Every recorded state of the round's widget, gzipped and base64-encoded (once per round)."""
    return base64.b64encode(packed(_revealed(widget, query))).decode("ascii")


def _settings_html(widget: str, query: str) -> str:
    """A hidden round's settings as read-only labelled fields (no model result among them)."""
    spec = WIDGETS[widget]
    rules = spec.rules()
    params = synced(Shown(rules, rules.make(**_settings(widget, query))[0]))
    rows = "".join(
        _setting_row(f, _shown(f, params["values"].get(f["name"], ""))) for f in params["fields"]
    )
    return (
        f'<p class="ol-lock-note" role="status">{html.escape(LOCKED)}</p>'
        f'<fieldset class="cl-settings" inert>{rows}</fieldset>'
        f'<p class="cl-waiting">{html.escape(WAITING)}</p>'
    )


def _setting_row(field: dict, shown: str) -> str:
    """One locked setting: its label, its value as text sized to it, and its unit beside it."""
    ident = f"set-{html.escape(field['name'])}"
    unit = field.get("unit") if shown != "none" else ""
    return (
        f'<div><label for="{ident}">{html.escape(field["label"])}</label>'
        f'<span class="cl-value"><input id="{ident}" readonly size="{max(1, len(shown))}" '
        f'value="{html.escape(shown)}">'
        + (f'<span class="cl-unit">{html.escape(unit)}</span>' if unit else "")
        + "</span></div>"
    )


def _shown(field: dict, text: str) -> str:
    """A setting's value as a locked round shows it: yes/no for a switch, "none" for unset."""
    if field.get("kind") == "boolean":
        return {"true": "yes", "false": "no"}.get(text, text)
    return text if text != "" else "none"


@functools.lru_cache(maxsize=1)
def _frame_script() -> str:
    return (HERE / "js" / "round_frame.js").read_text(encoding="utf-8")


@functools.lru_cache(maxsize=CACHED_ROUNDS)
def round_html(prefix: str, widget: str, query: str, live_src: str) -> str:
    """The round's file as voting shows it; ``live_src``: the live page an unlocked edit opens."""
    spec = WIDGETS[widget]
    mode = voting_mode(widget)
    if mode == "hidden":
        states, slot = None, _settings_html(widget, query)
    else:
        slot = ""
        states = base64.b64encode(packed(locked_states(widget, query))).decode("ascii")
    data = {"mode": mode, "states": states, "live": live_src, "locked": LOCKED}
    assets = f"{prefix}/class/assets"
    script = (
        f'import {{ staticModel, unpack }} from "{assets}/{STATIC_SOURCE.name}";\n'
        f'import {{ render }} from "{assets}/{bundle_path(widget).name}";\n'
        f"{_frame_script()}\nmountRound(render, staticModel, unpack);"
    )
    return (
        # Class pages keep the light theme (their own styles have no dark one yet).
        '<!doctype html><html lang="en" data-ol-theme="light"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer"><link rel="icon" href="data:,">'
        f"<title>{html.escape(spec.title)} · class round</title>"
        f'<style>{PAGE_CSS}{ROUND_CSS}</style></head><body><main class="ol-page">'
        f'<div id="round-widget" class="cl-{mode}">{slot}</div></main>'
        f'<script type="application/json" id="ol-round">{_json_safe(data)}</script>'
        f'<style id="ol-mode-css">{MODE_CSS}</style>'
        f'<script type="module">{script}</script></body></html>'
    )


def _json_safe(data: dict) -> str:
    # "</" inside a script element would end it early.
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")


@functools.lru_cache(maxsize=16)
def asset(name: str) -> bytes | None:
    """A script the round pages import (the static state source, a widget's bundle), or None."""
    paths = [STATIC_SOURCE, *(bundle_path(widget) for widget in WIDGETS)]
    found = [p for p in paths if p.name == name]
    return found[0].read_bytes() if found else None
