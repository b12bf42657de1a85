"""The class's pages: start or join a class, the instructor's page and a learner's page.

Each is static HTML with one inlined script (``js/class.bundle.js``, built from
``js/class.js`` and its modules by ``widgets.common.bundles``) that talks to
this server alone; nothing is loaded from any other host. The instructor's key
travels only in the fragment of the instructor's own address (never sent in a
request line, so never in a log) and in the body of its requests.
"""

from __future__ import annotations

import functools
import html
from pathlib import Path

from app.pages import theme
from app.pages.static_pages import CSS as SITE_CSS

from .codes import spaced

HERE = Path(__file__).resolve().parent

CLASS_CSS = f"""
main {{ max-width: 1180px; }}
.cl-lead {{ color: {theme.MUTED}; margin: 0 0 16px 0; max-width: 760px; }}
.cl-card {{ background: #fff; border: 1px solid {theme.BORDER}; border-radius: 8px;
  padding: 14px 16px; margin: 0 0 16px 0; }}
.cl-card h2 {{ margin: 0 0 8px 0; font-size: 19px; }}
.cl-grid {{ display: grid; gap: 16px; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); }}
@media (max-width: 760px) {{ .cl-grid {{ grid-template-columns: minmax(0, 1fr); }} }}
.cl-field {{ display: flex; flex-direction: column; gap: 4px; margin: 0 0 12px 0; }}
.cl-field label {{ font-weight: 600; }}
.cl-field input, .cl-field select {{ font: inherit; padding: 6px 8px; border: 1px solid #8c959f;
  border-radius: 6px; max-width: 100%; box-sizing: border-box; background: #fff;
  color: {theme.INK}; }}
.cl-row {{ display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }}
.cl-row input {{ flex: 1 1 160px; min-width: 0; }}
.cl-hint {{ color: {theme.MUTED}; font-size: 14px; }}
.cl-error {{ color: {theme.ERROR}; font-size: 14px; font-weight: 600; }}
.cl-ok {{ background: #dafbe1; border: 1px solid #4ac26b; border-radius: 6px; padding: 6px 10px; }}
.cl-status {{ background: #ddf4ff; border: 1px solid #54aeff; border-radius: 6px;
  padding: 8px 12px; }}
button, .cl-button {{ font: inherit; font-weight: 600; padding: 7px 14px; border-radius: 6px;
  border: 1px solid #8c959f; background: #f6f8fa; color: {theme.INK}; cursor: pointer; }}
button.cl-primary {{ background: {theme.BLUE}; border-color: #005a8c; color: #fff; }}
button:disabled {{ opacity: 0.55; cursor: not-allowed; }}
button:focus-visible, input:focus-visible, select:focus-visible, a:focus-visible {{
  outline: 3px solid {theme.ORANGE}; outline-offset: 2px; }}
.cl-code {{ font: 700 clamp(34px, 7vw, 56px)/1.1 ui-monospace, "DejaVu Sans Mono", monospace;
  letter-spacing: 0.12em; margin: 4px 0; }}
.cl-qr {{ width: min(220px, 60vw); height: auto; display: block; }}
.cl-qr svg {{ width: 100%; height: auto; display: block; }}
.cl-count {{ font-size: 28px; font-weight: 700; }}
.cl-numbers {{ display: grid; grid-template-columns: repeat(auto-fill, minmax(160px, 1fr));
  gap: 8px; margin: 8px 0; }}
.cl-numbers div {{ border: 1px solid {theme.BORDER}; border-radius: 6px; padding: 6px 10px; }}
.cl-numbers dt {{ font-size: 14px; color: {theme.MUTED}; }}
.cl-numbers dd {{ margin: 0; font-size: 20px; font-weight: 700; }}
.cl-hist svg {{ width: 100%; max-width: 720px; height: auto; display: block; }}
.cl-hist table {{ border-collapse: collapse; font-size: 14px; margin-top: 6px; }}
.cl-hist details {{ margin: 4px 0 12px 0; }}
.cl-hist td, .cl-hist th {{ border: 1px solid {theme.BORDER}; padding: 2px 8px; text-align: left; }}
.cl-frame {{ width: 100%; border: 1px solid {theme.BORDER}; border-radius: 8px; height: 900px;
  background: #fff; }}
.cl-link {{ word-break: break-all; }}
[hidden] {{ display: none !important; }}
"""


