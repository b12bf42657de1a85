"""The browser formats and reveals exactly as Python does, case by case.

The shared library's ``widgets/common/js/rules.js`` carries the browser's copy
of the reveal rules (widgets/model/timeline.py) and of the number format
(widgets/common/formatting.py). Here Chromium runs it on a table of cases and
every answer is compared with Python's.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from playwright.sync_api import Page

from widgets.common.bundles import COMMON_JS
from widgets.common.formatting import COUNT, ITEMS, MILLISECONDS, PERCENT, SECONDS, Quantity
from widgets.model.timeline import revealed_points, revealed_polyline, revealed_spans

#: The shared library's module, run as a plain script (its functions become globals).
LIBRARY_RULES_JS = (COMMON_JS / "rules.js").read_text(encoding="utf-8").replace("export ", "")


@pytest.fixture
def rules(page: Page) -> Page:
    page.set_content("<html><body></body></html>")
    page.add_script_tag(content=LIBRARY_RULES_JS)
    return page


FORMAT_CASES = [
    (q, v)
    for q in (SECONDS, MILLISECONDS, ITEMS, PERCENT, COUNT, Quantity("MB", digits=1))
    for v in (
        *(0.0, -0.0, 1.0, 4.0, -1.0, 0.004, -0.004, 0.005, 2.675, 1234.5678, -3.14159, 1e-9),
        # Exact ties, which Python rounds to even: 1.625 -> 1.62, 2.5 -> 2, 0.125 -> 0.12.
        *(1.625, -1.625, 1.375, 0.125, 0.375, 0.5, 1.5, 2.5, -2.5, 0.0625, 12.5, 1e15 + 0.5),
    )
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
    cases = [(q, v) for q, v in FORMAT_CASES if math.isfinite(v)]
    got = rules.evaluate(
        "cases => cases.map(c => fmt(c.v, c.spec, true))",
        [{"v": v, "spec": q.js_spec()} for q, v in cases],
    )
    for (q, v), text in zip(cases, got, strict=True):
        assert text == q(v, signed=True), (
            f"{v!r} with {q}: browser {text!r}, Python {q(v, signed=True)!r}"
        )


#: The axis top for what is shown, worked by hand: at least 1, times 1.12, rounded up.
AUTOSCALE_CASES = [
    ([], 2),  # ceil(1 x 1.12)
    ([0.0], 2),
    ([0.5], 2),
    ([4.0], 5),  # ceil(4.48)
    ([3.0, 9.99], 12),  # ceil(11.1888)
    ([100.0, 1.0], 112),
    ([float("nan"), 4.0], 5),  # a gap in the data is not a value
]


@pytest.mark.parametrize(("values", "top"), AUTOSCALE_CASES)
def test_autoscale_is_the_hand_worked_top(rules: Page, values: list[float], top: int) -> None:
    shown = [None if math.isnan(v) else v for v in values]
    got = rules.evaluate(
        "([v, h]) => autoscaledEnd(v.map(x => x === null ? NaN : x), h)", [shown, 1.12]
    )
    assert got == top
