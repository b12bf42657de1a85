"""One playhead for every widget: a line at the current time that the browser animates.

The server owns a one-row driver source (anchor time, playing, speed, horizon,
revision) and changes it on every user action. A script in the browser reacts
to each change and, while playing, moves the playhead, reveals the timeline up
to it and fills the live readouts at display rate without sending anything
back. When paused, the server draws the same state itself, so Python and the
page agree.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from bokeh.models import ColumnDataSource, CustomJS, Div, Range1d, Span
from bokeh.plotting import figure as Figure

from ..model.timeline import Clock, revealed_points, revealed_polyline, revealed_spans
from .formatting import VALUE_SLOT, Quantity

_HERE = Path(__file__).parent
#: The browser's copy of the rules, then the script that drives them.
RULES_JS = (_HERE / "playhead_rules.js").read_text()
_SCRIPT = RULES_JS + (_HERE / "playhead.js").read_text()
AUTOSCALE_HEADROOM = 1.12
#: Below zero by this share of the top, so markers at zero are drawn whole.
AUTOSCALE_FOOT = 0.04
_revision = itertools.count(1)


def _rows(data: dict, keep: np.ndarray) -> dict:
    return {k: [v for v, kept in zip(vals, keep, strict=True) if kept] for k, vals in data.items()}


def revealed_data(kind: str, full: dict, t: float) -> dict:
    """What a reveal of ``kind`` shows of the columns ``full`` at time ``t``.

    The rules themselves are the model's (``widgets.model.timeline``).
    """
    if kind == "polyline":
        x, y = revealed_polyline(full["x"], full["y"], t)
        return {"x": x.tolist(), "y": y.tolist()}
    if kind == "points":
        return _rows(full, revealed_points(full["x"], t))
    keep, end = revealed_spans(full["left"], full["right"], t)
    return {**_rows(full, keep), "right": end.tolist()}


@dataclass
class _Reveal:
    kind: str
    full: ColumnDataSource
    shown: ColumnDataSource


@dataclass
class _Readout:
    div: Div
    template: str
    quantity: Quantity
    series: ColumnDataSource | None


@dataclass
class _Autoscale:
    range: Range1d
    sources: list[ColumnDataSource]


def autoscaled_end(values: list[float], minimum: float = 1.0) -> float:
    """The top of an axis showing ``values``: 12 % headroom, rounded up to a whole number."""
    return float(np.ceil(max([minimum, *values]) * AUTOSCALE_HEADROOM))


@dataclass
class _Gate:
    div: Div
    after: bool


class Playhead:
    """The playhead of one widget, shared by its figures, reveals and live readouts."""

    def __init__(self, clock: Clock):
        self.clock = clock
        self.driver = ColumnDataSource(self._driver_data(), name="playhead-driver")
        self._spans: list[Span] = []
        self._reveals: list[_Reveal] = []
        self._readouts: list[_Readout] = []
        self._gates: list[_Gate] = []
        self._autoscales: list[_Autoscale] = []
        self._attached = False

    def _driver_data(self) -> dict:
        c = self.clock
        return {
            "anchor": [c.now()],
            "playing": [1 if c.playing else 0],
            "speed": [c.speed],
            "horizon": [c.horizon],
            "revision": [next(_revision)],
        }

    def add_to(self, fig: Figure, **line) -> Span:
        """Draw the playhead on a figure."""
        style = {"line_color": "#222222", "line_width": 2, "line_dash": "solid"} | line
        span = Span(location=self.clock.now(), dimension="height", **style)
        fig.add_layout(span)
        self._spans.append(span)
        return span

    def reveal(self, kind: str, full: ColumnDataSource) -> ColumnDataSource:
        """A source showing ``full`` up to the playhead: a polyline, points or intervals.

        ``full`` holds the whole timeline; glyphs should draw the returned source.
        """
        if kind not in ("polyline", "points", "intervals"):
            raise ValueError(f"unknown reveal kind {kind!r}")
        shown = ColumnDataSource({k: [] for k in full.data})
        self._reveals.append(_Reveal(kind, full, shown))
        return shown

    def live_readout(
        self, div: Div, template: str, quantity: Quantity, series: ColumnDataSource | None = None
    ) -> None:
        """A readout of the time itself, or of ``series`` (x, y) at the time."""
        if VALUE_SLOT not in template:
            raise ValueError("a live readout template needs the value slot")
        self._readouts.append(_Readout(div, template, quantity, series))

    def autoscale(self, axis_range: Range1d, sources: list[ColumnDataSource]) -> None:
        """Fit ``axis_range`` to the ``y`` of ``sources`` as they are at the playhead."""
        self._autoscales.append(_Autoscale(axis_range, list(sources)))

    def gate(self, div: Div, after: bool = True) -> None:
        """Show ``div`` once the time reaches ``div.tags[0]`` (or until then, if not ``after``)."""
        self._gates.append(_Gate(div, after))

    def attach(self) -> None:
        """Wire the browser script once everything is registered."""
        if self._attached:
            raise RuntimeError("the playhead is already attached")
        if not self._spans:
            raise RuntimeError("add the playhead to a figure before attaching it")
        self._attached = True
        # A model reaches the browser only if a rendered model refers to it.
        for span in self._spans:
            span.tags = [self.driver]
        args = {
            "driver": self.driver,
            "spans": self._spans,
            "reveals": [{"kind": r.kind, "full": r.full, "shown": r.shown} for r in self._reveals],
            "readouts": [
                {
                    "div": r.div,
                    "template": r.template,
                    "format": r.quantity.js_spec(),
                    "series": r.series,
                }
                for r in self._readouts
            ],
            "gates": [{"div": g.div, "after": g.after} for g in self._gates],
            "autoscales": [{"range": a.range, "sources": a.sources} for a in self._autoscales],
            "scale": {"headroom": AUTOSCALE_HEADROOM, "foot": AUTOSCALE_FOOT},
        }
        self.driver.js_on_change("data", CustomJS(args=args, code=_SCRIPT))

    def push(self) -> None:
        """Draw the current state on the server and send the browser a new anchor.

        Call after every change to the clock or to what the timeline shows; the
        driver changes last so the browser redraws from the final state.
        """
        t = self.clock.now()
        for span in self._spans:
            span.location = t
        for r in self._reveals:
            r.shown.data = revealed_data(r.kind, dict(r.full.data), t)
        for r in self._readouts:
            if r.series is not None:
                value = float(np.interp(t, r.series.data["x"], r.series.data["y"]))
            else:
                value = t
            r.div.text = r.template.replace(VALUE_SLOT, r.quantity(value))
        for g in self._gates:
            at = g.div.tags[0] if g.div.tags else float("inf")
            g.div.visible = (t >= at) if g.after else (t < at)
        for a in self._autoscales:
            end = autoscaled_end([float(y) for src in a.sources for y in src.data["y"]])
            a.range.update(start=-AUTOSCALE_FOOT * end, end=end)
        self.driver.data = self._driver_data()
