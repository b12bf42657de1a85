"""An address the server does not have gets a page that says so and shows the way on."""

from __future__ import annotations

import asyncio
import html
import socket

import pytest
from tornado.httpclient import AsyncHTTPClient, HTTPClientError
from tornado.web import Application

from app.pages.static_pages import NotFoundPage, index_html, not_found_html
from app.pages.thumbnails import thumbnail
from app.server.serving import server_options
from lessons import load_lessons
from widgets.registry import WIDGETS


def test_the_page_links_the_index_every_lesson_and_every_widget() -> None:
    text = not_found_html("/widgets", "/lessons/old-name")
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in text
    assert "<code>/lessons/old-name</code>" in text
    assert '<a href="/widgets/">Go to the index</a>' in text
    for name, lesson in load_lessons().items():
        assert f'href="/widgets/lessons/{name}">{lesson.title}</a>' in text
    for spec in WIDGETS.values():
        assert f'href="/widgets/{spec.name}">{spec.title}</a>' in text


def test_what_was_asked_for_is_shown_escaped_and_cut() -> None:
    text = not_found_html("", "/<script>alert(1)</script>" + "x" * 500)
    assert "<script>alert" not in text and "&lt;script&gt;" in text
    assert "x" * 201 not in text


def test_the_server_answers_unknown_addresses_with_it() -> None:
    options = server_options(port=5006, address="localhost", prefix="/w")
    assert options["default_handler_class"] is NotFoundPage
    assert options["default_handler_args"] == {"prefix": "/w"}


def test_it_is_served_with_status_404() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]

    async def fetch() -> tuple[int, str]:
        app = Application([], default_handler_class=NotFoundPage, default_handler_args={})
        server = app.listen(port, address="127.0.0.1")
        try:
            with pytest.raises(HTTPClientError) as info:
                await AsyncHTTPClient().fetch(f"http://127.0.0.1:{port}/no-such-page")
            response = info.value.response
            return response.code, response.body.decode()
        finally:
            server.stop()

    code, body = asyncio.run(fetch())
    assert code == 404
    assert "There is no page here" in body and "/no-such-page" in body


def test_the_index_lists_the_lessons_in_order_and_pictures_every_widget() -> None:
    text = index_html("/w")
    lessons = list(load_lessons().values())
    # In the course's order, each with what it teaches.
    positions = [text.index(f'href="/w/lessons/{lesson.name}"') for lesson in lessons]
    assert positions == sorted(positions)
    for lesson in lessons:
        assert html.escape(lesson.summary) in text
    assert '<ol class="ol-course">' in text
    for spec in WIDGETS.values():
        assert f'href="/w/{spec.name}">{spec.title}</a>' in text
        picture = thumbnail(spec.name)
        assert picture.startswith('<svg class="ol-thumb"') and 'role="img" aria-label="' in picture
        assert picture in text
    # An instructor finds the classroom from the index, under the prefix.
    assert '<a href="/w/class">Start or join a class</a>' in text
    # Static: no script, nothing from another host, nothing that says "Loading".
    assert "<script" not in text and "Loading" not in text and "http" not in text


def test_each_picture_is_drawn_from_the_widget_default_state() -> None:
    from widgets.model.buckets import BucketConfig, step_schedule

    schedule = step_schedule(BucketConfig())
    picture = thumbnail("bucket-timeline")
    # One bar per layer's backward and one per bucket's all-reduce.
    assert picture.count("<rect ") == 1 + len(schedule.layer_ready) + len(schedule.bucket_start)
    queue = thumbnail("queue-lab")
    # The default queue drains at 4 s and its run ends at 5 s: three vertices (0, 4, 5 s).
    points = queue.split('<polyline points="', 1)[1].split('"', 1)[0].split()
    assert len(points) == 3
    assert thumbnail("no-such-widget") == ""


def test_a_picture_is_drawn_to_scale_in_the_pages_colours() -> None:
    from app.pages import theme
    from app.pages.thumbnails import picture_svg
    from widgets.common.picture import Lanes

    # Two lanes over 0..2: each lane is (120 - 2*8) / 2 = 52 high, its bars 70 % of that
    # (36.4) from 15 % down; one unit of time is (320 - 2*8) / 2 = 152 wide.
    svg = picture_svg(Lanes("Two bars", [("a", [(0.0, 1.0, 0)]), ("b", [(1.0, 2.0, 1)])]))
    assert 'aria-label="Two bars"' in svg
    assert f'<rect x="8.0" y="15.8" width="152.0" height="36.4" fill="{theme.BLUE}"' in svg
    assert f'<rect x="160.0" y="67.8" width="152.0" height="36.4" fill="{theme.ORANGE}"' in svg


def test_a_lesson_renders_its_tables_and_keeps_raw_html_out() -> None:
    from app.pages.lesson_page import lesson_html
    from lessons import parse_lesson

    lesson = parse_lesson(
        "---\ntitle: T\nsummary: S\n---\n\n| Readout | Value |\n| --- | --- |\n"
        "| Step time | 49.76 ms |\n\n<script>alert(1)</script>\n",
        name="t",
    )
    text, widgets, experiments = lesson_html(lesson)
    assert "<table>" in text and "<td>49.76 ms</td>" in text
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert widgets == [] and experiments == []
