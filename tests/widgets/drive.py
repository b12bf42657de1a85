"""Driving a widget in Python the way a learner does: through its buttons, on a fake clock."""

from __future__ import annotations

import json

import panel as pn
import param


class FakeWall:
    """A wall clock that moves only when told to."""

    def __init__(self, t: float = 1000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


def on_fake_wall(widget) -> FakeWall:
    """Put a widget's clock on a wall clock that moves only when told to, and return that."""
    fake = FakeWall()
    widget.clock._wall_clock = fake
    return fake


def press(button: pn.widgets.Button, times: int = 1) -> None:
    """Click a button as the browser does (``clicks`` goes up by one each time)."""
    for _ in range(times):
        button.clicks += 1


def step(widget, times: int = 1) -> None:
    """Press Step."""
    press(widget.time_control.step_button, times)


def play(widget) -> None:
    """Press Play (or Pause)."""
    press(widget.time_control.play_button)


def reset(widget) -> None:
    """Press Reset."""
    press(widget.time_control.reset_button)


def another_value(settings: param.Parameterized, name: str) -> object:
    """A valid value of setting ``name`` other than its current one."""
    p = settings.param[name]
    if isinstance(p, param.Boolean):
        return not getattr(settings, name)
    if isinstance(p, param.Selector):
        return next(o for o in p.objects if o != getattr(settings, name))
    current = getattr(settings, name)
    low, high = p.bounds
    if current is None:
        return low + 1 if low is not None else 1
    value = current + 1
    return value if high is None or value <= high else current - 1


def edit_text(value: object) -> str:
    """A value as a learner types it into its control."""
    return value if isinstance(value, str) else json.dumps(value)
