"""The snippets that embed a widget in another page: an iframe, or Bokeh's script tag."""

from __future__ import annotations

import html
from collections.abc import Mapping


def embed_snippets(
    origin: str, route: str, title: str, link: str, values: Mapping[str, str]
) -> dict:
    """``{"iframe", "script"}`` for the widget at ``route`` on the server at ``origin``.

    ``link`` is the widget's page with its settings (the iframe's address), ``values``
    the same settings as URL query values (the script tag's arguments). The iframe
    comes with a listener that gives it the height its page reports.
    """
    from bokeh.embed import server_document

    scheme_host = "/".join(origin.split("/", 3)[:3])
    iframe = (
        f'<iframe src="{html.escape(link)}" title="{html.escape(title)}" '
        'data-overlap-lab style="width:100%;height:900px;border:0" loading="lazy"></iframe>\n'
        "<script>/* overlap-lab: the frame takes the height its page reports */\n"
        'addEventListener("message", function (e) {\n'
        f'  if (e.origin !== "{scheme_host}" || !e.data || e.data.type !== "overlap-lab:height") '
        "return;\n"
        '  document.querySelectorAll("iframe[data-overlap-lab]").forEach(function (f) {\n'
        '    if (f.contentWindow === e.source) f.style.height = e.data.height + "px";\n'
        "  });\n"
        "});\n</script>"
    )
    script = server_document(f"{origin}/{route}", arguments=dict(values)).strip()
    return {"iframe": iframe, "script": script}
