"""The browser formats and reveals exactly as Python does, case by case.

The browser carries a copy of the reveal rules (widgets/model/timeline.py) and of
the number format (widgets/parts/formatting.py): the shared library's
``widgets/common/js/rules.js`` (and, until every widget is a browser-drawn
component, the server-built views' ``widgets/parts/playhead_rules.js``). Here
Chromium runs each copy on a table of cases and every answer is compared with
Python's.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from playwright.sync_api import Page

from widgets.common.bundles import COMMON_JS
from widgets.model.timeline import revealed_points, revealed_polyline, revealed_spans
from widgets.parts.formatting import COUNT, ITEMS, MILLISECONDS, PERCENT, SECONDS, Quantity
from widgets.parts.playhead import AUTOSCALE_HEADROOM, RULES_JS, autoscaled_end

#: The shared library's module, run as a plain script (its functions become globals).
LIBRARY_RULES_JS = (COMMON_JS / "rules.js").read_text(encoding="utf-8").replace("export ", "")


@pytest.fixture(params=["library", "server-built views"])
def rules(page: Page, request: pytest.FixtureRequest) -> Page:
    page.set_content("<html><body></body></html>")
    page.add_script_tag(content=LIBRARY_RULES_JS if request.param == "library" else RULES_JS)
    page.script_kind = request.param
    return page


FORMAT_CASES = [
    (q, v)
    for q in (SECONDS, MILLISECONDS, ITEMS, PERCENT, COUNT, Quantity("MB", digits=1))
    for v in (0.0, -0.0, 1.0, 4.0, -1.0, 0.004, -0.004, 0.005, 2.675, 1234.5678, -3.14159, 1e-9)
] + [(SECONDS, math.inf), (SECONDS, math.nan)]


def test_format_matches_python(rules: Page) -> None:
    cases = [{"v": v, "spec": q.js_spec()} for q, v in FORMAT_CASES]
    got = rules.evaluate(
        "cases => cases.map(c => fmt(c.v === null ? NaN : c.v, c.spec))",
        [{"v": None if math.isnan(c["v"]) else c["v"], "spec": c["spec"]} for c in cases],
    )
    # JSON has no infinity: evaluate infinity apart.
    got_inf = rules.evaluate("spec => fmt(Infinity, spec)", SECONDS.js_spec())
    for (q, v), text in zip(FORMAT_CASES, got, strict=True):
        if math.isinf(v):
            assert got_inf == q(v)
            continue
        assert text == q(v), f"{v!r} with {q}: browser {text!r}, Python {q(v)!r}"


POLYLINE = ([0.0, 1.0, 3.0, 4.0, 6.0], [4.0, 3.0, 0.0, 0.0, 2.0])
TIMES = [-1.0, 0.0, 0.5, 1.0, 2.0, 2.9999, 3.0, 3.5, 5.0, 6.0, 7.5]


def test_polyline_reveal_matches_python(rules: Page) -> None:
    xs, ys = POLYLINE
    got = rules.evaluate(
        "([xs, ys, ts]) => ts.map(t => revealPolyline(xs, ys, t))", [xs, ys, TIMES]
    )
    for t, shown in zip(TIMES, got, strict=True):
        x, y = revealed_polyline(xs, ys, t)
        np.testing.assert_allclose(shown["x"], x, rtol=0, atol=1e-12, err_msg=f"t={t}")
        np.testing.assert_allclose(shown["y"], y, rtol=0, atol=1e-12, err_msg=f"t={t}")


def test_point_and_span_reveals_match_python(rules: Page) -> None:
    starts = [0.0, 1.0, 3.0, 3.0, 5.5]
    ends = [2.0, 4.0, 3.5, 3.0, 6.0]
    got = rules.evaluate(
        "([s, e, ts]) => ts.map(t => ({points: revealPoints(s, t), spans: revealSpans(s, e, t)}))",
        [starts, ends, TIMES],
    )
    for t, shown in zip(TIMES, got, strict=True):
        assert shown["points"] == np.flatnonzero(revealed_points(starts, t)).tolist(), t
        keep, end = revealed_spans(starts, ends, t)
        assert shown["spans"]["keep"] == np.flatnonzero(keep).tolist(), t
        assert shown["spans"]["end"] == end.tolist(), t


def test_signed_format_matches_python(rules: Page) -> None:
    if rules.script_kind != "library":
        pytest.skip("the server-built views format signed numbers on the server")
    cases = [(q, v) for q, v in FORMAT_CASES if math.isfinite(v)]
    got = rules.evaluate(
        "cases => cases.map(c => fmt(c.v, c.spec, true))",
        [{"v": v, "spec": q.js_spec()} for q, v in cases],
    )
    for (q, v), text in zip(cases, got, strict=True):
        assert text == q(v, signed=True), (
            f"{v!r} with {q}: browser {text!r}, Python {q(v, signed=True)!r}"
        )


@pytest.mark.parametrize("values", [[], [0.0], [0.5], [4.0], [3.0, 9.99], [100.0, 1.0]])
def test_autoscale_matches_python(rules: Page, values: list[float]) -> None:
    got = rules.evaluate("([v, h]) => autoscaledEnd(v, h)", [values, AUTOSCALE_HEADROOM])
    assert got == autoscaled_end(values)
