"""How the trace view is drawn: per-rank lanes of a measured iteration with the model over it.

Each rank has one lane (rank 0 on top) with two rows: compute above (each
layer's backward, then the optimizer) and communication below (each bucket
from issue to completion on that rank). What was measured is filled, in the
bucket timeline's colours; what the model predicts is drawn over it as dashed
outlines without fill, so the two differ by more than colour.
"""

from __future__ import annotations

from bokeh.models import ColumnDataSource, FixedTicker, HoverTool, Range1d
from bokeh.plotting import figure

from .model.trace_view import TraceViewResult
from .parts import theme
from .parts.formatting import MILLISECONDS
from .parts.playhead import Playhead

BAR_COLUMNS = (
    "left",
    "right",
    "bottom",
    "top",
    "rank",
    "source",
    "kind",
    "label",
    "color",
    "detail",
)
MARK_COLUMNS = ("x", "y", "marker", "size", "rank", "event", "detail")
COMPUTE = (0.05, 0.38)  # a compute row's bottom and top, above the lane's centre
COMM = (-0.38, -0.05)  # the communication row, below it
OPTIMIZER_FILL = "#bbbbbb"

KEY = theme.key_html(
    [
        ("■", theme.BLUE, "Measured: layers (upper row) and all-reduces (lower row), by bucket"),
        ("■", OPTIMIZER_FILL, "Measured optimizer (grey)"),
        ("┅", theme.INK, "Model's prediction: dashed outline, no fill"),
        ("▲", theme.INK, "Bucket ready on this rank"),
        ("◯", theme.INK, "Ring: the rank that issued the bucket last (defined its readiness)"),
        ("⬢", theme.INK, "Backward returned"),
        ("│", theme.INK, "Playhead"),
    ]
)


def bucket_colour(bucket: int) -> str:
    """The bucket timeline's colour for a bucket."""
    return theme.CATEGORY[bucket % len(theme.CATEGORY)]


def lane_y(rank: int, n_ranks: int) -> int:
    """The centre of a rank's lane (rank 0 on top)."""
    return n_ranks - rank


def timeline_figure(
    measured: ColumnDataSource,
    model: ColumnDataSource,
    marks: ColumnDataSource,
    playhead: Playhead,
):
    """Measured bars (faint until played), the model's outlines and the event marks."""
    fig = figure(
        height=300,
        sizing_mode="stretch_width",
        min_width=280,
        x_range=Range1d(0, 1),
        y_range=Range1d(0.45, 2.55),
        x_axis_label="ms from the last rank's backward start",
        title="Measured iteration, with the model's prediction over it",
    )
    theme.style_figure(fig)
    fig.ygrid.grid_line_color = None
    fig.yaxis.major_label_text_font_size = "12px"
    fig.yaxis.major_label_text_color = theme.INK
    quad = {"left": "left", "right": "right", "bottom": "bottom", "top": "top"}
    fig.quad(source=measured, fill_color="color", fill_alpha=0.18, line_color=None, **quad)
    shown = playhead.reveal("intervals", measured)
    bars = fig.quad(source=shown, fill_color="color", fill_alpha=0.85, line_color="white", **quad)
    outlines = fig.quad(
        source=model,
        fill_color=None,
        line_color=theme.INK,
        line_width=1.5,
        line_dash="dashed",
        **quad,
    )
    fig.scatter(
        "x", "y", source=marks, marker="marker", size="size", fill_color=None,
        line_color=theme.INK, line_alpha=0.25,
    )  # fmt: skip
    shown_marks = playhead.reveal("points", marks)
    dots = fig.scatter(
        "x", "y", source=shown_marks, marker="marker", size="size", fill_color=None,
        line_color=theme.INK, line_width=1.8,
    )  # fmt: skip
    playhead.add_to(fig, line_color=theme.INK, line_width=2, line_alpha=0.85)
    fig.add_tools(HoverTool(renderers=[bars, outlines, dots], tooltips="@detail"))
    return fig


def set_lanes(fig, n_ranks: int) -> None:
    """Label a lane per rank and size the figure to them."""
    fig.yaxis.ticker = FixedTicker(ticks=list(range(1, n_ranks + 1)))
    fig.yaxis.major_label_overrides = {lane_y(r, n_ranks): f"Rank {r}" for r in range(n_ranks)}
    fig.y_range.update(start=0.45, end=n_ranks + 0.55)
    fig.height = 140 + 90 * n_ranks


def _rows_to_columns(rows: list[tuple], names: tuple[str, ...]) -> dict[str, list]:
    return {name: [row[i] for row in rows] for i, name in enumerate(names)}


