"""A round's widget served as one file: what its bytes hold in each phase, over HTTP."""

from __future__ import annotations

import base64
import gzip
import json

import pytest
from class_support import run, ui_support
from tornado.httpclient import AsyncHTTPClient

from bench.classroom import Instructor, Learner
from bench.loadclient import configure_client


@pytest.fixture(scope="module")
def server():
    with ui_support.running_server() as served:
        yield served


def gunzipped(states: str) -> dict:
    """States as a page receives them (base64 of gzipped JSON), decoded."""
    return json.loads(gzip.decompress(base64.b64decode(states)))


def _forms(answer: float) -> list[str]:
    """The ways a page could write the answer: the number in full and as readouts round it."""
    return [repr(answer), f"{answer:.2f}", f"{answer:.3g}"]


async def _get(url: str, cookie: str = "") -> tuple[int, str, dict]:
    response = await AsyncHTTPClient().fetch(
        url, headers={"Cookie": cookie} if cookie else {}, raise_error=False
    )
    return response.code, response.body.decode("utf-8", "replace"), dict(response.headers)


async def _round(base: str, widget: str, settings: str, question: str, learners: int = 2):
    configure_client(50)
    teacher = Instructor(base)
    await teacher.start()
    pupils = [Learner(base, teacher.code) for _ in range(learners)]
    for pupil in pupils:
        await pupil.join()
    opened = await teacher.act("open", widget=widget, settings=settings, question=question)
    assert opened["ok"] is True, opened
    voting = [await p.stream.until(lambda v: v.get("phase") == "voting") for p in pupils]
    assert voting
    return teacher, pupils


def test_a_hidden_round_serves_no_answer_until_reveal_brings_it_to_every_stream(server):
    async def body():
        # Bucket timeline, defaults: its chart gives the exposed tail away at once.
        teacher, pupils = await _round(server.url, "bucket-timeline", "", "tail")
        view = pupils[0].stream.views[-1][1]
        assert view["mode"] == "hidden" and "states" not in view
        code, page, headers = await _get(f"{server.url}{view['src']}", pupils[0].cookie)
        # The same file all round, holding nothing voting does not show: a proxy may keep it.
        assert code == 200 and headers["Cache-Control"] == "public, max-age=3600"
        assert 'id="set-layers_per_bucket"' in page and "Settings locked" in page
        data = json.loads(page.split('id="ol-round">')[1].split("</script>")[0])
        assert data["mode"] == "hidden" and data["states"] is None
        voting_bytes = page + "".join(json.dumps(v) for p in pupils for _, v in p.stream.views)
        # Every learner's frame loads the same bytes.
        assert (await _get(f"{server.url}{view['src']}", pupils[1].cookie))[1] == page

        assert (await teacher.act("reveal"))["ok"] is True
        revealed = [await p.stream.until(lambda v: "states" in v) for p in pupils]
        assert len(revealed) == 2
        last = [p.stream.views[-1][1] for p in pupils]
        answer = last[0]["answer"]
        # The answer is nowhere in what a learner received while voting ...
        assert not [f for f in _forms(answer) if f in voting_bytes]
        # ... and it is in the states Reveal sent (the same to every learner).
        assert last[0]["states"] == last[1]["states"] and last[0]["mode"] == "revealed"
        states = json.dumps(gunzipped(last[0]["states"]))
        assert f"{answer:.2f}" in states
        assert len(gunzipped(last[0]["states"])["records"][0]["moments"]) > 1
        # A frame loaded after Reveal is the same file: the revealed states reach it from
        # the class page's stream (a kept copy of the file never holds the answer).
        assert last[0]["src"] == view["src"]
        assert (await _get(f"{server.url}{view['src']}", pupils[0].cookie))[1] == page
        await teacher.act("end")

    run(body())


def test_a_locked_round_holds_the_chart_at_time_zero_and_no_run(server):
    async def body():
        # Queue lab, initial 4, arrival 2, service 3: it drains at 4 / (3 - 2) = 4 s.
        teacher, pupils = await _round(
            server.url, "queue-lab", "arrival=2&service=3&initial=4", "drain", learners=1
        )
        view = pupils[0].stream.views[-1][1]
        assert view["mode"] == "locked"
        _, page, _ = await _get(f"{server.url}{view['src']}")
        data = json.loads(page.split('id="ol-round">')[1].split("</script>")[0])
        (record,) = gunzipped(data["states"])["records"]
        assert record["moments"] == [] and record["anchor"]["elapsed"] == 0
        assert record["values"]["arrival"] == "2"
        assert data["live"].startswith("/class/queue-lab?") and "mode=open" in data["live"]
        # The page imports its bundle and the state source from this server, cacheable.
        for name in ("static_source.js", "queue_lab.bundle.js"):
            assert f"/class/assets/{name}" in page
            code, _, headers = await _get(f"{server.url}/class/assets/{name}")
            assert code == 200 and "max-age" in headers["Cache-Control"]
        assert (await _get(f"{server.url}/class/assets/nope.js"))[0] == 404
        # Another round number, or another round's tag, is a short page, not an error,
        # and not one to keep.
        prefix, number, tag = view["src"].rsplit("/", 2)
        assert number == "1" and len(tag) == 16
        for missing in (f"{prefix}/99/{tag}", f"{prefix}/1/{'0' * 16}"):
            code, text, headers = await _get(f"{server.url}{missing}")
            assert code == 404 and "This round is over." in text
            assert headers["Cache-Control"] == "no-store"
        await teacher.act("end")

    run(body())
