"""Samples of a page while playing or idle: websocket messages and server CPU in one window.

Benchmarks 1 (messages while playing, ``playback_messages``) and 2 (server CPU,
``playback_cpu``) read the same samples: each Play sample counts both over the
same PLAY_WINDOW seconds. Play and idle samples are taken round by round, so
that drift on the machine hits every case alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bench.browser import ACTION_TIMEOUT, button, flush, open_page, readout
from bench.servers import Servers, attempt
from bench.stats import cpu_seconds, median
from bench.traffic import Direction, Traffic, wait_quiet

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Locator, Page

PLAY_WINDOW = 3.0  # s of Play per sample
CLICK_LIMIT_MS = 1_500  # the answer to Play is over after this long, whatever happens


@dataclass
class Target:
    """Something to press Play on: a route, its Play button and its elapsed-time text."""

    name: str
    server: str
    route: str
    elapsed: Callable[[Page], Locator]  # the elapsed-time text


TARGETS = [
    Target("queue lab", "app", "/queue-lab", lambda p: readout(p, "Elapsed time")),
    Target("bucket timeline", "app", "/bucket-timeline", lambda p: readout(p, "Elapsed time")),
    Target(
        "naive animation",
        "bare",
        "/naive",
        lambda p: p.get_by_text("Elapsed time:", exact=False),
    ),
]
NAIVE = "naive animation"  # the reference the played targets are compared with
BARE_IDLE = "bare app (idle)"  # the reference of server CPU at rest

#: Pages left open and untouched: name -> (server, route, locator that shows it loaded).
IDLE_REFS: dict[str, tuple[str, str, Callable[[Page], Locator]]] = {
    BARE_IDLE: ("bare", "/bare", lambda p: p.get_by_role("slider")),
    "overlap-lab (idle, queue lab open)": ("app", "/queue-lab", lambda p: button(p, "Play")),
}


@dataclass
class Window:
    """What one PLAY_WINDOW brought: its length, the server's CPU time and the traffic."""

    seconds: float
    cpu_s: float
    sent: Direction
    received: Direction


def window(page: Page, traffic: Traffic, pid: int) -> Window:
    """Count traffic and the CPU time of process ``pid`` over PLAY_WINDOW seconds from now."""
    flush(page)
    traffic.reset()
    cpu0, t0 = cpu_seconds(pid), time.monotonic()
    page.wait_for_timeout(PLAY_WINDOW * 1000)
    cpu1, t1 = cpu_seconds(pid), time.monotonic()
    flush(page)
    sent, received = traffic.sent, traffic.received  # the window's traffic, frozen
    traffic.reset()
    return Window(t1 - t0, cpu1 - cpu0, sent, received)


def elapsed_text(page: Page, target: Target) -> str:
    """The target's elapsed-time text as the page shows it now."""
    return target.elapsed(page).inner_text(timeout=ACTION_TIMEOUT).strip()


def play_sample(context: BrowserContext, servers: Servers, target: Target) -> dict:
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
        w = window(page, traffic, server.pid)
        sent, received = w.sent, w.received
        end_text = elapsed_text(page, target)
        # Stop the run, so that nothing keeps ticking after the page is gone.
        button(page, "Pause").click(timeout=ACTION_TIMEOUT)
        button(page, "Play").wait_for(state="visible", timeout=ACTION_TIMEOUT)
        return {
            "window_s": w.seconds,
            "sent_messages_per_s": len(sent.messages) / w.seconds,
            "sent_frames_per_s": sent.frames / w.seconds,
            "received_messages_per_s": len(received.messages) / w.seconds,
            "received_frames_per_s": received.frames / w.seconds,
            "received_bytes_per_s": received.size / w.seconds,
            "server_cpu_s": w.cpu_s,
            "click": click,
            "sent_during_window": [m.content for m in sent.messages],
            "received_types": sorted({m.msgtype for m in received.messages}),
            "elapsed_text": [start_text, end_text],
        }
    finally:
        page.close()


def idle_sample(
    context: BrowserContext,
    servers: Servers,
    server_name: str,
    route: str,
    ready: Callable[[Page], Locator],
) -> dict:
    """Server CPU over PLAY_WINDOW seconds with a page open and nobody touching it."""
    server = servers[server_name]
    page, traffic = open_page(context, server.url + route, ready)
    try:
        w = window(page, traffic, server.pid)
        return {
            "window_s": w.seconds,
            "server_cpu_s": w.cpu_s,
            "sent_messages_per_s": len(w.sent.messages) / w.seconds,
            "received_messages_per_s": len(w.received.messages) / w.seconds,
        }
    finally:
        page.close()


def measure(context: BrowserContext, servers: Servers, repeats: int) -> dict:
    """``{"play": {target: samples}, "idle": {reference: samples}}``, ``repeats`` rounds."""
    raw: dict = {"play": {t.name: [] for t in TARGETS}, "idle": {n: [] for n in IDLE_REFS}}
    for i in range(repeats):  # interleaved, so drift hits every case alike
        for t in TARGETS:
            raw["play"][t.name].append(
                attempt(servers, lambda t=t: play_sample(context, servers, t))
            )
        for name, ref in IDLE_REFS.items():
            raw["idle"][name].append(
                attempt(servers, lambda ref=ref: idle_sample(context, servers, *ref))
            )
        print(f"  play/idle round {i + 1}/{repeats} done", flush=True)
    return raw


def medians(samples: dict[str, list[dict]], key: str) -> dict[str, float]:
    """The median of ``key`` for each case of ``raw["play"]`` or ``raw["idle"]``."""
    return {name: median([s[key] for s in runs]) for name, runs in samples.items()}
