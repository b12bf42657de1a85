"""A hostile learner over HTTP: made-up learners, guessed codes through every route, bad numbers."""

from __future__ import annotations

import asyncio
import json
import random

import pytest
from class_http import fetch, open_class
from class_support import run, ui_support

from app.classroom.codes import JOIN_ALPHABET, new_learner_id
from bench.classroom import Learner


@pytest.fixture(scope="module")
def server():
    with ui_support.running_server() as served:
        yield served


def _fake_codes(n: int, real: set[str]) -> list[str]:
    """``n`` well-formed join codes that are none of ``real`` (a fixed seed: the same each run)."""
    rng = random.Random(34)
    found: list[str] = []
    while len(found) < n:
        code = "".join(rng.choice(JOIN_ALPHABET) for _ in range(6))
        if code not in real and code not in found:
            found.append(code)
    return found


def test_made_up_learners_count_no_vote_and_are_never_connected(server):
    base = server.url

    async def body():
        teacher, learner = await open_class(base)
        other, _ = await open_class(base)  # a second class: its learners' cookies
        code = teacher.code
        stranger = Learner(base, other.code)
        await stranger.join()
        theirs = stranger.cookie.split("=", 1)[1]
        mine = learner.cookie.split("=", 1)[1]
        learner_id, _, signature = mine.partition(".")
        forged = (
            # Ids of the old shape (any 16-40 URL-safe characters), never issued.
            [new_learner_id() for _ in range(10)]
            # Made-up signatures, and the real learner's id under them.
            + [f"{new_learner_id()}.{new_learner_id()}" for _ in range(8)]
            + [f"{learner_id}.{new_learner_id()}" for _ in range(4)]
            # Another class's real learner, and near copies of this class's one.
            + [theirs] * 4
            + [f"{new_learner_id()}.{signature}", mine[:-1] + ("A" if mine[-1] != "A" else "B")]
            + [mine + "x", "." + mine]
        )
        assert len(forged) == 30
        for cookie in forged:
            status, text, _ = await fetch(
                f"{base}/class/{code}/vote", "POST", json.dumps({"text": "3"}),
                {"Cookie": f"ol_learner={cookie}", "Content-Type": "application/json"},
            )  # fmt: skip
            assert status == 403 and json.loads(text)["ok"] is False, (cookie, status, text)
        # 150 event streams with made-up cookies: each refused, none connected.
        streams = [
            fetch(f"{base}/class/{code}/events", headers={"Cookie": f"ol_learner={c}"})
            for c in [new_learner_id() for _ in range(75)]
            + [f"{new_learner_id()}.{new_learner_id()}" for _ in range(75)]
        ]
        answers = await asyncio.gather(*streams)
        assert {status for status, _, _ in answers} == {403}
        # One real learner joins after them: the count it brings is the real one.
        second = Learner(base, code)
        await second.join()
        await teacher.stream.until(lambda v: v.get("connected") == 2)
        await asyncio.sleep(0.5)
        assert teacher.stream.views[-1][1]["connected"] == 2
        # Not one forged vote was kept: the round has none until the real learner votes.
        results = await teacher.act("results")
        assert "# predictions,0\n" in results["text"], results["text"]
        _, _, reply = await learner.vote("3")
        assert reply == {"ok": True, "value": 3.0}
        results = await teacher.act("results")
        assert "# predictions,1\n" in results["text"], results["text"]
        return code

    code = run(body(), timeout=90)
    assert code not in server.log.text()


def test_guessing_codes_through_votes_and_events_learns_nothing(server):
    """A vote or a stream for a code this browser did not join gets one answer, real or not."""
    base = server.url

    async def body():
        teacher, learner = await open_class(base)
        other, _ = await open_class(base)  # real, voting, and not joined by this learner
        guesses = _fake_codes(40, {teacher.code, other.code})
        answers = set()
        for code in [*guesses[:20], other.code, *guesses[20:], other.code.lower()]:
            vote = await fetch(
                f"{base}/class/{code}/vote", "POST", json.dumps({"text": "3"}),
                {"Cookie": learner.cookie, "Content-Type": "application/json"},
            )  # fmt: skip
            events = await fetch(
                f"{base}/class/{code}/events", headers={"Cookie": learner.cookie}, timeout=2
            )
            answers.add((vote[0], vote[1], events[0], events[1]))
        # 42 guesses, real among them: all answered alike, so none tells a real code.
        assert len(answers) == 1, answers
        assert next(iter(answers))[0] == 403
        # The join page still counts its misses per address, ten a minute.
        statuses = [(await fetch(f"{base}/class/{code}"))[0] for code in guesses[:11]]
        assert statuses == [404] * 10 + [429]
        # This class's own learner still votes.
        _, _, reply = await learner.vote("4")
        assert reply == {"ok": True, "value": 4.0}

    run(body(), timeout=90)


def test_a_huge_number_or_deep_json_is_a_400_with_a_message_and_no_traceback(server):
    base = server.url

    async def body():
        _teacher, learner = await open_class(base)
        start = server.log.size()
        as_json = {"Cookie": learner.cookie, "Content-Type": "application/json"}
        vote = f"{base}/class/{learner.code}/vote"
        for payload in (
            '{"text": ' + "9" * 400 + "}",
            '{"text": -' + "9" * 4000 + "}",
            '{"text": ' + "1" + "0" * 309 + "}",
            "[" * 3000 + "]" * 3000,
            '{"text": ' + "[" * 3000 + "]" * 3000 + "}",
        ):
            status, text, _ = await fetch(vote, "POST", payload, as_json)
            reply = json.loads(text)
            assert status == 400 and reply["ok"] is False, (payload[:30], status, text)
            assert reply["message"].startswith(("Your prediction", "Send JSON")), reply
        return start

    start = run(body(), timeout=60)
    server.log.assert_no_traceback(since=start)


def test_only_a_json_media_type_is_json(server):
    base = server.url

    async def body():
        _teacher, learner = await open_class(base)
        vote = f"{base}/class/{learner.code}/vote"
        for media in (
            "text/plain; note=application/json",
            "application/json-seq",
            "text/application/json",
            "application/jsonx; q=application/json",
        ):
            status, text, _ = await fetch(
                vote, "POST", json.dumps({"text": "3"}),
                {"Cookie": learner.cookie, "Content-Type": media},
            )  # fmt: skip
            assert status == 400 and json.loads(text)["message"] == "Send JSON.", (media, text)
        for media in ("application/json", "Application/JSON; charset=utf-8"):
            status, text, _ = await fetch(
                vote, "POST", json.dumps({"text": "3"}),
                {"Cookie": learner.cookie, "Content-Type": media},
            )  # fmt: skip
            assert status == 200, (media, text)

    run(body(), timeout=60)


def test_a_browser_joins_a_class_once_and_keeps_its_cookie_for_that_class_only(server):
    base = server.url

    async def body():
        teacher, learner = await open_class(base)
        # Opening the page again with its cookie issues no second learner.
        _, _, headers = await fetch(
            f"{base}/class/{teacher.code}", headers={"Cookie": learner.cookie}
        )
        assert headers.get_list("Set-Cookie") == []
        # A new browser gets one, for this class's addresses alone.
        _, _, headers = await fetch(f"{base}/class/{teacher.code}")
        (cookie,) = headers.get_list("Set-Cookie")
        assert f"Path=/class/{teacher.code}" in cookie and "HttpOnly" in cookie

    run(body(), timeout=60)
