"""A small picture of each widget for the index, drawn on the server from its default state.

What a picture shows comes from the widget (its registry entry names it: the
queue's length over its run, or each lane's intervals coloured by bucket);
this draws it as an SVG in the pages' colours. It is made once per process and
inlined in the index, so it costs a page nothing and loads from nowhere.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from functools import cache

import numpy as np

from widgets.common.picture import Lanes, Line, Picture, Span
from widgets.registry import WIDGETS

from . import theme

WIDTH, HEIGHT = 320, 120
PAD = 8


def lanes_svg(title: str, lanes: Sequence[tuple[str, Sequence[Span]]]) -> str:
    """Intervals on lanes: ``(start, end, colour index)``, scaled to the picture."""
    ends = [e for _, spans in lanes for _, e, _ in spans]
    starts = [s for _, spans in lanes for s, _, _ in spans]
    lo, hi = min(starts, default=0.0), max(ends, default=1.0)
    span = max(hi - lo, 1e-9)
    lane_h = (HEIGHT - 2 * PAD) / max(1, len(lanes))
    parts = []
    for i, (_, spans) in enumerate(lanes):
        y = PAD + i * lane_h + lane_h * 0.15
        for start, end, colour in spans:
            x = PAD + (start - lo) / span * (WIDTH - 2 * PAD)
            w = max(1.0, (end - start) / span * (WIDTH - 2 * PAD))
            fill = theme.CATEGORY[colour % len(theme.CATEGORY)]
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{lane_h * 0.7:.1f}" '
                f'fill="{fill}" stroke="#ffffff" stroke-width="1"/>'
            )
    return _svg(title, "".join(parts))


def line_svg(title: str, xs: Sequence[float], ys: Sequence[float]) -> str:
    """A polyline scaled to the picture, with its area shaded."""
    xs, ys = np.asarray(xs, float), np.asarray(ys, float)
    sx = (WIDTH - 2 * PAD) / max(float(xs.max() - xs.min()), 1e-9)
    sy = (HEIGHT - 2 * PAD) / max(float(ys.max()), 1e-9)
    pts = " ".join(
        f"{PAD + (x - xs.min()) * sx:.1f},{HEIGHT - PAD - y * sy:.1f}"
        for x, y in zip(xs, ys, strict=True)
    )
    base = f"{WIDTH - PAD:.1f},{HEIGHT - PAD:.1f} {PAD:.1f},{HEIGHT - PAD:.1f}"
    body = (
        f'<polygon points="{pts} {base}" fill="{theme.SKY}" fill-opacity="0.35"/>'
        f'<polyline points="{pts}" fill="none" stroke="{theme.BLUE}" stroke-width="3"/>'
    )
    return _svg(title, body)


def _svg(title: str, body: str) -> str:
    return (
        f'<svg class="ol-thumb" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'role="img" aria-label="{html.escape(title)}">'
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>{body}</svg>'
    )


def picture_svg(picture: Picture) -> str:
    """A widget's picture as an SVG."""
    if isinstance(picture, Line):
        return line_svg(picture.title, picture.xs, picture.ys)
    if isinstance(picture, Lanes):
        return lanes_svg(picture.title, picture.lanes)
    raise TypeError(f"not a picture: {picture!r}")


@cache
def thumbnail(name: str) -> str:
    """The picture of widget ``name`` (made once per process), or "" for a widget without one."""
    spec = WIDGETS.get(name)
    picture = spec.picture() if spec is not None else None
    return picture_svg(picture) if picture is not None else ""
