"""How busy the machine is, from ``/proc`` (Linux); torch-free so the parent process can use it."""

from __future__ import annotations

import os
from pathlib import Path

_STAT = Path("/proc/stat")
_SELF_STAT = Path("/proc/self/stat")


def clock_ticks_per_s() -> int:
    """Kernel clock ticks per second (the unit of ``/proc`` CPU times)."""
    return int(os.sysconf("SC_CLK_TCK"))


def machine_busy_ticks() -> int | None:
    """CPU ticks spent busy (not idle, not waiting for I/O) by every core since boot."""
    try:
        fields = _STAT.read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    # cpu user nice system idle iowait irq softirq steal ...
    values = [int(v) for v in fields[1:9]]
    return sum(values) - values[3] - values[4]


def own_cpu_ticks() -> int | None:
    """CPU ticks used by this process (every thread, user + system) since it started."""
    try:
        text = _SELF_STAT.read_text()
    except OSError:
        return None
    # The command name in parentheses may hold spaces; fields after it are fixed.
    after = text.rsplit(")", 1)[1].split()
    return int(after[11]) + int(after[12])  # utime, stime


def other_load(
    machine_ticks: int | None, own_ticks: list[int | None], wall_s: float, cores: int
) -> float | None:
    """Share of the machine's cores busy with other processes during a window.

    ``machine_ticks`` is the busy-tick difference of the whole machine over the
    window, ``own_ticks`` the differences of each recording process. The clock tick
    is 10 ms on most kernels, so short windows give a coarse number.
    """
    if machine_ticks is None or wall_s <= 0 or any(t is None for t in own_ticks):
        return None
    others = machine_ticks - sum(own_ticks)  # type: ignore[arg-type]
    return max(0.0, others / clock_ticks_per_s() / (wall_s * cores))