def measured_columns(r: TraceViewResult) -> dict[str, list]:
    """Every measured bar: each rank's layers, its buckets in flight and its optimizer."""
    ms = MILLISECONDS
    t = r.trace
    bucket_of = t.parameter_bucket
    rows = []
    for rank in range(r.n_ranks):
        y = lane_y(rank, r.n_ranks)
        for p in sorted(range(len(t.parameter_names)), key=lambda p: r.layer_end[rank, p]):
            a, e = float(r.layer_start[rank, p]), float(r.layer_end[rank, p])
            b = int(bucket_of[p])
            rows.append((
                a, e, y + COMPUTE[0], y + COMPUTE[1], rank, "measured", "backward",
                t.parameter_names[p], bucket_colour(b),
                f"Rank {rank}: {t.parameter_names[p]} backward {ms(a)}–{ms(e)} (bucket {b})",
            ))  # fmt: skip
        for b in range(r.n_buckets):
            a, e = float(r.bucket_issue[rank, b]), float(r.bucket_complete[rank, b])
            rows.append((
                a, e, y + COMM[0], y + COMM[1], rank, "measured", "all-reduce", f"Bucket {b}",
                bucket_colour(b), f"Rank {rank}: bucket {b} issued {ms(a)}, completed {ms(e)}",
            ))  # fmt: skip
        a, e = float(r.optimizer_start[rank]), float(r.optimizer_end[rank])
        rows.append((
            a, e, y + COMPUTE[0], y + COMPUTE[1], rank, "measured", "optimizer", "Optimizer",
            OPTIMIZER_FILL, f"Rank {rank}: optimizer {ms(a)}–{ms(e)}",
        ))  # fmt: skip
    rows.sort(key=lambda row: row[0])
    return _rows_to_columns(rows, BAR_COLUMNS)


def model_columns(r: TraceViewResult) -> dict[str, list]:
    """The model's bars on the same lanes: layers, transfers (launch to end) and optimizer."""
    ms = MILLISECONDS
    s = r.prediction.schedule
    names = r.trace.parameter_names
    rows = []
    opt = r.predicted_optimizer_start
    for rank in range(r.n_ranks):
        y, k = lane_y(rank, r.n_ranks), r.model_rank(rank)
        for p in range(len(names)):
            a, e = float(s.layer_start[k, p]), float(s.layer_ready[k, p])
            b = int(s.layer_bucket[p])
            rows.append((
                a, e, y + COMPUTE[0], y + COMPUTE[1], rank, "model", "backward", names[p],
                bucket_colour(b), f"Model, rank {rank}: {names[p]} backward {ms(a)}–{ms(e)}",
            ))  # fmt: skip
        for b in range(s.n_buckets):
            a, e = float(s.bucket_launch[k, b]), float(s.bucket_end[b])
            rows.append((
                a, e, y + COMM[0], y + COMM[1], rank, "model", "all-reduce", f"Bucket {b}",
                bucket_colour(b), f"Model, rank {rank}: bucket {b} launched {ms(a)}, ends {ms(e)}",
            ))  # fmt: skip
        end = opt + r.fit.after_return_ms
        rows.append((
            opt, end, y + COMPUTE[0], y + COMPUTE[1], rank, "model", "optimizer", "Optimizer",
            OPTIMIZER_FILL, f"Model, rank {rank}: backward returns {ms(opt)}, step ends {ms(end)}",
        ))  # fmt: skip
    return _rows_to_columns(rows, BAR_COLUMNS)


def mark_columns(r: TraceViewResult) -> dict[str, list]:
    """Bucket ready (▲), the defining rank's ring (◯) and backward return (⬢), measured."""
    ms = MILLISECONDS
    rows = []
    for rank in range(r.n_ranks):
        y = lane_y(rank, r.n_ranks)
        for b in range(r.n_buckets):
            t = float(r.bucket_ready[rank, b])
            rows.append(
                (t, y, "triangle", 9, rank, "ready", f"Rank {rank}: bucket {b} ready {ms(t)}")
            )
            if r.defining_rank[b] == rank:
                n = int(r.defining_counts[rank, b])
                t = float(r.bucket_issue[rank, b])
                rows.append((
                    t, y + (COMM[0] + COMM[1]) / 2, "circle", 17, rank, "defines",
                    f"Rank {rank} issued bucket {b} last, at {ms(t)}: it defined its readiness "
                    f"(in {n} of {r.trace.n_iterations} iterations)",
                ))  # fmt: skip
        t = float(r.backward_return[rank])
        rows.append(
            (t, y + 0.46, "hex", 11, rank, "return", f"Rank {rank}: backward returned {ms(t)}")
        )
    rows.sort(key=lambda row: row[0])
    return _rows_to_columns(rows, MARK_COLUMNS)
