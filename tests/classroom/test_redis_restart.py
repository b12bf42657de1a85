"""Redis restarted (killed outright) with its append-only file: the class goes on."""

from __future__ import annotations

import asyncio
import json

from class_support import run
from redis_server import running_redis

from app.classroom.codes import new_learner_id
from app.classroom.redis_store import RedisStore
from app.classroom.rooms import Classroom
from app.classroom.store import EVERY_ROOM, RESYNC


def test_the_round_and_its_votes_survive_a_redis_restart(tmp_path):
    with running_redis(tmp_path) as redis:

        async def body():
            store = RedisStore(redis.url)
            await store.start()
            heard: list[tuple[str, str]] = []
            store.on_event(lambda code, kind: heard.append((code, kind)))
            try:
                room = Classroom(store)
                code, key = await room.start_room(new_learner_id())
                await room.open_round(code, key, "queue-lab", "arrival=2&service=3", "drain")
                learners = [new_learner_id() for _ in range(5)]
                for i, learner in enumerate(learners):
                    await room.vote(code, learner, str(i + 1))
                # SIGKILL: no shutdown, no snapshot; only the fsynced append-only file.
                await asyncio.to_thread(redis.restart)
                # The same client carries on: its commands retry until Redis answers.
                kept = await store.get_room(code)
                assert kept["phase"] == "voting" and kept["round"] == "1"
                assert sorted((await room.votes(code, kept)).values()) == [1, 2, 3, 4, 5]
                # Voting goes on, a replaced vote stays one vote, and Reveal counts them all.
                await room.vote(code, learners[0], "9")
                revealed = await room.reveal(code, key)
                result = json.loads(revealed["result"])
                assert result["count"] == 5 and result["median"] == 4.0
                # The subscription came back, said so, and events flow again.
                for _ in range(200):
                    if (EVERY_ROOM, RESYNC) in heard and (code, "room") in heard[-3:]:
                        break
                    await asyncio.sleep(0.05)
                assert (EVERY_ROOM, RESYNC) in heard
                before = len(heard)
                await room.unlock(code, key)
                for _ in range(100):
                    if len(heard) > before:
                        break
                    await asyncio.sleep(0.02)
                assert heard[before:] == [(code, "room")]
            finally:
                await store.close()

        run(body())
