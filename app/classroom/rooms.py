"""A class's rooms and rounds: who may do what, in which phase, and what each page sees.

A room goes ``waiting`` → ``voting`` (Open voting) → ``revealed`` (Reveal) →
``waiting`` (Next round), and ``ended`` at the end. Only the instructor's key
moves it; a learner can only join and vote, one vote per round that a later
one replaces. Every change is published so that every page updates.
"""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs

from widgets.registry import WIDGETS

from . import histogram
from .codes import key_digest, key_matches, new_code, new_key, normalize_code, spaced
from .questions import QuestionError, ask, parse_number, questions_for
from .store import RoomStore

#: A room ends this long after its last activity (s): a lesson's length and then some.
IDLE_SECONDS = 2 * 3600
#: An ended room still tells late learners so, for this long (s).
ENDED_SECONDS = 600
#: A learner's page counts as connected this long after it was last seen (s).
SEEN_SECONDS = 30
#: The widgets a round may show (those with questions).
CLASS_WIDGETS = ("bucket-timeline", "queue-lab", "ranks")
#: Widgets whose chart and readouts show the result at once: hidden until Reveal.
SHOWS_RESULT_AT_ONCE = ("bucket-timeline", "ranks")
MAX_SETTINGS_TEXT = 2000


@dataclass(frozen=True)
class Limit:
    """At most ``count`` uses per ``window`` seconds."""

    count: int
    window: float


#: Rate limits, per learner (votes, joins) or per address (failed codes, new rooms).
VOTE_LIMIT = Limit(20, 10.0)
JOIN_LIMIT = Limit(30, 60.0)
UNKNOWN_CODE_LIMIT = Limit(10, 60.0)
NEW_ROOM_LIMIT = Limit(30, 3600.0)


class ClassError(Exception):
    """Something a page asked for that is refused; ``message`` says why, at ``field``."""

    status = 400

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class NotFound(ClassError):
    status = 404


class Forbidden(ClassError):
    status = 403


class RateLimited(ClassError):
    status = 429


class WrongPhase(ClassError):
    status = 409


def _number_text(v: float) -> str:
    return repr(float(v))


