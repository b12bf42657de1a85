"""The index, the lesson pages, sharing and embedding, in headless Chromium.

Lesson content (experiment labels, settings, answers) is read with
``lessons.load_lessons()``, and expected readouts come from the models, so the
tests follow the lesson files instead of copying them.

Every test that uses the ``page`` fixture also records the requests the page
makes and fails if any of them went anywhere but the app's own server.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import pytest
from markdown_it import MarkdownIt
from pagekit import (
    BUCKET_FIELDS,
    TIMEOUT,
    animation_frames,
    bucket_readouts,
    button,
    enter,
    field,
    readout,
    starts,
)
from playwright.sync_api import Page, expect

from lessons import Experiment, Question, WidgetBlock, load_lessons
from widgets.bucket_timeline.model import PRESETS, TimelineSettings
from widgets.common.formatting import (
    ITEMS,
    ITEMS_PER_SECOND,
    MILLISECONDS,
    plain_number,
)
from widgets.registry import WIDGETS

LOAD_TIMEOUT = 30_000  # ms, for a page (or an embed) to come up
LESSONS = load_lessons()
WIDGET_ROUTES = [f"/{name}" for name in WIDGETS]
LESSON_ROUTES = [f"/lessons/{name}" for name in LESSONS]
ROUTES = ["/", *WIDGET_ROUTES, *LESSON_ROUTES]

BUCKET_CONTROLS = {**BUCKET_FIELDS, "Forward time": "forward_ms", "Optimizer time": "optimizer_ms"}
RANKS_CONTROLS = {
    "Drawn ranks": "drawn_ranks",
    "Layers per bucket": "layers_per_bucket",
    "Host enqueue cost": "enqueue_ms",
    "Contention factor": "contention",
    "Slowdown": "slowdown_pct",
}
TRACE_CONTROLS = {"Iteration": "iteration", "What-if bucket cap": "what_if_cap_mb"}
QUEUE_CONTROLS = {"Arrival rate": "arrival", "Service rate": "service", "Initial items": "initial"}
#: Names every widget has once: on a page with several widgets, the n-th one is the n-th widget's.
SHARED_NAMES = {"Elapsed time", "Reset", "Play", "Step", "Link to these settings"}


# --- helpers -----------------------------------------------------------------


def queue_readouts(settings: dict, at_start: bool = True) -> dict[str, str]:
    """Net rate, and at time zero the queue length, for queue-lab settings."""
    values = {"Net rate": ITEMS_PER_SECOND(settings["arrival"] - settings["service"], signed=True)}
    if at_start:
        values["Queue length"] = ITEMS(settings["initial"])
    return values


def open_route(page: Page, ui, url: str) -> None:
    """Open an app page and wait until it is live; lesson pages may hold several widgets."""
    ui.open_widget(page, url, ready=None)
    if urlsplit(url).path != "/":
        button(page, "Reset").first.wait_for(state="visible", timeout=LOAD_TIMEOUT)
    settle(page)


def settle(page: Page) -> None:
    """Wait until Bokeh has no pending document work and the layout had a frame to update."""
    page.wait_for_function(
        "() => window.Bokeh === undefined || "
        "Bokeh.documents.every(d => d.is_idle === undefined || d.is_idle)",
        timeout=LOAD_TIMEOUT,
    )
    animation_frames(page, 10)  # the layout had frames to update


def allowed_netlocs(*ports: int) -> set[str]:
    return {f"{host}:{port}" for port in ports for host in ("localhost", "127.0.0.1")}


def assert_requests_within(urls: list[str], netlocs: set[str]) -> None:
    foreign = [
        url
        for url in urls
        if urlsplit(url).scheme not in ("data", "blob", "about")
        and not (
            urlsplit(url).scheme in ("http", "https", "ws", "wss")
            and urlsplit(url).netloc in netlocs
        )
    ]
    assert not foreign, "requests went elsewhere:\n" + "\n".join(sorted(set(foreign)))


def answer_snippet(answer: str) -> str:
    """The first words of an answer as the page shows them (Markdown rendered, tags gone)."""
    rendered = MarkdownIt("commonmark").enable("table").render(answer)
    # The first element's own text: a table's first header cell, or the first paragraph.
    first = re.search(r"<(p|th)>(.*?)</\1>", rendered, re.DOTALL)
    text = re.sub(r"<[^>]+>", " ", first.group(2) if first else rendered)
    text = " ".join(html.unescape(text).split())
    cut = text[:60]
    return cut.rsplit(" ", 1)[0] if len(text) > 60 else cut


# --- the index ---------------------------------------------------------------------


def test_index_lists_every_lesson_and_widget_and_the_links_work(page: Page, server: str, ui):
    ui.open_widget(page, server + "/", ready=None)
    targets = {}
    lessons_nav = page.get_by_role("navigation", name="Lessons", exact=True)
    for name, lesson in LESSONS.items():
        link = lessons_nav.get_by_role("link", name=lesson.title, exact=True)
        expect(link).to_be_visible(timeout=TIMEOUT)
        targets[lesson.title] = f"/lessons/{name}"
    widgets_nav = page.get_by_role("navigation", name="Widgets", exact=True)
    for spec in WIDGETS.values():
        link = widgets_nav.get_by_role("link", name=spec.title, exact=True)
        expect(link).to_be_visible()
        targets[spec.title] = f"/{spec.name}"
    assert set(LESSONS) >= {"overlapping-communication", "dependency-schedule"}
    assert set(WIDGETS) >= {"queue-lab", "bucket-timeline"}

    for title, path in targets.items():
        page.get_by_role("link", name=title, exact=True).click()
        page.wait_for_url(server + path, timeout=LOAD_TIMEOUT)
        # The heading is rendered by the live document, so the page came up.
        expect(page.get_by_role("heading", level=1, name=title, exact=True)).to_be_visible(
            timeout=LOAD_TIMEOUT
        )
        page.go_back()
        page.wait_for_url(server + "/", timeout=LOAD_TIMEOUT)
        expect(page.get_by_role("navigation", name="Widgets", exact=True)).to_be_visible(
            timeout=LOAD_TIMEOUT
        )


def test_the_index_is_static_and_pictures_every_widget(page: Page, server: str, ws_frames):
    page.goto(server + "/")
    expect(page.get_by_role("heading", level=1, name="overlap-lab")).to_be_visible()
    # Static: no websocket, never a "Loading…" notice, every widget with a picture.
    assert ws_frames.sent == ws_frames.received == 0
    expect(page.get_by_text("Loading")).to_have_count(0)
    widgets_nav = page.get_by_role("navigation", name="Widgets", exact=True)
    expect(widgets_nav.get_by_role("img")).to_have_count(len(WIDGETS))
    course = page.get_by_role("navigation", name="Lessons", exact=True).get_by_role("listitem")
    expect(course).to_have_count(len(LESSONS))
    for item, lesson in zip(course.all(), LESSONS.values(), strict=True):
        expect(item).to_contain_text(lesson.summary)


def test_an_unknown_address_gets_a_helpful_page(page: Page, server: str):
    response = page.goto(server + "/lessons/no-such-lesson")
    assert response is not None and response.status == 404
    expect(page.get_by_role("heading", level=1, name="There is no page here")).to_be_visible()
    page.get_by_role("link", name="Go to the index").click()
    page.wait_for_url(server + "/", timeout=LOAD_TIMEOUT)


# --- the lessons ---------------------------------------------------------------------


@dataclass
class LessonWidget:
    """A widget block as the test tracks it: its kind, its place on the page, its settings."""

    kind: str
    ordinal: int  # among every widget on the page
    kind_ordinal: int  # among widgets of the same kind
    settings: dict

    def nth(self, name: str) -> int:
        return self.ordinal if name in SHARED_NAMES else self.kind_ordinal


def ranks_readouts(settings: dict) -> dict[str, str]:
    """What each visible readout of the ranks view starts with for these settings."""
    from widgets.many_ranks import text as ranks_text
    from widgets.many_ranks.model import RanksConfig

    r = RanksConfig(**settings).result()
    if r.schedule is None:
        values = ranks_text.disagreement_values(r.disagreement)
    else:
        values = ranks_text.readout_values(r)
    return {label: value for label, value, _ in values.values()}


def trace_readouts(settings: dict) -> dict[str, str]:
    """What each readout of the trace view starts with for these settings (from its state)."""
    from widgets.trace_viewer.component import TraceView

    s = TraceView(**settings).state
    values = {}
    for q in s["order"]:
        for source in ("measured", "model"):
            values[f"{s['names'][q]}, {source}"] = MILLISECONDS(s["quantities"][q][source])
    cap = plain_number(s["what_if"]["cap_mb"])
    for q, v in s["what_if"]["predicted"].items():
        values[f"{s['names'][q]}, model at {cap} MiB"] = MILLISECONDS(v)
    return values


def _initial_settings(block: WidgetBlock) -> dict:
    if block.widget == "trace":
        from widgets.trace_viewer.model import TraceViewConfig

        defaults = {
            k: TraceViewConfig.param[k].default for k in (*TRACE_CONTROLS.values(), "trace")
        }
        return {**defaults, **block.settings}
    if block.widget == "ranks":
        from widgets.many_ranks.model import SCENARIOS

        scenario = block.settings.get("scenario", "One slow rank")
        return {**SCENARIOS[scenario], **block.settings}
    if block.widget == "bucket-timeline":
        settings = dict(block.settings)
        preset = settings.pop("preset", "Overlap works")
        return {**PRESETS[preset], **settings}
    from widgets.model.fluid_queue import FluidQueue

    return {**{k: FluidQueue.param[k].default for k in QUEUE_CONTROLS.values()}, **block.settings}


def _check_widget(page: Page, w: LessonWidget, context: str, at_start: bool = True) -> None:
    """Fields and readouts of one widget on a lesson page match the settings tracked for it."""
    if w.kind == "bucket-timeline":
        controls, expected = BUCKET_CONTROLS, bucket_readouts(TimelineSettings(**w.settings))
    elif w.kind == "ranks":
        controls, expected = RANKS_CONTROLS, ranks_readouts(w.settings)
    elif w.kind == "trace":
        controls, expected = TRACE_CONTROLS, trace_readouts(w.settings)
    else:
        controls, expected = QUEUE_CONTROLS, queue_readouts(w.settings, at_start)
    for name, value in expected.items():
        expect(readout(page, name).nth(w.nth(name)), f"{name} {context}").to_have_text(
            starts(value), timeout=TIMEOUT
        )
    # The fields change in the same server message as the readouts: no long wait.
    for label, key in controls.items():
        expect(field(page, label).nth(w.nth(label)), f"{label} {context}").to_have_value(
            plain_number(w.settings[key]), timeout=3_000
        )


def _edit(page: Page, w: LessonWidget, context: str) -> None:
    """A learner's edit in the widget; its readouts must follow."""
    if w.kind == "ranks":
        names = list(ranks_readouts(w.settings))
        before = [readout(page, n).nth(w.nth(n)).inner_text() for n in names]
        if w.settings.get("iteration", 1) == 0:
            # Iteration 0 is one bucket whatever layers per bucket says: leave it instead.
            enter(page, "Iteration", "1", nth=w.nth("Iteration"))
            w.settings = {**w.settings, "iteration": 1}
            _check_widget(page, w, f"after editing Iteration, {context}")
        else:
            k = 3 if w.settings["layers_per_bucket"] == 2 else 2
            enter(page, "Layers per bucket", str(k), nth=w.nth("Layers per bucket"))
            w.settings = {**w.settings, "layers_per_bucket": k}
            _check_widget(page, w, f"after editing Layers per bucket, {context}")
        after = [readout(page, n).nth(w.nth(n)).inner_text() for n in names]
        assert before != after, f"no readout changed ({before}), {context}"
        return
    if w.kind == "trace":
        name = (
            "Step, model at 8 MiB" if w.settings["what_if_cap_mb"] != 8 else "Step, model at 4 MiB"
        )
        cap = 8.0 if w.settings["what_if_cap_mb"] != 8 else 4.0
        enter(page, "What-if bucket cap", plain_number(cap), nth=w.nth("What-if bucket cap"))
        w.settings = {**w.settings, "what_if_cap_mb": cap}
        _check_widget(page, w, f"after editing the what-if cap, {context}")
        expect(readout(page, name).nth(w.nth(name))).to_be_visible()
        return
    if w.kind == "bucket-timeline":
        before = readout(page, "Step time").nth(w.nth("Step time")).inner_text()
        forward = 9.0 if w.settings["forward_ms"] == 7.0 else 7.0
        enter(page, "Forward time", plain_number(forward), nth=w.nth("Forward time"))
        w.settings = {**w.settings, "forward_ms": forward}
        _check_widget(page, w, f"after editing Forward time, {context}")
        after = readout(page, "Step time").nth(w.nth("Step time")).inner_text()
        assert before != after, f"Step time did not change ({before}), {context}"
    else:
        arrival = 9.0 if w.settings["arrival"] == 7.0 else 7.0
        enter(page, "Arrival rate", plain_number(arrival), nth=w.nth("Arrival rate"))
        w.settings = {**w.settings, "arrival": arrival}
        # The edit keeps elapsed time, so only the rate is known here; then time moves on.
        _check_widget(page, w, f"after editing Arrival rate, {context}", at_start=False)
        elapsed = readout(page, "Elapsed time").nth(w.nth("Elapsed time"))
        before = elapsed.inner_text()
        button(page, "Step").nth(w.nth("Step")).click()
        expect(elapsed).not_to_have_text(before, timeout=TIMEOUT)


