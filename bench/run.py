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

from bench.browser import (
    ACTION_TIMEOUT,
    button,
    chromium,
    flush,
    open_page,
    readout,
    text_field,
)
from bench.report import fmt_cpu_ratio, fmt_ratio, table, write_results
from bench.servers import Server, Servers, app_command, attempt, bare_command, running_servers
from bench.stats import CLOCK_TICK, cpu_ratio, cpu_seconds, median, ratio
from bench.traffic import wait_quiet

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "results.json"

PLAY_WINDOW = 3.0  # s of Play per sample
CLICK_LIMIT_MS = 1_500  # the same, for the answer to Play

# Arms one latency measurement in the page. ``el`` is an element inside the
# readout's shadow root (the root survives re-renders of the readout); the
# text watched is the root's ``selector`` element, or the whole root. t0 is
# the keydown of ``key`` (capture phase, before any handler), t1 the first
# moment the text differs, seen by a MutationObserver or, as a backstop, by a
# requestAnimationFrame poll. Both times come from performance.now().
ARM_JS = """
([el, selector, key]) => {
  const root = el.getRootNode();
  const read = () => {
    const node = selector ? root.querySelector(selector) : null;
    return (node || root).textContent;
  };
  const m = { t0: null, t1: null, before: read(), after: null };
  window.__benchLatency = m;
  const check = () => {
    if (m.t1 !== null || m.t0 === null) return;
    const now = read();
    if (now !== m.before) { m.t1 = performance.now(); m.after = now; done(); }
  };
  const observer = new MutationObserver(check);
  observer.observe(root, { childList: true, subtree: true, characterData: true,
                           attributes: true });
  const onKey = (ev) => { if (ev.key === key && m.t0 === null) m.t0 = performance.now(); };
  window.addEventListener('keydown', onKey, true);
  let raf = null;
  const poll = () => { check(); if (m.t1 === null) raf = requestAnimationFrame(poll); };
  raf = requestAnimationFrame(poll);
  const done = () => {
    observer.disconnect();
    window.removeEventListener('keydown', onKey, true);
    if (raf !== null) cancelAnimationFrame(raf);
  };
  m.cancel = done;
  return m.before;
}
"""

LATENCY_DONE_JS = "() => window.__benchLatency && window.__benchLatency.t1 !== null"
LATENCY_RESULT_JS = """
() => { const m = window.__benchLatency; if (m.cancel) m.cancel();
        return { ms: m.t1 === null || m.t0 === null ? null : m.t1 - m.t0,
                 before: m.before, after: m.after }; }
"""


def measure_change(page, watched, key: str, act: Callable[[], None], selector: str | None):
    """Milliseconds from the ``key`` keydown inside ``act()`` to ``watched``'s text changing."""
    handle = watched.element_handle(timeout=ACTION_TIMEOUT)
    page.evaluate(ARM_JS, [handle, selector, key])
    act()
    page.wait_for_function(LATENCY_DONE_JS, timeout=ACTION_TIMEOUT)
    result = page.evaluate(LATENCY_RESULT_JS)
    if result["ms"] is None:
        raise RuntimeError(f"no {key} keydown was seen")
    return result


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


@dataclass
class Edit:
    """A text field whose edit changes a readout: two values to alternate between."""

    name: str
    route: str
    label: str
    readout: str
    values: tuple[str, str]


EDITS = [
    Edit("bucket timeline", "/bucket-timeline", "Layers per bucket", "Step time", ("2", "4")),
    Edit("queue lab", "/queue-lab", "Arrival rate", "Net rate", ("3", "1")),
]


def edit_latencies(context, server: Server, edit: Edit, repeats: int) -> list[float]:
    """Typing a value + Enter in ``edit.label`` until ``edit.readout`` shows a new text."""
    page, _ = open_page(context, server.url + edit.route, lambda p: button(p, "Reset"))
    try:
        box = text_field(page, edit.label)
        out = readout(page, edit.readout)
        samples = []
        for i in range(repeats):
            value = edit.values[i % 2]

            def act(value=value) -> None:
                box.fill(value, timeout=ACTION_TIMEOUT)
                box.press("Enter", timeout=ACTION_TIMEOUT)

            result = measure_change(page, out, "Enter", act, "output")
            samples.append(result["ms"])
            page.wait_for_timeout(200)
        return samples
    finally:
        page.close()


