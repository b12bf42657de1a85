"""The room logic without a browser, against both stores (in-process and a real Redis)."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import json
import math
import re

import pytest
from class_support import run
from stores import STORES, open_store

from app.classroom import rooms
from app.classroom.codes import JOIN_ALPHABET, key_digest, new_learner_id
from app.classroom.rooms import (
    ClassError,
    Classroom,
    Forbidden,
    NotFound,
    RateLimited,
    WrongPhase,
)
from app.classroom.views import instructor_view, learner_view

# Arrival 2, service 3, initial 4: the queue shrinks by 1 item/s, so it drains at 4 s.
QUEUE = "arrival=2&service=3&initial=4"


@contextlib.asynccontextmanager
async def new_room(kind: str, url: str):
    """A store of ``kind``, its rooms and one room started: ``(store, room, code, key)``."""
    async with open_store(kind, url) as store:
        room = Classroom(store)
        code, key = await room.start_room(new_learner_id())
        yield store, room, code, key


@pytest.fixture(params=STORES)
def kind(request) -> str:
    return request.param


@pytest.fixture
def url(kind, request) -> str:
    return request.getfixturevalue("redis_server").url if kind == "redis" else ""


def test_a_room_has_a_readable_code_and_a_key_kept_only_as_a_digest(kind, url):
    async def body():
        async with new_room(kind, url) as (store, room, code, key):
            assert len(code) == 6 and all(c in JOIN_ALPHABET for c in code)
            assert len(key) >= 40
            stored = await store.get_room(code)
            assert key not in json.dumps(stored)
            assert stored["key"] == key_digest(key)
            view = learner_view(code, stored, None)
            assert view == {"phase": "waiting", "round": 0}
            assert await room.find(code.lower()[:3] + " " + code[3:].lower()) == code

    run(body())


def test_a_full_round_one_vote_per_learner_replace_reveal_unlock_next(kind, url):
    async def body():
        async with new_room(kind, url) as (store, room, code, key):
            a, b, c = (new_learner_id() for _ in range(3))
            for learner in (a, b, c):
                await room.join(code, learner)
            assert await room.connected(code) == 3
            # Before voting opens, a vote is refused.
            with pytest.raises(WrongPhase):
                await room.vote(code, a, "3")
            opened = await room.open_round(code, key, "queue-lab", QUEUE, "drain")
            assert opened["phase"] == "voting" and opened["round"] == "1"
            assert float(opened["answer"]) == 4.0
            assert await room.vote(code, a, "3") == 3.0
            assert await room.vote(code, b, "4") == 4.0
            assert await room.vote(code, b, "5") == 5.0  # replaces 4
            assert await room.vote(code, c, " 6,0 ") == 6.0
            votes = await room.votes(code, await store.get_room(code))
            assert sorted(votes.values()) == [3.0, 5.0, 6.0]
            live = instructor_view(code, await store.get_room(code), votes, 3)
            assert live["votes"]["count"] == 3 and "median" not in live["votes"]
            assert "answer" not in live and "key" not in json.dumps(live)
            before = learner_view(code, await store.get_room(code), 5.0)
            assert "answer" not in before and "result" not in before
            assert before["yours"] == 5.0 and before["mode"] == "locked"
            assert re.fullmatch(f"/class/{code}/round/1/[0-9a-f]{{16}}", before["src"])
            revealed = await room.reveal(code, key)
            result = json.loads(revealed["result"])
            assert result["count"] == 3 and result["median"] == 5.0
            # Voting is closed: nothing changes the frozen distribution.
            with pytest.raises(WrongPhase):
                await room.vote(code, a, "9")
            assert sorted((await room.votes(code, revealed)).values()) == [3.0, 5.0, 6.0]
            after = learner_view(code, revealed, 5.0)
            assert after["answer"] == 4.0 and after["result"]["median"] == 5.0
            assert after["unlocked"] is False and after["mode"] == "revealed"
            unlocked = await room.unlock(code, key)
            assert learner_view(code, unlocked, None)["unlocked"] is True
            assert learner_view(code, unlocked, None)["mode"] == "open"
            text, name = await room.results_csv(code, key)
            lines = list(csv.reader(io.StringIO(text)))
            assert ["# answer", "4.0"] in lines and ["# class median", "5.0"] in lines
            assert lines[-4:] == [["prediction"], ["3.0"], ["5.0"], ["6.0"]]
            assert a not in text and b not in text and name == "class-round-1.csv"
            waiting = await room.next_round(code, key)
            assert learner_view(code, waiting, None) == {"phase": "waiting", "round": 1}
            second = await room.open_round(code, key, "queue-lab", QUEUE, "length", "2")
            # At 2 s the queue holds 4 - 1 * 2 = 2 items.
            assert second["round"] == "2" and float(second["answer"]) == 2.0
            assert await room.votes(code, second) == {}
            await room.end(code, key)
            assert learner_view(code, await store.get_room(code), None) == {"phase": "ended"}

    run(body())


@pytest.mark.parametrize("forged", [None, "", "x", 12, ["k"], {"key": 1}, "A" * 43, "A" * 5000])
def test_only_the_key_moves_a_room(kind, url, forged):
    async def body():
        async with new_room(kind, url) as (store, room, code, key):
            learner = new_learner_id()
            for action in (
                lambda k: room.open_round(code, k, "queue-lab", QUEUE, "drain"),
                lambda k: room.reveal(code, k),
                lambda k: room.unlock(code, k),
                lambda k: room.next_round(code, k),
                lambda k: room.end(code, k),
                lambda k: room.results_csv(code, k),
            ):
                with pytest.raises(Forbidden):
                    await action(forged)
                with pytest.raises(Forbidden):
                    await action(learner)  # a learner's own id is no key either
            # Another room's key opens only that room.
            _, other_key = await room.start_room(new_learner_id())
            with pytest.raises(Forbidden):
                await room.reveal(code, other_key)
            assert (await store.get_room(code))["phase"] == "waiting"
            await room.open_round(code, key, "queue-lab", QUEUE, "drain")

    run(body())


@pytest.mark.parametrize(
    "text, message",
    [
        ("nan", "finite"),
        ("inf", "finite"),
        ("-inf", "finite"),
        ("1e308", "from 0 to 100000"),
        ("-1", "from 0 to 100000"),
        ("abc", "is not a number"),
        ("", "type a number"),
        ("9" * 100, "too long"),
        (None, "type a number"),
        (True, "type a number"),
        (["1"], "type a number"),
        ({"x": 1}, "type a number"),
    ],
)
def test_a_prediction_is_validated_with_a_message_for_its_field(kind, url, text, message):
    async def body():
        async with new_room(kind, url) as (store, room, code, key):
            await room.open_round(code, key, "queue-lab", QUEUE, "drain")
            learner = new_learner_id()
            with pytest.raises(ClassError) as caught:
                await room.vote(code, learner, text)
            assert caught.value.field == "prediction"
            assert message in caught.value.message
            assert await room.votes(code, await store.get_room(code)) == {}

    run(body())


def test_whole_number_questions_refuse_fractions(kind, url):
    async def body():
        async with new_room(kind, url) as (_store, room, code, key):
            await room.open_round(code, key, "ranks", "scenario=One slow rank", "defining", "0")
            learner = new_learner_id()
            with pytest.raises(ClassError, match="whole number"):
                await room.vote(code, learner, "1.5")
            # Four drawn ranks by default: ranks 0 to 3.
            with pytest.raises(ClassError, match="from 0 to 3"):
                await room.vote(code, learner, "4")
            assert await room.vote(code, learner, "0") == 0.0

    run(body())


@pytest.mark.parametrize(
    "widget, settings, question, parameter, field",
    [
        ("trace", "", "tail", "", "widget"),
        ("nope", "", "tail", "", "widget"),
        ("queue-lab", "arrival=3&service=2", "drain", "", "question"),  # never drains
        ("queue-lab", "arrival=oops", "drain", "", "settings"),
        ("queue-lab", "colour=red", "drain", "", "settings"),
        ("queue-lab", QUEUE, "tail", "", "question"),  # another widget's question
        ("queue-lab", QUEUE, "length", "nan", "parameter"),
        ("ranks", "scenario=Ranks disagree", "idle", "", "question"),
        ("ranks", "", "defining", "99", "question"),
        ("bucket-timeline", "bucket_cap_mb=25", "best", "", "question"),
    ],
)
def test_a_round_that_cannot_be_asked_says_why_at_its_field(
    kind, url, widget, settings, question, parameter, field
):
    async def body():
        async with new_room(kind, url) as (store, room, code, key):
            with pytest.raises(ClassError) as caught:
                await room.open_round(code, key, widget, settings, question, parameter)
            assert caught.value.field == field and caught.value.message
            assert (await store.get_room(code))["phase"] == "waiting"

    run(body())


def test_phases_refuse_actions_out_of_order(kind, url):
    async def body():
        async with new_room(kind, url) as (_store, room, code, key):
            for action in (room.reveal, room.unlock, room.next_round):
                with pytest.raises(WrongPhase):
                    await action(code, key)
            await room.open_round(code, key, "queue-lab", QUEUE, "drain")
            with pytest.raises(WrongPhase):
                await room.open_round(code, key, "queue-lab", QUEUE, "drain")
            with pytest.raises(WrongPhase):
                await room.next_round(code, key)

    run(body())


def test_votes_and_unknown_codes_are_rate_limited(kind, url):
    async def body():
        async with new_room(kind, url) as (store, room, code, key):
            await room.open_round(code, key, "queue-lab", QUEUE, "drain")
            learner = new_learner_id()
            for i in range(rooms.VOTE_LIMIT.count):
                await room.vote(code, learner, str(i))
            with pytest.raises(RateLimited):
                await room.vote(code, learner, "1")
            # Another learner is not held back by the first one.
            assert await room.vote(code, new_learner_id(), "2") == 2.0
            address = f"10.0.0.{id(store) % 250}-{kind}"
            for _ in range(rooms.UNKNOWN_CODE_LIMIT.count):
                with pytest.raises(NotFound):
                    await room.find("AAAAAA", address)
            with pytest.raises(RateLimited):
                await room.find("AAAAAA", address)
            # A real code still works from another address.
            assert await room.find(code, address + "x") == code

    run(body())


def test_a_room_expires_after_its_idle_time(kind, url):
    async def body():
        if kind == "memory":
            now = [1000.0]
            async with open_store(kind, url, clock=lambda: now[0]) as store:
                room = Classroom(store, idle_seconds=60)
                code, key = await room.start_room(new_learner_id())
                now[0] += 59
                await room.open_round(code, key, "queue-lab", QUEUE, "drain")  # activity renews
                now[0] += 59
                assert await store.get_room(code) is not None
                now[0] += 2
                assert await store.get_room(code) is None
                with pytest.raises(NotFound):
                    await room.find(code)
        else:
            async with open_store(kind, url) as store:
                room = Classroom(store, idle_seconds=1)
                code, key = await room.start_room(new_learner_id())
                await room.open_round(code, key, "queue-lab", QUEUE, "drain")
                await room.vote(code, new_learner_id(), "3")
                await asyncio.sleep(2.2)
                assert await store.get_room(code) is None
                assert await store.votes(code, 1) == {}
                with pytest.raises(NotFound):
                    await room.find(code)

    run(body())


def test_two_hundred_learners_voting_at_once_are_counted_exactly(kind, url):
    async def body():
        async with new_room(kind, url) as (_store, room, code, key):
            await room.open_round(code, key, "queue-lab", QUEUE, "drain")
            learners = [new_learner_id() for _ in range(200)]
            await asyncio.gather(*(room.join(code, learner) for learner in learners))
            values = [float(i % 17) for i in range(200)]
            await asyncio.gather(
                *(room.vote(code, lr, str(v)) for lr, v in zip(learners, values, strict=True))
            )
            assert await room.connected(code) == 200
            revealed = await room.reveal(code, key)
            result = json.loads(revealed["result"])
            assert result["count"] == 200
            assert sum(b["count"] for b in result["bins"]) == 200
            assert sorted((await room.votes(code, revealed)).values()) == sorted(values)

    run(body())


def test_every_process_hears_every_change(kind, url):
    """Two stores on one Redis are two backends; one in-process store hears itself."""

    async def body():
        async with open_store(kind, url) as a:
            other = open_store(kind, url) if kind == "redis" else None
            b = await other.__aenter__() if other else a
            try:
                heard: list[tuple[str, str]] = []
                b.on_event(lambda code, ev: heard.append((code, ev)))
                room = Classroom(a)
                code, key = await room.start_room(new_learner_id())
                await room.open_round(code, key, "queue-lab", QUEUE, "drain")
                await room.vote(code, new_learner_id(), "3")
                for _ in range(100):
                    if (code, "votes") in heard:
                        break
                    await asyncio.sleep(0.02)
                assert heard[:2] == [(code, "room"), (code, "votes")]
            finally:
                if other:
                    await other.__aexit__(None, None, None)

    run(body())


def test_answers_are_the_models_as_each_widget_computes_them():
    """Hand-checked numbers, and the same numbers as the widget's own settings give."""
    from app.classroom.questions import ask
    from widgets.registry import WIDGETS

    # The lesson's worked number: one layer per bucket on Overlap works leaves 7.40 ms.
    tail = ask("bucket-timeline", {"preset": "Overlap works", "layers_per_bucket": 1}, "tail")
    assert round(tail.answer, 2) == 7.40
    # many_ranks.model's worked example: with no enqueue cost an on-time rank waits 16.75 ms.
    idle = ask("ranks", {"scenario": "One slow rank", "enqueue_ms": 0.0}, "idle")
    assert round(idle.answer, 2) == 16.75
    for widget, query, qid in (
        ("bucket-timeline", {"preset": ["Latency-bound"], "ranks": ["16"]}, "step"),
        ("bucket-timeline", {"preset": ["Latency-bound"]}, "best"),
        ("ranks", {"scenario": ["Two partial stragglers"]}, "idle"),
    ):
        spec = WIDGETS[widget]
        kwargs, notices = spec.parse(query)
        assert not notices
        asked = ask(widget, kwargs, qid)
        view = spec.create(**kwargs)
        s = view.settings
        if qid == "step":
            from widgets.model.buckets import step_schedule

            expected = step_schedule(s).step_time
        elif qid == "best":
            from widgets.model.buckets import sweep_layers_per_bucket

            expected = sweep_layers_per_bucket(s).best_setting
        else:
            expected = s.result().fastest_idle_ms
        assert math.isclose(asked.answer, float(expected), rel_tol=1e-12)


