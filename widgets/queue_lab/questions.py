"""What a class round may ask about the fluid queue lab, answered by its queue."""

from __future__ import annotations

import math

from widgets.common.round_questions import (
    Parameter,
    QuestionError,
    RoundQuestion,
    RoundQuestions,
    within,
)
from widgets.model.fluid_queue import FluidQueue, Segment


def _drain_time(queue: FluidQueue, _p: float | None) -> float:
    t = Segment(0.0, queue.initial, queue.arrival, queue.service).drain_time
    if t is None or not math.isfinite(float(t)):
        raise QuestionError(
            "With these settings the queue never drains: make service faster than "
            "arrival, or ask another question."
        )
    return float(t)


ROUND = RoundQuestions(
    model=FluidQueue,
    questions=(
        RoundQuestion(
            "drain",
            "When does the queue drain?",
            "Drain time (s)",
            "s",
            False,
            within(0, 100_000),
            _drain_time,
        ),
        RoundQuestion(
            "length",
            "How long is the queue at {p} s?",
            "Queue length (items)",
            "items",
            False,
            within(0, 1_000_000_000),
            lambda queue, t: float(queue.length_at(t)),
            Parameter("At time (s)", "s", False, 0, 100_000),
        ),
    ),
)
