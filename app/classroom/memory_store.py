"""The store of a one-process class: dictionaries in this process, with expiry."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Mapping

from .codes import new_secret
from .store import CLOSED, KEPT, LIMITED, MOVED, NO_ROOM, RoomStore, VoteRecord, vote_field


class MemoryStore(RoomStore):
    """Rooms in this process's memory. ``clock`` (monotonic seconds) is for tests."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._clock = clock
        self._rooms: dict[str, dict[str, str]] = {}
        self._votes: dict[str, dict[str, float]] = {}
        self._seen: dict[str, dict[str, float]] = {}
        self._expires: dict[str, float] = {}
        self._rates: dict[str, tuple[float, int]] = {}
        self._secret = new_secret()

    def _live(self, code: str) -> bool:
        expires = self._expires.get(code)
        if expires is None:
            return False
        if self._clock() >= expires:
            self._drop(code)
            return False
        return True

    def _drop(self, code: str) -> None:
        for table in (self._rooms, self._votes, self._seen, self._expires):
            table.pop(code, None)

    def _renew(self, code: str, ttl: float) -> None:
        self._expires[code] = self._clock() + ttl
        self._sweep()

    def _sweep(self) -> None:
        now = self._clock()
        for code in [c for c, t in self._expires.items() if t <= now]:
            self._drop(code)
        if len(self._rates) > 10_000:
            self._rates = {k: v for k, v in self._rates.items() if v[0] > now}

    async def learner_secret(self) -> str:
        return self._secret

    async def create_room(self, code: str, fields: Mapping[str, str], ttl: float) -> bool:
        if self._live(code):
            return False
        self._rooms[code] = {**fields, "version": "1"}
        self._votes[code] = {}
        self._seen[code] = {}
        self._renew(code, ttl)
        return True

    async def get_room(self, code: str) -> dict[str, str] | None:
        return dict(self._rooms[code]) if self._live(code) else None

    async def update_room(
        self, code: str, expect: Mapping[str, str], changes: Mapping[str, str], ttl: float
    ) -> dict[str, str] | None:
        if not self._live(code):
            return None
        room = self._rooms[code]
        if any(room.get(k) != v for k, v in expect.items()):
            return None
        room.update(changes)
        room["version"] = str(int(room.get("version", "0")) + 1)
        self._renew(code, ttl)
        return dict(room)

    async def cast_vote(self, vote: VoteRecord) -> str:
        code = vote.code
        if not self._live(code):
            return NO_ROOM
        room = self._rooms[code]
        if room.get("round") != str(vote.round_no) or room.get("opened") != vote.opened:
            return MOVED
        if room.get("phase") != "voting":
            return CLOSED
        if not await self.hit(f"vote:{vote.learner}", vote.limit, vote.window):
            return LIMITED
        self._votes[code][vote.field] = float(vote.value)
        self._renew(code, vote.ttl)
        await self.publish(code, "votes")
        return KEPT

    async def votes(self, code: str, round_no: int) -> dict[str, float]:
        if not self._live(code):
            return {}
        prefix = f"{round_no}:"
        return {k[len(prefix) :]: v for k, v in self._votes[code].items() if k.startswith(prefix)}

    async def vote_of(self, code: str, round_no: int, learner: str) -> float | None:
        if not self._live(code):
            return None
        return self._votes[code].get(vote_field(round_no, learner))

    async def mark_seen(self, code: str, learners: Collection[str], now: float, ttl: float) -> None:
        if self._live(code):
            self._seen[code].update(dict.fromkeys(learners, now))

    async def forget_seen(self, code: str, learner: str) -> None:
        if self._live(code):
            self._seen[code].pop(learner, None)

    async def connected(self, code: str, since: float) -> int:
        if not self._live(code):
            return 0
        return sum(1 for t in self._seen[code].values() if t >= since)

    async def hit(self, bucket: str, limit: int, window: float) -> bool:
        now = self._clock()
        ends, count = self._rates.get(bucket, (0.0, 0))
        if now >= ends:
            ends, count = now + window, 0
        count += 1
        self._rates[bucket] = (ends, count)
        return count <= limit

    async def delete_room(self, code: str) -> None:
        self._drop(code)

    async def publish(self, code: str, kind: str) -> None:
        # Delivered on the next loop iteration, as a message from Redis would be:
        # a listener never runs inside the writer's call.
        asyncio.get_running_loop().call_soon(self._deliver, code, kind)
