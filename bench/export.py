"""The course as static files: export time and size, and time to a drawn chart beside live.

    python -m bench.export [--repeats N]

1. ``overlap-lab export DIR --single-file`` as a user runs it (a new process),
   timed on the wall clock; the size of the folder without ``single/`` (what a
   static host serves), with it, and the largest single file. Targets: <= 60 s,
   <= 10 MB, <= 1.5 MB per single file.
2. Time to a drawn chart on each widget page, the exported copy (served by
   Python's ``http.server``) against the live page (``overlap-lab serve``),
   samples alternating, measured in the page as ``bench/page_load.py`` does
   (navigation start to an ``<svg>`` in the widget's chart). Target: the copy's
   median <= 0.5x the live page's.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.browser import chromium
from bench.page_load import ROUTES, _fresh, _load_ms
from bench.report import fmt_ratio, table
from bench.servers import REPO, app_command, attempt, running_servers
from bench.stats import median, ratio

MB = 1e6


def export_once(out: Path) -> dict:
    """Export the whole course with single files; seconds and sizes."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "app.cli", "export", str(out), "--single-file"],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    seconds = time.perf_counter() - start
    files = [p for p in out.rglob("*") if p.is_file()]
    single = [p for p in files if p.parent.name == "single"]
    largest = max(single, key=lambda p: p.stat().st_size)
    return {
        "seconds": seconds,
        "served_mb": sum(p.stat().st_size for p in files if p not in single) / MB,
        "with_single_mb": sum(p.stat().st_size for p in files) / MB,
        "largest_single": largest.name,
        "largest_single_mb": largest.stat().st_size / MB,
    }


def static_command(folder: Path):
    """Python's plain file server over ``folder`` on a loopback port."""
    return lambda port: [
        sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "-d", str(folder)
    ]  # fmt: skip


def drawn_side_by_side(folder: Path, repeats: int) -> dict:
    """Milliseconds to a drawn chart per route and case, copy beside live."""
    raw: dict = {"repeat": {}, "first": {}}
    with running_servers() as servers, chromium() as context:
        servers.start("app", app_command, "/liveness")
        servers.start("copy", static_command(folder), "/index.html")
        for route in ROUTES:
            live = servers["app"].url + route
            copy = servers["copy"].url.replace("localhost", "127.0.0.1") + route + "/index.html"
            _load_ms(context, live)  # bundles into the cache, the route warmed
            _load_ms(context, copy)
            for case, load in (("repeat", _load_ms), ("first", _fresh)):
                ours, theirs = [], []
                for _ in range(repeats):
                    theirs.append(attempt(servers, lambda u=live, f=load: f(context, u)))
                    ours.append(attempt(servers, lambda u=copy, f=load: f(context, u)))
                raw[case][route] = {"copy": ours, "live": theirs}
    return raw


def report(sizes: dict, drawn: dict) -> str:
    """Both parts as text tables."""
    head = (
        f"export: {sizes['seconds']:.1f} s; served {sizes['served_mb']:.2f} MB, "
        f"{sizes['with_single_mb']:.2f} MB with single files; largest single file "
        f"{sizes['largest_single']} {sizes['largest_single_mb']:.2f} MB"
    )
    rows = []
    for case, title in (("repeat", "repeat visit"), ("first", "first visit")):
        for route, samples in drawn[case].items():
            copy, live = median(samples["copy"]), median(samples["live"])
            rows.append(
                (f"{route}, {title}", f"{copy:.0f}", f"{live:.0f}", fmt_ratio(ratio(copy, live)))
            )
    return head + "\n\n" + table(rows, ("page", "copy ms", "live ms", "copy / live"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="samples per route and case")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="overlap-lab-export-") as tmp:
        folder = Path(tmp) / "course"
        sizes = export_once(folder)
        drawn = drawn_side_by_side(folder, args.repeats)
    print(report(sizes, drawn))
    # Other work on the machine slows both halves; the ratio is measured side by side.
    print(f"load average (1 min) {load:.1f} before, {os.getloadavg()[0]:.1f} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
