"""Both widgets display outside the server, as a notebook shows them after pn.extension()."""

from __future__ import annotations

import panel as pn
import pytest
from bokeh.document import Document
from bokeh.models import Div

from widgets import BucketTimeline, QueueLab

pn.extension()


@pytest.mark.parametrize("make", [QueueLab, lambda: BucketTimeline(preset="Latency-bound")])
def test_a_widget_renders_and_can_be_shown_twice(make) -> None:
    widget = make()
    first = pn.panel(widget).get_root(Document())
    second = pn.panel(widget).get_root(Document())

    def readouts(root) -> list[str]:
        return sorted(
            m.text for m in root.references() if isinstance(m, Div) and "ol-readout" in m.text
        )

    assert readouts(first), "the readouts are part of the rendered document"
    # The second rendering shows the same readouts, in its own models.
    assert readouts(second) == readouts(first)
