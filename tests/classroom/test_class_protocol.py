"""The class over HTTP without a browser: 200 learners at once, and hostile requests."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from class_support import run, ui_support
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from bench.classroom import Instructor, Learner, run_class
from bench.loadclient import configure_client


@pytest.fixture(scope="module")
def server():
    with ui_support.running_server() as served:
        yield served


def test_two_hundred_learners_join_and_vote_at_once_and_every_count_is_exact(server):
    result = run(run_class(server.url, 200))
    assert result.counted == 200
    assert sorted(result.csv_values) == sorted(result.sent_values)
    assert len(result.reveal_latency) == 200  # every learner's page got the answer


async def _fetch(url: str, method: str = "GET", body=None, headers=None):
    request = HTTPRequest(
        url,
        method=method,
        body=body if body is None or isinstance(body, bytes) else body.encode(),
        headers=headers or {},
        follow_redirects=False,
        request_timeout=10,
    )
    response = await AsyncHTTPClient().fetch(request, raise_error=False)
    return response.code, response.body.decode("utf-8", "replace")


def test_hostile_requests_are_refused_with_a_message_and_change_nothing(server):
    base = server.url

    async def body():
        configure_client(100)
        teacher = Instructor(base)
        await teacher.start()
        learner = Learner(base, teacher.code)
        await learner.join()
        opened = await teacher.act(
            "open", widget="queue-lab", settings="arrival=2&service=3&initial=4", question="drain"
        )
        assert opened["ok"] is True
        await learner.stream.until(lambda v: v.get("phase") == "voting")
        code, key = teacher.code, teacher.key
        cookie = {"Cookie": learner.cookie}
        as_json = {**cookie, "Content-Type": "application/json"}

        # Predictions that are not finite numbers within the question's bounds.
        for text in ["NaN", "nan", "inf", "-Infinity", "1e999", "1e308", "-3", "four", "",
                     None, True, [1], {"a": 1}, "9" * 5000]:  # fmt: skip
            _, _, reply = await learner.vote(text)
            assert reply["ok"] is False and reply["field"] == "prediction", (text, reply)
            assert reply["message"].startswith("Your prediction"), reply
        # Not JSON, too large, no session, a forged session.
        vote = f"{base}/class/{code}/vote"
        for headers, payload in (
            ({**cookie, "Content-Type": "application/x-www-form-urlencoded"}, "text=3"),
            (as_json, json.dumps({"text": "3", "pad": "x" * 20_000})),
            (as_json, "[1, 2]"),
            (as_json, "{not json"),
            ({"Content-Type": "application/json"}, json.dumps({"text": "3"})),
            ({"Content-Type": "application/json", "Cookie": "ol_learner=../../etc"},
             json.dumps({"text": "3"})),
        ):  # fmt: skip
            status, text = await _fetch(vote, "POST", payload, headers)
            assert status in (400, 403) and json.loads(text)["ok"] is False, (status, text)
        # A learner's forged instructor actions: no key, the code, their own cookie, a guess.
        for action in ("reveal", "unlock", "next", "end", "results", "open", "stream"):
            for forged in (None, "", code, learner.cookie.split("=")[-1], "A" * 43, ["x"]):
                payload = json.dumps({"code": code, "key": forged, "widget": "queue-lab",
                                      "settings": "", "question": "drain"})  # fmt: skip
                status, text = await _fetch(
                    f"{base}/class/api/teach/{action}", "POST", payload, as_json
                )
                assert status == 403, (action, forged, status, text)
        status, _ = await _fetch(f"{base}/class/api/teach/explode", "POST", "{}", as_json)
        assert status in (400, 403)
        # Nothing moved: the round is still open, with no vote in it.
        _, _, reply = await learner.vote("3")
        assert reply == {"ok": True, "value": 3.0}
        await teacher.stream.until(lambda v: (v.get("votes") or {}).get("count") == 1)
        # A code that does not exist says so, and nothing typed is echoed unescaped.
        status, page = await _fetch(f"{base}/class/join?code=%3Cscript%3Ealert(1)%3C/script%3E")
        assert status == 404 and "<script>alert" not in page and "No class has" in page
        status, page = await _fetch(f"{base}/class/AAAAAA")
        assert status == 404 and "No class has the join code" in page
        # The settings and the question are checked too, with a message for their field.
        await teacher.act("reveal")
        await teacher.act("next")
        for settings, field in (("arrival=" + "9" * 3000, "settings"), ("arrival=-1", "settings")):
            reply = await teacher.act("open", widget="queue-lab", settings=settings,
                                      question="drain")  # fmt: skip
            assert reply["ok"] is False and reply["field"] == field, reply
        return code, key

    code, key = run(body(), timeout=60)
    log = server.log.text()
    assert code not in log and key not in log


@pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss (iproute2) to read a backlog")
def test_the_server_listens_with_room_for_a_whole_class_arriving_at_once(server):
    """Tornado's default backlog (128) would drop part of 200 simultaneous connections."""
    from app.server.listen_backlog import BACKLOG

    found = subprocess.run(
        ["ss", "-ltnH", f"sport = :{server.port}"], capture_output=True, text=True, check=True
    ).stdout.split()
    # State, Recv-Q, then Send-Q: for a listening socket, its backlog.
    assert found[0] == "LISTEN" and int(found[2]) == BACKLOG
