"""Benchmark 3: edit-to-readout latency, ours against the cheapest Panel round trip.

Ours: type a value and press Enter in a widget's field until its readout
changes (each of ``EDITS``, alternating its two values). Reference: ArrowRight
on the focused slider of the bare app until its text shows the new value.
Reported as medians and their ratio ours / bare.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from bench.browser import ACTION_TIMEOUT, button, open_page
from bench.edits import EDITS, Edit, commit_edit, measure_change
from bench.report import fmt_ratio, table
from bench.servers import Server, Servers, attempt
from bench.stats import median, ratio

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

PAUSE_MS = 200  # between two edits on one page


def _repeat(page: Page, repeats: int, once: Callable[[int], dict]) -> list[float]:
    """Milliseconds of ``once(i)`` for i in range(repeats), with a pause after each."""
    samples = []
    for i in range(repeats):
        samples.append(once(i)["ms"])
        page.wait_for_timeout(PAUSE_MS)
    return samples


def edit_latencies(
    context: BrowserContext, server: Server, edit: Edit, repeats: int
) -> list[float]:
    """Typing a value + Enter in ``edit.label`` until ``edit.readout`` shows a new text."""
    page, _ = open_page(context, server.url + edit.route, lambda p: button(p, "Reset"))
    try:
        return _repeat(page, repeats, lambda i: commit_edit(page, edit, edit.values[i % 2]))
    finally:
        page.close()


def bare_latencies(context: BrowserContext, server: Server, repeats: int) -> list[float]:
    """ArrowRight on the focused slider handle until the text shows the new value."""
    page, _ = open_page(context, server.url + "/bare", lambda p: p.get_by_role("slider"))
    try:
        handle = page.get_by_role("slider")
        text = page.get_by_text("Slider value is", exact=False)
        handle.focus(timeout=ACTION_TIMEOUT)

        def once(_: int) -> dict:
            return measure_change(
                page, text, "ArrowRight", lambda: handle.press("ArrowRight"), None
            )

        return _repeat(page, repeats, once)
    finally:
        page.close()


def measure(context: BrowserContext, servers: Servers, repeats: int) -> dict[str, list[float]]:
    """Latency samples (ms) by case: the bare slider first, then each of ``EDITS``."""
    raw = {
        "bare slider": attempt(servers, lambda: bare_latencies(context, servers["bare"], repeats))
    }
    for edit in EDITS:
        raw[edit.name] = attempt(
            servers, lambda e=edit: edit_latencies(context, servers["app"], e, repeats)
        )
    return raw


def summarize(raw: dict) -> tuple[dict, str]:
    """Medians and ratios to the bare slider from ``raw["latency"]``, and their table."""
    lat = {name: median(samples) for name, samples in raw["latency"].items()}
    bare = lat["bare slider"]
    summary: dict = {}
    rows = []
    for edit in EDITS:
        key = f"{edit.name}: {edit.label} → {edit.readout}"
        rows.append((key, f"{lat[edit.name]:.1f}", fmt_ratio(ratio(lat[edit.name], bare))))
        summary[edit.name] = {
            "median_ms": lat[edit.name],
            "ratio_to_bare": ratio(lat[edit.name], bare),
        }
    rows.append(("bare app: slider ArrowRight → text", f"{bare:.1f}", "1.000"))
    summary["bare slider"] = {"median_ms": bare}
    title = "3. Edit-to-readout latency (keydown to text change, in-page clock; median)"
    return summary, title + "\n" + table(rows, ("edit", "ms", "ratio to bare"))