def _apply_experiment(w: LessonWidget, block: Experiment) -> None:
    settings = dict(block.settings)
    if w.kind == "ranks":
        from widgets.many_ranks.model import SCENARIOS

        scenario = settings.get("scenario")
        base = dict(SCENARIOS[scenario]) if scenario else dict(w.settings)
        w.settings = {**base, **settings}
    elif w.kind == "bucket-timeline":
        preset = settings.pop("preset", None)
        base = dict(PRESETS[preset]) if preset else dict(w.settings)
        w.settings = {**base, **settings}
    else:
        w.settings = {**w.settings, **settings}


def _widgets_of(lesson) -> dict[int, LessonWidget]:
    widgets: dict[int, LessonWidget] = {}
    for index, block in enumerate(lesson.blocks):
        if isinstance(block, WidgetBlock):
            same = sum(1 for w in widgets.values() if w.kind == block.widget)
            widgets[index] = LessonWidget(
                block.widget, len(widgets), same, _initial_settings(block)
            )
    return widgets


def _experiment_params() -> list:
    params = []
    for name, lesson in LESSONS.items():
        kinds = {lesson.blocks[b.target].widget for b in lesson.blocks if isinstance(b, Experiment)}
        for kind in sorted(kinds):
            params.append(pytest.param(name, kind, id=f"{name}-{kind}"))
    return params


