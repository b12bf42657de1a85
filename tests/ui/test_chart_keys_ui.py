"""Every mark a widget's chart draws has a key entry drawn as it appears (issue 18, finding 6).

Read from the page itself: each mark in a chart's plot (its clipped group) and
each swatch in the chart's key, as painted (shape, fill, stroke, opacities,
dash; a hatch as its line colour, background and angle). A bar coloured by its
bucket is matched to the key's entry in any bucket colour (the key says "in
its bucket's colour"). At the start of a run the marks not reached yet are the
faint version of a key entry and the key has a "Faint" entry; at the end of the
run every mark that is not faint is drawn as one key entry shows it.
"""

from __future__ import annotations

import re

import pytest
from pagekit import FIND_WIDGET_JS, TIMEOUT, button
from playwright.sync_api import Page, expect

#: Each widget's bucket colours (Okabe-Ito, ``widgets/common/js/theme.js``), matched alike.
CATEGORY = {
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#999999",
}

#: The chart's marks and the key's swatches of the first widget of the page, as painted.
MARKS_JS = (
    "() => {"
    + FIND_WIDGET_JS
    + r"""
  const root = widget.getRootNode();
  const SHAPES = ["rect", "line", "path", "polygon", "polyline", "circle"];
  const paint = (el) => {
    const a = (n) => el.getAttribute(n);
    const out = { tag: el.tagName, fill: a("fill"), stroke: a("stroke"),
      fillOpacity: a("fill-opacity"), strokeOpacity: a("stroke-opacity"),
      dash: a("stroke-dasharray"),
      notReached: el.closest('[data-layer="not-reached"]') !== null };
    if (el.tagName === "line" || el.tagName === "polyline") out.fill = null;
    if (out.fill && out.fill.startsWith("url(")) {
      const pattern = root.getElementById(out.fill.slice(5, -1));
      out.fill = "hatch " + pattern.querySelector("line").getAttribute("stroke")
        + " on " + pattern.querySelector("rect").getAttribute("fill")
        + " at " + pattern.getAttribute("patternTransform");
    }
    return out;
  };
  const figure = widget.querySelector(".ol-figure");
  const plot = figure.querySelector(".ol-chart svg > g[clip-path]");
  const marks = [...plot.querySelectorAll(SHAPES.join(","))]
    .filter((el) => !el.closest("defs, pattern, clipPath"))
    .map(paint);
  const key = [...figure.querySelectorAll("ul.ol-key > li")].map((li) => ({
    label: li.querySelector("span").textContent,
    marks: [...li.querySelectorAll("svg " + SHAPES.join(", svg "))]
      .filter((el) => !el.closest("defs, pattern")).map(paint),
  }));
  return { marks, key };
}
"""
)

ROUTES = ("/bucket-timeline", "/queue-lab", "/ranks", "/trace")


#: Odd-numbered buckets are striped: white stripes on the bucket's colour (its own key entry).
STRIPES = "hatch #ffffff on bucket colour at rotate(-45)"


def _colour(value: str | None) -> str | None:
    if value is None:
        return None
    for c in CATEGORY:
        value = value.replace(c, "bucket colour").replace(c.lower(), "bucket colour")
    # A striped bucket is its bucket's colour, striped: any mark in a bucket colour may be.
    return "bucket colour" if value == STRIPES else value


def signature(mark: dict) -> tuple:
    """How a mark looks, with any bucket colour as one colour."""
    return (
        "line" if mark["tag"] == "polyline" else mark["tag"],  # a key draws a line for a curve
        _colour(mark["fill"]),
        _colour(mark["stroke"]),
        mark["fillOpacity"],
        mark["strokeOpacity"],
        mark["dash"],
    )


def striped(mark: dict) -> bool:
    fill = mark["fill"]
    return (
        fill is not None
        and _colour(fill.split(" on ")[0])
        + " on "
        + (_colour(fill.split(" on ", 1)[1]) if " on " in fill else "")
        == STRIPES
    )


def faint(mark: dict) -> bool:
    """A mark of a part the playhead has not reached yet (faint, or tinted and so marked)."""
    if mark.get("notReached"):
        return True
    return mark["strokeOpacity"] is not None and float(mark["strokeOpacity"]) < 1


def hatch_of(fill: str | None) -> str | None:
    """A hatch's look without its colours ("at rotate(45)"), None for a plain fill."""
    return fill.split(" at ", 1)[1] if fill and fill.startswith("hatch ") else None


def matched(sig: tuple, keys: set[tuple]) -> bool:
    """Drawn as a key entry shows it, or a hatched version of a plain entry's colour when
    the key has an entry for that hatch (a key that says "model: hatched" once, not per colour).
    """
    if sig in keys:
        return True
    hatch = hatch_of(sig[1])
    if hatch is None:
        return False
    colour = sig[1].split(" ")[1]
    hatches = {hatch_of(k[1]) for k in keys}
    plain = {k[1] for k in keys if hatch_of(k[1]) is None}
    return hatch in hatches and colour in plain and sig[2] == colour


def drawn(page: Page) -> dict:
    return page.evaluate(MARKS_JS)


def key_signatures(result: dict) -> set[tuple]:
    return {signature(m) for entry in result["key"] for m in entry["marks"]}


def _to_end(page: Page, ui) -> None:
    step = button(page, "Step")
    for _ in range(60):
        if step.is_disabled():
            return
        step.click()
        page.wait_for_timeout(150)  # the server's reply: the playhead moves on
    expect(step).to_be_disabled(timeout=TIMEOUT)


def test_the_signature_tells_marks_apart() -> None:
    a = {"tag": "rect", "fill": "#0072B2", "stroke": "#ffffff", "fillOpacity": None}
    a |= {"strokeOpacity": None, "dash": None}
    assert signature(a) == signature({**a, "fill": "#E69F00"})  # bucket colours alike
    assert signature(a) != signature({**a, "fill": "#1f2328"})
    assert signature(a) != signature({**a, "dash": "4 2"})
    assert not faint(a) and faint({**a, "strokeOpacity": "0.4"})


@pytest.mark.parametrize("route", ROUTES)
def test_every_mark_has_a_key_entry_drawn_as_it_appears(page: Page, server: str, ui, route):
    page.set_viewport_size({"width": 1280, "height": 900})
    ui.open_widget(page, server + route)
    start = drawn(page)
    assert start["marks"], f"{route}: the chart draws nothing"
    labels = [e["label"] for e in start["key"]]
    faint_marks = [m for m in start["marks"] if faint(m)]
    if faint_marks:
        assert any(re.search(r"faint|not (yet )?reached", label, re.I) for label in labels), (
            route,
            labels,
        )
        # Faint is a key entry's shape, fill and dash at a lower opacity (outlined, if at
        # all, in its own colour); a tinted mark says so in the key instead.
        look = {(k[0], k[1], k[5]) for k in key_signatures(start)}
        see_through = [m for m in faint_marks if not m.get("notReached") or m["strokeOpacity"]]
        unmatched = {(g[0], g[1], g[5]) for g in map(signature, see_through)} - look
        assert not unmatched, f"{route}: faint marks unlike any key entry: {unmatched}"
    _to_end(page, ui)
    end = drawn(page)
    keys = key_signatures(end)
    if any(striped(m) for m in end["marks"]):
        assert any(striped(m) for e in end["key"] for m in e["marks"]), f"{route}: no stripes key"
    missing = {
        signature(m) for m in end["marks"] if not faint(m) and not matched(signature(m), keys)
    }
    assert not missing, f"{route}: drawn without a key entry: {sorted(map(str, missing))}"
