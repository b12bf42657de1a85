"""The results table: formatting ratios, laying out rows, writing ``bench/results.json``."""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path


def fmt_ratio(value: float | None) -> str:
    """A ratio to three decimals; ``n/a (÷0)`` when the denominator was 0."""
    return "n/a (÷0)" if value is None else f"{value:.3f}"


def fmt_cpu_ratio(r: dict) -> str:
    """A ``stats.cpu_ratio`` result: a value, a lower bound (``≥ N``) or ``n/a``."""
    if r["value"] is None:
        return "n/a (both < 1 tick)"
    return f"≥ {r['value']:.0f}" if r["lower_bound"] else f"{r['value']:.3f}"


def table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    """A plain-text table with left-aligned columns and a dashed line under the header."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join("-" * w for w in widths)
    out = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths, strict=True)), line]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(out)


def write_results(path: Path, summary: dict, raw: dict, meta: dict) -> None:
    """The summary, every raw sample and the machine (plus ``meta``) as JSON."""
    machine = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        **meta,
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    document = {"summary": summary, "samples": raw, "meta": machine}
    path.write_text(
        json.dumps(document, indent=2, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
