"""How the bucket timeline is drawn: its two figures, their keys and the bar table."""

from __future__ import annotations

from bokeh.models import BoxAnnotation, ColumnDataSource, FactorRange, HoverTool, Range1d, Span
from bokeh.plotting import figure

from .bucket_text import layers_phrase
from .model.buckets import Schedule
from .model.buckets.intervals import IntervalKind, Lane
from .parts import theme
from .parts.formatting import MILLISECONDS, Quantity
from .parts.playhead import Playhead

LANES = ["All-reduce", "Link wait", "Order wait", "Bucket fill", "Backward"]
#: The row each of the model's lanes is drawn on (the optimizer follows backward).
LANE_NAMES = {
    Lane.LINK: LANES[0],
    Lane.LINK_WAIT: LANES[1],
    Lane.ORDER_WAIT: LANES[2],
    Lane.FILL: LANES[3],
    Lane.COMPUTE: LANES[4],
    Lane.OPTIMIZER: LANES[4],
}
BAR_COLUMNS = ("left", "right", "lane", "label", "kind", "color", "hatch", "detail")
MB = Quantity("MB", digits=1)

KEY = theme.key_html(
    [
        ("■", theme.BLUE, "Layers and transfers, coloured by bucket (faint: not yet played)"),
        ("▨", theme.INK, "Waiting for the link (hatched /)"),
        ("▧", theme.INK, "Ready, waiting for an earlier bucket (hatched \\)"),
        ("▧", theme.VERMILLION, "Exposed tail"),
        ("┆", theme.BLUE, "Backward end (dashed)"),
        ("┊", theme.VERMILLION, "Communication end (dotted)"),
        ("╎", theme.GREEN, "Optimizer start (dash-dot)"),
        ("│", theme.INK, "Playhead"),
    ]
)
SWEEP_KEY = theme.key_html(
    [
        ("line", theme.BLUE, "Step time"),
        ("line", theme.VERMILLION, "Exposed tail (dashed)"),
        ("○", theme.INK, "Current setting"),
        ("★", theme.ORANGE, "Best setting"),
    ]
)


def tail_box() -> BoxAnnotation:
    """The hatched band from backward end to communication end."""
    return BoxAnnotation(
        fill_color=theme.VERMILLION,
        fill_alpha=0.12,
        line_color=theme.VERMILLION,
        line_alpha=0.6,
        line_dash="dashed",
        hatch_pattern="/",
        hatch_color=theme.VERMILLION,
        hatch_alpha=0.35,
        hatch_scale=10,
        level="underlay",
    )


def markers() -> dict[str, Span]:
    """Backward end, communication end and optimizer start, each in its own dash."""
    style = {
        "backward_end": (theme.BLUE, "dashed"),
        "comm_end": (theme.VERMILLION, "dotted"),
        "optimizer_start": (theme.GREEN, "dashdot"),
    }
    return {
        key: Span(dimension="height", line_color=colour, line_width=2, line_dash=dash)
        for key, (colour, dash) in style.items()
    }


def timeline_figure(
    bars: ColumnDataSource, playhead: Playhead, tail: BoxAnnotation, spans: list[Span]
):
    """Lanes of bars over time: a faint ghost of the whole step, filled in up to the playhead."""
    fig = figure(
        height=330,
        sizing_mode="stretch_width",
        min_width=280,
        y_range=FactorRange(*LANES),
        x_range=Range1d(0, 1),
        x_axis_label="Time from the start of backward (ms)",
        title="One training step",
    )
    theme.style_figure(fig)
    fig.yaxis.major_label_text_font_size = "12px"
    fig.ygrid.grid_line_color = None
    fig.add_layout(tail)
    bar = {"y": "lane", "left": "left", "right": "right", "height": 0.7, "fill_color": "color"}
    hatch = {"hatch_pattern": "hatch", "hatch_color": theme.INK, "hatch_scale": 8}
    fig.hbar(
        source=bars,
        fill_alpha=0.22,
        line_color="color",
        line_alpha=0.5,
        hatch_alpha=0.2,
        **bar,
        **hatch,
    )
    shown = playhead.reveal("intervals", bars)
    played = fig.hbar(
        source=shown, line_color="white", line_width=1, hatch_alpha=0.55, **bar, **hatch
    )
    for span in spans:
        fig.add_layout(span)
    playhead.add_to(fig, line_color=theme.INK, line_width=2, line_alpha=0.85)
    fig.add_tools(HoverTool(renderers=[played], tooltips="@detail"))
    return fig


