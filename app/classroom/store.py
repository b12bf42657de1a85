"""Where rooms, rounds and votes live: one interface, kept in this process or in Redis.

A room is a flat record of text fields (its phase, round, widget, question,
answer...). Every write that depends on a room's state is atomic in the store
itself: a vote is kept only while its round is open, and an instructor's
action only applies to the phase it was meant for, so two backends can never
interleave into a state neither wrote. Every key of a room expires together
after the room's idle time, renewed by each write.

Each change is announced as an event ``(code, kind)`` to every process using
the store (``on_event``); a ``"*"`` code with kind ``"resync"`` says events may
have been missed (the store reconnected), so listeners read everything again.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from .errors import STORE_DOWN

#: A listener of store events: ``(code, kind)``.
EventListener = Callable[[str, str], None]
#: The code of an event that concerns every room.
EVERY_ROOM = "*"
RESYNC = "resync"
#: The kind of the event that says the store stopped answering.
DOWN = "down"
#: What the instructor's page says of a store that a restart would empty.
NOT_KEPT = (
    "The class store keeps nothing over a restart (Redis without appendonly yes): "
    "if it restarts, this class is lost."
)
log = logging.getLogger("overlap-lab.classroom")

#: What :meth:`RoomStore.cast_vote` did: kept the vote, or found no room, another
#: round (or another room under the same code), voting closed, or the learner over
#: their rate.
KEPT, NO_ROOM, MOVED, CLOSED, LIMITED = "kept", "no room", "moved", "closed", "limited"


@dataclass(frozen=True)
class VoteRecord:
    """One learner's vote as the store keeps it, with the rules it is kept under.

    ``round_no`` and ``opened`` name the round the vote was cast for; the room's
    keys are renewed for ``ttl`` seconds; the learner may cast ``limit`` votes
    within ``window`` seconds.
    """

    code: str
    round_no: int
    opened: str
    learner: str
    value: float
    ttl: float
    limit: int
    window: float

    @property
    def field(self) -> str:
        """The vote's field in the room's votes (:func:`vote_field`)."""
        return vote_field(self.round_no, self.learner)


class RoomStore(ABC):
    """Rooms, votes, connected learners, rate limits and change events."""

    #: Whether the store answered its last call (a store in this process always does).
    available = True
    #: Whether a restart of the store keeps its rooms: False if it would lose them,
    #: None if the store would not say.
    durable: bool | None = True

    def __init__(self) -> None:
        self._listeners: list[EventListener] = []

    def notices(self) -> list[str]:
        """What the instructor's page must say about the store now, if anything."""
        found = [] if self.available else [f"{STORE_DOWN}."]
        if self.durable is False:
            found.append(NOT_KEPT)
        return found

    def _set_available(self, available: bool, reason: str = "") -> None:
        """The store answers again, or not (``reason``): say so once, in the log and to pages."""
        if available == self.available:
            return
        self.available = available
        if available:
            log.warning("classroom: the class store answers again; pages catch up")
            self._deliver(EVERY_ROOM, RESYNC)
        else:
            log.warning("classroom: the class store does not answer (%s); votes are paused", reason)
            self._deliver(EVERY_ROOM, DOWN)

    def on_event(self, listener: EventListener) -> None:
        """Call ``listener(code, kind)`` for every event any process publishes."""
        self._listeners.append(listener)

    def _deliver(self, code: str, kind: str) -> None:
        for listener in list(self._listeners):
            listener(code, kind)

    async def start(self) -> None:  # noqa: B027 - optional hook
        """Connect (and start receiving events); called once before use."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Disconnect."""

    @abstractmethod
    async def learner_secret(self) -> str:
        """The secret that signs learner ids: the same for every process using this store."""

    @abstractmethod
    async def create_room(self, code: str, fields: Mapping[str, str], ttl: float) -> bool:
        """Create a room unless one has this code; True if created."""

    @abstractmethod
    async def get_room(self, code: str) -> dict[str, str] | None:
        """The room's fields, or None if there is no such room (or it expired)."""

    @abstractmethod
    async def update_room(
        self, code: str, expect: Mapping[str, str], changes: Mapping[str, str], ttl: float
    ) -> dict[str, str] | None:
        """Apply ``changes`` if every field in ``expect`` has that value; the new room, or None.

        The ``version`` field counts updates. Renews the room's expiry.
        """

    @abstractmethod
    async def cast_vote(self, vote: VoteRecord) -> str:
        """Keep (or replace) a learner's vote in one atomic step, and announce ``votes``.

        In order: NO_ROOM if there is no such room; MOVED unless it is the vote's
        round (``round_no`` opened at ``opened``); CLOSED unless it is voting;
        LIMITED once the learner has cast ``limit`` votes within ``window`` seconds;
        else KEPT, with the room's expiry renewed for ``ttl``.
        """

    @abstractmethod
    async def votes(self, code: str, round_no: int) -> dict[str, float]:
        """Every vote of a round, by learner id."""

    @abstractmethod
    async def vote_of(self, code: str, round_no: int, learner: str) -> float | None:
        """One learner's vote in a round, or None."""

    @abstractmethod
    async def mark_seen(self, code: str, learners: Collection[str], now: float, ttl: float) -> None:
        """These learners' pages are connected at wall time ``now`` (one store step)."""

    @abstractmethod
    async def forget_seen(self, code: str, learner: str) -> None:
        """A learner's page closed."""

    @abstractmethod
    async def connected(self, code: str, since: float) -> int:
        """Learners seen connected since wall time ``since``."""

    @abstractmethod
    async def hit(self, bucket: str, limit: int, window: float) -> bool:
        """Count one use of ``bucket``; False once it has had ``limit`` in this window."""

    @abstractmethod
    async def delete_room(self, code: str) -> None:
        """Forget a room and everything in it."""

    @abstractmethod
    async def publish(self, code: str, kind: str) -> None:
        """Announce a change of a room to every process (``on_event``)."""


def room_keys(code: str) -> tuple[str, str, str]:
    """The store's keys of one room: its record, its votes, its connected learners."""
    return f"ol:room:{code}", f"ol:votes:{code}", f"ol:seen:{code}"


def vote_field(round_no: int, learner: str) -> str:
    """A vote's field in the room's votes: ``round:learner``."""
    return f"{round_no}:{learner}"