def test_class_rounds_follow_the_registry():
    """A round may show each widget whose entry declares questions, and no other."""
    from app.classroom.questions import CLASS_WIDGETS, questions_for
    from app.classroom.views import widget_mode
    from widgets.registry import WIDGETS

    assert CLASS_WIDGETS == ("bucket-timeline", "queue-lab", "ranks")
    assert WIDGETS["trace"].round_questions() is None and questions_for("trace") == []
    assert [q.id for q in questions_for("queue-lab")] == ["drain", "length"]
    # While voting, a chart that shows the answer at once is hidden; the queue's is not.
    voting = {"phase": "voting", "round": "1"}
    assert widget_mode({**voting, "widget": "bucket-timeline"}) == "hidden"
    assert widget_mode({**voting, "widget": "ranks"}) == "hidden"
    assert widget_mode({**voting, "widget": "queue-lab"}) == "locked"
    with pytest.raises(ClassError, match="Pick a widget"):
        run(_open_trace_round())


async def _open_trace_round():
    async with new_room("memory", "") as (_store, room, code, key):
        await room.open_round(code, key, "trace", "", "tail")


def test_a_vote_after_the_next_round_opened_goes_to_that_round_under_its_question(kind, url):
    """A process keeps an open round's question for votes; a new round makes it read again."""

    async def body():
        async with new_room(kind, url) as (store, room, code, key):
            learner = new_learner_id()
            # Queue lab, 4 items at a net 1 item/s: "drain" is asked in seconds.
            await room.open_round(code, key, "queue-lab", QUEUE, "drain")
            assert await room.vote(code, learner, "4") == 4.0
            await room.reveal(code, key)
            with pytest.raises(WrongPhase, match="closed"):
                await room.vote(code, learner, "5")
            await room.next_round(code, key)
            # Four drawn ranks: the defining rank is a whole number from 0 to 3.
            await room.open_round(code, key, "ranks", "scenario=One slow rank", "defining", "0")
            with pytest.raises(ClassError, match="whole number"):
                await room.vote(code, learner, "2.5")
            assert await room.vote(code, learner, "2") == 2.0
            assert await store.votes(code, 1) == {learner: 4.0}
            assert await store.votes(code, 2) == {learner: 2.0}
            # An ended class refuses it, from this process and from one that never read it.
            await room.end(code, key)
            for process in (room, Classroom(store)):
                with pytest.raises(WrongPhase, match="closed"):
                    await process.vote(code, learner, "2")
            await store.delete_room(code)
            with pytest.raises(NotFound):
                await room.vote(code, learner, "2")

    run(body())


def test_learners_are_marked_connected_together_and_counted_by_when_last_seen(kind, url):
    async def body():
        async with new_room(kind, url) as (store, _, code, _key):
            a, b, c = (new_learner_id() for _ in range(3))
            await store.mark_seen(code, [], 1000.0, 60)  # nobody: nothing to keep
            assert await store.connected(code, 0.0) == 0
            await store.mark_seen(code, [a, b, c], 1000.0, 60)
            assert await store.connected(code, 999.0) == 3
            assert await store.connected(code, 1000.5) == 0
            # Two of them are seen again later; the third's mark stays where it was.
            await store.mark_seen(code, {a, b}, 2000.0, 60)
            assert await store.connected(code, 1500.0) == 2
            assert await store.connected(code, 999.0) == 3
            await store.forget_seen(code, a)
            assert await store.connected(code, 1500.0) == 1

    run(body())