@pytest.mark.parametrize("name", list(LESSONS))
def test_lesson_widgets_respond_and_answers_stay_hidden_until_asked(
    page: Page, server: str, ui, name: str
):
    lesson = LESSONS[name]
    widgets = _widgets_of(lesson)
    questions = [b for b in lesson.blocks if isinstance(b, Question)]
    assert widgets and questions, f"{name} lost its widgets or questions"

    open_route(page, ui, f"{server}/lessons/{name}")
    expect(page.get_by_role("heading", level=1, name=lesson.title, exact=True)).to_be_visible()

    # Every widget starts from its directive's settings, and an edit changes its readouts.
    for w in widgets.values():
        _check_widget(page, w, f"as the lesson places the {w.kind} widget")
        _edit(page, w, f"{w.kind} widget on {name}")

    # Each self-check answer stays folded until the learner opens it.
    for number, q in enumerate(questions, start=1):
        region = page.get_by_role("region", name=f"Check yourself {number}", exact=True)
        answer = region.get_by_text(answer_snippet(q.answer))
        expect(region).to_be_visible()
        expect(answer, f"answer {number} of {name} shown before asking").to_be_hidden()
        region.get_by_text("Show answer", exact=True).click()
        expect(answer, f"answer {number} of {name} not shown").to_be_visible(timeout=TIMEOUT)
    ui.assert_no_serious_axe_violations(page)  # with every answer open


