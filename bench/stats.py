"""Sampling a server's CPU time, and the statistics every benchmark reports (medians, ratios)."""

from __future__ import annotations

import os
import statistics

#: Resolution of the CPU times in /proc, in seconds (one clock tick).
CLOCK_TICK = 1.0 / os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far, from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        stat = fh.read()
    fields = stat[stat.rindex(")") + 2 :].split()  # fields[0] is field 3 (state)
    return (int(fields[11]) + int(fields[12])) * CLOCK_TICK  # utime, stime


def median(values: list[float]) -> float:
    """The median, or NaN for no values."""
    return statistics.median(values) if values else float("nan")


def ratio(num: float, den: float) -> float | None:
    """``num / den``, or None when ``den`` is 0."""
    return None if den == 0 else num / den


def cpu_ratio(num: float, den: float) -> dict:
    """``num / den`` for CPU times, where either may be below one clock tick (read as 0).

    With ``den`` at 0 the true value is below one tick, so ``num / tick`` is a lower bound.
    """
    if den > 0:
        return {"value": num / den, "lower_bound": False}
    if num == 0:
        return {"value": None, "lower_bound": False}  # both below one tick
    return {"value": num / CLOCK_TICK, "lower_bound": True}
