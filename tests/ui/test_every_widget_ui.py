"""What every registered widget does the same way, checked in headless Chromium.

Each test is parametrised over ``WIDGETS``: a widget added to the registry is
driven here without a line changed. The expected texts come from a Python view
built with the same settings (its description and its CSV header), so these
tests check the wiring from URL, page and browser to the model, not the numbers
(the model's own tests work those out by hand).
"""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qs, urlsplit

import panel as pn
import param
import pytest
from bokeh.embed import server_document
from pagekit import TIMEOUT, button, description, enter, field, value_of
from playwright.sync_api import Page, expect

from lessons import load_lessons
from widgets.common.formatting import plain_number
from widgets.model.settings import setting_names
from widgets.registry import WIDGETS, WidgetSpec

pn.extension()

NAMES = list(WIDGETS)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def other_value(p: param.Parameter) -> float:
    """A valid value of a setting that is not its default."""
    low, high = p.bounds if p.bounds else (None, None)
    step = 1 if isinstance(p, param.Integer) else 0.5
    value = p.default + step
    if high is not None and value > high:
        value = p.default - step
    if low is not None and value < low:
        value = low
    assert value != p.default
    return value


def changed_settings(spec: WidgetSpec, count: int = 2) -> dict[str, object]:
    """Non-default values for the first ``count`` settings (valid by the spec's own parser)."""
    values = {n: other_value(spec.settings.param[n]) for n in setting_names(spec.settings)[:count]}
    kwargs, notices = spec.parse({k: [plain_number(v)] for k, v in values.items()})
    assert not notices and kwargs == values, (kwargs, notices)
    return values


def expected_description(spec: WidgetSpec, settings: dict) -> str:
    """What the description says at time zero for these settings (from a Python view)."""
    text = spec.create(**settings).describe()
    return " ".join(text.split())


def label(spec: WidgetSpec, name: str) -> str:
    return spec.settings.param[name].label


def assert_fields(scope, spec: WidgetSpec, settings: dict, context: str) -> None:
    for name, value in settings.items():
        expect(field(scope, label(spec, name)), f"{name} {context}").to_have_value(
            plain_number(value), timeout=TIMEOUT
        )


def notices(scope):
    return scope.get_by_role("status", name="Notices", exact=True)


def _query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


# --- URL settings and notices --------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_url_settings_apply_and_show_in_fields_and_description(
    page: Page, server: str, ui, name: str
):
    spec = WIDGETS[name]
    settings = changed_settings(spec)
    ui.open_widget(page, f"{server}/{name}?{spec.query_string(settings)}")
    assert_fields(page, spec, settings, "from the URL")
    expect(description(page)).to_contain_text(expected_description(spec, settings))
    expect(notices(page)).to_have_count(0)


@pytest.mark.parametrize("name", NAMES)
def test_bad_url_keys_show_a_notice_and_the_valid_ones_still_apply(
    page: Page, server: str, ui, name: str
):
    spec = WIDGETS[name]
    first, second = setting_names(spec.settings)[:2]
    good = {second: other_value(spec.settings.param[second])}
    query = f"bogus=2&{first}=abc&{spec.query_string(good)}"
    if spec.presets:
        query += "&preset=Nope"
    ui.open_widget(page, f"{server}/{name}?{query}")
    shown = notices(page)
    expect(shown).to_be_visible(timeout=TIMEOUT)
    for word in ("bogus", first, *(["Nope"] if spec.presets else [])):
        expect(shown).to_contain_text(word)
    expect(shown).not_to_contain_text(f"Ignored {second}=")
    default = spec.settings.param[first].default
    assert_fields(page, spec, {first: default, **good}, f"for ?{query}")
    expect(description(page)).to_contain_text(expected_description(spec, good))


# --- sharing --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_link_reproduces_the_settings_in_a_fresh_browser(
    page: Page, server: str, ui, browser, name: str
):
    spec = WIDGETS[name]
    ui.open_widget(page, f"{server}/{name}")
    settings = changed_settings(spec)
    for key, value in settings.items():
        enter(page, label(spec, key), plain_number(value))
    link_field = field(page, "Link to these settings")
    for key, value in settings.items():
        expect(link_field).to_have_value(
            re.compile(rf"{key}={re.escape(plain_number(value))}(&|$)"), timeout=TIMEOUT
        )
    link = link_field.input_value()
    assert link.startswith(f"{server}/{name}?"), link
    ui.wait_until(lambda: _query(page.url) == _query(link), timeout=10)
    text = expected_description(spec, settings)
    expect(description(page)).to_contain_text(text, timeout=TIMEOUT)

    context = browser.new_context()
    try:
        fresh = context.new_page()
        urls: list[str] = []
        fresh.on("request", lambda r: urls.append(r.url))
        ui.open_widget(fresh, link)
        assert_fields(fresh, spec, settings, "from the copied link")
        expect(description(fresh)).to_contain_text(text)
        expect(notices(fresh)).to_have_count(0)
        ui.assert_only_local(urls, server)
    finally:
        context.close()