@pytest.mark.parametrize(("name", "kind"), _experiment_params())
def test_lesson_experiments_load_into_the_widget_above(
    page: Page, server: str, ui, name: str, kind: str
):
    lesson = LESSONS[name]
    widgets = _widgets_of(lesson)
    experiments = [
        b
        for b in lesson.blocks
        if isinstance(b, Experiment) and lesson.blocks[b.target].widget == kind
    ]
    open_route(page, ui, f"{server}/lessons/{name}")

    loaded = page.get_by_role("status").filter(has_text="Loaded “")
    expect(loaded).to_have_count(0)
    for block in experiments:
        w = widgets[block.target]
        context = f"experiment “{block.label}” on {name}"
        # Move the widget away from the experiment's settings first, so loading shows.
        _edit(page, w, f"before {context}")
        button(page, block.label).click()
        # The widget says what was loaded, and is brought into view to show it.
        this = page.get_by_role("status").filter(has_text=f"Loaded “{block.label}”")
        expect(this, f"no status after {context}").to_be_visible(timeout=TIMEOUT)
        expect(this).to_be_in_viewport(timeout=TIMEOUT)
        for value in block.settings.values():
            expect(this).to_contain_text(str(value).removesuffix(".0"))
        _apply_experiment(w, block)
        _check_widget(page, w, f"after {context}")
        if w.kind == "queue-lab":  # the experiment starts the lab from time zero
            expect(readout(page, "Elapsed time").nth(w.nth("Elapsed time"))).to_have_text(
                starts("0.00 s"), timeout=TIMEOUT
            )


