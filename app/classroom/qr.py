"""A QR code of the join link, drawn on this server (segno, no network)."""

from __future__ import annotations

import functools

import segno


@functools.lru_cache(maxsize=256)
def qr_svg(url: str) -> str:
    """An inline SVG QR code of ``url`` that scales with its box, with a text alternative."""
    code = segno.make(url, error="m")
    svg = code.svg_inline(scale=4, border=2, dark="#000000", light="#ffffff", omitsize=True)
    # A picture with a name for screen readers; the link itself is shown beside it.
    return svg.replace("<svg ", '<svg role="img" aria-label="QR code of the join link" ', 1)
