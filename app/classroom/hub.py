"""One process's listeners of its rooms: pages connected here, told of every change.

The store announces each change (from any process) as ``(code, kind)``. The
hub reads the room once per announcement for all of this process's listeners
of that room, so 200 learners on one backend cost one read, not 200, and it
gathers a burst of votes into one refresh of the instructor's histogram.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import Callable

from .rooms import Classroom
from .store import DOWN, EVERY_ROOM, RESYNC

log = logging.getLogger("overlap-lab.classroom")
#: Votes arriving within this long refresh the instructor's histogram once (s).
VOTES_DEBOUNCE = 0.05
#: How often connected learners are marked as still there (s).
HEARTBEAT = 10.0


class Listener:
    """A page that follows a room: ``role`` is ``learner``, ``instructor`` or ``widget``."""

    role = "learner"
    learner: str = ""

    def changed(self, room: dict | None, votes: dict[str, float], connected: int) -> None:
        """The room as it is now (``votes`` and ``connected`` only where the role needs them)."""
        raise NotImplementedError

    def store_down(self) -> None:
        """The store stopped answering (the room cannot be read until it is back)."""


class Hub:
    """Every listener in this process, by room; refreshes them as the store announces."""

    def __init__(self, classroom: Classroom) -> None:
        self.classroom = classroom
        self.listeners: dict[str, set[Listener]] = defaultdict(set)
        self._pending: dict[str, set[str]] = {}
        self._heartbeat: asyncio.Task | None = None
        classroom.store.on_event(self._event)

    def add(self, code: str, listener: Listener) -> None:
        self.listeners[code].add(listener)
        if self._heartbeat is None:
            self._heartbeat = asyncio.get_running_loop().create_task(self._beat())

    def remove(self, code: str, listener: Listener) -> None:
        found = self.listeners.get(code)
        if found is not None:
            found.discard(listener)
            if not found:
                del self.listeners[code]

    def has_learner(self, code: str, learner: str) -> bool:
        """Whether another page of this learner is still connected here."""
        return any(
            lst.role == "learner" and lst.learner == learner for lst in self.listeners.get(code, ())
        )

    def _event(self, code: str, kind: str) -> None:
        if kind == DOWN:
            for listeners in list(self.listeners.values()):
                for lst in list(listeners):
                    lst.store_down()
            return
        codes = list(self.listeners) if code == EVERY_ROOM else [code]
        for c in codes:
            if c not in self.listeners:
                continue
            kinds = self._pending.get(c)
            if kinds is not None:
                kinds.add(kind)
                continue
            self._pending[c] = {kind}
            delay = VOTES_DEBOUNCE if kind in ("votes", "seen") else 0.0
            asyncio.get_running_loop().create_task(self._refresh(c, delay))

    async def refresh_now(self, code: str, kind: str = "room") -> None:
        """Bring every listener of a room up to date (as an event of ``kind`` would)."""
        self._event(code, kind)

    async def _refresh(self, code: str, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        kinds = self._pending.pop(code, set())
        listeners = list(self.listeners.get(code, ()))
        if not listeners:
            return
        room_change = bool(kinds & {"room", RESYNC})
        wanted = [lst for lst in listeners if room_change or lst.role == "instructor"]
        if not wanted:
            return
        try:
            store = self.classroom.store
            room = await store.get_room(code)
            need_votes = room is not None and any(
                lst.role == "instructor" or (lst.role == "learner" and room_change)
                for lst in wanted
            )
            votes = await self.classroom.votes(code, room) if need_votes else {}
            instructors = any(lst.role == "instructor" for lst in wanted)
            connected = await self.classroom.connected(code) if instructors else 0
        except Exception as exc:  # the store is away: the next event or resync catches up
            log.warning("classroom: could not read a room (%s)", type(exc).__name__)
            return
        for lst in wanted:
            try:
                lst.changed(room, votes, connected)
            except Exception:
                log.exception("classroom: a page could not be updated")

    async def _beat(self) -> None:
        """Mark this process's learners as connected, and refresh instructors' counts."""
        while True:
            await asyncio.sleep(HEARTBEAT)
            for code, listeners in list(self.listeners.items()):
                learners = {lst.learner for lst in listeners if lst.role == "learner"}
                with contextlib.suppress(Exception):
                    if learners:
                        # One store step for the room, not one per learner.
                        await self.classroom.seen(code, learners)
                        await self.classroom.store.publish(code, "seen")
                # Every page here is brought up to date now and then, so a room that
                # expired (no event says so) shows as ended within a heartbeat.
                self._event(code, RESYNC)


_HUB: Hub | None = None


def hub_for(classroom_factory: Callable[[], Classroom]) -> Hub:
    """This process's hub (made on first use, inside the serving loop)."""
    global _HUB
    if _HUB is None:
        _HUB = Hub(classroom_factory())
    return _HUB
