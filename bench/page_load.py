"""Benchmark 5: page load to a drawn chart, against the bare app's page load.

Ours: from navigation start to the moment a widget's chart is in the page (an
``<svg>`` inside its ``.ol-chart``), on each widget route. Reference: from
navigation start to the moment the bare app is usable (its slider is there and
its text shows the value). Both moments are read in the page itself: a script
added before any of the page's own looks for them at every animation frame
(through the components' shadow roots) and records ``performance.now()``,
which counts from navigation start. Nothing crosses to the test process until
the page is done, so the driver's own latency is not in the numbers.

Two cases, samples alternating between ours and the bare app:

- **repeat visit**: pages of one browser context, so the scripts and the
  widget's bundle come from the browser's cache (what a class sees after its
  first page);
- **first visit**: a fresh context per sample, with an empty cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench.browser import PAGE_TIMEOUT, VIEWPORT
from bench.report import fmt_ratio, table
from bench.servers import Servers, attempt
from bench.stats import median, ratio

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext

ROUTES = ("/queue-lab", "/bucket-timeline", "/ranks", "/trace")

#: Records when the page first holds what "drawn" means for it, in ``window.__drawnAt``.
WATCH_JS = """
(() => {
  const drawn = (node) => {
    if (node.localName === "svg" && node.parentElement
        && node.parentElement.classList.contains("ol-chart")) return true;
    // The bare app: its slider handle, and its text showing the value.
    return node.getAttribute && node.getAttribute("role") === "slider"
      && document.body && deepText().includes("Slider value is");
  };
  const deepText = () => {
    let text = "";
    const stack = [document.body];
    while (stack.length) {
      const n = stack.pop();
      if (n.shadowRoot) stack.push(n.shadowRoot);
      for (const c of n.children || []) stack.push(c);
      if (!n.children || n.children.length === 0) text += n.textContent || "";
    }
    return text;
  };
  const find = () => {
    const stack = document.body ? [document.body] : [];
    while (stack.length) {
      const n = stack.pop();
      if (n.nodeType === 1 && drawn(n)) return true;
      if (n.shadowRoot) stack.push(n.shadowRoot);
      for (const c of n.children || []) stack.push(c);
    }
    return false;
  };
  const look = () => {
    if (find()) window.__drawnAt = performance.now();
    else requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
})();
"""


def _load_ms(context: BrowserContext, url: str) -> float:
    """Milliseconds from navigation start to drawn, read in the page."""
    page = context.new_page()
    try:
        page.add_init_script(WATCH_JS)
        page.goto(url, timeout=PAGE_TIMEOUT)
        page.wait_for_function("() => window.__drawnAt !== undefined", timeout=PAGE_TIMEOUT)
        return float(page.evaluate("window.__drawnAt"))
    finally:
        page.close()


def _fresh(context: BrowserContext, url: str) -> float:
    """``_load_ms`` in a new context of the same browser: nothing cached."""
    fresh = context.browser.new_context(viewport=VIEWPORT)
    try:
        return _load_ms(fresh, url)
    finally:
        fresh.close()


def measure(context: BrowserContext, servers: Servers, repeats: int) -> dict:
    """Samples (ms) by case and route, the bare app's beside each route's."""
    raw: dict = {"repeat": {}, "first": {}}
    bare_url = servers["bare"].url + "/bare"
    for route in ROUTES:
        url = servers["app"].url + route
        _load_ms(context, url)  # the bundle into the cache
        _load_ms(context, bare_url)
        for case, load in (("repeat", _load_ms), ("first", _fresh)):
            ours, bare = [], []
            for _ in range(repeats):
                ours.append(attempt(servers, lambda u=url, f=load: f(context, u)))
                bare.append(attempt(servers, lambda f=load: f(context, bare_url)))
            raw[case][route] = {"ours": ours, "bare": bare}
    return raw


def summarize(raw: dict) -> tuple[dict, str]:
    """Medians and ratios to the bare app's page load, and their table."""
    summary: dict = {}
    rows = []
    for case, title in (("repeat", "repeat visit"), ("first", "first visit")):
        for route, samples in raw["page_load"][case].items():
            ours, bare = median(samples["ours"]), median(samples["bare"])
            summary[f"{case} {route}"] = {
                "median_ms": ours,
                "bare_median_ms": bare,
                "ratio_to_bare": ratio(ours, bare),
            }
            rows.append(
                (f"{route}, {title}", f"{ours:.0f}", f"{bare:.0f}", fmt_ratio(ratio(ours, bare)))
            )
    title = "5. Page load to a drawn chart (navigation start, in-page clock; median)"
    return summary, title + "\n" + table(rows, ("page", "ms", "bare app ms", "ratio to bare"))
