"""A lesson's widgets in a notebook: each widget block with its settings, each experiment a
button under its widget that loads the experiment's settings and resets."""

from __future__ import annotations

import pytest

pytest.importorskip("anywidget", reason="the notebook widgets need the notebook extra")

from lessons import Experiment, WidgetBlock, load_lessons
from lessons.notebook import lesson_widgets
from widgets.common.fields import value_text

LESSONS = load_lessons()


@pytest.mark.parametrize("name", list(LESSONS))
def test_every_lesson_shows_its_widgets_and_experiments(name: str) -> None:
    lesson = LESSONS[name]
    shown = lesson_widgets(name).children
    expected = []
    for i, block in enumerate(lesson.blocks):
        if isinstance(block, WidgetBlock):
            expected.append(block.widget)
            expected += [
                f"▶ {e.label}" for e in lesson.blocks if isinstance(e, Experiment) and e.target == i
            ]
    assert [getattr(c, "widget", None) or c.description for c in shown] == expected


def test_an_experiment_button_loads_its_settings_and_resets() -> None:
    shown = lesson_widgets("dependency-schedule").children
    lab, drain = shown[0], shown[1]
    assert drain.description == "▶ Drain four items: arrival 2, service 3"
    lab.arrival = 5
    lab._handle_custom_msg({"action": "step"}, [])
    assert lab.anchor["elapsed"] > 0
    drain.click()
    assert (lab.arrival, lab.service, lab.initial) == (2, 3, 4)
    assert lab.anchor["elapsed"] == 0.0
    assert lab.message["text"] == (
        "Loaded “Drain four items: arrival 2, service 3”: arrival 2.0, service 3.0, initial 4.0."
    )


def test_an_unknown_lesson_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="order-matters"):
        lesson_widgets("no-such-lesson")


def test_widget_settings_follow_the_lesson_block() -> None:
    lesson = LESSONS["order-matters"]
    block = next(b for b in lesson.blocks if isinstance(b, WidgetBlock))
    widget = lesson_widgets("order-matters").children[0]
    for key, value in block.settings.items():
        assert widget.values[key] == value_text(value), key