def bare_latencies(context, server: Server, repeats: int) -> list[float]:
    """ArrowRight on the focused slider handle until the text shows the new value."""
    page, _ = open_page(context, server.url + "/bare", lambda p: p.get_by_role("slider"))
    try:
        handle = page.get_by_role("slider")
        text = page.get_by_text("Slider value is", exact=False)
        handle.focus(timeout=ACTION_TIMEOUT)
        samples = []
        for _ in range(repeats):
            result = measure_change(
                page, text, "ArrowRight", lambda: handle.press("ArrowRight"), None
            )
            samples.append(result["ms"])
            page.wait_for_timeout(200)
        return samples
    finally:
        page.close()


def edit_bytes_sample(context, server: Server) -> dict:
    """Bytes the server sends for one edit of the bucket timeline, against the page load."""
    edit = EDITS[0]
    page, traffic = open_page(context, server.url + edit.route, lambda p: button(p, "Reset"))
    try:
        wait_quiet(page, traffic)
        flush(page)
        load = traffic.received
        doc = max(load.messages, key=lambda m: m.size)
        traffic.reset()
        box = text_field(page, edit.label)
        current = box.input_value(timeout=ACTION_TIMEOUT)
        value = edit.values[0] if current != edit.values[0] else edit.values[1]

        def act() -> None:
            box.fill(value, timeout=ACTION_TIMEOUT)
            box.press("Enter", timeout=ACTION_TIMEOUT)

        measure_change(page, readout(page, edit.readout), "Enter", act, "output")
        wait_quiet(page, traffic)
        flush(page)
        got, sent = traffic.received, traffic.sent
        return {
            "load_messages": len(load.messages),
            "load_bytes": load.size,
            "document_message": doc.msgtype,
            "document_bytes": doc.size,
            "edit_messages": len(got.messages),
            "edit_bytes": got.size,
            "edit_message_types": sorted({m.msgtype for m in got.messages}),
            "edit_sent_messages": len(sent.messages),
            "edit_sent_bytes": sent.size,
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

    lat = {name: median(samples) for name, samples in raw["latency"].items()}
    bare = lat["bare slider"]
    rows = []
    for edit in EDITS:
        key = f"{edit.name}: {edit.label} → {edit.readout}"
        rows.append((key, f"{lat[edit.name]:.1f}", fmt_ratio(ratio(lat[edit.name], bare))))
        summary["latency"][edit.name] = {
            "median_ms": lat[edit.name],
            "ratio_to_bare": ratio(lat[edit.name], bare),
        }
    rows.append(("bare app: slider ArrowRight → text", f"{bare:.1f}", "1.000"))
    summary["latency"]["bare slider"] = {"median_ms": bare}
    text.append("")
    text.append("3. Edit-to-readout latency (keydown to text change, in-page clock; median)")
    text.append(table(rows, ("edit", "ms", "ratio to bare")))

    eb = raw["edit_bytes"]
    keys = ("load_bytes", "document_bytes", "edit_bytes", "edit_messages", "load_messages")
    m = {k: median([s[k] for s in eb]) for k in keys}
    summary["edit_bytes"] = {
        **m,
        "edit_to_document_ratio": ratio(m["edit_bytes"], m["document_bytes"]),
        "edit_to_load_ratio": ratio(m["edit_bytes"], m["load_bytes"]),
    }
    rows = [
        (
            "page load (all websocket messages)",
            f"{m['load_messages']:.0f}",
            f"{m['load_bytes'] / 1000:.1f}",
            "—",
        ),
        (
            f"initial document ({eb[0]['document_message']})",
            "1",
            f"{m['document_bytes'] / 1000:.1f}",
            "1.000",
        ),
        (
            "one edit: Layers per bucket",
            f"{m['edit_messages']:.0f}",
            f"{m['edit_bytes'] / 1000:.1f}",
            fmt_ratio(summary["edit_bytes"]["edit_to_document_ratio"]),
        ),
    ]
    text.append("")
    text.append("4. Bytes the server sends on /bucket-timeline (median)")
    text.append(table(rows, ("what", "messages", "kB", "ratio to document")))
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
            raw["latency"]["bare slider"] = attempt(
                servers, lambda: bare_latencies(context, servers["bare"], latency_repeats)
            )
            for edit in EDITS:
                raw["latency"][edit.name] = attempt(
                    servers,
                    lambda e=edit: edit_latencies(context, servers["app"], e, latency_repeats),
                )
            print("  latency done", flush=True)
            for _ in range(repeats):
                raw["edit_bytes"].append(
                    attempt(servers, lambda: edit_bytes_sample(context, servers["app"]))
                )
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
