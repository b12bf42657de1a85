"""Issue 39: every live page starts as a file, side by side with today's live page and the bare app.

    python -m bench.first_page --before PATH [--repeats 5] [--learners 40]

``PATH`` is a checkout of the tree before (each page a Bokeh session); this tree
is "after". Three servers run at once on this machine, each a fresh process:
the bare Panel app (``bench/bare_app.py``), before and after. Measured in one run:

1. **Page load to a drawn chart** (navigation start to the first ``.ol-chart
   svg``, or the bare app's slider with its value, read in the page), on every
   widget route and a lesson, first visit (a fresh browser context) and repeat
   visit (scripts cached); median of ``repeats``, and its ratio to the bare app's.
2. **Server CPU and memory per learner who never edits**: ``learners`` pages
   opened at once the way a browser does (after: the page and its scripts; before
   and bare: the page, its websocket, the document pulled and the browser's
   first patches), the server's CPU time (``/proc/<pid>/stat``) and resident
   memory before and after, all pages held open. And **per learner who edits**
   (after): the same pages, each opening its live session with one edit.
3. **Edit latency** in Chromium on the bucket timeline, Enter to the "Buckets"
   readout's new text, read in the page: after, the first edit typed at once
   (the session opens with it), the first edit after the field was focused
   half a second earlier (it opened then), and every later edit; before, every
   edit on today's live page.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench.page_load import WATCH_JS
from bench.processes import free_port, stop_process, wait_until_ok

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
ROUTES = (
    "/queue-lab",
    "/bucket-timeline",
    "/ranks",
    "/trace",
    "/lessons/overlapping-communication",
)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TICKS = os.sysconf("SC_CLK_TCK")
PAGE = 60_000  # ms


class Proc:
    """A server process of one tree on a free port."""

    def __init__(self, name: str, command: list[str], cwd: Path, probe: str, tmp: Path):
        self.port = free_port()
        self.url = f"http://localhost:{self.port}"
        self.log = tmp / f"{name}.log"
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(cwd)}
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                [*command, "--port", str(self.port)],
                cwd=cwd,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
            )
        if not wait_until_ok(self.url + probe, self.process, 120, RuntimeError):
            raise RuntimeError(f"{name} did not start:\n{self.log.read_text()[-2000:]}")

    def cpu(self) -> float:
        """Seconds of CPU the process has used."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS

    def rss(self) -> float:
        """Resident memory, MiB."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self) -> None:
        stop_process(self.process, 5)


# --- 1. page load -------------------------------------------------------------------


def _drawn_ms(context, url: str) -> float:
    page = context.new_page()
    try:
        page.add_init_script(WATCH_JS)
        page.goto(url, timeout=PAGE)
        page.wait_for_function("() => window.__drawnAt !== undefined", timeout=PAGE)
        return float(page.evaluate("window.__drawnAt"))
    finally:
        page.close()


def say(text: str) -> None:
    """Progress, on stderr."""
    print(text, file=sys.stderr, flush=True)


def page_loads(browser, servers: dict[str, Proc], repeats: int) -> dict:
    """Median ms to a drawn chart per tree, route and case; the bare app's alongside."""
    out: dict = {}
    bare = servers["bare"].url + "/bare"
    warm = browser.new_context()
    for case in ("repeat", "first"):
        for route in ROUTES:
            samples: dict[str, list[float]] = {"before": [], "after": [], "bare": []}
            for _ in range(repeats):
                for tree in ("before", "after", "bare"):
                    url = bare if tree == "bare" else servers[tree].url + route
                    if case == "repeat":
                        _drawn_ms(warm, url)  # its scripts into the cache
                        samples[tree].append(_drawn_ms(warm, url))
                    else:
                        fresh = browser.new_context()
                        try:
                            samples[tree].append(_drawn_ms(fresh, url))
                        finally:
                            fresh.close()
            out[f"{case} {route}"] = {k: statistics.median(v) for k, v in samples.items()}
            say(f"page load, {case} {route}: {out[f'{case} {route}']}")
    warm.close()
    return out


# --- 2. server cost per learner ------------------------------------------------------------

_ASSETS = re.compile(r'from "([^"]+\.js)"')


def _fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=120) as response:
        return response.read()


async def _reader(base: str, route: str) -> None:
    """A learner who reads and plays on a served page, first visit: the page and the scripts
    it imports (every other moment of reading and playing runs in the page)."""
    loop = asyncio.get_running_loop()
    text = (await loop.run_in_executor(None, _fetch, base + route)).decode()
    for path in _ASSETS.findall(text):
        await loop.run_in_executor(None, _fetch, base + path)


