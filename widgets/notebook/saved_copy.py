"""What a notebook saved without its widgets' state shows in place of a widget.

A notebook output holds the widget for a live kernel and, beside it, an HTML note
that any viewer without one shows instead (an HTML export of a notebook saved
without widget state, GitHub's notebook preview): the widget needs a running
kernel, and where to get copies that work without one. Notebooks draw the widget
and never the note.
"""

from __future__ import annotations

import html
from typing import Any

#: The note, as a reader of a saved copy sees it.
SAVED_COPY_NOTE = (
    "An overlap-lab widget was shown here. It needs a running Python kernel: open this "
    "notebook in Jupyter and run it. For pages that work without a kernel or a server, "
    "use overlap-lab export."
)

_EXPORT = "overlap-lab export"
NOTE_HTML = (
    '<p class="ol-saved-copy" role="note" style="border:1px solid #8a6d00;border-radius:6px;'
    'padding:8px 12px;color:#3d3000;background:#fff8d6">'
    + html.escape(SAVED_COPY_NOTE).replace(_EXPORT, f"<code>{_EXPORT}</code>")
    + "</p>"
)


def with_saved_copy_note(bundle: Any) -> Any:
    """A widget's display data (``data`` or ``(data, metadata)``) with the note as its
    HTML alternative."""
    if isinstance(bundle, tuple):
        data, metadata = bundle
        return {**data, "text/html": NOTE_HTML}, metadata
    if bundle is None:
        return None
    return {**bundle, "text/html": NOTE_HTML}
