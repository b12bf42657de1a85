"""A class opening one lesson link at once, before and after the lesson page became a file.

Run with ``python -m bench.lesson_burst [--learners 200] [--before /work/wt/before]``
from the repository root (Linux: it reads ``/proc``; needs ``/usr/sbin/nginx`` or
``$OVERLAP_LAB_NGINX`` and Chromium). Not part of pytest. See ``bench/README.md``
("Lesson burst (issue 39)").

Both trees are served the way the README recommends for a class on one machine:
nginx (``deploy/nginx.conf``) in front of two backends started with the
recommended options, exactly :func:`bench.class_arrival.start_deployment`'s
``nginx-2``; the "before" deployment is the same with its two backends run from
the other checkout (:func:`start_tree_deployment`). One deployment at a time,
after then before, in one run:

- **after** (this tree: the lesson is an HTML file with its states inline): N
  learners at once, each an async HTTP client that GETs the lesson and then every
  script the page imports (``/assets/...`` in the HTML, then the modules those
  import), as a browser does on a first visit. A learner's time is until its
  page and all its scripts are in.
- **before** (the checkout given with ``--before``: a Bokeh session per page): N
  learners at once with that checkout's own ``bench.loadclient.load_page``, which
  GETs the page itself, opens its websocket and pulls the document (the moment a
  session page can draw), then replays the browser's patches. A learner's time is
  until the document is in. Bokeh's and Panel's scripts (which a browser also
  fetches on a first visit) are not fetched, so this favours "before".

While each burst is in flight, ``--browsers`` headless Chromium pages (each in a
fresh context: a first visit, nothing cached) open the same URL, and the page
itself records ``performance.now()`` (from its navigation start) when the first
chart is drawn (an ``<svg>`` in an ``.ol-chart``, looked for through the shadow
roots: :data:`bench.page_load.WATCH_JS`) and when every chart of the lesson is.

Both deployments are warmed first (each backend has served the lesson once, for
nginx's address), as ``bench.class_arrival`` does; the "before" one then waits
until the warm-up's sessions are reaped.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import filecmp
import importlib.util
import json
import math
import os
import platform
import re
import signal
import statistics
import sys
import tempfile
import time
import types
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from bench import class_arrival
from bench.browser import CHROMIUM_ARGS, VIEWPORT, chromium_path
from bench.class_arrival import (
    CHECK_S,
    GC_DEBOUNCE_S,
    LIFETIME_S,
    Deployment,
    percentile,
    process_tree,
    start_deployment,
    tree_cpu,
)
from bench.loadclient import configure_client
from bench.page_load import WATCH_JS
from bench.servers import REPO

ROUTE = "/lessons/overlapping-communication"
BEFORE = Path("/work/wt/before")
#: How long one learner or one browser page may take before it counts as an error.
LEARNER_TIMEOUT_S = 300.0
BROWSER_TIMEOUT_MS = 240_000
#: The target the after tree is measured against: every chart drawn, p95, seconds.
TARGET_S = 1.0

#: ``/assets/<file>.js`` named in a served page (with any URL prefix before it).
_PAGE_ASSET = re.compile(r"""["']((?:/[\w.-]+)*/assets/[\w.-]+\.js)["']""")
#: A module's static imports (``import ... from "x.js"``, ``import "x.js"``).
_MODULE_IMPORT = re.compile(r"""\b(?:from|import)\s*["']([^"'\s]+\.js)["']""")

#: Records, besides WATCH_JS's first chart (``__drawnAt``), when every chart is there
#: (``__allChartsAt``: ``expected`` ``.ol-chart > svg`` through the shadow roots) and,
#: on a served page, when it said its widgets are mounted (``__servedAt``).
ALL_CHARTS_JS = """
(() => {
  const expected = %d;
  const charts = () => {
    let n = 0;
    const stack = document.body ? [document.body] : [];
    while (stack.length) {
      const node = stack.pop();
      if (node.localName === "svg" && node.parentElement
          && node.parentElement.classList.contains("ol-chart")) n += 1;
      if (node.shadowRoot) stack.push(node.shadowRoot);
      for (const child of node.children || []) stack.push(child);
    }
    return n;
  };
  const look = () => {
    const now = performance.now();
    if (window.__servedAt === undefined && document.documentElement.dataset.olServed === "ready")
      window.__servedAt = now;
    if (window.__allChartsAt === undefined && charts() >= expected) window.__allChartsAt = now;
    const servedPage = document.getElementById("ol-states") !== null;
    if (window.__allChartsAt === undefined || (servedPage && window.__servedAt === undefined))
      requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
})();
"""
#: Where a page's time went (ms from navigation start): its HTML in, its last script in,
#: DOMContentLoaded (classic scripts run; module scripts are deferred until then).
TIMING_JS = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const scripts = performance.getEntriesByType("resource")
    .filter((e) => e.initiatorType === "script" || /\\.js(\\?|$)/.test(e.name));
  return {
    html_ms: nav ? nav.responseEnd : null,
    scripts_ms: scripts.length ? Math.max(...scripts.map((e) => e.responseEnd)) : null,
    scripts: scripts.length,
    dcl_ms: nav ? nav.domContentLoadedEventEnd : null,
  };
}"""
#: Counts the drawn charts of a page (for the lesson's chart count, from a warm-up page).
COUNT_CHARTS_JS = """() => {
  let n = 0;
  const stack = [document.body];
  while (stack.length) {
    const node = stack.pop();
    if (node.localName === "svg" && node.parentElement
        && node.parentElement.classList.contains("ol-chart")) n += 1;
    if (node.shadowRoot) stack.push(node.shadowRoot);
    for (const child of node.children || []) stack.push(child);
  }
  return n;
}"""


# --- the deployment, with its backends run from a given checkout -----------------------


def _tree_app(tree: Path):
    """``class_arrival.APP`` for the checkout at ``tree``: ``overlap-lab serve`` run in
    ``tree``, its modules first on the path (the venv's editable install points here)."""
    root = str(tree.resolve())
    boot = (
        f"import os, sys; os.chdir({root!r}); sys.path.insert(0, {root!r}); "
        "from app.cli import main; sys.exit(main())"
    )

    def command(port: int, *extra: str) -> list[str]:
        return [sys.executable, "-c", boot, "serve", "--port", str(port), *extra]

    return command


@contextlib.contextmanager
def _backends_from(tree: Path) -> Iterator[None]:
    """While inside, :func:`bench.class_arrival.start_deployment` starts its app
    backends from ``tree`` (this tree: unchanged)."""
    if tree.resolve() == REPO.resolve():
        yield
        return
    original = class_arrival.APP
    class_arrival.APP = _tree_app(tree)
    try:
        yield
    finally:
        class_arrival.APP = original


def start_tree_deployment(tree: Path, tmp: Path, kind: str = "nginx-2") -> Deployment:
    """``class_arrival.start_deployment(kind)`` (nginx from this tree's ``deploy/``, the
    README's recommended backend options) with the backends run from ``tree``."""
    with _backends_from(tree):
        return start_deployment(kind, tmp)


def _loadclient_of(tree: Path) -> types.ModuleType:
    """``bench.loadclient`` of the checkout at ``tree`` (the before tree's loads the page
    itself; this tree's asks a lesson's ``autoload.js``, which the before tree has not)."""
    path = tree / "bench" / "loadclient.py"
    name = f"_loadclient_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


# --- one learner ---------------------------------------------------------------------


def _cookie(response) -> dict:
    """The cookie a browser sends back (nginx's ``ol_route``: the same backend)."""
    cookies = [c.split(";", 1)[0] for c in response.headers.get_list("Set-Cookie")]
    return {"Cookie": "; ".join(cookies)} if cookies else {}


async def static_learner(base: str, route: str, timeout: float = LEARNER_TIMEOUT_S) -> dict:
    """One learner's first visit of a served page: the HTML, then its scripts, then
    the modules those import, wave by wave as a browser finds them."""
    client = AsyncHTTPClient()
    start = time.monotonic()
    result = {"html": math.nan, "page": math.nan, "assets": 0, "bytes": 0, "error": None}
    page_url = base + route
    origin = urlsplit(page_url).netloc

    async def get(url: str, headers: dict):
        response = await client.fetch(
            HTTPRequest(url, headers=headers, request_timeout=timeout, connect_timeout=timeout)
        )
        result["bytes"] += len(response.body)
        return response

    try:
        response = await get(page_url, {})
        result["html"] = time.monotonic() - start
        text = response.body.decode("utf-8", "replace")
        if 'id="ol-states"' not in text:
            raise RuntimeError("not a served page (no ol-states)")
        headers = _cookie(response)
        seen: set[str] = set()
        wave = [urljoin(page_url, path) for path in _PAGE_ASSET.findall(text)]
        if not wave:
            raise RuntimeError("the page imports no /assets/ script")
        while wave:
            wave = [u for u in dict.fromkeys(wave) if u not in seen]
            seen.update(wave)
            responses = await asyncio.gather(*(get(u, headers) for u in wave))
            found = []
            for url, script in zip(wave, responses, strict=True):
                for spec in _MODULE_IMPORT.findall(script.body.decode("utf-8", "replace")):
                    target = urljoin(url, spec)
                    if spec.startswith(("/", "./", "../")) and urlsplit(target).netloc == origin:
                        found.append(target)
            wave = found
        result["page"] = time.monotonic() - start
        result["assets"] = len(seen)
    except Exception as exc:  # recorded: one failed learner does not stop the class
        result["error"] = f"{type(exc).__name__}: {exc}"
    return result


async def session_learner(loadclient: types.ModuleType, base: str, route: str):
    """One learner of a session page: the before tree's own load (GET, websocket, document)."""
    page = await loadclient.load_page(base, route, timeout=LEARNER_TIMEOUT_S)
    return page


# --- browsers ------------------------------------------------------------------------


async def _browser_pages(browser, count: int, expected: int) -> list:
    """``count`` pages, each in a fresh context (nothing cached), on about:blank, watching."""
    pages = []
    for _ in range(count):
        context = await browser.new_context(viewport=VIEWPORT)
        page = await context.new_page()
        await page.add_init_script(WATCH_JS)
        await page.add_init_script(ALL_CHARTS_JS % expected)
        await page.goto("about:blank")
        pages.append(page)
    return pages


async def _draw(page, url: str) -> dict:
    """Open ``url`` and read, in the page, when its first and its every chart were drawn."""
    sample = {"nav_asked": time.monotonic(), "error": None}
    try:
        await page.goto(url, wait_until="commit", timeout=BROWSER_TIMEOUT_MS)
        await page.wait_for_function(
            "() => window.__drawnAt !== undefined && window.__allChartsAt !== undefined",
            timeout=BROWSER_TIMEOUT_MS,
        )
        marks = await page.evaluate(
            "[window.__drawnAt, window.__allChartsAt, window.__servedAt ?? null]"
        )
        sample.update(first_chart_ms=marks[0], all_charts_ms=marks[1], served_ms=marks[2])
        sample.update(await page.evaluate(TIMING_JS))
    except Exception as exc:
        sample["error"] = f"{type(exc).__name__}: {exc}"[:300]
    sample["done"] = time.monotonic()
    return sample


async def _chart_count(browser, url: str) -> int:
    """How many charts the lesson draws (a warm-up page, settled for 2 s)."""
    context = await browser.new_context(viewport=VIEWPORT)
    try:
        page = await context.new_page()
        await page.add_init_script(WATCH_JS)
        await page.goto(url, timeout=BROWSER_TIMEOUT_MS)
        await page.wait_for_function("() => window.__drawnAt !== undefined", timeout=60_000)
        await page.wait_for_timeout(2000)
        return int(await page.evaluate(COUNT_CHARTS_JS))
    finally:
        await context.close()


# --- one tree ------------------------------------------------------------------------


def _upstreams(deployment: Deployment) -> set[str]:
    """The backends nginx has sent a request to so far (its access log's ``upstream=``)."""
    log = Path(deployment.runtime.name) / "access.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    return set(re.findall(r"upstream=(\S+)", text)) - {"-"}


async def _warm(deployment: Deployment, tree: str, loadclient, route: str) -> None:
    """Until nginx has sent the lesson to every backend (fresh learners spread at random)."""
    base = deployment.url
    for _ in range(30):
        if tree == "after":
            result = await static_learner(base, route, timeout=60)
            if result["error"]:
                raise RuntimeError(f"warm-up of {base}{route}: {result['error']}")
        else:
            page = await loadclient.load_page(base, route, timeout=60)
            if not page.ok:
                raise RuntimeError(f"warm-up of {base}{route}: {page.error}")
            loadclient.close(page)
        if len(_upstreams(deployment)) >= len(deployment.backends):
            return
    raise RuntimeError(f"nginx sent every warm-up to one backend: {_upstreams(deployment)}")


def _settle(pids: list[int]) -> None:
    class_arrival.settle(pids, quiet=1.0, limit=30.0)


def _summary(times: list[float]) -> dict:
    return {
        "p50_s": percentile(times, 0.5),
        "p95_s": percentile(times, 0.95),
        "max_s": max(times, default=math.nan),
    }


async def _burst(tree: str, base: str, route: str, n: int, loadclient, pages: list) -> dict:
    """N learners at once on ``route``, the browser pages opening it at the same moment."""
    began: list[float] = []

    async def learner():
        began.append(time.monotonic())  # each learner's own clock starts here too
        if tree == "after":
            return await static_learner(base, route)
        return await session_learner(loadclient, base, route)

    # The browsers' tasks first, so that their navigations leave with the class's first GETs.
    draws = [asyncio.ensure_future(_draw(page, base + route)) for page in pages]
    learners = [asyncio.ensure_future(learner()) for _ in range(n)]
    done = await asyncio.gather(*learners)
    # From the first learner's first step: a stall of this process before it is in no time.
    first = min(began)
    burst_s = time.monotonic() - first
    browsers = await asyncio.gather(*draws)
    for b in browsers:
        b["nav_start_s"] = b.pop("nav_asked") - first
        b["done_s"] = b.pop("done") - first
    if tree == "after":
        ok = [r for r in done if r["error"] is None]
        errors = sorted({r["error"] for r in done if r["error"]})
        page_times = [r["page"] for r in ok]
        html_times = [r["html"] for r in ok]
        extra = {
            "assets_per_learner": sorted({r["assets"] for r in ok}),
            "kb_per_learner": statistics.median(r["bytes"] for r in ok) / 1000 if ok else math.nan,
        }
    else:
        ok = [p for p in done if p.ok]
        errors = sorted({p.error for p in done if p.error})
        page_times = [p.document for p in ok]
        html_times = [p.html for p in ok]
        extra = {"doc_kb": statistics.median(p.doc_bytes for p in ok) / 1000 if ok else math.nan}
        for page in done:  # the class closes its tabs once the browsers have drawn
            loadclient.close(page)
        await asyncio.sleep(0.5)
    drawn = [b for b in browsers if b["error"] is None]
    return {
        **_summary(page_times),
        "html": _summary(html_times),
        "errors": n - len(ok),
        "error_samples": errors[:3],
        "burst_s": burst_s,
        "learners_began_within_s": max(began) - first,
        "browsers": browsers,
        "browser_errors": len(browsers) - len(drawn),
        "first_chart_ms": sorted(b["first_chart_ms"] for b in drawn),
        "all_charts_ms": sorted(b["all_charts_ms"] for b in drawn),
        "browsers_started_in_flight": all(b["nav_start_s"] < burst_s for b in browsers),
        **extra,
    }


async def measure_tree(tree: str, root: Path, tmp: Path, args, browser) -> dict:
    """Start ``root``'s deployment, warm it, run the burst with the browsers, stop it."""
    loadclient = None if tree == "after" else _loadclient_of(root)
    loop = asyncio.get_running_loop()
    deployment = await loop.run_in_executor(None, start_tree_deployment, root, tmp)
    notes: list[str] = []
    try:
        await _warm(deployment, tree, loadclient, args.route)
        expected = await _chart_count(browser, deployment.url + args.route)
        if tree == "before":
            # The warm-up's sessions are reaped before the class arrives, as in class_arrival.
            await asyncio.sleep(LIFETIME_S + CHECK_S + GC_DEBOUNCE_S + 2)
        pids = deployment.server_pids()
        await loop.run_in_executor(None, _settle, pids)
        pages = await _browser_pages(browser, args.browsers, max(1, expected))
        load_before = os.getloadavg()[0]
        nginx_pids = process_tree(deployment.nginx.pid)
        cpu_before = tree_cpu(pids)
        nginx_before = tree_cpu(nginx_pids)
        client_before = time.process_time()
        print(f"{tree}: {args.learners} learners and {args.browsers} browsers", flush=True)
        result = await _burst(tree, deployment.url, args.route, args.learners, loadclient, pages)
        await loop.run_in_executor(None, _settle, pids)
        per = 1000 / args.learners
        result["cpu_ms_per_learner"] = per * (tree_cpu(pids) - cpu_before)
        result["nginx_cpu_ms_per_learner"] = per * (tree_cpu(nginx_pids) - nginx_before)
        # This process: the learners' HTTP (or Bokeh protocol) clients and the browsers' driver.
        result["client_cpu_ms_per_learner"] = per * (time.process_time() - client_before)
        result["load_average_1min_at_start"] = load_before
        for page in pages:
            await page.context.close()
        result.update(tree=tree, root=str(root), learners=args.learners, charts=expected)
        error_log = Path(deployment.runtime.name) / "error.log"
        nginx_errors = (
            [
                line
                for line in error_log.read_text(errors="replace").splitlines()
                if "[error]" in line or "[crit]" in line or "[alert]" in line
            ]
            if error_log.exists()
            else []
        )
        if nginx_errors:
            notes.append(f"nginx logged {len(nginx_errors)} errors, e.g. {nginx_errors[0][:300]}")
        for backend in deployment.backends:
            if "Traceback" in backend.log_text():
                notes.append(f"{backend.name} logged a traceback: {backend.log_text()[-800:]}")
        result["notes"] = notes
        return result
    finally:
        await loop.run_in_executor(None, deployment.stop)


async def run(args) -> dict:
    from playwright.async_api import async_playwright

    configure_client(args.max_clients or args.learners)
    results: dict = {"trees": [], "notes": []}
    if not filecmp.cmp(
        REPO / "deploy" / "nginx.conf", args.before / "deploy" / "nginx.conf", False
    ):
        results["notes"].append("deploy/nginx.conf differs between the trees: this tree's is used")
    with tempfile.TemporaryDirectory(prefix="overlap-lab-lesson-burst-") as tmp_name:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            try:
                for tree, root in (("after", REPO), ("before", args.before)):
                    r = await measure_tree(tree, root, Path(tmp_name), args, browser)
                    results["trees"].append(r)
                    print(
                        f"   p50/p95/max {r['p50_s']:.2f}/{r['p95_s']:.2f}/{r['max_s']:.2f} s, "
                        f"browsers first chart {r['first_chart_ms']} ms, "
                        f"{r['errors']} errors, {r['browser_errors']} browser errors",
                        flush=True,
                    )
            finally:
                await browser.close()
    return results


# --- the report ----------------------------------------------------------------------


def _s(value: float) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.2f}"


