"""Benchmark 1: websocket messages while playing, ours against a server-driven animation.

Ours should send and receive nothing while playing (the browser animates from
the anchor the server sent); the naive animation receives a span and a text
patch per 30 Hz tick. Reported as medians per second and the ratio to naive.
"""

from __future__ import annotations

from bench.playback import NAIVE, PLAY_WINDOW, TARGETS, medians
from bench.report import fmt_ratio, table
from bench.stats import ratio

HEADER = (
    "page",
    "browser→server msg/s",
    "server→browser msg/s",
    "server→browser kB/s",
    "server→browser ratio to naive",
)


def summarize(raw: dict) -> tuple[dict, str]:
    """Median message rates of ``raw["play"]`` and their ratio to naive, and their table."""
    sent = medians(raw["play"], "sent_messages_per_s")
    received = medians(raw["play"], "received_messages_per_s")
    received_bytes = medians(raw["play"], "received_bytes_per_s")
    summary: dict = {}
    rows = []
    for name in (t.name for t in TARGETS):
        to_naive = None if name == NAIVE else ratio(received[name], received[NAIVE])
        rows.append(
            (
                name,
                f"{sent[name]:.2f}",
                f"{received[name]:.2f}",
                f"{received_bytes[name] / 1000:.1f}",
                "—" if name == NAIVE else fmt_ratio(to_naive),
            )
        )
        summary[name] = {
            "sent_per_s": sent[name],
            "received_per_s": received[name],
            "received_kb_per_s": received_bytes[name] / 1000,
            "received_ratio_to_naive": to_naive,
            "sent_ratio_to_naive": None if name == NAIVE else ratio(sent[name], sent[NAIVE]),
        }
    title = (
        f"1. Websocket messages while playing ({PLAY_WINDOW:.0f} s of Play, after the "
        "click; median)"
    )
    return summary, title + "\n" + table(rows, HEADER)
