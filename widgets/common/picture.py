"""A widget's small picture on the index: what to draw, from its default settings.

A widget's folder says what its picture shows (``thumbnail.py``, named by its
registry entry); the index draws it (``app/pages/thumbnails.py``), in the
pages' colours. Plain records of numbers, so that a model's result becomes a
picture without a view library.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: One interval on a lane: start, end and a colour index (a bucket's, say).
Span = tuple[float, float, int]


@dataclass(frozen=True)
class Lanes:
    """Intervals on named lanes, top to bottom (each lane's spans on one time axis)."""

    title: str
    """What the picture shows, in words (its accessible name)."""
    lanes: Sequence[tuple[str, Sequence[Span]]]


@dataclass(frozen=True)
class Line:
    """A series through ``(xs[i], ys[i])``, drawn with its area under it shaded."""

    title: str
    xs: Sequence[float]
    ys: Sequence[float]


Picture = Lanes | Line


def spans(starts, ends, colours) -> list[Span]:
    """Intervals from parallel arrays; ``colours`` is one index for all, or one per interval."""
    starts, ends = np.asarray(starts, float), np.asarray(ends, float)
    colours = np.broadcast_to(np.asarray(colours, int), starts.shape)
    return [(float(a), float(b), int(c)) for a, b, c in zip(starts, ends, colours, strict=True)]