async def _live_editor(base: str, route: str) -> object:
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    await _reader(base, route)
    name = route.strip("/")
    request = HTTPRequest(
        base.replace("http", "ws") + f"/live/{name}?own_page=1", headers={"Origin": base}
    )
    ws = await websocket_connect(request)
    ws.write_message(json.dumps({"id": 1, "open": {"query": "", "at": 0, "playing": False}}))
    await ws.read_message()
    edit = {"edit": "layers_per_bucket", "text": "3"}
    ws.write_message(json.dumps({"id": 2, "msg": edit}))
    await ws.read_message()
    return ws


async def _together(learner, base: str, route: str, n: int) -> list:
    """``n`` learners at once."""
    return await asyncio.gather(*(learner(base, route) for _ in range(n)))


def _session_pages(tree: Path, base: str, route: str, n: int) -> list:
    """``n`` Bokeh session pages opened at once by the given tree's protocol client."""
    sys.path.insert(0, str(tree))
    try:
        import importlib

        import bench.loadclient as client

        importlib.reload(client)
        if hasattr(client, "served_as_file"):
            client.served_as_file = lambda route: False

        async def all_pages() -> list:
            return await asyncio.gather(*(client.load_page(base, route) for _ in range(n)))

        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        pages = loop.run_until_complete(all_pages())
        return [loop, client, pages]
    finally:
        sys.path.remove(str(tree))


def learner_costs(servers: dict[str, Proc], before_tree: Path, n: int) -> dict:
    """CPU seconds and MiB per learner: reading (every tree), editing (after)."""
    route = "/bucket-timeline"
    out: dict = {}
    for tree in ("before", "bare", "after"):
        proc = servers[tree]
        time.sleep(1.0)
        cpu0, rss0 = proc.cpu(), proc.rss()
        if tree == "after":
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            loop.run_until_complete(_together(_reader, proc.url, route, n))
            held = None
        else:
            held = _session_pages(before_tree, proc.url, "/bare" if tree == "bare" else route, n)
            errors = [p.error for p in held[2] if p.error]
            if errors:
                raise RuntimeError(f"{tree}: {errors[:3]}")
        time.sleep(1.0)  # work the pages set off (their patches) is done
        say(f"learners reading, {tree}: done")
        out[f"reads {tree}"] = {
            "cpu_s": (proc.cpu() - cpu0) / n,
            "rss_mib": (proc.rss() - rss0) / n,
        }
        if held is not None:
            loop, client, pages = held
            for page in pages:
                client.close(page)
            loop.run_until_complete(asyncio.sleep(0.5))
            loop.close()
    proc = servers["after"]
    cpu0, rss0 = proc.cpu(), proc.rss()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    sockets = loop.run_until_complete(_together(_live_editor, proc.url, route, n))
    time.sleep(1.0)
    out["edits after"] = {"cpu_s": (proc.cpu() - cpu0) / n, "rss_mib": (proc.rss() - rss0) / n}
    for ws in sockets:
        ws.close()
    loop.close()
    return out


# --- 3. edit latency ------------------------------------------------------------------

TIMER_JS = """
(label) => {
  const value = () => {
    const stack = [document];
    while (stack.length) {
      const r = stack.pop();
      for (const el of r.querySelectorAll(".ol-readout")) {
        const l = el.querySelector(".ol-label");
        if (l && l.textContent === label) return el.querySelector(".ol-value").textContent;
      }
      for (const el of r.querySelectorAll("*")) if (el.shadowRoot) stack.push(el.shadowRoot);
    }
    return null;
  };
  const before = value();
  let t0 = null;
  document.addEventListener("keydown", (e) => { if (e.key === "Enter") t0 = performance.now(); },
    { capture: true, once: true });
  window.__edited = new Promise((done, fail) => {
    const given = performance.now();
    const look = () => {
      if (t0 !== null && value() !== before) done(performance.now() - t0);
      else if (performance.now() - given > 30000) fail(new Error(`${label} did not change`));
      else requestAnimationFrame(look);
    };
    requestAnimationFrame(look);
  });
}
"""


def _edit_ms(page, text: str, focus_first: bool = False) -> float:
    box = page.get_by_label("Layers per bucket", exact=True)
    if focus_first:
        box.focus()
        page.wait_for_timeout(500)
    page.evaluate(TIMER_JS, "Buckets")
    box.fill(text)
    box.press("Enter")
    return float(page.evaluate("window.__edited"))


