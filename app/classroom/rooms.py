"""A class's rooms and rounds: who may do what, and in which phase.

A room goes ``waiting`` → ``voting`` (Open voting) → ``revealed`` (Reveal) →
``waiting`` (Next round), and ``ended`` at the end. Only the instructor's key
moves it; a learner can only join and vote, one vote per round that a later
one replaces. Every change is published so that every page updates; what
each page then sees is :mod:`app.classroom.views`.
"""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs

from widgets.registry import WIDGETS

from . import histogram
from .codes import (
    key_digest,
    key_matches,
    new_code,
    new_key,
    new_learner_id,
    new_secret,
    normalize_code,
    sign_learner,
    signed_learner,
)
from .errors import ClassError, Forbidden, NotFound, RateLimited, WrongPhase
from .questions import CLASS_WIDGETS, QuestionError, ask, parse_number
from .store import KEPT, LIMITED, MOVED, NO_ROOM, RoomStore, VoteRecord

#: A room ends this long after its last activity (s): a lesson's length and then some.
IDLE_SECONDS = 2 * 3600
#: An ended room still tells late learners so, for this long (s).
ENDED_SECONDS = 600
#: What the instructor's actions on an ended class say.
ENDED = "This class has ended: start a new class to go on."
#: A learner's page counts as connected this long after it was last seen (s).
SEEN_SECONDS = 30
MAX_SETTINGS_TEXT = 2000
#: Open rounds whose question this process keeps for votes (oldest forgotten first).
KEPT_BALLOTS = 1024


@dataclass(frozen=True)
class Ballot:
    """An open round as a vote needs it: its number, when it opened, its question."""

    round_no: int
    opened: str
    question: dict


@dataclass(frozen=True)
class Limit:
    """At most ``count`` uses per ``window`` seconds."""

    count: int
    window: float


#: Rate limits, per learner (votes, joins) or per address (failed codes, new rooms,
#: new learners: a lecture hall of 1,000 behind one address joins within the last).
VOTE_LIMIT = Limit(20, 10.0)
JOIN_LIMIT = Limit(30, 60.0)
NEW_LEARNER_LIMIT = Limit(1000, 600.0)
UNKNOWN_CODE_LIMIT = Limit(10, 60.0)
NEW_ROOM_LIMIT = Limit(30, 3600.0)


def _number_text(v: float) -> str:
    return repr(float(v))


