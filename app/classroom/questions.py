"""The questions a round may ask: per widget, those its model answers.

Each question has a label, a unit and bounds; some take one parameter (the
time at which the queue's length is asked, the bucket whose readiness is
asked). The answer is the model's, computed from the round's settings exactly
as the widget's page computes them (``lessons.models`` reads the same model
for the lessons' numbers).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from lessons import models

BUCKETS, QUEUE, RANKS = models.BUCKETS, models.QUEUE, models.RANKS
#: The longest text a prediction or parameter may be (a number is a few characters).
MAX_TEXT = 40


class QuestionError(ValueError):
    """A question that these settings cannot ask (the message says why)."""


@dataclass(frozen=True)
class Parameter:
    """The one number a question takes (its label, unit, whether whole)."""

    label: str
    unit: str
    integer: bool
    low: float
    high: float


@dataclass(frozen=True)
class Question:
    """One question a widget can check: its text, unit, bounds and answer."""

    id: str
    widget: str
    text: str
    """The question, with ``{p}`` where the parameter goes."""
    label: str
    """The answer's field label, with its unit (``Exposed tail (ms)``)."""
    unit: str
    integer: bool
    bounds: Callable[[Mapping], tuple[float, float]]
    """The bounds of a valid answer, from the model's names."""
    answer: Callable[[Mapping, float | None], float]
    parameter: Parameter | None = None

    def asked(self, p: float | None) -> str:
        """The question's text with its parameter."""
        shown = "" if p is None else _plain(p)
        return self.text.format(p=shown)


def _plain(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def _within(lo: float, hi: float) -> Callable[[Mapping], tuple[float, float]]:
    return lambda names: (lo, hi)


def _best(names: Mapping, _p: float | None) -> float:
    if names["config"].uses_byte_cap():
        raise QuestionError(
            "These settings size buckets by a byte cap (bucket_cap_mb or DDP's bucketing): "
            "ask this question with layers per bucket instead."
        )
    return float(names["sweep"].best_setting)


def _drain(names: Mapping, _p: float | None) -> float:
    t = names["drain_time"]
    if t is None or not math.isfinite(float(t)):
        raise QuestionError(
            "With these settings the queue never drains: make service faster than "
            "arrival, or ask another question."
        )
    return t


def _timeline(names: Mapping) -> None:
    if names.get("schedule") is None:
        raise QuestionError(
            "When ranks disagree there is no timeline to ask about: pick another scenario."
        )


def _defining(names: Mapping, bucket: float | None) -> float:
    _timeline(names)
    b = int(bucket if bucket is not None else 0)
    ranks = names["defining_ranks"]
    if not 0 <= b < len(ranks):
        raise QuestionError(f"These settings have buckets 0 to {len(ranks) - 1}: pick one of them.")
    return float(ranks[b])


def _idle(names: Mapping, _p: float | None) -> float:
    _timeline(names)
    return float(names["fastest_idle_ms"])


QUESTIONS: dict[str, Question] = {
    q.id: q
    for q in (
        Question(
            "tail",
            BUCKETS,
            "How long is the exposed tail?",
            "Exposed tail (ms)",
            "ms",
            False,
            _within(0, 100_000),
            lambda n, _p: float(n["exposed_tail"]),
        ),
        Question(
            "step",
            BUCKETS,
            "How long is the step?",
            "Step time (ms)",
            "ms",
            False,
            _within(0, 100_000),
            lambda n, _p: float(n["step_time"]),
        ),
        Question(
            "best",
            BUCKETS,
            "How many layers per bucket give the shortest step?",
            "Layers per bucket",
            "",
            True,
            lambda n: (1, int(n["n_layers"])),
            _best,
        ),
        Question(
            "drain",
            QUEUE,
            "When does the queue drain?",
            "Drain time (s)",
            "s",
            False,
            _within(0, 100_000),
            _drain,
        ),
        Question(
            "length",
            QUEUE,
            "How long is the queue at {p} s?",
            "Queue length (items)",
            "items",
            False,
            _within(0, 1_000_000_000),
            lambda n, t: float(n["length_at"](t)),
            Parameter("At time (s)", "s", False, 0, 100_000),
        ),
        Question(
            "defining",
            RANKS,
            "Which rank defines bucket {p}'s readiness?",
            "Rank",
            "",
            True,
            lambda n: (0, int(n["drawn_ranks"]) - 1),
            _defining,
            Parameter("Bucket", "", True, 0, 100),
        ),
        Question(
            "idle",
            RANKS,
            "How long does the fastest rank idle before the optimizer?",
            "Idle time (ms)",
            "ms",
            False,
            _within(0, 100_000),
            _idle,
        ),
    )
}


def questions_for(widget: str) -> list[Question]:
    """The questions a widget can check, in the order offered."""
    return [q for q in QUESTIONS.values() if q.widget == widget]


def parse_number(text: object, label: str, integer: bool, low: float, high: float) -> float:
    """A typed number, checked: finite, within ``[low, high]``, whole if ``integer``.

    Raises ValueError with a message for the field.
    """
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise ValueError(f"{label}: type a number.")
    raw = str(text).strip().replace("−", "-").replace(",", ".") if isinstance(text, str) else text
    if isinstance(raw, str):
        if not raw:
            raise ValueError(f"{label}: type a number.")
        if len(raw) > MAX_TEXT:
            raise ValueError(f"{label}: that is too long for a number.")
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"{label}: “{raw[:20]}” is not a number.") from None
    else:
        value = float(raw)
    if not math.isfinite(value):
        raise ValueError(f"{label}: type a finite number.")
    if integer and not value.is_integer():
        raise ValueError(f"{label}: type a whole number.")
    if not low <= value <= high:
        raise ValueError(f"{label}: type a number from {_plain(low)} to {_plain(high)}.")
    return float(value)


@dataclass(frozen=True)
class Asked:
    """A question asked of settings: its text, the answer's bounds, and the answer."""

    question: Question
    parameter: float | None
    text: str
    low: float
    high: float
    answer: float


def ask(widget: str, settings: Mapping, question_id: str, parameter_text: str = "") -> Asked:
    """Ask ``question_id`` of ``widget`` with these settings (as the widget's URL keys parse).

    Raises QuestionError (for the Question field) or ValueError (for the parameter).
    """
    question = QUESTIONS.get(question_id)
    if question is None or question.widget != widget:
        raise QuestionError("Pick one of this widget's questions.")
    p = None
    if question.parameter is not None:
        spec = question.parameter
        p = parse_number(parameter_text, spec.label, spec.integer, spec.low, spec.high)
    names = models.names(widget, models.start_state(widget, dict(settings)))
    answer = question.answer(names, p)
    low, high = question.bounds(names)
    return Asked(question, p, question.asked(p), float(low), float(high), float(answer))