@pytest.mark.parametrize("name", NAMES)
def test_embed_snippets_carry_the_current_settings(page: Page, server: str, ui, name: str):
    spec = WIDGETS[name]
    first, second = setting_names(spec.settings)[:2]
    a = other_value(spec.settings.param[first])
    ui.open_widget(page, f"{server}/{name}?{spec.query_string({first: a})}")
    iframe_code = page.get_by_label("Iframe snippet", exact=True)
    script_code = page.get_by_label("Script tag snippet", exact=True)
    expect(iframe_code).to_be_hidden()
    button(page, "Embed").click()
    expect(iframe_code).to_be_visible(timeout=TIMEOUT)
    expect(script_code).to_be_visible()

    iframe_text = iframe_code.input_value()
    assert iframe_text.lstrip().startswith("<iframe"), iframe_text
    src = html.unescape(re.search(r'src="([^"]+)"', iframe_text).group(1))
    assert src.startswith(f"{server}/{name}?"), src
    assert _query(src)[first] == [plain_number(a)], src
    script_text = script_code.input_value()
    assert "<script" in script_text and f"{server}/{name}/autoload.js" in script_text
    assert f"{first}={plain_number(a)}" in script_text, script_text

    b = other_value(spec.settings.param[second])
    enter(page, label(spec, second), plain_number(b))
    # The value ends where the query's next key starts, or where the src attribute ends.
    pattern = re.compile(rf"{second}={re.escape(plain_number(b))}(&|\"|$)")
    expect(iframe_code).to_have_value(pattern, timeout=TIMEOUT)
    expect(script_code).to_have_value(pattern, timeout=TIMEOUT)
    button(page, "Embed").click()
    expect(iframe_code).to_be_hidden(timeout=TIMEOUT)


@pytest.mark.parametrize("name", NAMES)
def test_script_tag_embed_loads_everything_from_the_widget_server(
    page: Page, embedding, ui, name: str
):
    spec = WIDGETS[name]
    settings = changed_settings(spec, count=1)
    script = server_document(f"{embedding.app}/{name}", arguments=spec.query_values(settings))
    url = embedding.write(f"script-{name}.html", f"<p>The widget:</p><div>{script}</div>")
    urls: list[str] = []
    page.on("request", lambda r: urls.append(r.url))
    page.goto(url)
    expect(button(page, "Reset")).to_be_visible(timeout=30_000)
    assert_fields(page, spec, settings, "in the script-tag embed")
    # Bokeh adds its own bokeh-* keys to the autoload request: never reported as bad settings.
    expect(notices(page)).to_have_count(0)
    text = expected_description(spec, settings)
    expect(description(page)).to_contain_text(text, timeout=TIMEOUT)
    first = setting_names(spec.settings)[1]
    enter(page, label(spec, first), plain_number(other_value(spec.settings.param[first])))
    expect(description(page)).not_to_contain_text(text, timeout=TIMEOUT)

    assert page.url == url, f"the course page's URL changed to {page.url}"
    # Only the course page itself comes from the course's port; every resource from the app's.
    rest = [u for u in urls if u != url]
    assert rest, "no requests after the course page"
    ui.assert_only_local(rest, embedding.app)
    notices_text = page.locator("body").inner_text()
    assert "bokeh-" not in notices_text


# --- offline, accessibility, traffic -----------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_playing_sends_no_websocket_messages(page: Page, server: str, ui, ws_frames, name: str):
    ui.open_widget(page, f"{server}/{name}")
    button(page, "Play").click()
    expect(button(page, "Pause")).to_be_visible(timeout=TIMEOUT)
    # Count messages from when the page's own clock has started moving and the server
    # has answered Play (its OK can trail the changes it sent), over a span the page
    # measures.
    ui.wait_until(lambda: value_of(page, "Elapsed time"), timeout=10)
    try:
        ui.wait_until(lambda: ws_frames.settled, timeout=10)
    except AssertionError:
        pytest.fail(f"the websocket did not settle after Play: {ws_frames.pending()}")
    ws_frames.reset()
    start = value_of(page, "Elapsed time")
    span = 4 * WIDGETS[name].create().clock.step_size
    ui.wait_until(lambda: value_of(page, "Elapsed time") >= start + span, timeout=15)
    sent, received = ws_frames.sent, ws_frames.received
    assert (sent, received) == (0, 0), "messages while playing:\n" + "\n".join(
        ws_frames.payloads[:20]
    )
    button(page, "Pause").click()
    expect(button(page, "Play")).to_be_visible(timeout=TIMEOUT)


