"""One process's hub: every listener of a room told of each change, votes gathered."""

from __future__ import annotations

import asyncio

from class_support import run

from app.classroom import hub as hub_module
from app.classroom.codes import new_learner_id
from app.classroom.hub import Hub, Listener
from app.classroom.memory_store import MemoryStore
from app.classroom.rooms import Classroom


class Recorder(Listener):
    def __init__(self, role: str, learner: str = "") -> None:
        self.role, self.learner = role, learner
        self.seen: list[tuple[dict | None, dict, int]] = []

    def changed(self, room, votes, connected) -> None:
        self.seen.append((room, dict(votes), connected))


async def _settle(condition, timeout: float = 5.0) -> None:
    for _ in range(int(timeout / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the hub did not deliver in time")


def test_each_listener_hears_its_rooms_changes_and_a_burst_of_votes_is_one_refresh():
    async def body():
        now = [0.0]
        store = MemoryStore(lambda: now[0])
        await store.start()
        room = Classroom(store, idle_seconds=60, clock=lambda: 1000.0 + now[0])
        hub = Hub(room)
        code, key = await room.start_room(new_learner_id())
        other, _ = await room.start_room(new_learner_id())
        learner, teacher, elsewhere = (
            Recorder("learner", "a"),
            Recorder("instructor"),
            Recorder("learner", "b"),
        )
        hub.add(code, learner)
        hub.add(code, teacher)
        hub.add(other, elsewhere)
        await room.open_round(code, key, "queue-lab", "arrival=2&service=3", "drain")
        await _settle(lambda: learner.seen and teacher.seen)
        assert learner.seen[-1][0]["phase"] == "voting" and not elsewhere.seen
        before = len(teacher.seen)
        ids = [new_learner_id() for _ in range(50)]
        await asyncio.gather(*(room.vote(code, i, "3") for i in ids))
        await _settle(lambda: teacher.seen and len(teacher.seen[-1][1]) == 50)
        # Fifty votes within the debounce: a few refreshes, not fifty; learners none.
        assert len(teacher.seen) - before <= 3
        assert len(learner.seen) == 1
        # A room that expires without an event shows as ended within a heartbeat.
        hub_module.HEARTBEAT, saved = 0.05, hub_module.HEARTBEAT
        try:
            hub._heartbeat.cancel()
            hub._heartbeat = asyncio.get_running_loop().create_task(hub._beat())
            now[0] += 61
            await _settle(lambda: learner.seen[-1][0] is None)
        finally:
            hub_module.HEARTBEAT = saved
            hub._heartbeat.cancel()
        hub.remove(code, learner)
        assert not hub.has_learner(code, "a")

    run(body())


class CountingStore(MemoryStore):
    """A memory store that records each heartbeat's marks."""

    def __init__(self, clock) -> None:
        super().__init__(clock)
        self.marks: list[tuple[str, set[str]]] = []

    async def mark_seen(self, code, learners, now, ttl) -> None:
        self.marks.append((code, set(learners)))
        await super().mark_seen(code, learners, now, ttl)


def test_a_heartbeat_marks_each_rooms_learners_here_in_one_store_step():
    async def body():
        store = CountingStore(lambda: 0.0)
        await store.start()
        room = Classroom(store, idle_seconds=60, clock=lambda: 1000.0)
        hub = Hub(room)
        code, _ = await room.start_room(new_learner_id())
        other, _ = await room.start_room(new_learner_id())
        names = [f"l{i}" for i in range(40)]
        for name in names:
            hub.add(code, Recorder("learner", name))
        hub.add(code, Recorder("learner", "l0"))  # a second page of one learner
        hub.add(code, Recorder("instructor"))
        hub.add(other, Recorder("learner", "x"))
        hub_module.HEARTBEAT, saved = 0.05, hub_module.HEARTBEAT
        try:
            hub._heartbeat.cancel()
            hub._heartbeat = asyncio.get_running_loop().create_task(hub._beat())
            await _settle(lambda: len(store.marks) >= 2)
        finally:
            hub_module.HEARTBEAT = saved
            hub._heartbeat.cancel()
        first_beat = dict(store.marks[:2])
        assert len(first_beat) == 2
        assert first_beat[code] == set(names) and first_beat[other] == {"x"}
        assert await room.connected(code) == 40

    run(body())
