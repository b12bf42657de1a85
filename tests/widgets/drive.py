"""Driving a widget in Python the way a learner does: through its buttons, on a fake clock."""

from __future__ import annotations

import panel as pn


class FakeWall:
    """A wall clock that moves only when told to."""

    def __init__(self, t: float = 1000.0):
        self.t = t

    def __call__(self) -> float:
        return self.t


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
