"""This process's classroom: its store (in-process, or Redis with ``--redis``) and its hub."""

from __future__ import annotations

import asyncio
import logging

from .errors import ClassError, StoreDown
from .hub import Hub
from .memory_store import MemoryStore
from .rooms import IDLE_SECONDS, Classroom
from .store import RoomStore

log = logging.getLogger("overlap-lab.classroom")


class ClassService:
    """Made when the server starts; connects to its store on first use, inside the loop."""

    def __init__(self, redis_url: str = "", prefix: str = "", idle_seconds: float = IDLE_SECONDS):
        self.redis_url = redis_url
        self.prefix = prefix
        self.idle_seconds = idle_seconds
        self._ready: asyncio.Future | None = None

    def _make_store(self) -> RoomStore:
        if self.redis_url:
            from .redis_store import RedisStore

            return RedisStore(self.redis_url)
        return MemoryStore()

    async def _start(self) -> tuple[Classroom, Hub]:
        store = self._make_store()
        await store.start()
        classroom = Classroom(store, self.idle_seconds, secret=await store.learner_secret())
        return classroom, Hub(classroom)

    async def get(self) -> tuple[Classroom, Hub]:
        """The classroom and the hub, started once."""
        if self._ready is None:
            self._ready = asyncio.ensure_future(self._start())
        try:
            return await asyncio.shield(self._ready)
        except Exception as exc:
            self._ready = None  # try again on the next request (Redis was not up yet)
            if isinstance(exc, ClassError):
                raise
            log.warning("classroom: the class store could not start (%s)", type(exc).__name__)
            raise StoreDown() from None


_SERVICE: ClassService | None = None


def configure(redis_url: str = "", prefix: str = "") -> ClassService:
    """Set up this process's classroom (called while the server's options are read)."""
    global _SERVICE
    if _SERVICE is None or _SERVICE.redis_url != redis_url or _SERVICE.prefix != prefix:
        _SERVICE = ClassService(redis_url, prefix)
        if redis_url:
            from .redis_store import persistence_warning

            warning = persistence_warning(redis_url)
            if warning:
                log.warning("classroom: %s", warning)
    return _SERVICE


def service() -> ClassService:
    """This process's classroom service (the in-process store until configured)."""
    return _SERVICE if _SERVICE is not None else configure()
