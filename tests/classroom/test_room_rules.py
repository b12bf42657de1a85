"""An ended class, the vote record, and learners issued and signed by the server, on both stores."""

from __future__ import annotations

import contextlib
import dataclasses

import pytest
from class_support import run
from stores import STORES, open_store

from app.classroom import rooms
from app.classroom.codes import new_learner_id, sign_learner, signed_learner
from app.classroom.rooms import Classroom, RateLimited, WrongPhase
from app.classroom.store import CLOSED, KEPT, LIMITED, MOVED, NO_ROOM, VoteRecord

QUEUE = "arrival=2&service=3&initial=4"


@pytest.fixture(params=STORES)
def kind(request) -> str:
    return request.param


@pytest.fixture
def url(kind, request) -> str:
    return request.getfixturevalue("redis_server").url if kind == "redis" else ""


def test_every_action_on_an_ended_class_says_it_has_ended(kind, url):
    async def body():
        async with open_store(kind, url) as store:
            room = Classroom(store)
            code, key = await room.start_room(f"rules-{kind}")
            await room.end(code, key)
            for action in (
                lambda: room.open_round(code, key, "queue-lab", QUEUE, "drain"),
                lambda: room.reveal(code, key),
                lambda: room.unlock(code, key),
                lambda: room.next_round(code, key),
                lambda: room.end(code, key),
            ):
                with pytest.raises(WrongPhase) as refused:
                    await action()
                assert refused.value.message.startswith("This class has ended"), refused.value

    run(body())


def test_ending_an_ended_class_again_does_not_renew_its_lifetime():
    async def body():
        now = [5000.0]
        async with open_store("memory", "", clock=lambda: now[0]) as store:
            room = Classroom(store)
            code, key = await room.start_room("renew")
            await room.end(code, key)
            now[0] += rooms.ENDED_SECONDS - 1  # 599 s later
            with contextlib.suppress(WrongPhase):
                await room.end(code, key)
            assert (await store.get_room(code))["phase"] == "ended"
            now[0] += 2  # 601 s after the first End: gone, whatever the second one tried
            assert await store.get_room(code) is None

    run(body())


def test_ending_an_ended_class_in_redis_keeps_its_expiry(redis_server):
    async def body():
        async with open_store("redis", redis_server.url) as store:
            room = Classroom(store)
            code, key = await room.start_room("renew-redis")
            await room.end(code, key)
            await store._redis.expire(f"ol:room:{code}", 30)  # as if 570 s had gone by
            with contextlib.suppress(WrongPhase):
                await room.end(code, key)
            assert 0 < await store._redis.ttl(f"ol:room:{code}") <= 30

    run(body())


def test_a_vote_is_one_frozen_record_with_every_outcome(kind, url):
    async def body():
        async with open_store(kind, url) as store:
            room = Classroom(store)
            code, key = await room.start_room(f"record-{kind}")
            opened = await room.open_round(code, key, "queue-lab", QUEUE, "drain")
            learner = new_learner_id()
            vote = VoteRecord(code, 1, opened["opened"], learner, 3.0, 60.0, 2, 10.0)
            with pytest.raises(dataclasses.FrozenInstanceError):
                vote.value = 4.0  # type: ignore[misc]
            assert vote.field == f"1:{learner}"
            assert await store.cast_vote(vote) == KEPT
            assert await store.cast_vote(dataclasses.replace(vote, value=5.0)) == KEPT
            assert await store.cast_vote(vote) == LIMITED  # the third within the window
            assert await store.vote_of(code, 1, learner) == 5.0
            assert await store.cast_vote(dataclasses.replace(vote, round_no=2)) == MOVED
            assert await store.cast_vote(dataclasses.replace(vote, code="ACDEFG")) == NO_ROOM
            await room.reveal(code, key)
            other = dataclasses.replace(vote, learner=new_learner_id())
            assert await store.cast_vote(other) == CLOSED

    run(body())


def test_learners_are_issued_signed_per_class_and_limited_per_address(kind, url):
    async def body():
        async with open_store(kind, url) as store:
            secret = await store.learner_secret()
            room = Classroom(store, secret=secret)
            code, _ = await room.start_room(f"issue-{kind}")
            other, _ = await room.start_room(f"issue-{kind}")
            cookie = await room.new_learner(code, f"10.1.0.1-{kind}")
            learner = room.learner(code, cookie)
            assert learner is not None and cookie.startswith(learner)
            assert room.learner(other, cookie) is None  # another class's cookie
            assert room.learner(code, learner) is None  # the id alone, unsigned
            assert room.learner(code, sign_learner("not the secret", code, learner)) is None
            # Another process on the same store accepts it (the secret is the store's).
            async with open_store(kind, url) as again:
                if kind == "redis":
                    assert await again.learner_secret() == secret
                    assert signed_learner(await again.learner_secret(), code, cookie) == learner
            address = f"10.1.0.2-{kind}"
            for _ in range(rooms.NEW_LEARNER_LIMIT.count - 1):
                await room.new_learner(code, address)
            await room.new_learner(other, address)
            with pytest.raises(RateLimited):
                await room.new_learner(code, address)
            assert room.learner(code, await room.new_learner(code, address + "x"))

    run(body())