# --- sharing: the link, Copy link and the embed snippets ------------------------------


def _query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def _open_in_fresh_context(browser, url: str, ui) -> tuple:
    """A new browser context (no cookies, no storage) with one page on ``url``."""
    context = browser.new_context()
    fresh = context.new_page()
    urls: list[str] = []
    fresh.on("request", lambda r: urls.append(r.url))
    ui.open_widget(fresh, url)
    return context, fresh, urls


def _copy_link(page: Page, server: str, ui) -> str:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server)
    ui.open_widget(page, server + "/queue-lab?service=5")
    enter(page, "Arrival rate", "3")
    link_field = field(page, "Link to these settings")
    expect(link_field).to_have_value(re.compile(r"arrival=3(&|$)"), timeout=TIMEOUT)
    link = link_field.input_value()
    button(page, "Copy link").click()
    return link


def test_copy_link_puts_the_link_on_the_clipboard(page: Page, server: str, ui):
    link = _copy_link(page, server, ui)
    expect(page.get_by_text("Link copied.", exact=True)).to_be_visible(timeout=TIMEOUT)
    assert page.evaluate("navigator.clipboard.readText()") == link
    assert _query(link) == {"arrival": ["3"], "service": ["5"], "initial": ["4"]}, link


def test_copy_link_confirmation_is_announced(page: Page, server: str, ui):
    _copy_link(page, server, ui)
    expect(page.get_by_text("Link copied.", exact=True)).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_role("status").filter(has_text="Link copied.")).to_be_visible(timeout=2_000)


# --- embedding in a course page on another origin ---------------------------------------


