"""Widgets display outside the server, as a notebook shows them after pn.extension()."""

from __future__ import annotations

import panel as pn
import pytest
from bokeh.document import Document

import widgets
from widgets import BucketTimeline, QueueLab
from widgets.common import bundles
from widgets.common.component import WidgetComponent
from widgets.registry import WIDGETS

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


def test_the_package_exports_every_registered_widget() -> None:
    assert sorted(widgets.__all__) == sorted(s.view.partition(":")[2] for s in WIDGETS.values())
    assert {getattr(widgets, n) for n in widgets.__all__} == {
        s.view_class() for s in WIDGETS.values()
    }
    with pytest.raises(AttributeError):
        widgets.Nothing  # noqa: B018


@pytest.mark.parametrize("name", list(WIDGETS))
def test_every_widget_shows_in_a_notebook_with_its_bundle(name: str) -> None:
    spec = WIDGETS[name]
    widget = spec.create()
    assert isinstance(widget, WidgetComponent)
    root = pn.panel(widget).get_root(Document())
    header = bundles.bundle_of(type(widget).entry).read_text(encoding="utf-8").splitlines()[0]
    assert root.esm.startswith(header)
    assert root.data.state == widget.state and widget.model_state()["table"]["rows"]


def test_the_bucket_timeline_is_drawn_in_the_page_with_its_state() -> None:
    widget = BucketTimeline(preset="Latency-bound")
    root = widget.get_root(Document())
    header = bundles.bundle_of(BucketTimeline.entry).read_text(encoding="utf-8").splitlines()[0]
    assert root.esm.startswith(header), root.esm[:120]
    # 12 buckets of 5 MB with 0.2 ms per ring step: overhead 12 x 2.8 = 33.6 ms.
    assert root.data.state["readouts"]["regime"][0].startswith("33.60 ms overhead")
    assert root.data.values["preset"] == "Latency-bound"
