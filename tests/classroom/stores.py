"""Each store the room logic runs on, made inside the test's event loop."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from app.classroom.memory_store import MemoryStore
from app.classroom.redis_store import RedisStore
from app.classroom.store import RoomStore

STORES = ("memory", "redis")


@contextlib.asynccontextmanager
async def open_store(kind: str, redis_url: str, clock=None) -> AsyncIterator[RoomStore]:
    """A started store of ``kind``; closed on exit."""
    if kind == "memory":
        store: RoomStore = MemoryStore(clock) if clock else MemoryStore()
    else:
        store = RedisStore(redis_url)
    await store.start()
    try:
        yield store
    finally:
        await store.close()
