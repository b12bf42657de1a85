"""What the ranks view says: readout values, the description and the disagreement panel.

Every sentence is built from the model's numbers; nothing is decided here.
"""

from __future__ import annotations

import html

import numpy as np

from .bucket_text import layer_span
from .model.ranks_view import Disagreement, RanksResult
from .parts import theme
from .parts.formatting import COUNT, MILLISECONDS, PERCENT, Quantity

MB = Quantity("MB", digits=1)


def _runs(ranks: np.ndarray) -> str:
    """``"rank 0 for buckets 0–3, rank 1 for buckets 4–5"``."""
    parts = []
    start = 0
    for b in range(1, len(ranks) + 1):
        if b == len(ranks) or ranks[b] != ranks[start]:
            span = f"bucket {start}" if b - 1 == start else f"buckets {start}–{b - 1}"
            parts.append(f"rank {ranks[start]} for {span}")
            start = b
    return ", ".join(parts)


def _ties(tied: np.ndarray) -> str:
    """``"; tied (several ranks at once): buckets 0–3"`` when launches tie, else ``""``."""
    where = np.flatnonzero(tied)
    if where.size == 0:
        return ""
    if where.size == tied.size:
        return "; every bucket is a tie: several ranks launch it at once (lowest listed)"
    return "; ties (lowest rank listed) on bucket" + (
        f"s {', '.join(map(str, where))}" if where.size > 1 else f" {where[0]}"
    )


def readout_values(r: RanksResult) -> dict[str, tuple[str, str, str]]:
    """Label, value and note of each timeline readout (the elapsed time is live, so not here)."""
    ms = MILLISECONDS
    s = r.schedule
    defining = r.defining_ranks
    fast = r.fastest_rank
    last = r.n_buckets - 1
    issued = s.bucket_end[last] - s.bucket_launch[:, last]
    short, long = int(np.argmin(issued)), int(np.argmax(issued))
    return {
        "slowest": (
            "Slowest rank per bucket",
            ", ".join(str(int(x)) for x in defining),
            f"bucket 0 first: {_runs(defining)}{_ties(r.tied)}",
        ),
        "idle": (
            "Idle time of the fastest rank",
            ms(r.fastest_idle_ms),
            f"rank {fast}: backward ends at {ms(s.backward_end[fast])}, the optimizer "
            f"starts at {ms(s.optimizer_start)}",
        ),
        "timer": (
            "What a timer around the all-reduce call measures",
            ms(s.enqueue_ms),
            f"the enqueue only: bucket {last} really takes {ms(issued[short])} (rank {short}) "
            f"to {ms(issued[long])} (rank {long}) from issue to completion, and "
            f"{ms(s.exposed_tail)} of it is exposed after backward",
        ),
        "step": (
            "Step time",
            ms(r.step_time),
            f"forward {ms(r.forward_ms)} + {ms(s.optimizer_start)} + optimizer "
            f"{ms(r.optimizer_ms)}",
        ),
        "tail": (
            "Exposed tail",
            ms(s.exposed_tail),
            f"after the slowest rank's backward ends at {ms(s.last_backward_end)}",
        ),
        "overlap": (
            "Overlap",
            PERCENT(100 * s.overlap_fraction),
            f"of transfer time runs before the last backward ends; {COUNT(r.n_buckets)} "
            f"bucket{'s' if r.n_buckets > 1 else ''}",
        ),
    }


def disagreement_values(d: Disagreement) -> dict[str, tuple[str, str, str]]:
    """Label, value and note of each readout shown when ranks disagree."""
    k = d.mismatch_index
    return {
        "matched": (
            "Collectives every rank launched",
            COUNT(d.matched),
            f"then the sequences stop matching at collective {k}",
        ),
        "waiting": (
            "Ranks waiting forever",
            COUNT(len(d.waiting_ranks)),
            f"ranks {', '.join(map(str, d.waiting_ranks))} wait in collective {k} for "
            f"rank {d.skipping_rank}",
        ),
    }


