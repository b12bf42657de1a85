"""How the ranks view is drawn: one lane per rank and one for the link, events as shapes.

(Longer than most modules: the lanes, the seven event markers and the sweep are
one drawing that shares its row geometry; split, each part would re-derive it.)

Lanes are numeric rows (rank 0 on top, the link at the bottom, y = 0) so that
event markers can sit just above, on, or just below a lane's bars. Every
event kind has its own marker shape and place, so nothing is told by colour
alone.
"""

from __future__ import annotations

from bokeh.models import (
    ColumnDataSource,
    FixedTicker,
    HoverTool,
    LinearAxis,
    Range1d,
    Span,
)
from bokeh.plotting import figure

from .bucket_text import layers_phrase
from .model.ranks_view import RanksResult
from .parts import theme
from .parts.formatting import MILLISECONDS, Quantity
from .parts.playhead import Playhead

BAR_COLUMNS = (
    "left",
    "right",
    "bottom",
    "top",
    "lane",
    "kind",
    "label",
    "color",
    "hatch",
    "detail",
)
MARK_COLUMNS = ("x", "y", "marker", "color", "line", "alpha", "size", "lane", "event", "detail")
HALF = 0.26  # half a bar's height, in lanes
ABOVE, BELOW = 0.42, -0.42  # where markers above and below a bar sit
MB = Quantity("MB", digits=1)
IDLE_FILL = "#ffffff"
OPTIMIZER_FILL = "#bbbbbb"

#: (marker, key symbol, where it sits, meaning) per event, in the order they happen.
EVENTS = {
    "gradient": ("circle", "●", ABOVE, "Gradient ready (above the layer)"),
    "ready": ("triangle", "▲", BELOW, "Bucket ready on this rank (below)"),
    "launch": ("inverted_triangle", "▼", 0.0, "Launch: the host enqueues the all-reduce"),
    "start": ("diamond", "◆", ABOVE, "Start: every rank launched, link free"),
    "end": ("square", "■", BELOW, "Completion"),
    "backward_end": ("hex", "⬢", ABOVE, "Backward end"),
    "optimizer": ("star", "★", 0.0, "Optimizer start"),
}
SIZES = {
    "gradient": 6,
    "ready": 10,
    "launch": 10,
    "start": 11,
    "end": 10,
    "backward_end": 12,
    "optimizer": 15,
}

KEY = theme.key_html(
    [
        ("■", theme.BLUE, "Layers and transfers, coloured by bucket (faint: not yet played)"),
        ("▨", theme.INK, "Idle: waiting for the optimizer (hatched)"),
        *((sym, theme.INK, meaning) for _, sym, _, meaning in EVENTS.values()),
        ("◯", theme.INK, "Ring around ▲: the rank that defined the bucket's readiness"),
        ("│", theme.INK, "Playhead"),
    ]
)
SWEEP_KEY = theme.key_html(
    [
        ("line", theme.BLUE, "Step time (solid, left axis)"),
        ("line", theme.VERMILLION, "Overlap share (dashed, right axis)"),
        ("○", theme.INK, "Current setting"),
        ("★", theme.ORANGE, "Shortest step"),
    ]
)


def bucket_colour(bucket: int) -> str:
    """The bucket timeline's colour for a bucket."""
    return theme.CATEGORY[bucket % len(theme.CATEGORY)]


def lane_y(rank: int, n_ranks: int) -> int:
    """The row of a rank (rank 0 on top); the link is row 0."""
    return n_ranks - rank


def lane_name(rank: int) -> str:
    return f"Rank {rank}"


def timeline_figure(
    bars: ColumnDataSource, marks: ColumnDataSource, playhead: Playhead, spans: list[Span]
):
    """Rank lanes and the link lane: a faint ghost of the step, filled in up to the playhead."""
    fig = figure(
        height=320,
        sizing_mode="stretch_width",
        min_width=280,
        x_range=Range1d(0, 1),
        y_range=Range1d(-0.7, 4.7),
        x_axis_label="Time from the start of backward (ms)",
        title="One training step on every drawn rank",
    )
    theme.style_figure(fig)
    fig.ygrid.grid_line_color = None
    fig.yaxis.major_label_text_font_size = "12px"
    fig.yaxis.major_label_text_color = theme.INK
    quad = {"left": "left", "right": "right", "bottom": "bottom", "top": "top"}
    hatch = {"hatch_pattern": "hatch", "hatch_color": theme.INK, "hatch_scale": 8}
    fig.quad(
        source=bars,
        fill_color="color",
        fill_alpha=0.2,
        line_color="color",
        line_alpha=0.45,
        hatch_alpha=0.2,
        **quad,
        **hatch,
    )
    shown = playhead.reveal("intervals", bars)
    played = fig.quad(
        source=shown,
        fill_color="color",
        line_color="white",
        line_width=1,
        hatch_alpha=0.6,
        **quad,
        **hatch,
    )
    fig.scatter(
        "x",
        "y",
        source=marks,
        marker="marker",
        size="size",
        fill_color="color",
        fill_alpha=0.0,
        line_color="line",
        line_alpha=0.25,
    )
    shown_marks = playhead.reveal("points", marks)
    dots = fig.scatter(
        "x",
        "y",
        source=shown_marks,
        marker="marker",
        size="size",
        fill_color="color",
        fill_alpha="alpha",
        line_color="line",
        line_width=1.5,
    )
    for span in spans:
        fig.add_layout(span)
    playhead.add_to(fig, line_color=theme.INK, line_width=2, line_alpha=0.85)
    fig.add_tools(HoverTool(renderers=[played, dots], tooltips="@detail"))
    return fig


