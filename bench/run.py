"""Benchmarks for overlap-lab, measured side by side against reference Panel apps.

Run with ``python -m bench.run`` (or ``python bench/run.py``) from the repository
root. It serves the real app (``overlap-lab serve``) and the reference apps in
``bench/bare_app.py`` on free ports, drives them in headless Chromium, prints a
table and writes ``bench/results.json``. Every result is a ratio of two things
measured in the same run on the same machine; nothing here asserts a wall time.
See ``bench/README.md`` for what each measurement means.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench import edit_bytes, edit_latency
from bench.browser import (
    ACTION_TIMEOUT,
    button,
    chromium,
    flush,
    open_page,
    readout,
)
from bench.report import fmt_cpu_ratio, fmt_ratio, table, write_results
from bench.servers import Servers, app_command, attempt, bare_command, running_servers
from bench.stats import CLOCK_TICK, cpu_ratio, cpu_seconds, median, ratio
from bench.traffic import wait_quiet

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "results.json"

PLAY_WINDOW = 3.0  # s of Play per sample
CLICK_LIMIT_MS = 1_500  # the same, for the answer to Play

# --- measurements -----------------------------------------------------------------


@dataclass
class Target:
    """Something to press Play on: a route, its Play button and its elapsed-time text."""

    name: str
    server: str
    route: str
    elapsed: Callable  # page -> locator of the elapsed-time text


def elapsed_text(page, target: Target) -> str:
    return target.elapsed(page).inner_text(timeout=ACTION_TIMEOUT).strip()


def play_sample(context, servers: Servers, target: Target) -> dict:
    """Press Play, then count messages and server CPU over PLAY_WINDOW seconds."""
    server = servers[target.server]
    page, traffic = open_page(context, server.url + target.route, lambda p: button(p, "Play"))
    try:
        flush(page)
        traffic.reset()
        button(page, "Play").click(timeout=ACTION_TIMEOUT)
        button(page, "Pause").wait_for(state="visible", timeout=ACTION_TIMEOUT)
        # The rest of the server's answer to the click (bounded: the naive app never stops).
        wait_quiet(page, traffic, limit_ms=CLICK_LIMIT_MS)
        flush(page)
        click = {
            "sent_messages": len(traffic.sent.messages),
            "received_messages": len(traffic.received.messages),
            "received_bytes": traffic.received.size,
        }
        start_text = elapsed_text(page, target)
        flush(page)
        traffic.reset()
        cpu0, t0 = cpu_seconds(server.pid), time.monotonic()
        page.wait_for_timeout(PLAY_WINDOW * 1000)
        cpu1, t1 = cpu_seconds(server.pid), time.monotonic()
        flush(page)
        sent, received = traffic.sent, traffic.received  # the window's traffic, frozen
        traffic.reset()
        window = t1 - t0
        end_text = elapsed_text(page, target)
        # Stop the run, so that nothing keeps ticking after the page is gone.
        button(page, "Pause").click(timeout=ACTION_TIMEOUT)
        button(page, "Play").wait_for(state="visible", timeout=ACTION_TIMEOUT)
        return {
            "window_s": window,
            "sent_messages_per_s": len(sent.messages) / window,
            "sent_frames_per_s": sent.frames / window,
            "received_messages_per_s": len(received.messages) / window,
            "received_frames_per_s": received.frames / window,
            "received_bytes_per_s": received.size / window,
            "server_cpu_s": cpu1 - cpu0,
            "click": click,
            "sent_during_window": [m.content for m in sent.messages],
            "received_types": sorted({m.msgtype for m in received.messages}),
            "elapsed_text": [start_text, end_text],
        }
    finally:
        page.close()


def idle_sample(context, servers: Servers, server_name: str, route: str, ready) -> dict:
    """Server CPU over PLAY_WINDOW seconds with a page open and nobody touching it."""
    server = servers[server_name]
    page, traffic = open_page(context, server.url + route, ready)
    try:
        flush(page)
        traffic.reset()
        cpu0, t0 = cpu_seconds(server.pid), time.monotonic()
        page.wait_for_timeout(PLAY_WINDOW * 1000)
        cpu1, t1 = cpu_seconds(server.pid), time.monotonic()
        flush(page)
        window = t1 - t0
        return {
            "window_s": window,
            "server_cpu_s": cpu1 - cpu0,
            "sent_messages_per_s": len(traffic.sent.messages) / window,
            "received_messages_per_s": len(traffic.received.messages) / window,
        }
    finally:
        page.close()


# --- reporting --------------------------------------------------------------------


def summarize(raw: dict) -> tuple[dict, str]:
    play = raw["play"]
    med = {
        name: {
            key: median([s[key] for s in samples])
            for key in (
                "sent_messages_per_s",
                "received_messages_per_s",
                "received_frames_per_s",
                "received_bytes_per_s",
                "server_cpu_s",
            )
        }
        for name, samples in play.items()
    }
    idle = {
        name: median([s["server_cpu_s"] for s in samples]) for name, samples in raw["idle"].items()
    }
    naive = med["naive animation"]
    summary: dict = {"messages": {}, "cpu": {}, "latency": {}, "edit_bytes": {}}
    text = []

    rows = []
    for name in ("queue lab", "bucket timeline", "naive animation"):
        m = med[name]
        rows.append(
            (
                name,
                f"{m['sent_messages_per_s']:.2f}",
                f"{m['received_messages_per_s']:.2f}",
                f"{m['received_bytes_per_s'] / 1000:.1f}",
                "—"
                if name == "naive animation"
                else fmt_ratio(
                    ratio(m["received_messages_per_s"], naive["received_messages_per_s"])
                ),
            )
        )
        summary["messages"][name] = {
            "sent_per_s": m["sent_messages_per_s"],
            "received_per_s": m["received_messages_per_s"],
            "received_kb_per_s": m["received_bytes_per_s"] / 1000,
            "received_ratio_to_naive": None
            if name == "naive animation"
            else ratio(m["received_messages_per_s"], naive["received_messages_per_s"]),
            "sent_ratio_to_naive": None
            if name == "naive animation"
            else ratio(m["sent_messages_per_s"], naive["sent_messages_per_s"]),
        }
    text.append(
        f"1. Websocket messages while playing ({PLAY_WINDOW:.0f} s of Play, after the "
        "click; median)"
    )
    text.append(
        table(
            rows,
            (
                "page",
                "browser→server msg/s",
                "server→browser msg/s",
                "server→browser kB/s",
                "server→browser ratio to naive",
            ),
        )
    )

    rows = []
    idle_bare = idle["bare app (idle)"]
    for name in ("queue lab", "bucket timeline", "naive animation"):
        cpu = med[name]["server_cpu_s"]
        to_naive = None if name == "naive animation" else cpu_ratio(cpu, naive["server_cpu_s"])
        to_idle = cpu_ratio(cpu, idle_bare)
        rows.append(
            (
                name + " (playing)",
                f"{cpu * 1000:.0f}",
                "—" if to_naive is None else fmt_cpu_ratio(to_naive),
                fmt_cpu_ratio(to_idle),
            )
        )
        summary["cpu"][name] = {
            "playing_cpu_s": cpu,
            "ratio_to_naive": to_naive,
            "ratio_to_bare_idle": to_idle,
        }
    for name, cpu in idle.items():
        to_idle = cpu_ratio(cpu, idle_bare)
        rows.append((name, f"{cpu * 1000:.0f}", "—", fmt_cpu_ratio(to_idle)))
        summary["cpu"][name] = {"cpu_s": cpu, "ratio_to_bare_idle": to_idle}
    text.append("")
    text.append(
        f"2. Server CPU during {PLAY_WINDOW:.0f} s (utime+stime from /proc, "
        f"resolution {CLOCK_TICK * 1000:.0f} ms; median)"
    )
    text.append(table(rows, ("server state", "CPU ms", "ratio to naive", "ratio to bare idle")))

    for key, report in (("latency", edit_latency.summarize), ("edit_bytes", edit_bytes.summarize)):
        summary[key], section = report(raw)
        text += ["", section]
    return summary, "\n".join(text)


# --- main -------------------------------------------------------------------------


def run(repeats: int, latency_repeats: int) -> dict:
    targets = [
        Target("queue lab", "app", "/queue-lab", lambda p: readout(p, "Elapsed time")),
        Target("bucket timeline", "app", "/bucket-timeline", lambda p: readout(p, "Elapsed time")),
        Target(
            "naive animation",
            "bare",
            "/naive",
            lambda p: p.get_by_text("Elapsed time:", exact=False),
        ),
    ]
    raw: dict = {"play": {t.name: [] for t in targets}, "idle": {}, "latency": {}, "edit_bytes": []}
    with running_servers() as servers:
        servers.start("app", app_command, "/")
        servers.start("bare", bare_command, "/bare")
        with chromium() as context:
            # A warm-up load of each route, so the first sample pays no first-use cost.
            for server, route in (
                ("app", "/queue-lab"),
                ("app", "/bucket-timeline"),
                ("bare", "/bare"),
                ("bare", "/naive"),
            ):
                page, _ = attempt(
                    servers,
                    lambda s=server, r=route: open_page(
                        context, servers[s].url + r, lambda p: p.locator("body")
                    ),
                )
                page.close()
            idle_refs = {
                "bare app (idle)": ("bare", "/bare", lambda p: p.get_by_role("slider")),
                "overlap-lab (idle, queue lab open)": (
                    "app",
                    "/queue-lab",
                    lambda p: button(p, "Play"),
                ),
            }
            raw["idle"] = {name: [] for name in idle_refs}
            for i in range(repeats):  # interleaved, so drift hits every case alike
                for t in targets:
                    raw["play"][t.name].append(
                        attempt(servers, lambda t=t: play_sample(context, servers, t))
                    )
                for name, ref in idle_refs.items():
                    raw["idle"][name].append(
                        attempt(servers, lambda ref=ref: idle_sample(context, servers, *ref))
                    )
                print(f"  play/idle round {i + 1}/{repeats} done", flush=True)
            raw["latency"] = edit_latency.measure(context, servers, latency_repeats)
            print("  latency done", flush=True)
            raw["edit_bytes"] = edit_bytes.measure(context, servers, repeats)
            print("  edit bytes done", flush=True)
    raw["notes"] = list(servers.notes)
    return raw


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="samples per Play/idle/bytes case")
    parser.add_argument("--latency-repeats", type=int, default=6, help="edits per latency case")
    parser.add_argument("--output", type=Path, default=RESULTS, help="where to write the JSON")
    args = parser.parse_args(argv)
    if not Path("/proc/self/stat").exists():
        raise SystemExit("these benchmarks read CPU time from /proc (Linux only)")
    started = time.monotonic()
    print("overlap-lab benchmarks: ratios measured side by side in one run", flush=True)
    raw = run(max(1, args.repeats), max(1, args.latency_repeats))
    summary, text = summarize(raw)
    print()
    print(text)
    total = time.monotonic() - started
    print(f"\n(total {total:.0f} s; raw samples in {args.output})")
    meta = {"play_window_s": PLAY_WINDOW, "clock_tick_s": CLOCK_TICK, "runtime_s": total}
    write_results(args.output, summary, raw, meta)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