def sweep_figure(sweep: ColumnDataSource, current: ColumnDataSource, best: ColumnDataSource):
    """Step time and tail for every bucket size; the current one ringed, the best starred."""
    fig = figure(
        height=260,
        sizing_mode="stretch_width",
        min_width=280,
        x_range=Range1d(0.5, 12.5),
        x_axis_label="Layers per bucket",
        y_axis_label="Time (ms)",
        title="Step time by bucket size",
    )
    theme.style_figure(fig)
    fig.xaxis.ticker = list(range(1, 13))
    lines = []
    for column, colour, dash, marker in (
        ("step", theme.BLUE, "solid", "circle"),
        ("tail", theme.VERMILLION, "dashed", "square"),
    ):
        lines.append(
            fig.line("x", column, source=sweep, line_color=colour, line_width=3, line_dash=dash)
        )
        fig.scatter(
            "x", column, source=sweep, marker=marker, size=7, fill_color=colour, line_color="white"
        )
    fig.scatter(
        "x", "y", source=current, size=18, fill_color=None, line_color=theme.INK, line_width=2.5
    )
    fig.scatter(
        "x", "y", source=best, marker="star", size=20, fill_color=theme.ORANGE, line_color=theme.INK
    )
    fig.add_tools(
        HoverTool(
            renderers=lines,
            tooltips=[
                ("layers per bucket", "@x"),
                ("buckets", "@buckets"),
                ("step time", "@step{0.00} ms"),
                ("exposed tail", "@tail{0.00} ms"),
            ],
            mode="vline",
        )
    )
    return fig


def bar_columns(s: Schedule) -> dict[str, list]:
    """Every bar on the timeline, with its lane, colour, hatch and hover text."""
    iv = s.to_intervals()
    rows: list[tuple] = []
    ms = MILLISECONDS

    def colour(bucket: int) -> str:
        return theme.CATEGORY[bucket % len(theme.CATEGORY)]

    for a, b, label, kind, lane, bucket, layer in zip(
        iv.start, iv.end, iv.label, iv.kind, iv.lane, iv.bucket, iv.layer, strict=True
    ):
        if kind == IntervalKind.EXPOSED:
            continue  # drawn as a band across every lane, not a bar
        fill, hatch = colour(bucket), " "
        if kind == IntervalKind.BACKWARD:
            detail = (
                f"{label} · bucket {bucket} · {ms(a)}–{ms(b)} · "
                f"{MB(s.layer_grad_mb[layer - 1])} of gradient"
            )
        elif kind == IntervalKind.TRANSFER:
            detail = (
                f"{label} ({layers_phrase(s.bucket_layers[bucket])}) · "
                f"{MB(s.bucket_size_mb[bucket])} · ready {ms(s.bucket_ready[bucket])} · "
                f"all-reduce {ms(a)}–{ms(b)} ({ms(s.bucket_transfer_ms[bucket])}) · "
                f"waited {ms(s.bucket_link_wait[bucket])}"
            )
        elif kind == IntervalKind.LINK_WAIT:
            fill, hatch = "#ffffff", "/"
            detail = (
                f"Bucket {bucket} is ready but waits {ms(b - a)} for the link ({ms(a)}–{ms(b)})"
            )
        elif kind == IntervalKind.ORDER_WAIT:
            fill, hatch = "#ffffff", "\\"
            earlier = int(s.bucket_waits_for[bucket])
            detail = (
                f"Bucket {bucket} is ready but waits {ms(b - a)} for bucket {earlier}: "
                f"buckets launch in index order ({ms(a)}–{ms(b)})"
            )
        elif kind == IntervalKind.ENQUEUE:
            fill, hatch = "#dddddd", "."
            detail = f"The host issues bucket {bucket}'s all-reduce ({ms(a)}–{ms(b)})"
        elif kind == IntervalKind.FILLING:
            detail = (
                f"Bucket {bucket} fills as {layers_phrase(s.bucket_layers[bucket])} finish; "
                f"ready at {ms(b)}"
            )
        else:
            fill, hatch = "#bbbbbb", "x"
            detail = f"{label} {ms(a)}–{ms(b)}"
        rows.append((float(a), float(b), LANE_NAMES[lane], label, str(kind), fill, hatch, detail))
    return {name: [row[i] for row in rows] for i, name in enumerate(BAR_COLUMNS)}