def set_lanes(fig, n_ranks: int) -> None:
    """Label the rows for ``n_ranks`` ranks and the link, and size the figure to them."""
    ticks = list(range(n_ranks + 1))
    fig.yaxis.ticker = FixedTicker(ticks=ticks)
    fig.yaxis.major_label_overrides = {
        0: "Link",
        **{lane_y(r, n_ranks): lane_name(r) for r in range(n_ranks)},
    }
    fig.y_range.update(start=-0.7, end=n_ranks + 0.7)
    fig.height = 150 + 52 * n_ranks


def spans() -> dict[str, Span]:
    """The slowest rank's backward end (dashed) and the optimizer start (dash-dot)."""
    style = {"backward_end": (theme.BLUE, "dashed"), "optimizer_start": (theme.GREEN, "dashdot")}
    return {
        key: Span(dimension="height", line_color=colour, line_width=2, line_dash=dash)
        for key, (colour, dash) in style.items()
    }


def sweep_figure(sweep: ColumnDataSource, current: ColumnDataSource, best: ColumnDataSource):
    """Step time (left axis) and overlap share (right axis) for every bucket size."""
    fig = figure(
        height=270,
        sizing_mode="stretch_width",
        min_width=280,
        x_range=Range1d(0.5, 12.5),
        y_range=Range1d(0, 1),
        x_axis_label="Layers per bucket",
        y_axis_label="Step time (ms)",
        title="Step time and overlap by bucket size",
    )
    theme.style_figure(fig)
    fig.extra_y_ranges = {"share": Range1d(0, 105)}
    share_axis = LinearAxis(y_range_name="share", axis_label="Overlap share (%)")
    fig.add_layout(share_axis, "right")
    theme.style_figure(fig)
    step = fig.line("x", "step", source=sweep, line_color=theme.BLUE, line_width=3)
    fig.scatter("x", "step", source=sweep, size=7, fill_color=theme.BLUE, line_color="white")
    share = fig.line(
        "x",
        "overlap",
        source=sweep,
        line_color=theme.VERMILLION,
        line_width=3,
        line_dash="dashed",
        y_range_name="share",
    )
    fig.scatter(
        "x",
        "overlap",
        source=sweep,
        marker="square",
        size=7,
        fill_color=theme.VERMILLION,
        line_color="white",
        y_range_name="share",
    )
    fig.scatter(
        "x", "y", source=current, size=18, fill_color=None, line_color=theme.INK, line_width=2.5
    )
    fig.scatter(
        "x", "y", source=best, marker="star", size=20, fill_color=theme.ORANGE, line_color=theme.INK
    )
    fig.add_tools(
        HoverTool(
            renderers=[step, share],
            tooltips=[
                ("layers per bucket", "@x"),
                ("buckets", "@buckets"),
                ("step time", "@step{0.00} ms"),
                ("overlap", "@overlap{0} %"),
            ],
            mode="vline",
        )
    )
    return fig


