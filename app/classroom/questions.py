"""The questions a round may ask, and the numbers a learner or instructor types for them.

Each widget declares its questions beside its registry entry
(:class:`~widgets.common.round_questions.RoundQuestions`): a label, a unit and
bounds, some with one parameter (the time at which the queue's length is
asked, the bucket whose readiness is asked), and the answer its model gives
for the round's settings. The settings load as a lesson's experiment loads
them (``lessons.models``: a preset or scenario first), so a round's answer is
the number the widget's page shows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from lessons import models
from widgets.common.round_questions import QuestionError, RoundQuestion, RoundQuestions, plain
from widgets.registry import WIDGETS

#: The longest text a prediction or parameter may be (a number is a few characters).
MAX_TEXT = 40
#: The widgets a class round may show: those whose registry entry declares questions.
CLASS_WIDGETS = tuple(name for name, spec in WIDGETS.items() if spec.class_round)


def round_questions(widget: str) -> RoundQuestions | None:
    """What a round may ask about ``widget``; None for a widget with no rounds, or none at all."""
    spec = WIDGETS.get(widget)
    return spec.round_questions() if spec is not None else None


def questions_for(widget: str) -> list[RoundQuestion]:
    """The questions a widget can check, in the order offered."""
    questions = round_questions(widget)
    return list(questions.questions) if questions is not None else []


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
        try:
            value = float(raw)
        except OverflowError:  # an integer beyond any float (a JSON number of 400 digits)
            raise ValueError(_outside(label, low, high)) from None
    if not math.isfinite(value):
        raise ValueError(f"{label}: type a finite number.")
    if integer and not value.is_integer():
        raise ValueError(f"{label}: type a whole number.")
    if not low <= value <= high:
        raise ValueError(_outside(label, low, high))
    return float(value)


def _outside(label: str, low: float, high: float) -> str:
    return f"{label}: type a number from {plain(low)} to {plain(high)}."


@dataclass(frozen=True)
class Asked:
    """A question asked of settings: its text, the answer's bounds, and the answer."""

    question: RoundQuestion
    parameter: float | None
    text: str
    low: float
    high: float
    answer: float


def ask(widget: str, settings: Mapping, question_id: str, parameter_text: str = "") -> Asked:
    """Ask ``question_id`` of ``widget`` with these settings (as the widget's URL keys parse).

    Raises QuestionError (for the Question field) or ValueError (for the parameter).
    """
    questions = round_questions(widget)
    question = questions.question(question_id) if questions is not None else None
    if question is None:
        raise QuestionError("Pick one of this widget's questions.")
    p = None
    if question.parameter is not None:
        spec = question.parameter
        p = parse_number(parameter_text, spec.label, spec.integer, spec.low, spec.high)
    state = models.start_state(widget, dict(settings))
    answer, low, high = questions.ask(state, question, p)
    return Asked(question, p, question.asked(p), low, high, answer)
