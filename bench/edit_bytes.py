"""Benchmark 4: an edit patches data, it doesn't rebuild figures.

On ``/bucket-timeline`` (the first of ``EDITS``), record every message the
server sends while the page loads (the largest is the initial document), then
the messages and bytes it sends for one edit, until nothing arrives for a
while. The ratio edit bytes / document bytes should stay well under 1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench.browser import ACTION_TIMEOUT, button, flush, open_page, text_field
from bench.edits import EDITS, commit_edit
from bench.report import fmt_ratio, table
from bench.servers import Server, Servers, attempt
from bench.stats import median, ratio
from bench.traffic import wait_quiet

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext


def edit_bytes_sample(context: BrowserContext, server: Server) -> dict:
    """Bytes the server sends for one edit of the bucket timeline, against the page load."""
    edit = EDITS[0]
    page, traffic = open_page(context, server.url + edit.route, lambda p: button(p, "Reset"))
    try:
        wait_quiet(page, traffic)
        flush(page)
        load = traffic.received
        doc = max(load.messages, key=lambda m: m.size)
        traffic.reset()
        current = text_field(page, edit.label).input_value(timeout=ACTION_TIMEOUT)
        value = edit.values[0] if current != edit.values[0] else edit.values[1]
        commit_edit(page, edit, value)
        wait_quiet(page, traffic)
        flush(page)
        got, sent = traffic.received, traffic.sent
        return {
            "load_messages": len(load.messages),
            "load_bytes": load.size,
            "document_message": doc.msgtype,
            "document_bytes": doc.size,
            "edit_messages": len(got.messages),
            "edit_bytes": got.size,
            "edit_message_types": sorted({m.msgtype for m in got.messages}),
            "edit_sent_messages": len(sent.messages),
            "edit_sent_bytes": sent.size,
        }
    finally:
        page.close()


def measure(context: BrowserContext, servers: Servers, repeats: int) -> list[dict]:
    """``repeats`` samples of ``edit_bytes_sample``, each on a fresh page."""
    return [
        attempt(servers, lambda: edit_bytes_sample(context, servers["app"])) for _ in range(repeats)
    ]


def summarize(raw: dict) -> tuple[dict, str]:
    """Medians of ``raw["edit_bytes"]``, the edit / document ratio, and their table."""
    eb = raw["edit_bytes"]
    keys = ("load_bytes", "document_bytes", "edit_bytes", "edit_messages", "load_messages")
    m = {k: median([s[k] for s in eb]) for k in keys}
    summary = {
        **m,
        "edit_to_document_ratio": ratio(m["edit_bytes"], m["document_bytes"]),
        "edit_to_load_ratio": ratio(m["edit_bytes"], m["load_bytes"]),
    }
    rows = [
        (
            "page load (all websocket messages)",
            f"{m['load_messages']:.0f}",
            f"{m['load_bytes'] / 1000:.1f}",
            "—",
        ),
        (
            f"initial document ({eb[0]['document_message']})",
            "1",
            f"{m['document_bytes'] / 1000:.1f}",
            "1.000",
        ),
        (
            f"one edit: {EDITS[0].label}",
            f"{m['edit_messages']:.0f}",
            f"{m['edit_bytes'] / 1000:.1f}",
            fmt_ratio(summary["edit_to_document_ratio"]),
        ),
    ]
    title = "4. Bytes the server sends on /bucket-timeline (median)"
    return summary, title + "\n" + table(rows, ("what", "messages", "kB", "ratio to document"))
