"""What a class round may ask about a widget: questions whose answers its model computes.

A widget's folder declares its questions (``questions.py``, named by its
registry entry): each has a text, the answer's label, unit and bounds, and a
function from the widget's model, built from the round's settings, to the
answer. The classroom (``app/classroom``) asks them and checks the votes; it
knows no widget's numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


class QuestionError(ValueError):
    """A question that these settings cannot ask (the message says why)."""


def plain(v: float) -> str:
    """A number as the question prints it: ``3``, ``2.5``."""
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


@dataclass(frozen=True)
class Parameter:
    """The one number a question takes (its label, unit, whether whole, its bounds)."""

    label: str
    unit: str
    integer: bool
    low: float
    high: float


@dataclass(frozen=True)
class RoundQuestion:
    """One question a widget's model answers: its text, unit, bounds and answer."""

    id: str
    text: str
    """The question, with ``{p}`` where the parameter goes."""
    label: str
    """The answer's field label, with its unit (``Exposed tail (ms)``)."""
    unit: str
    integer: bool
    bounds: Callable[[Any], tuple[float, float]]
    """The bounds of a valid answer, from the model."""
    answer: Callable[[Any, float | None], float]
    """The answer from the model and the parameter; QuestionError when it has none."""
    parameter: Parameter | None = None

    def asked(self, p: float | None) -> str:
        """The question's text with its parameter."""
        return self.text.format(p="" if p is None else plain(p))


def within(lo: float, hi: float) -> Callable[[Any], tuple[float, float]]:
    """Bounds that are the same whatever the model."""
    return lambda _model: (lo, hi)


@dataclass(frozen=True)
class RoundQuestions:
    """Everything a class round needs to know of one widget."""

    model: Callable[..., Any]
    """The widget's model from the round's settings (keyword arguments, as the lessons load
    them: a named configuration already applied)."""
    questions: tuple[RoundQuestion, ...]
    """In the order offered to the instructor."""
    hides_result: bool = False
    """The chart and readouts show the answer at once, so they stay hidden until Reveal."""

    def question(self, question_id: str) -> RoundQuestion | None:
        """The question with this id, or None."""
        return next((q for q in self.questions if q.id == question_id), None)

    def ask(
        self, settings: Mapping, question: RoundQuestion, p: float | None
    ) -> tuple[float, float, float]:
        """The answer, and its bounds, of ``question`` with parameter ``p`` for ``settings``."""
        model = self.model(**settings)
        answer = question.answer(model, p)
        low, high = question.bounds(model)
        return float(answer), float(low), float(high)
