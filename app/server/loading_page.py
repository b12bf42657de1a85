"""The "Loading…" notice a served page shows until its document has rendered.

Every session's page is served with this notice in its template; a page that
has to wait for its turn at the page gate (:mod:`app.server.admission`) sends the
notice first, on its own (:func:`early_notice_html`).
"""

from __future__ import annotations

from app.pages import theme

LOADING_CSS = (
    theme.THEME_CSS
    + f"""
html, body {{ margin: 0; background: {theme.role("page")}; }}
#ol-loading {{ font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: {theme.role("ink")}; max-width: 1280px; margin: 48px auto; padding: 0 16px;
  display: flex; align-items: center; gap: 12px; }}
#ol-loading .ol-spinner {{ width: 20px; height: 20px; border-radius: 50%;
  border: 3px solid {theme.role("border")}; border-top-color: #0072B2;
  animation: ol-spin 0.9s linear infinite; }}
@keyframes ol-spin {{ to {{ transform: rotate(360deg); }} }}
@media (prefers-reduced-motion: reduce) {{ #ol-loading .ol-spinner {{ animation: none; }} }}
"""
)
#: Shown by the served HTML at once and removed when the document has rendered.
LOADING_HTML = (
    '<div id="ol-loading" role="status" aria-live="polite">'
    '<span class="ol-spinner" aria-hidden="true"></span><span>Loading…</span></div>'
)
_REMOVE_LOADING_JS = "const el = document.getElementById('ol-loading'); if (el) el.remove();"


def loading_template():
    """Panel's page template: a static "Loading…" notice, then the roots in ``<main>``."""
    from .panel_internals import page_template_environment

    return page_template_environment().from_string(
        '{% extends "base.html" %}'
        # Without it a phone lays the page out 980 px wide and shows it at 0.4x.
        '{% block postamble %}{{ super() }}<meta name="viewport" '
        'content="width=device-width, initial-scale=1"><style>'
        + LOADING_CSS
        + "</style>"
        # Light or dark before anything is drawn, as the address or the browser says.
        + theme.theme_script()
        + "{% endblock %}"
        # The roots sit in one <main> landmark; the notice goes once the page renders.
        "{% block contents %}" + LOADING_HTML + "<main>{{ super() }}</main>{% endblock %}"
    )


_TEMPLATE = None


def show_loading(doc) -> None:
    """Serve ``doc`` with the loading notice, removed once the page has rendered."""
    global _TEMPLATE
    from bokeh.models import CustomJS

    if _TEMPLATE is None:
        _TEMPLATE = loading_template()
    doc.template = _TEMPLATE
    doc.js_on_event("document_ready", CustomJS(code=_REMOVE_LOADING_JS))


def early_notice_html() -> str:
    """The start of a page whose session must wait: the document's head and the notice.

    The page that follows repeats ``<!DOCTYPE>``, ``<html>``, ``<head>`` and
    ``<body>``; an HTML parser ignores the repeated tags and keeps what they
    hold (the title, scripts and stylesheets), so the page works as if it had
    come in one piece. There is no ``<title>`` here: the page's own is then the
    document's first, which is the one a browser shows.
    """
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<style>{LOADING_CSS}</style>{theme.theme_script()}\n</head>\n<body>\n{LOADING_HTML}\n"
    )