def _ms_p50_max(values: list[float]) -> str:
    if not values:
        return "—"
    return f"{percentile(values, 0.5) / 1000:.2f} / {max(values) / 1000:.2f}"


def report(results: dict) -> str:
    what = {"after": "after (page as a file)", "before": "before (Bokeh session)"}
    lines = [
        "| tree | learners | time to page p50 / p95 / max (HTTP) | p95 to the HTML |"
        " browsers: first chart p50 / max | every chart p50 / max | errors |"
        " CPU per learner: backends / nginx / load client | load average at start |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    by_tree = {}
    for r in results["trees"]:
        by_tree[r["tree"]] = r
        n_browsers = len(r["browsers"])
        lines.append(
            f"| {what[r['tree']]} | {r['learners']} | "
            f"{_s(r['p50_s'])} / {_s(r['p95_s'])} / {_s(r['max_s'])} s | "
            f"{_s(r['html']['p95_s'])} s | "
            f"{_ms_p50_max(r['first_chart_ms'])} s (n={n_browsers}) | "
            f"{_ms_p50_max(r['all_charts_ms'])} s | "
            f"{r['errors']} + {r['browser_errors']} browser | "
            f"{r['cpu_ms_per_learner']:.1f} / {r['nginx_cpu_ms_per_learner']:.1f} / "
            f"{r['client_cpu_ms_per_learner']:.1f} ms | {r['load_average_1min_at_start']:.1f} |"
        )
    if "after" in by_tree and "before" in by_tree:
        a, b = by_tree["after"], by_tree["before"]
        ratio = a["p95_s"] / b["p95_s"] if b["p95_s"] else math.nan
        lines += ["", f"p95 time to page, after / before: **{ratio:.3f}×**"]
        every = a["all_charts_ms"]
        if every:
            worst = max(every) / 1000
            met = "met" if worst <= TARGET_S and not a["browser_errors"] else "**not met**"
            lines.append(
                f"Target (after): every chart drawn p95 ≤ {TARGET_S:g} s. Browsers during the "
                f"burst: every chart by {worst:.2f} s at the latest ({len(every)} pages): {met}; "
                f"HTTP learners had page and scripts by {a['p95_s']:.2f} s at p95."
            )
    lines += [
        "",
        "Where the browser pages' time went (medians over the pages, s from navigation start):",
        "",
        "| tree | browser navigation asked (s after the first learner's GET) | HTML in |"
        " last script in (scripts) | DOMContentLoaded | first chart | every chart |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results["trees"]:
        drawn = [b for b in r["browsers"] if b["error"] is None]

        def med(key: str, drawn: list = drawn) -> str:
            values = [b[key] for b in drawn if b.get(key) is not None]
            return f"{statistics.median(values) / 1000:.2f}" if values else "—"

        count = sorted({b.get("scripts") for b in drawn})
        starts = [b["nav_start_s"] for b in r["browsers"]]
        lines.append(
            f"| {r['tree']} | {min(starts):.2f}–{max(starts):.2f} s | {med('html_ms')} | "
            f"{med('scripts_ms')} ({count}) | "
            f"{med('dcl_ms')} | {med('first_chart_ms')} | {med('all_charts_ms')} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=200)
    parser.add_argument("--before", type=Path, default=BEFORE, help="the old checkout")
    parser.add_argument("--browsers", type=int, default=4)
    parser.add_argument("--route", default=ROUTE)
    parser.add_argument(
        "--max-clients", type=int, default=0, help="Tornado client's connections (default N)"
    )
    parser.add_argument("--output", type=Path, help="also write the raw results as JSON here")
    args = parser.parse_args(argv)
    if not (args.before / "app" / "cli.py").exists():
        parser.error(f"--before {args.before}: no app/cli.py there")
    # Stopped from outside: unwind, so that every server and nginx this run started stops.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    results = asyncio.run(run(args))
    results["meta"] = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "recommended": list(class_arrival.RECOMMENDED),
        "runtime_s": time.monotonic() - started,
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "load_average_at_end": os.getloadavg(),
    }
    print()
    print(report(results))
    for r in results["trees"]:
        for note in r["notes"]:
            print(f"note ({r['tree']}): {note}")
    for note in results["notes"]:
        print(f"note: {note}")
    if args.output:
        args.output.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"\n(total {results['meta']['runtime_s']:.0f} s on {os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
