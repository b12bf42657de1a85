"""Widgets display outside the server, as a notebook shows them after pn.extension()."""

from __future__ import annotations

import panel as pn
from bokeh.document import Document
from bokeh.models import Div

from widgets import BucketTimeline, QueueLab
from widgets.common import bundles

pn.extension()


def test_a_browser_drawn_widget_carries_its_bundle_inline_and_its_state() -> None:
    widget = QueueLab(arrival=4)
    first = widget.get_root(Document())
    second = widget.get_root(Document())
    header = bundles.bundle_of(QueueLab.entry).read_text(encoding="utf-8").splitlines()[0]
    for root in (first, second):
        # No server to fetch it from: the bundle travels in the document itself.
        assert root.esm.startswith(header), root.esm[:120]
        assert root.bundle is not None and root.bundle != "url"
        assert root.data.state["segment"]["net"] == 1.0  # arrival 4 - service 3
        assert root.data.values["arrival"] == "4"
    assert first is not second


def test_a_server_built_widget_renders_and_can_be_shown_twice() -> None:
    widget = BucketTimeline(preset="Latency-bound")
    first = pn.panel(widget).get_root(Document())
    second = pn.panel(widget).get_root(Document())

    def readouts(root) -> list[str]:
        return sorted(
            m.text for m in root.references() if isinstance(m, Div) and "ol-readout" in m.text
        )

    assert readouts(first), "the readouts are part of the rendered document"
    # The second rendering shows the same readouts, in its own models.
    assert readouts(second) == readouts(first)
