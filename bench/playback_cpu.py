"""Benchmark 2: server CPU while playing, against the naive animation and an idle server.

The server's utime + stime over the same windows as benchmark 1, and over
windows with a page open and idle. Ours playing should cost about as much as
idle and a tiny fraction of the naive animation. CPU times have a resolution
of one clock tick, so a ratio to 0 is shown as a lower bound or ``n/a``.
"""

from __future__ import annotations

from bench.playback import BARE_IDLE, NAIVE, PLAY_WINDOW, TARGETS, medians
from bench.report import fmt_cpu_ratio, table
from bench.stats import CLOCK_TICK, cpu_ratio


def summarize(raw: dict) -> tuple[dict, str]:
    """Median CPU of ``raw["play"]`` and ``raw["idle"]``, ratios to naive and idle, a table."""
    playing = medians(raw["play"], "server_cpu_s")
    idle = medians(raw["idle"], "server_cpu_s")
    idle_bare = idle[BARE_IDLE]
    summary: dict = {}
    rows = []
    for name in (t.name for t in TARGETS):
        cpu = playing[name]
        to_naive = None if name == NAIVE else cpu_ratio(cpu, playing[NAIVE])
        to_idle = cpu_ratio(cpu, idle_bare)
        rows.append(
            (
                name + " (playing)",
                f"{cpu * 1000:.0f}",
                "—" if to_naive is None else fmt_cpu_ratio(to_naive),
                fmt_cpu_ratio(to_idle),
            )
        )
        summary[name] = {
            "playing_cpu_s": cpu,
            "ratio_to_naive": to_naive,
            "ratio_to_bare_idle": to_idle,
        }
    for name, cpu in idle.items():
        to_idle = cpu_ratio(cpu, idle_bare)
        rows.append((name, f"{cpu * 1000:.0f}", "—", fmt_cpu_ratio(to_idle)))
        summary[name] = {"cpu_s": cpu, "ratio_to_bare_idle": to_idle}
    title = (
        f"2. Server CPU during {PLAY_WINDOW:.0f} s (utime+stime from /proc, "
        f"resolution {CLOCK_TICK * 1000:.0f} ms; median)"
    )
    header = ("server state", "CPU ms", "ratio to naive", "ratio to bare idle")
    return summary, title + "\n" + table(rows, header)
