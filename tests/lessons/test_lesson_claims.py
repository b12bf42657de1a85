"""What a lesson says about a chart's structure matches the chart the widget draws.

A lesson that says "The timeline has five lanes. **Backward** …" names the
lanes the bucket timeline's state lays out, and every lane it names in bold
after that sentence is one of them. A glyph the text names ("ready (▲)") is checked
against the widget's key as drawn, in ``tests/ui/test_lesson_key_claims_ui.py``.
"""

from __future__ import annotations

import re

import pytest

from lessons import Experiment, Prose, load_lessons
from widgets.registry import WIDGETS

NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
CLAIM = re.compile(r"The timeline has (\w+) lanes\.(?P<rest>[^\n]*)")
LESSONS = load_lessons()


def _claims():
    for name, lesson in LESSONS.items():
        for block in lesson.blocks:
            if isinstance(block, Prose):
                for match in CLAIM.finditer(block.text):
                    yield name, match


CLAIMS = list(_claims())


def test_the_lessons_make_claims_to_check() -> None:
    assert CLAIMS, "no lesson states the timeline's lanes: this test checks nothing"


@pytest.mark.parametrize(("name", "match"), CLAIMS, ids=[c[0] for c in CLAIMS])
def test_the_number_and_names_of_lanes_are_the_charts(name: str, match: re.Match) -> None:
    lanes = WIDGETS["bucket-timeline"].create().drawn_state["lanes"]
    count = NUMBERS.get(match.group(1).lower())
    assert count == len(lanes), f"{name} says {match.group(1)} lanes; the chart has {lanes}"
    named = re.findall(r"\*\*([^*]+)\*\*", match.group("rest"))
    assert named, f"{name} names no lane after its claim"
    assert set(named) == set(lanes), f"{name} names {named}; the chart's lanes are {lanes}"


def test_a_prediction_is_asked_before_its_answer_is_shown() -> None:
    # A prose block that asks the learner to predict must not show the answer (a table
    # of readouts) right under the question: the answer goes behind "Show answer".
    asked = 0
    for name, lesson in LESSONS.items():
        for block in lesson.blocks:
            if isinstance(block, Prose) and "Predict" in block.text:
                asked += 1
                after = block.text.split("Predict", 1)[1]
                assert not re.search(r"^\|.*\|\s*$", after, re.MULTILINE), (
                    f"{name}: a prediction is answered by a table in the same prose"
                )
    assert asked, "no lesson asks for a prediction: this test checks nothing"


QUOTE = re.compile(r"\"([^\"]*\d[^\"]*)\"")


def _quoted_readouts():
    """(lesson, experiment, quoted text) for each quotation with a number that follows a
    bucket timeline experiment in its prose: what the lesson says a readout reads."""
    found = []
    for name, lesson in LESSONS.items():
        current = None
        for block in lesson.blocks:
            if isinstance(block, Experiment):
                target = lesson.blocks[block.target]
                current = block if target.widget == "bucket-timeline" else None
            elif isinstance(block, Prose) and current is not None:
                for text in QUOTE.findall(block.text):
                    # The sweep chart's title is drawn in the page (tests/ui checks it).
                    if not text.startswith("Best: "):
                        found.append((name, current, text))
    return found


QUOTED = _quoted_readouts()


def test_the_lessons_quote_readouts() -> None:
    assert any("last transfer alone" in q for _, _, q in QUOTED), QUOTED


@pytest.mark.parametrize(
    ("name", "experiment", "quoted"), QUOTED, ids=[f"{n}:{q[:30]}" for n, _, q in QUOTED]
)
def test_a_quoted_readout_is_what_the_widget_reads(name, experiment, quoted) -> None:
    readouts = WIDGETS["bucket-timeline"].create(**experiment.settings).drawn_state["readouts"]
    shown = {text for value, note in readouts.values() for text in (value, note)}
    assert quoted in shown, f"{name} quotes “{quoted}” after “{experiment.label}”; shown: {shown}"