class Classroom:
    """The rooms of this server, kept in ``store``. ``clock`` gives wall time (tests)."""

    def __init__(
        self,
        store: RoomStore,
        idle_seconds: float = IDLE_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.idle_seconds = idle_seconds
        self.clock = clock

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

    async def join(self, code: str, learner: str) -> dict[str, str]:
        """A learner's page connects to a room (rate-limited per learner)."""
        room = await self.store.get_room(code)
        if room is None:
            raise NotFound("This class has ended, or its code is wrong.")
        if not await self.store.hit(f"join:{learner}", JOIN_LIMIT.count, JOIN_LIMIT.window):
            raise RateLimited("Too many reconnections: wait a minute.")
        await self.seen(code, learner)
        return room

    async def seen(self, code: str, learner: str) -> None:
        """A learner's page is still connected."""
        await self.store.mark_seen(code, learner, self.clock(), self.idle_seconds)

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
            raise WrongPhase("There is no open vote to reveal.")
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
        code, room = await self.instructor_room(code, key)
        if room["phase"] != "revealed":
            raise WrongPhase("Controls unlock once the answer is revealed.")
        return await self._move(
            code, {"phase": "revealed", "round": room["round"]}, {"unlocked": "1"}
        )

    async def next_round(self, code: str, key: object) -> dict[str, str]:
        """Back to waiting: the instructor sets up the next question."""
        code, room = await self.instructor_room(code, key)
        if room["phase"] != "revealed":
            raise WrongPhase("Reveal this round before the next one.")
        return await self._move(
            code, {"phase": "revealed", "round": room["round"]}, {"phase": "waiting"}
        )

    async def end(self, code: str, key: object) -> dict[str, str]:
        """End the class; late pages are told so for a while, then it is gone."""
        code, room = await self.instructor_room(code, key)
        return await self._move(code, {"key": room["key"]}, {"phase": "ended"}, ENDED_SECONDS)

    # -- learners --------------------------------------------------------------------------

    async def vote(self, code: str, learner: str, text: object) -> float:
        """A learner's prediction for the open round, kept before this returns.

        Raises ClassError with a message for the prediction field.
        """
        room = await self.store.get_room(code)
        if room is None:
            raise NotFound("This class has ended.")
        if room["phase"] != "voting":
            raise WrongPhase("Voting is closed for this round.", "prediction")
        if not await self.store.hit(f"vote:{learner}", VOTE_LIMIT.count, VOTE_LIMIT.window):
            raise RateLimited("Too many submissions at once: wait a few seconds.", "prediction")
        q = json.loads(room["question"])
        try:
            value = parse_number(text, "Your prediction", q["integer"], q["low"], q["high"])
        except ValueError as exc:
            raise ClassError(str(exc), "prediction") from None
        if not await self.store.put_vote(
            code, int(room["round"]), learner, value, self.idle_seconds
        ):
            raise WrongPhase("Voting closed before your prediction arrived.", "prediction")
        await self.store.publish(code, "votes")
        return value

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


def widget_mode(room: Mapping[str, str]) -> str:
    """How the round's widget is locked in this phase (see :mod:`app.classroom.widget_page`)."""
    if room["phase"] in ("voting", "closing"):
        return "hidden" if room["widget"] in SHOWS_RESULT_AT_ONCE else "locked"
    return "open" if room.get("unlocked") == "1" else "revealed"


def widget_src(prefix: str, code: str, room: Mapping[str, str], mode: str = "") -> str:
    """The round's live widget (a session): the round's settings, locked for ``mode``."""
    query = room.get("query", "")
    rest = f"room={code}&round={room['round']}&mode={mode or widget_mode(room)}"
    return f"{prefix}/class/{room['widget']}?{query + '&' if query else ''}{rest}"


def round_src(prefix: str, code: str, room: Mapping[str, str]) -> str:
    """The learner's frame: the round's widget as one file (:mod:`app.classroom.round_file`)."""
    return f"{prefix}/class/{code}/round/{room['round']}"


def _round_fields(code: str, room: Mapping[str, str], prefix: str) -> dict:
    if not room.get("widget"):
        return {}
    question = json.loads(room["question"])
    return {
        "widget": room["widget"],
        "title": WIDGETS[room["widget"]].title,
        "src": round_src(prefix, code, room),
        "mode": widget_mode(room),
        "question": question,
    }


def learner_view(
    code: str, room: Mapping[str, str] | None, yours: float | None, prefix: str = ""
) -> dict:
    """What a learner's page shows: never the key, never others' votes, the answer once revealed."""
    if room is None or room.get("phase") == "ended":
        return {"phase": "ended"}
    phase = room["phase"]
    view: dict = {"phase": phase, "round": int(room["round"])}
    if phase == "closing":
        view["phase"] = "voting"
        view["closed"] = True
    if phase in ("voting", "closing", "revealed"):
        view.update(_round_fields(code, room, prefix))
        view["yours"] = yours
    if phase == "revealed":
        view["unlocked"] = room.get("unlocked") == "1"
        view["result"] = json.loads(room["result"])
        view["answer"] = float(room["answer"])
    return view


def instructor_view(
    code: str,
    room: Mapping[str, str] | None,
    votes: Mapping[str, float],
    connected: int,
    prefix: str = "",
    idle_seconds: float = IDLE_SECONDS,
) -> dict:
    """What the instructor's page shows: counts and a histogram, never who voted what."""
    if room is None or room.get("phase") == "ended":
        return {"phase": "ended"}
    phase = room["phase"]
    view: dict = {
        "code": code,
        "spaced": spaced(code),
        "phase": phase,
        "round": int(room["round"]),
        "connected": connected,
        "idle_minutes": round(idle_seconds / 60),
        "widgets": [
            {
                "name": name,
                "title": WIDGETS[name].title,
                "presets": list(WIDGETS[name].presets),
                "questions": [
                    {
                        "id": q.id,
                        "text": q.text.format(p="…"),
                        "parameter": None
                        if q.parameter is None
                        else {"label": q.parameter.label, "integer": q.parameter.integer},
                    }
                    for q in questions_for(name)
                ],
            }
            for name in CLASS_WIDGETS
        ],
    }
    if phase == "waiting" and not room.get("widget"):
        return view
    view.update(_round_fields(code, room, prefix))
    view["query"] = room.get("query", "")
    question = view.get("question") or {}
    if phase in ("voting", "closing"):
        view["votes"] = histogram.summary(votes.values(), bool(question.get("integer")))
        view["votes"].pop("median")  # the class median is shown with the answer
    if room.get("result"):
        view["result"] = json.loads(room["result"])
        view["answer"] = float(room["answer"])
        view["unlocked"] = room.get("unlocked") == "1"
    return view