@pytest.mark.parametrize("name", NAMES)
def test_playing_to_the_end_stops_by_itself(page: Page, server: str, ui, name: str):
    clock = WIDGETS[name].create().clock
    steps = round(clock.horizon / clock.step_size) - 2
    ui.open_widget(page, f"{server}/{name}")
    for _ in range(steps):
        button(page, "Step").click()
    ui.wait_until(
        lambda: abs(value_of(page, "Elapsed time") - steps * clock.step_size) < 0.006, timeout=20
    )
    button(page, "Play").click()
    expect(button(page, "Pause")).to_be_visible(timeout=TIMEOUT)
    # The page turns Pause back into Play at the end by itself (no timer on the server).
    play = button(page, "Play")
    expect(play).to_be_visible(timeout=TIMEOUT + 2_000 * clock.wall_seconds_to_end())
    expect(button(page, "Step")).to_be_disabled()
    assert value_of(page, "Elapsed time") == pytest.approx(clock.horizon, abs=0.006)
    # At the end, the page says what Play and Reset do now, and Play replays the run.
    expect(
        page.get_by_text(re.compile(r"Play replays it from the start; Reset starts"))
    ).to_be_visible()
    expect(play).to_be_enabled()
    play.click()
    expect(button(page, "Pause")).to_be_visible(timeout=TIMEOUT)
    assert value_of(page, "Elapsed time") < clock.horizon / 2


def assert_csv_is_the_table(text: str, table: dict) -> None:
    """Readout lines (``# label,value``, each value starting with its number), then the
    chart's data table exactly: its column keys, then every row's values."""
    import csv
    import io

    lines = text.splitlines()
    readouts = [line for line in lines if line.startswith("# ")]
    assert readouts and lines[: len(readouts)] == readouts, text
    for line in readouts:
        label, value = next(csv.reader([line[2:]]))
        assert label and re.match(r"^[+\-−]?\d", value), line
    rows = list(csv.reader(io.StringIO("\n".join(lines[len(readouts) :]))))
    assert rows[0] == [c["key"] for c in table["columns"]]
    assert len(rows) - 1 == len(table["rows"])
    for got, want in zip(rows[1:], table["rows"], strict=True):
        for g, w in zip(got, want, strict=True):
            if isinstance(w, bool):
                assert g == str(w).lower(), (g, w)
            elif isinstance(w, int | float):
                assert float(g) == pytest.approx(w, rel=1e-12, abs=1e-12), (g, w)
            else:
                assert g == ("" if w is None else str(w)), (g, w)


ROUTES = ["/", *(f"/{n}" for n in NAMES), *(f"/lessons/{n}" for n in load_lessons())]


@pytest.mark.parametrize("route", ROUTES)
def test_axe_finds_no_serious_violations_and_every_region_in_main(
    page: Page, server: str, ui, route: str
):
    ui.open_widget(page, server + route, ready=None)
    if route != "/":
        button(page, "Reset").first.wait_for(state="visible", timeout=30_000)
    ui.assert_no_serious_axe_violations(page)
    landmarks = [
        v
        for v in ui.axe_violations(page, impacts=("minor", "moderate", "serious", "critical"))
        if v["id"] in ("landmark-one-main", "region")
    ]
    assert not landmarks, ui.describe_violations(landmarks)


# --- the text alternative and the downloads ----------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_description_is_named_and_follows_step(page: Page, server: str, ui, name: str):
    ui.open_widget(page, f"{server}/{name}")
    region = description(page)
    expect(region).to_be_visible()
    before = region.inner_text()
    assert expected_description(WIDGETS[name], {}) in " ".join(before.split())
    button(page, "Step").click()
    expect(region).not_to_have_text(before, timeout=TIMEOUT)
    view = WIDGETS[name].create()
    view.act("step")
    expect(region).to_contain_text(" ".join(view.describe().split()), timeout=TIMEOUT)


@pytest.mark.parametrize("name", NAMES)
def test_downloads_give_the_data_as_csv_and_the_chart_as_png(
    page: Page, server: str, ui, name: str
):
    spec = WIDGETS[name]
    settings = changed_settings(spec, count=1)
    ui.open_widget(page, f"{server}/{name}?{spec.query_string(settings)}")
    with page.expect_download(timeout=TIMEOUT) as info:
        button(page, "Download data (CSV)").click()
    download = info.value
    assert download.suggested_filename == f"{name}.csv"
    text = open(download.path(), encoding="utf-8").read()  # noqa: SIM115
    view = spec.create(**settings)
    assert_csv_is_the_table(text, view.model_state()["table"])

    with page.expect_download(timeout=TIMEOUT) as info:
        button(page, "Download chart (PNG)").click()
    download = info.value
    assert download.suggested_filename == f"{name}.png"
    data = open(download.path(), "rb").read()  # noqa: SIM115
    assert data[:8] == PNG_SIGNATURE, data[:16]
    assert len(data) > 1000
