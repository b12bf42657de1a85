"""A small picture of each widget for the index, drawn on the server from its default state.

Each picture is an SVG of the default model's result: the queue's length over
its run, or each lane's intervals (backward per layer, every all-reduce on the
link) coloured by bucket. It is made once per process and inlined in the
index, so it costs a page nothing and loads from nowhere.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from functools import cache

import numpy as np

from app import theme

WIDTH, HEIGHT = 320, 120
PAD = 8

Lane = tuple[str, Sequence[tuple[float, float, int]]]


def lanes_svg(title: str, lanes: Sequence[Lane]) -> str:
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


def spans(starts, ends, colours) -> list[tuple[float, float, int]]:
    """Intervals from parallel arrays; ``colours`` is one index for all, or one per interval."""
    starts, ends = np.asarray(starts, float), np.asarray(ends, float)
    colours = np.broadcast_to(np.asarray(colours, int), starts.shape)
    return [(float(a), float(b), int(c)) for a, b, c in zip(starts, ends, colours, strict=True)]


def _queue_lab() -> str:
    from widgets.model.fluid_queue import FluidQueue

    q = FluidQueue()
    xs, ys = q.series.vertices(q.run_horizon())
    return line_svg("The queue's length over a run: it drains, then stays empty", xs, ys)


def _bucket_timeline() -> str:
    from widgets.model.buckets import BucketConfig, step_schedule

    s = step_schedule(BucketConfig())
    buckets = np.arange(len(s.bucket_start))
    return lanes_svg(
        "Backward by layer above, each bucket's all-reduce on the link below",
        [
            ("Backward", spans(s.layer_backward_start, s.layer_ready, s.layer_bucket)),
            ("Link", spans(s.bucket_start, s.bucket_end, buckets)),
        ],
    )


def _ranks() -> str:
    from widgets.many_ranks.model import RanksConfig

    s = RanksConfig().result().schedule
    lanes: list[Lane] = [
        (f"Rank {r}", spans(s.layer_start[r], s.layer_ready[r], s.layer_bucket))
        for r in range(len(s.layer_start))
    ]
    lanes.append(("Link", spans(s.bucket_start, s.bucket_end, np.arange(len(s.bucket_start)))))
    return lanes_svg("Every rank's backward, and the link every bucket waits for", lanes)


def _trace() -> str:
    from widgets.trace_viewer.model import TraceViewConfig

    r = TraceViewConfig().result()
    lanes: list[Lane] = []
    for rank in range(len(r.layer_start)):
        buckets = np.arange(1, r.bucket_issue.shape[1] + 1)
        lanes.append((f"Rank {rank} layers", spans(r.layer_start[rank], r.layer_end[rank], 0)))
        lanes.append(
            (
                f"Rank {rank} all-reduces",
                spans(r.bucket_issue[rank], r.bucket_complete[rank], buckets),
            )
        )
    return lanes_svg("A recorded run: each rank's layers and all-reduces", lanes)


DRAWERS: dict[str, Callable[[], str]] = {
    "queue-lab": _queue_lab,
    "bucket-timeline": _bucket_timeline,
    "ranks": _ranks,
    "trace": _trace,
}


@cache
def thumbnail(name: str) -> str:
    """The picture of widget ``name`` (made once per process), or "" for a widget without one."""
    drawer = DRAWERS.get(name)
    return drawer() if drawer else ""
