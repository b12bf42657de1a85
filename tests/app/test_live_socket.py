"""A served page's live session (``app.server.live_socket``), driven over a real websocket.

Expected values come from the model (``widgets.model``) or by hand, never from the socket.
"""

from __future__ import annotations

import json

import pytest
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.testing import AsyncHTTPTestCase, gen_test
from tornado.web import Application
from tornado.websocket import websocket_connect

from app.server import live_socket
from app.server.live_socket import FULL, LiveSocket, lesson_experiments
from lessons.course import course_lessons


class LiveSocketTest(AsyncHTTPTestCase):
    def get_app(self) -> Application:
        args = {"prefix": "", "allowed_origins": ("course.example",), "lessons": course_lessons}
        return Application([(r"/live/([\w-]{1,40})", LiveSocket, args)])

    async def connect(self, path: str, origin: str | None = None):
        url = f"ws://127.0.0.1:{self.get_http_port()}{path}"
        origin = origin or f"http://127.0.0.1:{self.get_http_port()}"
        return await websocket_connect(HTTPRequest(url, headers={"Origin": origin}))

    async def ask(self, ws, frame: dict) -> dict:
        ws.write_message(json.dumps(frame))
        return json.loads(await ws.read_message())

    @gen_test(timeout=60)
    async def test_open_then_edit_answers_as_the_model(self):
        ws = await self.connect("/live/bucket-timeline?own_page=1")
        reply = await self.ask(
            ws, {"id": 1, "open": {"query": "preset=Latency-bound", "at": 0, "playing": False}}
        )
        assert reply["re"] == 1
        props = reply["props"]
        assert props["values"]["layers_per_bucket"] == "1"
        assert props["share"]["own_page"] is True
        assert reply["query"] == "preset=Latency-bound"
        reply = await self.ask(ws, {"id": 2, "msg": {"edit": "layers_per_bucket", "text": "3"}})
        assert reply["re"] == 2
        assert reply["props"]["values"]["layers_per_bucket"] == "3"
        assert reply["query"] == "preset=Latency-bound&layers_per_bucket=3"
        # 12 layers, 3 per bucket: 4 buckets, by hand.
        assert "over 12 layers, in 4 buckets" in reply["props"]["description"]
        # Only what changed is sent: the fields, the notices and the lock did not.
        assert not {"fields", "notices", "lock"} & set(reply["props"])
        ws.close()

    @gen_test(timeout=60)
    async def test_a_refused_edit_is_said_at_its_control_and_keeps_the_state(self):
        ws = await self.connect("/live/queue-lab")
        await self.ask(ws, {"id": 1, "open": {"query": "arrival=2", "at": 0, "playing": False}})
        reply = await self.ask(ws, {"id": 2, "msg": {"edit": "arrival", "text": "abc"}})
        assert "arrival" in reply["props"]["errors"]
        assert "values" not in reply["props"]
        ws.close()

    @gen_test(timeout=60)
    async def test_the_clock_is_placed_where_the_page_shows_it(self):
        ws = await self.connect("/live/queue-lab")
        reply = await self.ask(ws, {"id": 1, "open": {"query": "", "at": 1.5, "playing": False}})
        assert reply["props"]["anchor"]["elapsed"] == pytest.approx(1.5)
        assert reply["props"]["anchor"]["playing"] is False
        reply = await self.ask(ws, {"id": 2, "clock": {"at": 1e9, "playing": True}})
        anchor = reply["props"]["anchor"]
        # Past the end: at the horizon, not playing.
        assert anchor["elapsed"] == pytest.approx(anchor["horizon"])
        assert anchor["playing"] is False
        ws.close()

    @gen_test(timeout=60)
    async def test_a_page_of_another_origin_is_refused_unless_allowed(self):
        with pytest.raises(HTTPClientError) as refused:
            await self.connect("/live/queue-lab", origin="http://elsewhere.example")
        assert refused.value.code == 403
        ws = await self.connect("/live/queue-lab", origin="https://course.example")
        ws.close()

    @gen_test(timeout=60)
    async def test_garbage_and_messages_before_open_change_nothing(self):
        ws = await self.connect("/live/queue-lab")
        ws.write_message("not json")
        ws.write_message("[1, 2]")
        reply = await self.ask(ws, {"id": 1, "msg": {"action": "play"}})
        assert reply == {"re": 1, "error": "Not open."}
        reply = await self.ask(ws, {"id": 2, "open": {"query": 5, "at": "x", "playing": 1}})
        assert reply["props"]["anchor"]["elapsed"] == 0
        assert reply["props"]["anchor"]["playing"] is False
        reply = await self.ask(ws, {"id": 3, "msg": {"action": "rm -rf"}})
        assert reply["props"] == {}
        ws.close()

    @gen_test(timeout=60)
    async def test_unknown_widget_closes(self):
        ws = await self.connect("/live/no-such-widget")
        assert await ws.read_message() is None
        assert ws.close_code == 4404

    @gen_test(timeout=60)
    async def test_a_full_process_says_so(self):
        old = live_socket.MAX_LIVE_PAGES
        live_socket.MAX_LIVE_PAGES = LiveSocket.live_pages
        try:
            ws = await self.connect("/live/queue-lab")
            reply = await self.ask(ws, {"id": 1, "open": {"query": "", "at": 0, "playing": False}})
            assert reply == {"re": 1, "error": FULL}
            ws.close()
        finally:
            live_socket.MAX_LIVE_PAGES = old

    @gen_test(timeout=60)
    async def test_a_lessons_experiment_loads_only_into_its_own_widget(self):
        lessons = course_lessons()
        lesson = lessons["overlapping-communication"]
        mine = lesson_experiments(lesson, 0)
        assert mine, "the lesson's first widget has experiments"
        number, experiment = next(iter(mine.items()))
        path = f"/live/{lesson.widgets[0].widget}?lesson={lesson.name}&slot=0"
        ws = await self.connect(path)
        await self.ask(ws, {"id": 1, "open": {"query": "", "at": 0, "playing": False}})
        reply = await self.ask(ws, {"id": 2, "experiment": number})
        assert reply["props"]["message"]["text"] == experiment.note
        others = [n for n in range(50) if n not in mine]
        reply = await self.ask(ws, {"id": 3, "experiment": others[0]})
        assert "message" not in reply["props"]
        ws.close()