class Classroom:
    """The rooms of this server, kept in ``store``. ``clock`` gives wall time (tests)."""

    def __init__(
        self,
        store: RoomStore,
        idle_seconds: float = IDLE_SECONDS,
        clock: Callable[[], float] = time.time,
        secret: str = "",
    ) -> None:
        self.store = store
        #: Signs learner ids (the store's, so that every backend accepts them).
        self.secret = secret or new_secret()
        self.idle_seconds = idle_seconds
        self.clock = clock
        self._ballots: dict[str, Ballot] = {}

    # -- rooms -------------------------------------------------------------------------

    async def start_room(self, address: str = "") -> tuple[str, str]:
        """A new room: its join code and its instructor's key (shown only to them)."""
        if not await self.store.hit(f"room:{address}", NEW_ROOM_LIMIT.count, NEW_ROOM_LIMIT.window):
            raise RateLimited("Too many classes started from this address: try again later.")
        key = new_key()
        now = self.clock()
        fields = {
            "key": key_digest(key),
            "phase": "waiting",
            "round": "0",
            "unlocked": "0",
            "created": _number_text(now),
        }
        for _ in range(20):
            code = new_code()
            if await self.store.create_room(code, fields, self.idle_seconds):
                return code, key
        raise ClassError("Could not find a free join code; try again.")

    async def find(self, text: object, address: str = "") -> str:
        """The room a typed join code names; NotFound (rate-limited per address) if none."""
        code = normalize_code(text)
        room = await self.store.get_room(code) if code else None
        if room is None:
            limit = UNKNOWN_CODE_LIMIT
            if not await self.store.hit(f"miss:{address}", limit.count, limit.window):
                raise RateLimited(
                    "Too many join codes that do not exist: wait a minute, then try again.",
                    "code",
                )
            shown = str(text)[:12] if isinstance(text, str) else ""
            raise NotFound(
                f"No class has the join code “{shown}”. Check it with your instructor: "
                "it is six letters and digits.",
                "code",
            )
        return code

    async def instructor_room(self, code: object, key: object) -> tuple[str, dict[str, str]]:
        """The room if ``key`` is its instructor's; Forbidden otherwise (whatever was sent)."""
        found = normalize_code(code) if isinstance(code, str) else None
        room = await self.store.get_room(found) if found else None
        if room is None or not key_matches(key, room.get("key", "")):
            raise Forbidden("This page's link does not open that class.")
        return found, room

    def learner(self, code: str, cookie: object) -> str | None:
        """The learner a cookie names if this server signed it for room ``code``; else None."""
        return signed_learner(self.secret, code, cookie)

    async def new_learner(self, code: str, address: str = "") -> str:
        """A new learner of room ``code``: their signed cookie (rate-limited per address)."""
        limit = NEW_LEARNER_LIMIT
        if not await self.store.hit(f"learner:{address}", limit.count, limit.window):
            raise RateLimited("Too many people joined from this address: wait a few minutes.")
        return sign_learner(self.secret, code, new_learner_id())

    async def join(self, code: str, learner: str) -> dict[str, str]:
        """A learner's page connects to a room (rate-limited per learner)."""
        room = await self.store.get_room(code)
        if room is None:
            raise NotFound("This class has ended, or its code is wrong.")
        if not await self.store.hit(f"join:{learner}", JOIN_LIMIT.count, JOIN_LIMIT.window):
            raise RateLimited("Too many reconnections: wait a minute.")
        await self.seen(code, [learner])
        return room

    async def seen(self, code: str, learners: Collection[str]) -> None:
        """These learners' pages are still connected."""
        await self.store.mark_seen(code, learners, self.clock(), self.idle_seconds)

    async def left(self, code: str, learner: str) -> None:
        """A learner's page closed."""
        await self.store.forget_seen(code, learner)

    async def connected(self, code: str) -> int:
        """Learners whose page is connected now."""
        return await self.store.connected(code, self.clock() - SEEN_SECONDS)

    async def _move(
        self, code: str, expect: Mapping[str, str], changes: Mapping[str, str], ttl=None
    ) -> dict[str, str]:
        room = await self.store.update_room(
            code, expect, changes, self.idle_seconds if ttl is None else ttl
        )
        if room is None:
            raise WrongPhase("The class moved on meanwhile: this page now shows where it is.")
        await self.store.publish(code, "room")
        return room

    # -- the instructor's actions --------------------------------------------------------

    async def open_round(
        self,
        code: str,
        key: object,
        widget: object,
        settings_text: object,
        question_id: object,
        parameter_text: object = "",
    ) -> dict[str, str]:
        """Open voting on a question about a widget with these settings (URL keys)."""
        code, room = await self.instructor_room(code, key)
        if room["phase"] == "ended":
            raise WrongPhase(ENDED)
        if room["phase"] != "waiting":
            raise WrongPhase("Voting is already open: Reveal, then Next round.")
        if not isinstance(widget, str) or widget not in CLASS_WIDGETS:
            raise ClassError("Pick a widget.", "widget")
        spec = WIDGETS[widget]
        text = settings_text if isinstance(settings_text, str) else ""
        if len(text) > MAX_SETTINGS_TEXT:
            raise ClassError("These settings are too long.", "settings")
        query = parse_qs(text.strip().lstrip("?"), keep_blank_values=True)
        kwargs, notices = spec.parse(query)
        if notices:
            raise ClassError(" ".join(notices), "settings")
        parameter = parameter_text if isinstance(parameter_text, str) else ""
        try:
            asked = ask(
                widget, kwargs, question_id if isinstance(question_id, str) else "", parameter
            )
        except QuestionError as exc:
            raise ClassError(str(exc), "question") from None
        except ValueError as exc:
            raise ClassError(str(exc), "parameter") from None
        q = asked.question
        question = {
            "id": q.id,
            "text": asked.text,
            "label": q.label,
            "unit": q.unit,
            "integer": q.integer,
            "low": asked.low,
            "high": asked.high,
        }
        changes = {
            "phase": "voting",
            "round": str(int(room["round"]) + 1),
            "unlocked": "0",
            "widget": widget,
            "query": spec.query_string(kwargs),
            "question": json.dumps(question),
            "answer": _number_text(asked.answer),
            "result": "",
            "opened": _number_text(self.clock()),
        }
        return await self._move(code, {"phase": "waiting", "round": room["round"]}, changes)

    async def reveal(self, code: str, key: object) -> dict[str, str]:
        """Close voting and freeze the round's distribution (votes after this are refused)."""
        code, room = await self.instructor_room(code, key)
        if room["phase"] not in ("voting", "closing"):
            raise WrongPhase(
                ENDED if room["phase"] == "ended" else "There is no open vote to reveal."
            )
        r = room["round"]
        if room["phase"] == "voting":
            # From here on no vote is kept, so the distribution read next is final.
            room = await self._move(code, {"phase": "voting", "round": r}, {"phase": "closing"})
        votes = await self.store.votes(code, int(r))
        question = json.loads(room["question"])
        result = histogram.summary(votes.values(), question["integer"])
        return await self._move(
            code,
            {"phase": "closing", "round": r},
            {"phase": "revealed", "result": json.dumps(result)},
        )

    async def unlock(self, code: str, key: object) -> dict[str, str]:
        """Let every learner explore the revealed widget freely."""
        refusal = "Controls unlock once the answer is revealed."
        return await self._after_reveal(code, key, refusal, {"unlocked": "1"})

    async def next_round(self, code: str, key: object) -> dict[str, str]:
        """Back to waiting: the instructor sets up the next question."""
        refusal = "Reveal this round before the next one."
        return await self._after_reveal(code, key, refusal, {"phase": "waiting"})

    async def _after_reveal(
        self, code: str, key: object, refusal: str, changes: Mapping[str, str]
    ) -> dict[str, str]:
        """``changes`` to a revealed round; WrongPhase with ``refusal`` in any other phase."""
        code, room = await self.instructor_room(code, key)
        if room["phase"] != "revealed":
            raise WrongPhase(ENDED if room["phase"] == "ended" else refusal)
        return await self._move(code, {"phase": "revealed", "round": room["round"]}, changes)

    async def end(self, code: str, key: object) -> dict[str, str]:
        """End the class; late pages are told so for a while, then it is gone."""
        code, room = await self.instructor_room(code, key)
        if room["phase"] == "ended":
            # Ending it again would renew its lifetime: it keeps the one it has.
            raise WrongPhase(ENDED)
        expect = {"key": room["key"], "phase": room["phase"], "round": room["round"]}
        return await self._move(code, expect, {"phase": "ended"}, ENDED_SECONDS)

    # -- learners --------------------------------------------------------------------------

    async def vote(self, code: str, learner: str, text: object) -> float:
        """A learner's prediction for the open round, kept before this returns.

        Raises ClassError with a message for the prediction field.
        """
        for fresh in (False, True):
            ballot = await self._ballot(code, fresh)
            q = ballot.question
            try:
                value = parse_number(text, "Your prediction", q["integer"], q["low"], q["high"])
            except ValueError as exc:
                raise ClassError(str(exc), "prediction") from None
            outcome = await self.store.cast_vote(
                VoteRecord(
                    code, ballot.round_no, ballot.opened, learner, value,
                    self.idle_seconds, VOTE_LIMIT.count, VOTE_LIMIT.window,
                )
            )  # fmt: skip
            if outcome == KEPT:
                return value
            if outcome != MOVED:
                break
        self._ballots.pop(code, None)
        if outcome == NO_ROOM:
            raise NotFound("This class has ended.")
        if outcome == LIMITED:
            raise RateLimited("Too many submissions at once: wait a few seconds.", "prediction")
        raise WrongPhase("Voting is closed for this round.", "prediction")

    async def _ballot(self, code: str, fresh: bool) -> Ballot:
        """The room's open round as a vote needs it: read once per round, not once per vote.

        A kept ballot may be out of date; the store's vote checks its round and opening
        time, and a vote that finds another round reads the room again (``fresh``).
        """
        ballot = None if fresh else self._ballots.get(code)
        if ballot is not None:
            return ballot
        room = await self.store.get_room(code)
        if room is None:
            raise NotFound("This class has ended.")
        if room["phase"] != "voting":
            raise WrongPhase("Voting is closed for this round.", "prediction")
        ballot = Ballot(int(room["round"]), room["opened"], json.loads(room["question"]))
        self._ballots[code] = ballot
        while len(self._ballots) > KEPT_BALLOTS:
            del self._ballots[next(iter(self._ballots))]
        return ballot

    # -- what each page sees --------------------------------------------------------------

    async def votes(self, room_code: str, room: Mapping[str, str]) -> dict[str, float]:
        """The current round's votes, by learner (for the views; never shown by learner)."""
        r = int(room.get("round", "0"))
        return await self.store.votes(room_code, r) if r else {}

    async def results_csv(self, code: str, key: object) -> tuple[str, str]:
        """The current round's results as CSV, and a file name; no learner is named."""
        code, room = await self.instructor_room(code, key)
        if int(room["round"]) == 0:
            raise WrongPhase("No round has been run yet.")
        votes = await self.votes(code, room)
        question = json.loads(room["question"])
        result = histogram.summary(votes.values(), question["integer"])
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        revealed = room["phase"] in ("revealed",) or (room["phase"] == "waiting" and room["result"])
        rows = [
            ("# round", room["round"]),
            ("# widget", room["widget"]),
            ("# settings", room["query"]),
            ("# question", question["text"]),
            ("# unit", question["unit"]),
            ("# answer", room["answer"] if revealed else "not revealed yet"),
            ("# predictions", result["count"]),
            ("# class median", "" if result["median"] is None else repr(result["median"])),
        ]
        w.writerows(rows)
        w.writerow(["prediction"])
        # Sorted, so that the order says nothing about who answered when.
        w.writerows([repr(v)] for v in sorted(votes.values()))
        return out.getvalue(), f"class-round-{room['round']}.csv"
