"""What each page of a class sees of its room: the learner's, the instructor's, the round's widget.

A view is made from the room as stored; it never holds the instructor's key,
and never says who voted what.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from widgets.registry import WIDGETS

from . import histogram
from .codes import spaced
from .questions import CLASS_WIDGETS, questions_for, round_questions
from .rooms import IDLE_SECONDS


def voting_mode(widget: str) -> str:
    """How a round of ``widget`` is locked while voting: ``hidden`` if its chart tells it."""
    questions = round_questions(widget)
    return "hidden" if questions is not None and questions.hides_result else "locked"


def widget_mode(room: Mapping[str, str]) -> str:
    """How the round's widget is locked in this phase (see :mod:`app.classroom.widget_page`)."""
    if room["phase"] in ("voting", "closing"):
        return voting_mode(room["widget"])
    return "open" if room.get("unlocked") == "1" else "revealed"


def round_tag(room: Mapping[str, str]) -> str:
    """A short digest of what the round's file is made of, and of when the round opened.

    It names one round of one room: a later room that happens to get the same code
    never finds an earlier round's file under its address, wherever a copy was kept.
    """
    made_of = "\n".join(room.get(k, "") for k in ("widget", "query", "question", "opened"))
    return hashlib.sha256(made_of.encode("utf-8")).hexdigest()[:16]


def widget_src(prefix: str, code: str, room: Mapping[str, str], mode: str = "") -> str:
    """The round's live widget (a session): the round's settings, locked for ``mode``."""
    query = room.get("query", "")
    rest = f"room={code}&round={room['round']}&mode={mode or widget_mode(room)}"
    return f"{prefix}/class/{room['widget']}?{query + '&' if query else ''}{rest}"


def round_src(prefix: str, code: str, room: Mapping[str, str]) -> str:
    """The learner's frame: the round's widget as one file (:mod:`app.classroom.round_file`).

    One address for the whole round, whatever its phase: the file holds what voting
    shows, and the class page passes the revealed states in.
    """
    return f"{prefix}/class/{code}/round/{room['round']}/{round_tag(room)}"


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
