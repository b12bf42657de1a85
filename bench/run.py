"""Benchmarks for overlap-lab, measured side by side against reference Panel apps.

Run with ``python -m bench.run`` (or ``python bench/run.py``) from the repository
root. It serves the real app (``overlap-lab serve``) and the reference apps in
``bench/bare_app.py`` on free ports, drives them in headless Chromium, prints a
table and writes ``bench/results.json``. Every result is a ratio of two things
measured in the same run on the same machine; nothing here asserts a wall time.
See ``bench/README.md`` for what each measurement means.

Each benchmark is a module with ``measure(context, servers, repeats)`` (its raw
samples) and/or ``summarize(raw) -> (summary, text)`` (its part of the results).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bench import (
    edit_bytes,
    edit_latency,
    page_load,
    playback,
    playback_cpu,
    playback_messages,
)
from bench.browser import chromium, open_page
from bench.report import write_results
from bench.servers import app_command, attempt, bare_command, running_servers
from bench.stats import CLOCK_TICK

RESULTS = Path(__file__).resolve().parent / "results.json"

#: Loaded once before any sample, so that the first sample pays no first-use cost.
WARM_UP = (
    ("app", "/queue-lab"),
    ("app", "/bucket-timeline"),
    ("bare", "/bare"),
    ("bare", "/naive"),
)

#: The parts of the results, in the order of the table: summary key and its benchmark.
REPORTS = (
    ("messages", playback_messages),
    ("cpu", playback_cpu),
    ("latency", edit_latency),
    ("edit_bytes", edit_bytes),
    ("page_load", page_load),
)


def run(repeats: int, latency_repeats: int, only: str | None = None) -> dict:
    """Every raw sample of every benchmark (or of ``only``), and notes on restarted servers."""
    wanted = {key for key, _ in REPORTS} if only is None else {only}
    raw: dict = {}
    with running_servers() as servers:
        servers.start("app", app_command, "/")
        servers.start("bare", bare_command, "/bare")
        with chromium() as context:
            for name, route in WARM_UP:
                page, _ = attempt(
                    servers,
                    lambda s=name, r=route: open_page(
                        context, servers[s].url + r, lambda p: p.locator("body")
                    ),
                )
                page.close()
            if wanted & {"messages", "cpu"}:
                raw.update(playback.measure(context, servers, repeats))
            if "latency" in wanted:
                raw["latency"] = edit_latency.measure(context, servers, latency_repeats)
                print("  latency done", flush=True)
            if "edit_bytes" in wanted:
                raw["edit_bytes"] = edit_bytes.measure(context, servers, repeats)
                print("  edit bytes done", flush=True)
            if "page_load" in wanted:
                raw["page_load"] = page_load.measure(context, servers, repeats)
                print("  page load done", flush=True)
    raw["notes"] = list(servers.notes)
    return raw


def summarize(raw: dict, only: str | None = None) -> tuple[dict, str]:
    """The summary of every benchmark (or of ``only``) by key, and the tables printed."""
    summary: dict = {}
    sections = []
    for key, bench in REPORTS:
        if only is not None and key != only:
            continue
        summary[key], text = bench.summarize(raw)
        sections.append(text)
    return summary, "\n\n".join(sections)


def main(argv: list[str] | None = None) -> int:
    """Run every benchmark, print the table and write the JSON results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="samples per Play/idle/bytes case")
    parser.add_argument("--latency-repeats", type=int, default=6, help="edits per latency case")
    parser.add_argument(
        "--only", choices=[key for key, _ in REPORTS], help="run only this benchmark"
    )
    parser.add_argument("--output", type=Path, default=RESULTS, help="where to write the JSON")
    args = parser.parse_args(argv)
    if not Path("/proc/self/stat").exists():
        raise SystemExit("these benchmarks read CPU time from /proc (Linux only)")
    started = time.monotonic()
    print("overlap-lab benchmarks: ratios measured side by side in one run", flush=True)
    raw = run(max(1, args.repeats), max(1, args.latency_repeats), args.only)
    summary, text = summarize(raw, args.only)
    print()
    print(text)
    total = time.monotonic() - started
    print(f"\n(total {total:.0f} s; raw samples in {args.output})")
    meta = {"play_window_s": playback.PLAY_WINDOW, "clock_tick_s": CLOCK_TICK, "runtime_s": total}
    write_results(args.output, summary, raw, meta)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