@functools.lru_cache(maxsize=1)
def _script() -> str:
    return (HERE / "js" / "class.bundle.js").read_text(encoding="utf-8")


def class_page(title: str, body: str, data: dict[str, str] | None = None) -> str:
    """A class page: our styles, ``body`` in the main landmark and the class script."""
    attrs = "".join(f' data-{html.escape(k)}="{html.escape(v)}"' for k, v in (data or {}).items())
    return (
        # Class pages keep the light theme (their own styles have no dark one yet).
        '<!doctype html><html lang="en" data-ol-theme="light"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{html.escape(title)}</title><style>{SITE_CSS}{CLASS_CSS}</style></head>"
        f"<body{attrs}><main>{body}</main>"
        f'<script type="module">{_script()}</script></body></html>'
    )


def entry_html(prefix: str, message: str = "", typed: str = "") -> str:
    """``/class``: start a class, or type a join code (with its message if it was refused)."""
    error = (
        f'<p id="code-message" class="cl-error" role="alert">{html.escape(message)}</p>'
        if message
        else '<p id="code-message" class="cl-hint">Six letters and digits, as your '
        "instructor shows them.</p>"
    )
    invalid = ' aria-invalid="true"' if message else ""
    body = (
        "<header><h1>Class</h1>"
        '<p class="cl-lead">Predict together: an instructor opens a question about a widget, '
        "everyone commits to an answer, then the class sees the spread and the model's "
        "answer. No names or accounts.</p></header>"
        '<div class="cl-grid">'
        '<section class="cl-card" aria-labelledby="join-title">'
        '<h2 id="join-title">Join a class</h2>'
        f'<form method="get" action="{prefix}/class/join" novalidate>'
        '<div class="cl-field"><label for="code">Join code</label><div class="cl-row">'
        f'<input id="code" name="code" autocomplete="off" autocapitalize="characters" '
        f'spellcheck="false" maxlength="20" value="{html.escape(typed[:20])}" '
        f'aria-describedby="code-message"{invalid}>'
        '<button type="submit" class="cl-primary">Join</button></div>'
        f"{error}</div></form></section>"
        '<section class="cl-card" aria-labelledby="teach-title"><h2 id="teach-title">Teach</h2>'
        "<p>Start a room, show its join code to the class, and run prediction rounds. The "
        "instructor's page has a private link: keep it to yourself.</p>"
        f'<form method="post" action="{prefix}/class/start">'
        '<button type="submit" class="cl-primary">Start a class</button></form>'
        "</section></div>"
    )
    return class_page("Class · overlap-lab", body, {"role": "entry"})


