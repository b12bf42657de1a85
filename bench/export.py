"""The course as static files: export time and size, states without Panel, time to a chart.

    python -m bench.export [--repeats N] [--states-only]

1. ``overlap-lab export DIR --single-file`` as a user runs it (a new process),
   timed on the wall clock; the size of the folder without ``single/`` (what a
   static host serves), with it, and the largest single file. Targets: <= 60 s,
   <= 10 MB, <= 1.5 MB per single file.
2. Time to a drawn chart on each widget page, the exported copy (served by
   Python's ``http.server``) against the live page (``overlap-lab serve``),
   samples alternating, measured in the page as ``bench/page_load.py`` does
   (navigation start to an ``<svg>`` in the widget's chart). Target: the copy's
   median <= 0.5x the live page's.
3. Each widget page's states computed as the export computes them (from the settings
   and the clock, ``widgets/*/state.py``) beside the same states reached through the
   widget's Panel component as a live page reaches them (created for the state's
   link, the data table asked for, Step to the end of the run, Reset), samples
   alternating in one process (CPU seconds). Target: functions <= 0.6x components
   on every page (the model's own work, the same on both paths, is most of what is left).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs

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


def _through_components(name: str, page: dict) -> None:
    """Reach every state of a widget's page through its component, as a live page does."""
    from widgets.registry import WIDGETS

    spec = WIDGETS[name]
    for record in page["widgets"][0]["records"]:
        kwargs, _ = spec.parse(parse_qs(record["query"], keep_blank_values=True))
        view = spec.create(**kwargs)
        view.act("table")
        for field, text in record["values"].items():
            if view.values[field] != text:
                view.edit(field, text)  # a prediction, which a link does not carry
        for _ in record["moments"]:
            view.act("step")
        view.act("reset")


def states_beside_components(repeats: int) -> dict[str, dict[str, list[float]]]:
    """CPU seconds per widget page: its states from the state functions and through
    the components, samples alternating (a first, unmeasured round fills the caches
    of shipped traces and fits that both paths share)."""
    from app.export.course import widget_page_states
    from widgets.registry import WIDGETS

    raw: dict[str, dict[str, list[float]]] = {}
    for name in WIDGETS:
        page = widget_page_states(name, "")
        _through_components(name, page)
        samples: dict[str, list[float]] = {"functions": [], "components": [], "states": []}
        for _ in range(repeats):
            start = time.process_time()
            widget_page_states(name, "")
            samples["functions"].append(time.process_time() - start)
            start = time.process_time()
            _through_components(name, page)
            samples["components"].append(time.process_time() - start)
        samples["states"] = [len(page["widgets"][0]["records"])]
        raw[name] = samples
    return raw


def states_report(raw: dict[str, dict[str, list[float]]]) -> str:
    """Part 3 as a text table."""
    rows = []
    for name, s in raw.items():
        ours, theirs = median(s["functions"]), median(s["components"])
        rows.append(
            (name, str(s["states"][0]), f"{ours:.2f}", f"{theirs:.2f}",
             fmt_ratio(ratio(ours, theirs)))
        )  # fmt: skip
    header = ("page", "states", "functions s", "components s", "functions / components")
    return table(rows, header)


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
    parser.add_argument(
        "--states-only", action="store_true", help="only part 3: states without Panel"
    )
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    print(states_report(states_beside_components(max(3, args.repeats // 2))))
    if args.states_only:
        print(f"load average (1 min) {load:.1f} before, {os.getloadavg()[0]:.1f} after")
        return 0
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
