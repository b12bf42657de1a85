"""The page's upload message: its files checked and decoded, then read off the server's loop.

The page sends one message for the chosen files, ``{"upload_files": [{"name": ...,
"size": bytes, "base64": ...}, ...]}`` (the files' bytes in base64, so gzip travels
safely). Reading them (``traces.upload``: size limits before and after unpacking,
JSON parsed as data and validated, never executed) happens on the process's
upload readers (:mod:`.upload_queue`: one upload per session, in turn, within a budget).
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

import panel as pn

from traces.upload import (
    MAX_UPLOAD_BYTES,
    MAX_UPLOAD_FILES,
    NAME_CHARS,
)

from ..common.page_host import current_page
from .state import MAX_UPLOAD_MESSAGE_BYTES
from .upload_queue import UPLOADS, Outcome

LOG = logging.getLogger(__name__)


def files_in_words(names: list[str]) -> str:
    """One file's name, or how many files there are."""
    return names[0] if len(names) == 1 else f"{len(names)} files"


def decode_files(files: Any) -> list[tuple[str, bytes]] | None:
    """The files of an ``upload_files`` message: names and bytes, base64 decoded.

    None for a message of another shape (no page sends one). Raises ValueError,
    with the words for the control, for one too large or whose base64 is damaged
    or does not decode to the size the page read. Each file's base64 is taken out
    of the message as it is decoded, so this copy of the bytes is not kept.
    """
    if not isinstance(files, list) or not files:
        return None
    for f in files:
        if not (
            isinstance(f, Mapping)
            and isinstance(f.get("name"), str)
            and isinstance(f.get("base64"), str)
            and isinstance(f.get("size"), int)
            and not isinstance(f.get("size"), bool)
        ):
            return None
    names = [f["name"][:NAME_CHARS] or "upload.json" for f in files]
    total = sum(len(f["base64"]) for f in files)
    if len(files) > MAX_UPLOAD_FILES or total > MAX_UPLOAD_MESSAGE_BYTES:
        raise ValueError(
            f"{files_in_words(names)}: more than an upload here takes (at most "
            f"{MAX_UPLOAD_FILES} files and {MAX_UPLOAD_BYTES:,} bytes together, "
            f"{MAX_UPLOAD_BYTES // 2**20} MiB)"
        )
    out = []
    for name, f in zip(names, files, strict=True):
        text = f.pop("base64") if isinstance(f, MutableMapping) else f["base64"]
        try:
            data = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"{name}: its bytes did not arrive intact (damaged base64)") from None
        if len(data) != f["size"]:
            raise ValueError(
                f"{name}: {len(data):,} bytes arrived of the {f['size']:,} the page read"
            )
        del text
        out.append((name, data))
    return out


def server_document() -> Any:
    """The served page's document (or its live socket), or None outside a server session."""
    page = current_page()
    if page is not None:
        return page
    doc = pn.state.curdoc
    return doc if doc is not None and doc.session_context is not None else None


def read_in_background(
    files: list[tuple[str, bytes]], doc: Any, show: Callable[[Outcome], None]
) -> int:
    """Queue the files for the process's readers, then ``show`` the outcome on ``doc``.

    The outcome is the upload, or the words saying why it was refused. Returns how
    many uploads its reader takes first. Raises ``upload_queue.UploadRefused`` (its
    words for the control) when the page's last upload is still in flight or the
    process's budget for uploads is full.
    """

    def done(outcome: Outcome) -> None:
        # Bokeh's one document method that is safe to call from another thread.
        try:
            doc.add_next_tick_callback(lambda: show(outcome))
        except Exception:  # the page was closed meanwhile: nothing to show it on
            LOG.info("an upload finished after its page closed")

    return UPLOADS.submit(str(doc.session_context.id), files, done)