def test_widget_embedded_by_iframe_works(page: Page, embedding, ui):
    url = embedding.write(
        "course.html",
        f'<p>Try the queue:</p><iframe src="{embedding.app}/queue-lab?arrival=4" '
        'title="Fluid queue lab" style="width:100%;height:1300px;border:0"></iframe>',
    )
    urls: list[str] = []
    page.on("request", lambda r: urls.append(r.url))
    page.goto(url)

    # The iframe: settings from its URL, and an edit changes a readout.
    frame = page.frame_locator("iframe")
    expect(field(frame, "Arrival rate")).to_have_value("4", timeout=LOAD_TIMEOUT)
    expect(readout(frame, "Net rate")).to_have_text(starts("+1.00 items/s"), timeout=TIMEOUT)
    enter(frame, "Service rate", "5")
    expect(readout(frame, "Net rate")).to_have_text(starts("−1.00 items/s"), timeout=TIMEOUT)
    assert page.url == url, f"the course page's URL changed to {page.url}"
    # Only the course page itself comes from the course's port.
    ui.assert_only_local([u for u in urls if u != url], embedding.app)


# --- layout: no horizontal scroll at 360 px or 1440 px, nor in a 360 px iframe -----------------

WIDTH_JS = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"


def _fits(target) -> tuple[bool, list[int]]:
    scroll, client = target.evaluate(WIDTH_JS)
    return scroll <= client, [scroll, client]


@pytest.mark.parametrize("route", ROUTES)
def test_no_horizontal_scroll_at_360_and_1440(page: Page, server: str, ui, route: str):
    page.set_viewport_size({"width": 360, "height": 800})
    open_route(page, ui, server + route)
    ok, widths = _fits(page)
    assert ok, f"{route} scrolls sideways at 360 px: scrollWidth {widths[0]} > {widths[1]}"

    page.set_viewport_size({"width": 1440, "height": 900})
    settle(page)
    ok, widths = _fits(page)
    assert ok, f"{route} scrolls sideways at 1440 px: scrollWidth {widths[0]} > {widths[1]}"


@pytest.mark.parametrize("route", WIDGET_ROUTES)  # the routes meant for embedding
def test_no_horizontal_scroll_in_a_360px_iframe(page: Page, embedding, route: str):
    name = "narrow-" + route.strip("/").replace("/", "-") + ".html"
    url = embedding.write(
        name,
        f'<iframe src="{embedding.app}{route}" title="Embedded widget" '
        'style="width:360px;height:900px;border:0"></iframe>',
    )
    page.goto(url)
    frame_locator = page.frame_locator("iframe")
    expect(button(frame_locator, "Reset").first).to_be_visible(timeout=LOAD_TIMEOUT)
    frame = page.frame(url=re.compile(re.escape(embedding.app + route)))
    assert frame is not None, [f.url for f in page.frames]
    frame.wait_for_function(
        "() => document.documentElement.dataset.olServed === 'ready'", timeout=LOAD_TIMEOUT
    )
    animation_frames(frame, 10)
    ok, widths = _fits(frame)
    assert ok, f"{route} scrolls sideways in a 360 px iframe: {widths[0]} > {widths[1]}"
    ok, widths = _fits(page)
    assert ok, f"the course page around {route} scrolls sideways: {widths[0]} > {widths[1]}"


def test_a_link_to_a_lesson_section_opens_at_that_section(page: Page, server: str, ui) -> None:
    # The lesson sits in a shadow root: the page itself scrolls to the heading the
    # address names, and follows a link to another section from a lesson's prose.
    open_route(
        page, ui, f"{server}/lessons/order-matters#the-first-iteration-and-the-bucket-rebuild"
    )
    heading = page.get_by_role("heading", name="The first iteration and the bucket rebuild")
    page.wait_for_function("() => window.scrollY > 0")
    top = heading.evaluate("h => h.getBoundingClientRect().top")
    assert 0 <= top < 80, f"the section's heading is at {top} px, not at the top"
    page.get_by_role("link", name="the next section").click()
    below = page.get_by_role("heading", name="find_unused_parameters=True: no first-iteration")
    page.wait_for_function(
        "h => Math.abs(h.getBoundingClientRect().top) < 80", arg=below.element_handle()
    )
    assert page.url.endswith("#find-unused-parameters-true-no-first-iteration-bucket-no-rebuild")
