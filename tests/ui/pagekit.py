"""Finding and driving a widget's parts by accessible name, shared by the browser tests.

``scope`` is a Playwright page, frame locator or locator.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from playwright.sync_api import expect

from widgets.common.formatting import COUNT, MILLISECONDS, PERCENT
from widgets.model.buckets import BucketConfig, step_schedule

TIMEOUT = 10_000  # ms, for expectations that wait on a server round trip


def field(scope, label: str):
    """The text field named ``label``."""
    return scope.get_by_label(label, exact=True).and_(scope.get_by_role("textbox"))


def readout(scope, name: str):
    """The readout named ``name``."""
    return scope.get_by_role("status", name=name, exact=True)


def button(scope, name: str):
    """The button named ``name``."""
    return scope.get_by_role("button", name=name, exact=True)


def enter(scope, label: str, text: str, nth: int = 0) -> None:
    """Type into a field and commit with Enter."""
    box = field(scope, label).nth(nth)
    box.fill(text)
    box.press("Enter")


def starts(text: str) -> re.Pattern:
    """A readout whose text is ``text``, alone or followed by more words."""
    return re.compile("^" + re.escape(text) + r"(\s|$)")


def assert_readouts(scope, expected: dict[str, str], context: str) -> None:
    """Each readout named in ``expected`` comes to start with its text."""
    for name, value in expected.items():
        expect(readout(scope, name), f"{name} {context}").to_have_text(
            starts(value), timeout=TIMEOUT
        )


#: The bucket timeline's layers-per-bucket and hardware fields: label -> parameter (URL key).
BUCKET_FIELDS = {
    "Layers per bucket": "layers_per_bucket",
    "Backward time per layer": "backward_ms",
    "Gradient size per layer": "grad_mb",
    "Link bandwidth": "bandwidth",
    "Latency per ring step": "latency_ms",
    "Ranks": "ranks",
    "Straggler slowdown": "straggler_pct",
}


def bucket_readouts(config: BucketConfig) -> dict[str, str]:
    """What each schedule readout of the bucket timeline starts with for ``config``."""
    s = step_schedule(config)
    return {
        "Backward end": MILLISECONDS(s.backward_end),
        "Communication end": MILLISECONDS(s.comm_end),
        "Exposed tail": MILLISECONDS(s.exposed_tail),
        "Step time": MILLISECONDS(s.step_time),
        "Buckets": COUNT(s.n_buckets),
        "Per-transfer overhead": MILLISECONDS(s.overhead_ms / s.n_buckets),
        "Overlap": PERCENT(100 * s.overlap_fraction),
    }


def number(text: str) -> float:
    """The leading number of a readout ("4.00 s" -> 4.0, "−1.00" -> -1.0)."""
    match = re.match(r"^\s*([+\-−]?\d+(?:\.\d+)?)", text)
    assert match, f"readout does not start with a number: {text!r}"
    return float(match.group(1).replace("−", "-"))


def value_of(scope, name: str) -> float:
    """The number a readout starts with."""
    return number(readout(scope, name).inner_text())


def description(scope):
    """The live text alternative of a widget's chart ("What the chart shows")."""
    return scope.get_by_role("region", name="What the chart shows", exact=True)


#: JS statements that set ``widget`` to the page's first widget (``.ol-widget``), found
#: through shadow roots; a page script starts ``() => {`` + this.
FIND_WIDGET_JS = """
  const roots = [document];
  let widget = null;
  while (roots.length && !widget) {
    const r = roots.pop();
    widget = r.querySelector(".ol-widget");
    for (const el of r.querySelectorAll("*")) if (el.shadowRoot) roots.push(el.shadowRoot);
  }
"""

FRAMES_JS = """
n => new Promise(done => {
  let k = 0;
  const tick = () => (++k >= n ? done() : requestAnimationFrame(tick));
  requestAnimationFrame(tick);
})
"""


def animation_frames(target, n: int = 30) -> None:
    """Wait for ``n`` of the page's own animation frames (its clock, not the test's)."""
    target.evaluate(FRAMES_JS, n)


def holds_still(target, read: Callable[[], object], frames: int = 30) -> object:
    """``read()`` gives the same value before and after ``frames`` animation frames."""
    first = read()
    animation_frames(target, frames)
    second = read()
    assert second == first, f"changed from {first!r} to {second!r} over {frames} frames"
    return first