def _open(context, url: str):
    page = context.new_page()
    page.goto(url, timeout=PAGE)
    page.get_by_role("button", name="Reset", exact=True).wait_for(timeout=PAGE)
    page.get_by_label("Layers per bucket", exact=True).wait_for(timeout=PAGE)
    if "ol-live" not in page.content():
        page.wait_for_function(
            "() => Bokeh.documents.every(d => d.is_idle === undefined || d.is_idle)", timeout=PAGE
        )
    page.wait_for_timeout(300)
    return page


def edit_latencies(browser, servers: dict[str, Proc], repeats: int) -> dict:
    """Medians (ms) of Enter to the new readout, by case."""
    context = browser.new_context()
    samples: dict[str, list[float]] = {"first": [], "first focused": [], "later": [], "before": []}
    # The page starts at 3 layers per bucket: every edit changes the number of buckets.
    texts = ["4", "2", "6", "3"]
    for _ in range(repeats):
        page = _open(context, servers["after"].url + "/bucket-timeline")
        samples["first"].append(_edit_ms(page, texts[0]))
        for text in texts[1:]:
            samples["later"].append(_edit_ms(page, text))
        page.close()
        page = _open(context, servers["after"].url + "/bucket-timeline")
        samples["first focused"].append(_edit_ms(page, texts[0], focus_first=True))
        page.close()
        page = _open(context, servers["before"].url + "/bucket-timeline")
        for text in texts:
            samples["before"].append(_edit_ms(page, text))
        page.close()
        say(f"edit latency samples: {samples}")
    context.close()
    return {k: statistics.median(v) for k, v in samples.items()}


# --- report ---------------------------------------------------------------------------------


def report(loads: dict, costs: dict, edits: dict) -> str:
    """The three tables, in Markdown."""
    lines = [
        "1. Page load to a drawn chart (median ms; ratio to the bare app's in the same run)",
        "",
        "| page | before ms | after ms | bare ms | before / bare | after / bare |",
        "|---|---|---|---|---|---|",
    ]
    for key, m in loads.items():
        lines.append(
            f"| {key} | {m['before']:.0f} | {m['after']:.0f} | {m['bare']:.0f} | "
            f"{m['before'] / m['bare']:.2f}× | {m['after'] / m['bare']:.2f}× |"
        )
    bare = costs["reads bare"]
    lines += [
        "",
        "2. Server cost per learner (CPU ms and resident MiB per page; ratio to a bare session)",
        "",
        "| learner | CPU ms | MiB | CPU / bare session |",
        "|---|---|---|---|",
    ]
    for key, c in costs.items():
        lines.append(
            f"| {key} | {1000 * c['cpu_s']:.1f} | {c['rss_mib']:.2f} | "
            f"{c['cpu_s'] / bare['cpu_s']:.3f}× |"
        )
    lines += [
        "",
        "3. Edit latency, bucket timeline (median ms, Enter to the new readout)",
        "",
        "| edit | ms | ratio to today's edit |",
        "|---|---|---|",
    ]
    for key, ms in edits.items():
        lines.append(f"| {key} | {ms:.0f} | {ms / edits['before']:.2f}× |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="a checkout of the tree before")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--learners", type=int, default=40)
    parser.add_argument("--json", type=Path, help="write the raw medians here")
    parser.add_argument(
        "--loads", type=Path, help="page loads measured earlier (a --json file): not again"
    )
    parser.add_argument(
        "--edits", type=Path, help="edit latencies measured earlier (a --json file): not again"
    )
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    serve = [sys.executable, "-m", "app.cli", "serve"]
    servers: dict[str, Proc] = {}
    with tempfile.TemporaryDirectory(prefix="overlap-lab-first-page-") as tmp:
        try:
            servers["bare"] = Proc(
                "bare", [sys.executable, str(BENCH / "bare_app.py")], REPO, "/bare", Path(tmp)
            )
            servers["before"] = Proc("before", serve, args.before, "/liveness", Path(tmp))
            servers["after"] = Proc("after", serve, REPO, "/liveness", Path(tmp))
            say("servers up: bare, before, after")
            with sync_playwright() as pw:
                browser = pw.chromium.launch(
                    executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
                )
                if args.loads:
                    loads = json.loads(args.loads.read_text())["loads"]
                else:
                    loads = page_loads(browser, servers, args.repeats)
                if args.edits:
                    edits = json.loads(args.edits.read_text())["edits"]
                else:
                    edits = edit_latencies(browser, servers, args.repeats)
                browser.close()
            costs = learner_costs(servers, args.before, args.learners)
        finally:
            for proc in servers.values():
                proc.stop()
    text = report(loads, costs, edits)
    print(text)
    if args.json:
        args.json.write_text(json.dumps({"loads": loads, "costs": costs, "edits": edits}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