def instructor_html(prefix: str) -> str:
    """``/class/teach``: the instructor's page (its room is named in the address's fragment)."""
    body = (
        "<header><h1>Your class</h1>"
        '<p class="cl-lead">Show the join code or the QR code. Open a round, watch the '
        "predictions arrive, then reveal the answer.</p></header>"
        '<p id="status" class="cl-status" role="status">Connecting…</p>'
        '<div id="store-status" class="cl-error" role="alert" hidden></div>'
        '<div class="cl-grid">'
        '<section class="cl-card" aria-labelledby="room-title"><h2 id="room-title">Join</h2>'
        '<p>Join code</p><p id="code" class="cl-code" aria-describedby="code-note"></p>'
        '<p id="code-note" class="cl-hint">Learners type it at <span id="entry-link"></span>, '
        "or open the join link:</p>"
        '<p><a id="join-link" class="cl-link" href="#" target="_blank" rel="noopener"></a></p>'
        '<div id="qr" class="cl-qr"></div>'
        '<p>Learners connected: <span id="connected" class="cl-count">0</span></p>'
        '<p id="idle" class="cl-hint"></p>'
        '<button type="button" id="end">End the class</button></section>'
        '<section class="cl-card" aria-labelledby="round-title"><h2 id="round-title">Round</h2>'
        '<form id="setup" novalidate>'
        '<div class="cl-field"><label for="widget">Widget</label>'
        '<select id="widget" aria-describedby="widget-message"></select>'
        '<p id="widget-message" class="cl-hint"></p></div>'
        '<div class="cl-field" id="preset-field"><label for="preset">Preset</label>'
        '<select id="preset"></select></div>'
        '<div class="cl-field"><label for="settings">Settings</label>'
        '<input id="settings" autocomplete="off" spellcheck="false" '
        'placeholder="e.g. ranks=16&amp;latency_ms=0.5" aria-describedby="settings-message">'
        '<p id="settings-message" class="cl-hint">Any of the widget\'s URL keys, as in a link '
        "to it.</p></div>"
        '<div class="cl-field"><label for="question">Question</label>'
        '<select id="question" aria-describedby="question-message"></select>'
        '<p id="question-message" class="cl-hint"></p></div>'
        '<div class="cl-field" id="parameter-field" hidden><label for="parameter" '
        'id="parameter-label">Parameter</label>'
        '<input id="parameter" inputmode="decimal" autocomplete="off" '
        'aria-describedby="parameter-message"><p id="parameter-message" class="cl-hint"></p></div>'
        '<div class="cl-row"><button type="submit" id="open" class="cl-primary">Open voting'
        '</button><a id="preview" target="_blank" rel="noopener" href="#">Open the widget '
        "with these settings</a></div></form>"
        '<div id="live" hidden><p id="asked" class="cl-status"></p>'
        '<p>Votes: <span id="votes" class="cl-count">0</span></p>'
        '<div id="hist" class="cl-hist"></div>'
        '<dl id="outcome" class="cl-numbers" hidden></dl>'
        '<div class="cl-row">'
        '<button type="button" id="reveal" class="cl-primary">Reveal</button>'
        '<button type="button" id="unlock">Unlock controls</button>'
        '<button type="button" id="next">Next round</button>'
        '<button type="button" id="csv">Download results (CSV)</button></div>'
        '<p id="action-message" class="cl-hint" role="status"></p></div>'
        "</section></div>"
    )
    return class_page("Your class · overlap-lab", body, {"role": "instructor", "prefix": prefix})


def learner_html(prefix: str, code: str) -> str:
    """``/class/<code>``: a learner's page, waiting for a round or in one."""
    body = (
        f"<header><h1>Class {html.escape(spaced(code))}</h1></header>"
        '<p id="status" class="cl-status" role="status">Waiting for the instructor</p>'
        '<section id="round" hidden aria-labelledby="question-text">'
        '<div class="cl-card"><h2 id="question-text"></h2>'
        '<form id="predict" novalidate><div class="cl-field">'
        '<label for="prediction" id="prediction-label">Your prediction</label>'
        '<div class="cl-row"><input id="prediction" inputmode="decimal" autocomplete="off" '
        'aria-describedby="prediction-message"><span id="unit" class="cl-hint"></span>'
        '<button type="submit" id="submit" class="cl-primary">Submit</button></div>'
        '<p id="prediction-message" class="cl-hint" aria-live="polite"></p></div></form>'
        '<div id="results" hidden><dl id="outcome" class="cl-numbers"></dl>'
        '<h3>The class\'s predictions</h3><div id="hist" class="cl-hist"></div></div></div>'
        '<p id="locked-note" class="cl-hint"></p>'
        '<iframe id="widget" class="cl-frame" title="The widget of this round"></iframe>'
        "</section>"
    )
    return class_page(
        f"Class {spaced(code)} · overlap-lab",
        body,
        {"role": "learner", "prefix": prefix, "code": code},
    )


def not_found_html(prefix: str, message: str) -> str:
    """A join code with no class: what happened and the form to type it again."""
    return entry_html(prefix, message)