def description(r: RanksResult) -> str:
    """A text alternative of the timeline (or of the sequences, when ranks disagree)."""
    ms = MILLISECONDS
    if r.disagreement is not None:
        d = r.disagreement
        return (
            f"No timeline: rank {d.skipping_rank} never computes layer {d.skipped_layer}, so "
            f"it launches {d.matched} collective{'s' if d.matched != 1 else ''} and the other "
            f"ranks launch {r.n_buckets}. The sequences stop matching at collective "
            f"{d.mismatch_index}, and the job hangs there."
        )
    s = r.schedule
    fast = r.fastest_rank
    slow = int(np.argmax(s.backward_end))
    return (
        f"{s.n_ranks} rank{'s' if s.n_ranks > 1 else ''}, {r.n_buckets} bucket"
        f"{'s' if r.n_buckets > 1 else ''}. Readiness is defined by {_runs(r.defining_ranks)}. "
        f"Rank {slow}'s backward ends last, at {ms(s.last_backward_end)}; the last "
        f"all-reduce completes at {ms(s.comm_end)} and the optimizer starts at "
        f"{ms(s.optimizer_start)}. Rank {fast} is idle for {ms(r.fastest_idle_ms)}. "
        f"The step takes {ms(r.step_time)}."
    )


PANEL_CSS = f"""
.ol-seq {{ font: 14px/1.45 {theme.FONT}; color: {theme.INK}; }}
.ol-seq table {{ border-collapse: collapse; margin: 6px 0; }}
.ol-seq th, .ol-seq td {{ border: 1px solid {theme.BORDER}; padding: 4px 6px; text-align: left;
  vertical-align: top; }}
.ol-seq th {{ background: {theme.PAGE_BACKGROUND}; }}
.ol-seq tr.ol-mismatch td, .ol-seq tr.ol-mismatch th {{ border-top: 3px solid {theme.ERROR};
  background: {theme.NOTICE_BACKGROUND}; }}
.ol-seq .ol-missing {{ font-weight: 600; color: {theme.ERROR}; }}
.ol-seq .ol-scroll {{ overflow-x: auto; max-width: 100%; }}
.ol-seq .ol-hint {{ color: {theme.MUTED}; font-size: 13px; }}
.ol-seq p {{ margin: 6px 0; }}
"""


def disagreement_html(r: RanksResult, title_id: str) -> str:
    """The launched collectives of each rank side by side, where they stop matching, and why."""
    d = r.disagreement
    k = d.mismatch_index
    ranks = range(len(d.sequences))
    layers = "Bucket layers: " + "; ".join(
        f"bucket {b}: {layer_span(x)}" for b, x in enumerate(r.bucket_layers)
    )
    head = "".join(f'<th scope="col">Rank {x}</th>' for x in ranks)
    rows = []
    for position in range(r.n_buckets):
        mismatch = position == k
        mark = "<br>✗ stops matching here" if mismatch else ""
        cells = []
        for x in ranks:
            seq = d.sequences[x]
            if position < len(seq):
                c = seq[position]
                cells.append(f"<td>bucket {c.bucket}<br>{MB(c.size_mb)}</td>")
            elif position == len(seq):
                cells.append(
                    '<td class="ol-missing">never launched<br>(waits for layer '
                    f"{d.skipped_layer})</td>"
                )
            else:
                cells.append('<td class="ol-missing">never launched</td>')
        cls = ' class="ol-mismatch"' if mismatch else ""
        rows.append(
            f'<tr{cls}><th scope="row">Collective {position}{mark}</th>{"".join(cells)}</tr>'
        )
    return (
        f'<section class="ol-seq" role="region" aria-labelledby="{title_id}">'
        f'<h3 id="{title_id}" class="ol-title">Ranks disagree: no timeline to draw</h3>'
        f"<p>Rank {d.skipping_rank} takes another branch and never computes layer "
        f"{d.skipped_layer} (a skipped layer, or a parameter left unused without "
        "<code>find_unused_parameters=True</code>). Each rank's all-reduces, in the order it "
        "launches them:</p>"
        '<div class="ol-scroll"><table><caption class="ol-hint">Collectives launched per rank; '
        f"they stop matching at collective {k}</caption>"
        f'<thead><tr><th scope="col">In order</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
        f'<p class="ol-hint">{html.escape(layers)}</p>'
        f"<p><strong>What happens.</strong> {html.escape(d.outcome())}</p>"
        f"<p><strong>What fixes it.</strong> {html.escape(d.fix())}</p>"
        "</section>"
    )
