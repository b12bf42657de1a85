"""The notebook bundle in a bare anywidget host: a page that imports it as a module and
calls its default export's ``render({model, el})``, as every anywidget host does.

The model is the widget's saved state (``get_state()`` of a real widget) behind
anywidget's model interface (``get``, ``set``, ``on``, ``off``, ``send``,
``save_changes``). A host whose kernel answers shows the widget alone; one with no
kernel (a saved copy) says so above the widget.
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, Route, expect

from tests.ui.pagekit import readout, starts

pytest.importorskip("anywidget", reason="the notebook tests need the test extra")

from widgets.notebook import QueueLab
from widgets.notebook.widget import BUNDLE

ORIGIN = "http://notebook-host.invalid"

HOST = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>host</title></head>
<body><main><div id="out"></div></main><script type="module">
const saved = JSON.parse(document.getElementById("state").textContent);
const answers = %(answers)s;
const listeners = new Map();
const model = {
  get: (name) => saved[name],
  set: (name, value) => {
    saved[name] = value;
    (listeners.get("change:" + name) || []).forEach((cb) => cb());
  },
  on: (event, cb) => listeners.set(event, [...(listeners.get(event) || []), cb]),
  off: (event, cb) => listeners.set(event, (listeners.get(event) || []).filter((f) => f !== cb)),
  save_changes: () => {},
  send: (message) => {
    window.sent.push(message);
    if (answers && message.hello) setTimeout(() => model.set("kernel", message.hello), 50);
  },
};
window.sent = [];
const widget = (await import("./notebook.bundle.js")).default;
widget.render({ model, el: document.getElementById("out") });
</script><script type="application/json" id="state">%(state)s</script></body></html>"""


def saved_state() -> str:
    state = QueueLab(arrival=2).get_state()
    return json.dumps({k: v for k, v in state.items() if not k.startswith("_")}).replace(
        "</", "<\\/"
    )


def open_host(page: Page, answers: bool) -> None:
    html = HOST % {"answers": json.dumps(answers), "state": saved_state()}
    requests: list[str] = []

    def serve(route: Route) -> None:
        url = route.request.url
        requests.append(url)
        if url == f"{ORIGIN}/":
            route.fulfill(body=html, content_type="text/html")
        elif url == f"{ORIGIN}/notebook.bundle.js":
            route.fulfill(path=BUNDLE, content_type="text/javascript")
        else:
            route.abort()

    page.route("**/*", serve)
    page.goto(f"{ORIGIN}/")
    page.requests = requests  # type: ignore[attr-defined]


def test_a_host_with_a_kernel_draws_the_widget_from_its_state(page: Page) -> None:
    open_host(page, answers=True)
    out = page.locator(".ol-notebook-widget")
    expect(readout(out, "Net rate")).to_have_text(starts("−1.00 items/s"))
    expect(out.locator(".ol-chart svg")).to_be_visible()
    page.wait_for_timeout(4500)  # longer than the page waits for the kernel's answer
    expect(page.get_by_text("This is a snapshot")).to_have_count(0)
    # Its buttons send the page's messages to the kernel.
    out.get_by_role("button", name="Step", exact=True).click()
    assert {"action": "step"} in page.evaluate("window.sent")
    assert page.requests == [f"{ORIGIN}/", f"{ORIGIN}/notebook.bundle.js"]


def test_a_saved_copy_without_a_kernel_says_so_above_the_widget(page: Page) -> None:
    open_host(page, answers=False)
    out = page.locator(".ol-notebook-widget")
    expect(readout(out, "Elapsed time")).to_have_text(starts("0.00 s"))
    expect(page.get_by_role("status").filter(has_text="This is a snapshot")).to_have_text(
        "This is a snapshot of the widget saved with the notebook: no Python kernel is "
        "running, so its buttons and settings do nothing. Run the notebook in Jupyter to "
        "use it.",
        timeout=8000,
    )
