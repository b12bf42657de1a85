"""An edit typed into the page, and the in-page time until a readout shows its effect.

``measure_change`` times any key press to a text change with the page's own
clock (``performance.now()``), so the browser's round trips to Playwright are
not part of the number. ``EDITS`` are the edits of overlap-lab's widgets that
the latency and bytes benchmarks make; ``commit_edit`` types one and waits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bench.browser import ACTION_TIMEOUT, readout, text_field

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

# Arms one latency measurement in the page. ``el`` is an element inside the
# readout's shadow root (the root survives re-renders of the readout); the
# text watched is the root's ``selector`` element, or the whole root. t0 is
# the keydown of ``key`` (capture phase, before any handler), t1 the first
# moment the text differs, seen by a MutationObserver or, as a backstop, by a
# requestAnimationFrame poll. Both times come from performance.now().
ARM_JS = """
([el, selector, key]) => {
  const root = el.getRootNode();
  // The readout itself when it is the element watched (a browser-drawn widget's
  // readouts share one shadow root), else the root's first such element.
  const own = selector && el.matches && el.matches(selector) ? el : null;
  const read = () => {
    const node = own || (selector ? root.querySelector(selector) : null);
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


def measure_change(
    page: Page, watched: Locator, key: str, act: Callable[[], None], selector: str | None
) -> dict:
    """Milliseconds from the ``key`` keydown inside ``act()`` to ``watched``'s text changing.

    Returns ``{"ms", "before", "after"}``; ``selector`` picks the element of the
    watched shadow root whose text counts (None: the whole root).
    """
    handle = watched.element_handle(timeout=ACTION_TIMEOUT)
    page.evaluate(ARM_JS, [handle, selector, key])
    act()
    page.wait_for_function(LATENCY_DONE_JS, timeout=ACTION_TIMEOUT)
    result = page.evaluate(LATENCY_RESULT_JS)
    if result["ms"] is None:
        raise RuntimeError(f"no {key} keydown was seen")
    return result


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


def commit_edit(page: Page, edit: Edit, value: str) -> dict:
    """Type ``value`` into ``edit.label`` and press Enter; ``measure_change`` of its readout."""
    box = text_field(page, edit.label)

    def act() -> None:
        box.fill(value, timeout=ACTION_TIMEOUT)
        box.press("Enter", timeout=ACTION_TIMEOUT)

    return measure_change(page, readout(page, edit.readout), "Enter", act, "output")
