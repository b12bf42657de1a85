"""The snippets that embed a widget in another page: an iframe, or Bokeh's script tag."""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path

#: The script that sizes every iframe of overlap-lab on a course page to its content
#: (a static copy's ``embed.js``; inlined in the live lab's iframe snippet). Pages post
#: their height (``reportHeightToHost`` in ``js/share.js``).
EMBED_SCRIPT = (Path(__file__).resolve().parent / "embed_frames.js").read_text(encoding="utf-8")


def embed_snippets(
    origin: str, route: str, title: str, link: str, values: Mapping[str, str]
) -> dict:
    """``{"iframe", "script"}`` for the widget at ``route`` on the server at ``origin``.

    ``link`` is the widget's page with its settings (the iframe's address), ``values``
    the same settings as URL query values (the script tag's arguments). The iframe
    comes with the listener that gives it the height its page reports, believing a
    frame's message only from the origin of the frame's own ``src``.
    """
    from bokeh.embed import server_document

    iframe = (
        f'<iframe src="{html.escape(link)}" title="{html.escape(title)}" '
        'style="width:100%;height:900px;border:0" loading="lazy"></iframe>\n'
        f"<script>\n{EMBED_SCRIPT}</script>"
    )
    script = server_document(f"{origin}/{route}", arguments=dict(values)).strip()
    return {"iframe": iframe, "script": script}