def bar_columns(r: RanksResult) -> dict[str, list]:
    """Every bar: each rank's layers, idle wait and optimizer, and each transfer."""
    s = r.schedule
    ms = MILLISECONDS
    n = s.n_ranks
    rows: list[tuple] = []
    for rank in range(n):
        y = lane_y(rank, n)
        for layer in s.order:
            b = int(s.layer_bucket[layer])
            a, e = float(s.layer_start[rank, layer]), float(s.layer_ready[rank, layer])
            slowed = e - a - s.backward_ms[rank, layer]
            note = f" (slowed {ms(slowed)} by transfers)" if slowed > 1e-9 else ""
            rows.append(
                (
                    a,
                    e,
                    y - HALF,
                    y + HALF,
                    lane_name(rank),
                    "backward",
                    f"Layer {layer + 1}",
                    bucket_colour(b),
                    " ",
                    f"{lane_name(rank)} · layer {layer + 1} · bucket {b} · {ms(a)}–{ms(e)}{note}",
                )
            )
        idle = float(s.idle_ms[rank])
        end = float(s.backward_end[rank])
        if idle > 1e-9 * max(1.0, s.optimizer_start):
            rows.append(
                (
                    end,
                    s.optimizer_start,
                    y - HALF,
                    y + HALF,
                    lane_name(rank),
                    "idle",
                    "Idle",
                    IDLE_FILL,
                    "/",
                    f"{lane_name(rank)} idle {ms(idle)}: backward ended at {ms(end)}, the "
                    f"optimizer starts at {ms(s.optimizer_start)}",
                )
            )
        rows.append(
            (
                s.optimizer_start,
                s.optimizer_start + r.optimizer_ms,
                y - HALF,
                y + HALF,
                lane_name(rank),
                "optimizer",
                "Optimizer",
                OPTIMIZER_FILL,
                "x",
                f"{lane_name(rank)} optimizer {ms(s.optimizer_start)}–"
                f"{ms(s.optimizer_start + r.optimizer_ms)}",
            )
        )
    for b in range(s.n_buckets):
        a, e = float(s.bucket_start[b]), float(s.bucket_end[b])
        rows.append(
            (
                a,
                e,
                -HALF,
                HALF,
                "Link",
                "transfer",
                f"Bucket {b}",
                bucket_colour(b),
                " ",
                f"Bucket {b} ({layers_phrase(r.bucket_layers[b])}, {MB(r.bucket_size_mb[b])}) "
                f"all-reduce {ms(a)}–{ms(e)}; ready everywhere {ms(r.global_ready[b])} "
                f"(rank {s.bucket_defining_rank[b]} last)",
            )
        )
    return {name: [row[i] for row in rows] for i, name in enumerate(BAR_COLUMNS)}


def mark_columns(r: RanksResult) -> dict[str, list]:
    """Every event marker: where, which shape, and its hover text."""
    s = r.schedule
    ms = MILLISECONDS
    n = s.n_ranks
    rows: list[tuple] = []

    def add(event, x, y, colour, detail, lane, line=theme.INK, alpha=1.0, size=None):
        marker, _, offset, _ = EVENTS.get(event, ("circle", "", 0.0, ""))
        rows.append(
            (
                float(x),
                y + offset,
                marker,
                colour,
                line,
                alpha,
                size or SIZES.get(event, 10),
                lane,
                event,
                detail,
            )
        )

    for rank in range(n):
        y, lane = lane_y(rank, n), lane_name(rank)
        for layer in s.order:
            b = int(s.layer_bucket[layer])
            t = s.layer_ready[rank, layer]
            add(
                "gradient",
                t,
                y,
                bucket_colour(b),
                f"{lane}: layer {layer + 1}'s gradient ready at {ms(t)}",
                lane,
                line="white",
            )
        for b in range(s.n_buckets):
            t = s.bucket_ready[rank, b]
            add("ready", t, y, bucket_colour(b), f"{lane}: bucket {b} ready at {ms(t)}", lane)
            if r.defining_mask[rank, b]:
                rows.append(
                    (
                        float(t),
                        y + BELOW,
                        "circle",
                        theme.INK,
                        theme.INK,
                        0.0,
                        20,
                        lane,
                        "defines",
                        f"{lane} defined bucket {b}'s readiness: it launched last, at "
                        f"{ms(s.bucket_launch[rank, b])}"
                        + (" (tied with other ranks)" if r.tied[b] else ""),
                    )
                )
            t = s.bucket_launch[rank, b]
            add(
                "launch",
                t,
                y,
                bucket_colour(b),
                f"{lane}: launches bucket {b}'s all-reduce at {ms(t)} (the call returns; "
                f"the transfer completes at {ms(s.bucket_end[b])})",
                lane,
                line="white",
            )
        add(
            "backward_end",
            s.backward_end[rank],
            y,
            theme.INK,
            f"{lane}: backward ends at {ms(s.backward_end[rank])}",
            lane,
            line="white",
        )
        add(
            "optimizer",
            s.optimizer_start,
            y,
            theme.GREEN,
            f"{lane}: optimizer starts at {ms(s.optimizer_start)}",
            lane,
        )
    for b in range(s.n_buckets):
        add(
            "start",
            s.bucket_start[b],
            0,
            bucket_colour(b),
            f"Bucket {b} starts at {ms(s.bucket_start[b])}: every rank launched it and "
            f"the link is free (waited {ms(s.bucket_link_wait[b])} for the link)",
            "Link",
        )
        add(
            "end",
            s.bucket_end[b],
            0,
            bucket_colour(b),
            f"Bucket {b} completes at {ms(s.bucket_end[b])}",
            "Link",
        )
    add("optimizer", s.optimizer_start, 0, theme.GREEN, "Optimizer starts", "Link")
    rows.sort(key=lambda row: row[0])
    return {name: [row[i] for row in rows] for i, name in enumerate(MARK_COLUMNS)}
